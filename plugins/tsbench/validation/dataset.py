"""The dataset suite (critical): is the generated or imported data what the run spec describes?

Checked for every measurement of the dataset:

- every Parquet file on disk is listed in the manifest with the same row count and sha256, and
  every listed file is on disk;
- row count = hosts × epochs (from the manifest's spec). Use cases that drop points on purpose
  (iot) and imported datasets without a spec use the manifest's count instead; a streamed
  dataset's, counted while generated (the other checks read the extract its files keep);
- (entity, time) is unique, e.g. (hostname, time) — ``ExpectCompoundColumnsToBeUnique``; in data
  that sends rows twice on purpose (``workload.disorder``), the distinct keys = hosts × epochs;
- no nulls: in every column for cpu-only and devops; for iot (which drops single fields on
  purpose) in time and the tag columns only, and the entity key (``name``) of at most
  ``NAMELESS_MAX_SHARE`` of the rows (TSBS clears it on 0.2 % of its points);
- timestamps inside ``[start, end)`` of the manifest's time range;
- cpu values (every ``usage_*`` field) in ``[0, 100]``.

How it scales (no sampling — every check is exact): a dataset can hold 100 M rows, too many for a
pandas DataFrame, so the data itself never goes to great_expectations. Two DuckDB scans per
measurement (``tsbench.validation.dataset_profile``) compute exact aggregates: per Parquet file the
row count and per column the minimum, maximum and null count, and the duplicated (entity, time) keys.

GE then validates small pandas frames built from these exact aggregates, with the predicates
defined only in the GE expectations:

- the *extremes* frame has the data's own columns and two rows per file: the column-wise minima
  and maxima (a column's extreme is null when that file has a null in the column). "Every value in
  ``[lo, hi]``" holds exactly when every file's minimum ≥ lo and maximum ≤ hi, and "no value is
  null" exactly when no extreme is null, so ``ExpectColumnValuesToBeBetween`` and
  ``ExpectColumnValuesToNotBeNull`` on the extremes give the same verdict as on all rows;
- the *keys* frame holds the duplicated keys found by DuckDB (each twice, at most
  ``duplicate_examples`` keys): ``ExpectCompoundColumnsToBeUnique`` fails on it exactly when the
  full table has a duplicated key; the exact number of duplicated keys is reported alongside;
- the *files* and *counts* frames hold per-file and per-measurement row counts next to the
  manifest's and the spec's figures (``ExpectColumnPairValuesToBeEqual``).

Cost: two DuckDB scans of the Parquet files (memory bounded: DuckDB streams and spills), one
sha256 pass over their bytes, then a few dozen GE expectations on frames of a few rows per file,
independent of the row count.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

import pandas as pd

from tsbench.spec import DatasetSpec
from tsbench.timeutil import format_instant
from tsbench.validation.checks import Check, Frame, SuiteSpec, entry
from tsbench.validation.dataset_profile import (
    DUPLICATE_EXAMPLES,
    MeasurementProfile,
    connect,
    profile_measurement,
)
from tsbench.workload.dataset import Dataset, sha256_file
from tsbench.workload.generate.ycsb import VALUE_RANGE
from tsbench.workload.scan import MEMORY_LIMIT
from tsbench.workload.usecases import CPU_FIELDS, YCSB

# Use cases whose generator drops whole points and single fields on purpose (TSBS iot keeps ~90 %).
DROPS_POINTS = frozenset({"iot"})
# Use cases whose rows may lack the entity key (``UseCase.nameless_rows``): at most this share of
# a measurement's rows (TSBS's rate is 0.2 %; a larger share means a broken generator or import).
NAMELESS_MAX_SHARE = 0.01
# Value ranges per measurement: column → (lo, hi), both inclusive.
RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "cpu": dict.fromkeys(CPU_FIELDS, (0, 100)),
    YCSB.name: dict.fromkeys(YCSB.field_names, VALUE_RANGE),
}
__all__ = [
    "DROPS_POINTS",
    "DUPLICATE_EXAMPLES",
    "MEMORY_LIMIT",
    "NAMELESS_MAX_SHARE",
    "RANGES",
    "MeasurementProfile",
    "connect",
    "dataset_suite",
    "expected_rows",
    "profile_dataset",
    "profile_measurement",
]


def profile_dataset(
    dataset: Dataset,
    ranges: dict[str, dict[str, tuple[float, float]]] | None = None,
    memory_limit: str | None = None,
    duplicate_examples: int = DUPLICATE_EXAMPLES,
) -> dict[str, MeasurementProfile]:
    """Exact aggregates of every measurement (two DuckDB scans each)."""
    ranges = RANGES if ranges is None else ranges
    measurements = list(dict.fromkeys([*dataset.measurements, *expected_rows(dataset)]))
    with tempfile.TemporaryDirectory(prefix="tsbench-validate-") as spill:
        con = connect(memory_limit, spill)
        try:
            return {
                m: profile_measurement(con, dataset, m, ranges.get(m), duplicate_examples)
                for m in measurements
            }
        finally:
            con.close()


def expected_rows(dataset: Dataset) -> dict[str, tuple[int, str]]:
    """Expected rows per measurement and where the figure comes from."""
    manifest = dataset.manifest
    use_case = manifest.use_case
    if use_case in DROPS_POINTS or manifest.spec is None:
        why = f"{use_case} drops points on purpose" if use_case in DROPS_POINTS else "imported, no spec"
        return {m: (int(n), f"the manifest's count ({why})") for m, n in manifest.rows.items()}
    spec = DatasetSpec.parse(**manifest.spec)
    noun = "hosts" if dataset.use_case.entity_key == "hostname" else "entities"
    basis = f"{spec.scale:,} {noun} × {spec.epochs:,} epochs"
    return {m: (spec.rows_per_measurement, basis) for m in spec.measurements}


def _not_null_columns(dataset: Dataset, measurement: str, columns: list[str]) -> list[str]:
    if dataset.manifest.use_case not in DROPS_POINTS:
        return columns
    key = set() if dataset.use_case.nameless_rows else {dataset.use_case.entity_key}
    try:
        tags = {*key, *dataset.use_case.measurement(measurement).extra_tags}
    except KeyError:
        tags = key
    return [c for c in columns if c == "time" or c in tags]


def _files_frame(dataset: Dataset, profiles: dict[str, MeasurementProfile]) -> Frame:
    listed = {f.path: (f.measurement, f.rows) for f in dataset.manifest.files}
    sums = {f.path: f.sha256 for f in dataset.manifest.files}
    on_disk = {
        row.file: (m, int(row.rows))
        for m, p in profiles.items()
        for row in p.files[["file", "rows"]].itertuples()
    }
    rows = []
    for path in sorted(set(listed) | set(on_disk)):
        measurement = (listed.get(path) or on_disk[path])[0]
        rows.append(
            {
                "measurement": measurement,
                "file": path,
                "manifest_rows": listed[path][1] if path in listed else None,
                "rows": on_disk[path][1] if path in on_disk else None,
            }
        )
    for row in rows:
        row["manifest_sha256"] = sums.get(row["file"])
        row["sha256"] = sha256_file(dataset.path / row["file"]) if row["rows"] is not None else None
    columns = ["measurement", "file", "manifest_rows", "rows", "manifest_sha256", "sha256"]
    frame = pd.DataFrame(rows, columns=columns)
    frame[["manifest_rows", "rows"]] = frame[["manifest_rows", "rows"]].astype("float64")
    missing = [r["file"] for r in rows if r["rows"] is None]
    unlisted = [r["file"] for r in rows if r["manifest_rows"] is None]
    differing = [
        r["file"]
        for r in rows
        if None not in (r["rows"], r["manifest_rows"]) and r["rows"] != r["manifest_rows"]
    ]
    check = Check(
        "Parquet files on disk = the manifest's files, with the same row counts",
        "ExpectColumnPairValuesToBeEqual",
        {"column_A": "rows", "column_B": "manifest_rows"},
        observed={
            "files": len(rows),
            "missing": missing,
            "not_in_manifest": unlisted,
            "row_count_differs": differing,
        },
        details=f"{len(listed)} file(s) in the manifest, {len(on_disk)} on disk",
    )
    changed = [
        r["file"]
        for r in rows
        if r["sha256"] and r["manifest_sha256"] and r["sha256"] != r["manifest_sha256"]
    ]
    contents = Check(
        "Parquet file contents = the manifest's sha256",
        "ExpectColumnPairValuesToBeEqual",
        {"column_A": "sha256", "column_B": "manifest_sha256", "ignore_row_if": "either_value_is_missing"},
        observed={"files": len(rows), "sha256_differs": changed},
        details="sha256 of every file on disk (a changed file means the data is no longer the manifest's)",
    )
    return Frame("files", frame, [check, contents])


def _counts_frame(dataset: Dataset, profiles: dict[str, MeasurementProfile]) -> Frame:
    expected = expected_rows(dataset)
    # rows sent twice on purpose (``workload.disorder``): the spec sets the distinct keys, not the rows
    keys = dataset.copies and dataset.manifest.use_case not in DROPS_POINTS
    rows, checks = [], []
    for m, profile in profiles.items():
        want, basis = expected.get(m, (None, "not in the spec"))
        counted = profile.rows - profile.extra_rows if keys else profile.rows
        copies = f", besides {profile.extra_rows:,} rows sent again on purpose" if keys else ""
        how = f"counted by DuckDB over {dataset.glob(m)}{copies}"
        if dataset.extract is not None:  # the files keep only the rows the queries read
            counted = dataset.rows.get(m, 0)
            how = f"counted while generated (streamed; {profile.rows:,} kept: the queries' windows)"
        rows.append({"measurement": m, "rows": counted, "expected_rows": want})
        checks.append(
            Check(
                f"{m}: {'distinct (entity, time) keys' if keys else 'row count'} = {basis}",
                "ExpectColumnPairValuesToBeEqual",
                {"column_A": "rows", "column_B": "expected_rows"},
                where=("measurement", m),
                observed={"rows": profile.rows, "expected": want} | ({"keys": counted} if keys else {}),
                details=how,
            )
        )
    if dataset.use_case.nameless_rows:
        checks += _nameless_checks(dataset, profiles, rows)
    frame = pd.DataFrame(rows, columns=["measurement", "rows", "expected_rows", "nameless_share"])
    frame[["rows", "expected_rows"]] = frame[["rows", "expected_rows"]].astype("float64")
    return Frame("counts", frame, checks)


def _nameless_checks(
    dataset: Dataset, profiles: dict[str, MeasurementProfile], rows: list[dict[str, Any]]
) -> list[Check]:
    """Per measurement: rows without the entity key at most ``NAMELESS_MAX_SHARE`` (sets each
    row's ``nameless_share``)."""
    entity = dataset.use_case.entity_key
    checks = []
    for row, (m, profile) in zip(rows, profiles.items(), strict=True):
        column = f"nulls_{entity}"
        nameless = int(profile.files[column].sum()) if column in profile.files else 0
        row["nameless_share"] = nameless / profile.rows if profile.rows else 0.0
        checks.append(
            Check(
                f"{m}: rows without {entity} ≤ {NAMELESS_MAX_SHARE:.0%}",
                "ExpectColumnValuesToBeBetween",
                {"column": "nameless_share", "min_value": 0.0, "max_value": NAMELESS_MAX_SHARE},
                where=("measurement", m),
                observed={"rows_without_entity": nameless, "rows": profile.rows},
                details="nameless points (TSBS's iot clears the name tag of 0.2 %), counted over all rows",
            )
        )
    return checks


def _keys_frame(dataset: Dataset, profiles: dict[str, MeasurementProfile]) -> Frame:
    entity = dataset.manifest.entity_key or dataset.use_case.entity_key
    rows, checks = [], []
    for m, profile in profiles.items():
        if dataset.copies:  # keys sent twice on purpose: the counts frame checks the distinct keys
            continue
        examples = []
        for item in profile.duplicates.itertuples():
            key = {"measurement": m, entity: item.entity, "time": int(item.time)}
            rows.extend([key, key])  # a duplicated key, as GE would see it in the full data
            examples.append(
                {entity: item.entity, "time": format_instant(int(item.time)), "rows": int(item.n)}
            )
        checks.append(
            Check(
                f"{m}: ({entity}, time) is unique",
                "ExpectCompoundColumnsToBeUnique",
                {"column_list": ["measurement", entity, "time"]},
                where=("measurement", m),
                observed={
                    "duplicated_keys": profile.duplicate_keys,
                    "extra_rows": profile.extra_rows,
                    "examples": examples[:5],
                },
                details=f"duplicated keys found by DuckDB over all {profile.rows:,} rows (exact)",
            )
        )
    frame = pd.DataFrame(rows, columns=["measurement", entity, "time"])
    return Frame("keys", frame, checks)


def _values_frame(
    dataset: Dataset, profile: MeasurementProfile, ranges: dict[str, tuple[float, float]]
) -> Frame:
    """The per-file extremes of a measurement, with its null, time-window and value-range checks."""
    m, files, columns = profile.measurement, profile.files, profile.columns
    extremes = []
    for row in files.to_dict("records"):
        for kind in ("min", "max"):
            extremes.append(
                {"file": row["file"], "extreme": kind, **{c: row[f"{kind}_{c}"] for c in columns}}
            )
    frame = pd.DataFrame(extremes, columns=["file", "extreme", *columns])
    checks = _null_checks(dataset, profile)
    if "time" in columns:
        checks.append(_time_check(dataset, profile))
    checks.extend(_range_checks(profile, ranges))
    return Frame(f"{m}.values", frame, checks)


def _null_checks(dataset: Dataset, profile: MeasurementProfile) -> list[Check]:
    """One check per column that must hold no nulls (every column, or time and tags for iot)."""
    m, files, columns = profile.measurement, profile.files, profile.columns
    not_null = _not_null_columns(dataset, m, columns)
    scope = "every column" if not_null == columns else ", ".join(not_null)
    return [
        Check(
            f"{m}: {column} has no nulls",
            "ExpectColumnValuesToNotBeNull",
            {"column": column},
            observed=int(files[f"nulls_{column}"].sum()) if len(files) else 0,
            details=f"null rows per column ({scope}), counted over all rows",
            group=f"{m}: no nulls ({scope})",
            part=column,
        )
        for column in not_null
    ]


def _time_check(dataset: Dataset, profile: MeasurementProfile) -> Check:
    """Every timestamp inside ``[start, end)`` of the manifest's time range."""
    m, files = profile.measurement, profile.files
    start, end = dataset.start_ns, dataset.end_ns
    low, high = (files["min_time"].min(), files["max_time"].max()) if len(files) else (None, None)
    return Check(
        f"{m}: timestamps inside [{format_instant(start)}, {format_instant(end)})",
        "ExpectColumnValuesToBeBetween",
        {"column": "time", "min_value": start, "max_value": end, "strict_max": True},
        observed={
            "first": None if pd.isna(low) else format_instant(int(low)),
            "last": None if pd.isna(high) else format_instant(int(high)),
            "rows_outside": int(files["out_time"].sum()) if len(files) else 0,
        },
        details="per-file minimum and maximum of time (exact)",
    )


def _range_checks(profile: MeasurementProfile, ranges: dict[str, tuple[float, float]]) -> list[Check]:
    """Every value of each column in ``ranges`` inside its inclusive bounds, one group per measurement."""
    m, files, columns = profile.measurement, profile.files, profile.columns
    ranged = [c for c in columns if c in ranges]
    bounds = {ranges[c] for c in ranged}
    if len(bounds) == 1:
        lo, hi = next(iter(bounds))
        group = f"{m}: values in [{lo:g}, {hi:g}] ({len(ranged)} fields)"
    else:
        group = f"{m}: values inside their ranges ({len(ranged)} fields)"
    checks = []
    for column in ranged:
        lo, hi = ranges[column]
        checks.append(
            Check(
                f"{m}: {column} in [{lo:g}, {hi:g}]",
                "ExpectColumnValuesToBeBetween",
                {"column": column, "min_value": lo, "max_value": hi},
                observed={
                    "min": _scalar(files[f"min_{column}"].min()) if len(files) else None,
                    "max": _scalar(files[f"max_{column}"].max()) if len(files) else None,
                    "rows_outside": int(files[f"out_{column}"].sum()) if len(files) else 0,
                },
                details="per-file minimum and maximum of every field (exact)",
                group=group,
                part=column,
            )
        )
    return checks


def _scalar(value: Any) -> Any:
    if value is None or pd.isna(value):
        return None
    return value.item() if hasattr(value, "item") else value


def dataset_suite(
    dataset: Dataset | None,
    problem: str = "",
    memory_limit: str | None = None,
    ranges: dict[str, dict[str, tuple[float, float]]] | None = None,
) -> SuiteSpec:
    """The dataset suite's frames; a dataset that cannot be opened is one failed check."""
    suite = SuiteSpec("dataset", critical=True)
    if dataset is None:
        suite.static.append(entry("dataset folder is readable", False, None, problem))
        return suite
    ranges = RANGES if ranges is None else ranges
    started = time.perf_counter()
    profiles = profile_dataset(dataset, ranges, memory_limit)
    scan_s = time.perf_counter() - started
    suite.frames.append(_files_frame(dataset, profiles))
    suite.frames.append(_counts_frame(dataset, profiles))
    suite.frames.append(_keys_frame(dataset, profiles))
    for m, profile in profiles.items():
        suite.frames.append(_values_frame(dataset, profile, ranges.get(m, {})))
    rows = sum(p.rows for p in profiles.values())
    suite.info = {
        "dataset": dataset.id,
        "path": str(dataset.path),
        "method": "exact aggregates by DuckDB over every Parquet file; GE on per-file extremes and keys",
        "rows": rows,
        "scan_seconds": round(scan_s, 3),
        "scan_rows_per_s": round(rows / scan_s) if scan_s > 0 else None,
    }
    return suite
