"""Client-side shaping benchmark: dataset batches → what each target's writer sends, with no server.

For the targets whose servers cannot run on this machine (ClickHouse, MongoDB in both layouts, GridDB)
and, for comparison, InfluxDB and QuestDB, this times the writer path up to the network in two stages:

* ``shape``: the target's own code (Arrow table, BSON-ready documents, multi-put payload, lines, frame);
* ``+ encode``: the client library's step from that to the request, where it runs without a server
  (Arrow IPC, BSON, Java rows, gzip, ILP buffer). The ``+ encode`` line is the cumulative cost.

What is not measured: reading the Parquet files (printed once, for reference), the network, the
server, and the parts of a client that run only against a server (pymongo's OP_MSG framing around the
BSON, GridDB's ``multiPut`` wire encoding). One thread (Arrow's CPU pool set to 1), batches read into
memory first, a warm-up over the first batches, then ``passes`` timed passes; the median pass is
reported as rows/s of wall time and of process CPU time (which includes the JVM's own threads). The
ratio is to the fastest server ingest measured here (``bench/vs_tsbs.py``'s last run, 2 workers):
how many times faster the client can shape rows than a server could take them (target ≥ 3).

    .venv/bin/python bench/shaping.py [--targets clickhouse,mongodb,mongodb_naive,griddb,influxdb,questdb]
        [--scale 100] [--batch-size 10000] [--passes 3] [--fastest-server ROWS_PER_S]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))

from tsbench.spec import DatasetSpec  # noqa: E402
from tsbench.workload.dataset import Dataset, ensure_dataset  # noqa: E402

VS_TSBS = ROOT / "reports" / "out" / "bench" / "vs_tsbs.json"


def fastest_server(given: int | None) -> tuple[str, int]:
    """The fastest server ingest to compare with: ``--fastest-server`` or, when not given, the
    fastest of our 2-worker loads in the last ``bench/vs_tsbs.py`` run (its file and date named)."""
    if given:
        return "--fastest-server", given
    if not VS_TSBS.is_file():
        raise SystemExit("give --fastest-server ROWS_PER_S, or run bench/vs_tsbs.py first")
    body = json.loads(VS_TSBS.read_text())
    rates = {
        name: t["load"]["workers"]["2"]["ours"]["rows_per_s"]["median"]
        for name, t in body.get("targets", {}).items()
        if "2" in t.get("load", {}).get("workers", {})
    }
    if not rates:
        raise SystemExit(f"{VS_TSBS} has no 2-worker load; give --fastest-server ROWS_PER_S")
    name = max(rates, key=rates.__getitem__)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(VS_TSBS.stat().st_mtime))
    return f"{name} (bench/vs_tsbs.py, {when})", int(rates[name])


TARGET_RATIO = 3.0
WARMUP_BATCHES = 5

Batch = tuple[str, pa.RecordBatch]


@dataclass
class Case:
    """One target's writer path split into the two timed stages.

    ``shape(measurement, batch)`` → shaped; ``encode(measurement, shaped)`` → what is sent (or None
    when nothing separable runs without a server); ``rows(shaped)`` and ``sent_rows(sent)`` (where
    countable) count rows, checked against the batch outside the timers, so no stage skips work.
    """

    target: str
    shape_what: str
    encode_what: str | None
    shape: Callable[[str, pa.RecordBatch], Any]
    encode: Callable[[str, Any], Any] | None
    rows: Callable[[Any], int]
    sent_rows: Callable[[Any], int] | None = None


# -- the cases (each imports its target lazily, so one missing client does not stop the others) -----


def clickhouse(dataset: Dataset) -> Case:
    from clickhouse_connect.driver.compression import available_compression
    from clickhouse_connect.driver.query import arrow_buffer

    from tsbench.targets.clickhouse.batches import InsertShaper

    # What Client.insert_arrow does with the default compress=True: the first available codec, used
    # as Arrow IPC buffer compression when it is lz4 or zstd.
    codec = available_compression[0] if available_compression[0] in ("lz4", "zstd") else None
    shaper = InsertShaper(dataset.use_case, dataset.tags())
    return Case(
        "clickhouse",
        "InsertShaper.shape → Arrow table",
        f"arrow_buffer: Arrow IPC file, {codec or 'uncompressed'} (insert_arrow's body)",
        shaper.shape,
        lambda _m, table: arrow_buffer(table, codec)[1],
        lambda table: table.num_rows,
    )


def mongodb(dataset: Dataset) -> Case:
    import bson
    from pymongo import UpdateOne

    from tsbench.targets.mongodb.hourly import HourlyLayout

    layout = HourlyLayout(dataset.use_case, dataset.tags())

    def encode(_m: str, updates: list[tuple[dict, dict]]) -> tuple[list[UpdateOne], list[bytes]]:
        # HourlyLayout.write's UpdateOne list, then each statement's BSON as the bulk update carries it.
        # (pymongo's bulk builds the same {q, u, multi, upsert} statement and encodes it with this C
        # encoder, inside the OP_MSG it frames for the server).
        operations = [UpdateOne(f, u, upsert=True) for f, u in updates]
        return operations, [bson.encode({"q": f, "u": u, "multi": False, "upsert": True}) for f, u in updates]

    return Case(
        "mongodb",
        "HourlyLayout.updates → per host-hour upserts",
        "UpdateOne list + bson.encode per statement",
        layout.updates,
        encode,
        lambda updates: sum(len(u["$addToSet"]["events"]["$each"]) for _f, u in updates),
        lambda sent: sum(len(bson.decode(b)["u"]["$addToSet"]["events"]["$each"]) for b in sent[1]),
    )


def mongodb_naive(dataset: Dataset) -> Case:
    import bson
    from bson import ObjectId

    from tsbench.targets.mongodb_naive.events import EventLayout

    layout = EventLayout(dataset.use_case, dataset.tags())

    def encode(_m: str, documents: list[dict[str, Any]]) -> list[bytes]:
        # As insert_many: an ObjectId _id set on each document (in place), then its BSON.
        encoded = []
        for document in documents:
            document["_id"] = ObjectId()
            encoded.append(bson.encode(document))
        return encoded

    return Case(
        "mongodb_naive",
        "EventLayout.documents → one document per row",
        "ObjectId _id + bson.encode per document",
        layout.documents,
        encode,
        len,
        len,
    )


def griddb(dataset: Dataset) -> Case:
    from tsbench.targets.griddb import client
    from tsbench.targets.griddb.layout import layout
    from tsbench.targets.griddb.shape import shape

    layouts = {m.name: layout(m) for m in dataset.use_case.measurements}
    key = dataset.use_case.entity_key
    with socket.socket() as probe:  # a port nothing listens on: the store never talks to it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # check=False: a real GridStore that sends nothing until an operation; building rows needs none.
    store = client.Store(client.Connection("127.0.0.1", port, "tsbench", "admin", "x"), check=False)

    return Case(
        "griddb",
        "shape → multi-put payload (column arrays)",
        "Store.rows: JPype arrays → Bulk.rows (Java Row objects for multiPut)",
        lambda m, batch: shape(layouts[m], key, batch),
        lambda _m, payload: store.rows(payload),
        lambda payload: payload.rows,
        lambda rows: sum(int(r.size()) for r in rows.values()),  # Map<container, List<Row>>
    )


def influxdb(dataset: Dataset) -> Case:
    from tsbench.targets.influxdb.writer import GZIP_LEVEL
    from tsbench.targets.lineprotocol import LineBuilder, body, gzip_bytes

    builder = LineBuilder("influxdb", dataset.use_case, dataset.tags())
    measurements = {m.name: m for m in dataset.use_case.measurements}
    return Case(
        "influxdb",
        "LineBuilder.lines → line protocol (Arrow strings)",
        f"body + gzip level {GZIP_LEVEL} (InfluxWriter's POST body)",
        lambda m, batch: builder.lines(measurements[m], batch),
        lambda _m, lines: gzip_bytes(body(lines), GZIP_LEVEL),
        len,
    )


def questdb(dataset: Dataset) -> Case:
    """The same line protocol, sent as plain text (the official client's ``Buffer.dataframe``,
    which this used to measure, made 0.40 M rows/s of cpu rows on one core; no longer used)."""
    from tsbench.targets.lineprotocol import LineBuilder, body

    builder = LineBuilder("questdb", dataset.use_case, dataset.tags())
    measurements = {m.name: m for m in dataset.use_case.measurements}
    return Case(
        "questdb",
        "LineBuilder.lines → line protocol (Arrow strings)",
        "body bytes (QuestDBWriter's POST body, plain)",
        lambda m, batch: builder.lines(measurements[m], batch),
        lambda _m, lines: bytes(body(lines)),
        len,
    )


CASES: dict[str, Callable[[Dataset], Case]] = {
    "clickhouse": clickhouse,
    "mongodb": mongodb,
    "mongodb_naive": mongodb_naive,
    "griddb": griddb,
    "influxdb": influxdb,
    "questdb": questdb,
}


# -- timing ----------------------------------------------------------------------------------------


@dataclass
class Pass:
    """Seconds of one pass over every batch: wall and process CPU, per stage."""

    shape_wall: float = 0.0
    shape_cpu: float = 0.0
    encode_wall: float = 0.0
    encode_cpu: float = 0.0


def one_pass(case: Case, batches: list[Batch]) -> Pass:
    result = Pass()
    for measurement, batch in batches:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        shaped = case.shape(measurement, batch)
        wall1, cpu1 = time.perf_counter(), time.process_time()
        sent = case.encode(measurement, shaped) if case.encode else None
        wall2, cpu2 = time.perf_counter(), time.process_time()
        result.shape_wall += wall1 - wall0
        result.shape_cpu += cpu1 - cpu0
        result.encode_wall += wall2 - wall1
        result.encode_cpu += cpu2 - cpu1
        got = case.rows(shaped)
        if got != batch.num_rows:
            raise SystemExit(f"{case.target}: shaped {got} rows from a batch of {batch.num_rows}")
        if case.sent_rows and (got := case.sent_rows(sent)) != batch.num_rows:
            raise SystemExit(f"{case.target}: encoded {got} rows from a batch of {batch.num_rows}")
        del shaped, sent
    return result


def median_rates(case: Case, batches: list[Batch], passes: int) -> dict[str, float]:
    """Rows/s of the median pass: shape alone and shape + encode, by wall and by CPU time."""
    rows = sum(b.num_rows for _, b in batches)
    one_pass(case, batches[:WARMUP_BATCHES])
    runs = [one_pass(case, batches) for _ in range(passes)]

    def rate(seconds: list[float]) -> float:
        return rows / statistics.median(seconds)

    return {
        "shape_wall": rate([r.shape_wall for r in runs]),
        "shape_cpu": rate([r.shape_cpu for r in runs]),
        "full_wall": rate([r.shape_wall + r.encode_wall for r in runs]),
        "full_cpu": rate([r.shape_cpu + r.encode_cpu for r in runs]),
    }


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(CASES))
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument(
        "--fastest-server", type=int, default=None, help="rows/s to compare with (default: vs_tsbs.json)"
    )
    args = parser.parse_args()
    pa.set_cpu_count(1)  # single thread: no Arrow kernel (or to_pandas) fans out to a pool
    names = [n for n in args.targets.split(",") if n]
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        parser.error(f"unknown targets {unknown}; known: {', '.join(CASES)}")

    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=args.scale))
    started = time.perf_counter()
    batches = [(m, b) for m in dataset.measurements for b in dataset.iter_batches(m, args.batch_size)]
    read_s = time.perf_counter() - started
    rows = sum(b.num_rows for _, b in batches)
    server, fastest = fastest_server(args.fastest_server)
    print("client-side shaping only — no server, no network: rows/s of turning dataset batches into")
    print("what each target's writer sends; not an ingest rate of any database")
    print(
        f"dataset: {dataset.manifest.use_case}, {dataset.scale} entities, {rows:,} rows in "
        f"{len(batches)} batches of {args.batch_size:,}; 1 thread; median of {args.passes} passes "
        f"after a {WARMUP_BATCHES}-batch warm-up"
    )
    print(f"load average before: {load_average()} (a busy machine inflates wall time; CPU time less)")
    print(f"reading batches (Dataset.iter_batches; not in the figures below): {rows / read_s:,.0f} rows/s")
    print(
        f"×: rows/s vs the fastest server measured here ({fastest / 1000:.0f}k rows/s) — {server} "
        "— i.e. how many times faster the client shapes rows than a server took them "
        "(target ≥ 3)"
    )
    print()
    header = (
        f"{'target':<14} {'stage':<8} {'wall rows/s':>12} {'CPU rows/s':>12} {'× (wall)':>9} "
        f"{'× (CPU)':>8}  what"
    )
    print(header)
    print("-" * len(header))
    full_rates: dict[str, float] = {}
    for name in names:
        try:
            case = CASES[name](dataset)
        except Exception as error:  # a client that cannot start here: say so, go on
            print(f"{name:<14} not measured: {type(error).__name__}: {str(error)[:200]}")
            continue
        r = median_rates(case, batches, args.passes)
        stages = [("shape", r["shape_wall"], r["shape_cpu"], case.shape_what)]
        if case.encode:
            stages.append(("+ encode", r["full_wall"], r["full_cpu"], case.encode_what or ""))
        for index, (stage, wall, cpu, what) in enumerate(stages):
            label = name if index == 0 else ""
            print(
                f"{label:<14} {stage:<8} {wall:>12,.0f} {cpu:>12,.0f} {wall / fastest:>8.1f}× "
                f"{cpu / fastest:>7.1f}×  {what}"
            )
        full_rates[name] = r["full_wall"] if case.encode else r["shape_wall"]
    print()
    print(f"load average after: {load_average()}")
    if full_rates:
        below = [
            f"{n} ×{rate / fastest:.1f}" for n, rate in full_rates.items() if rate < TARGET_RATIO * fastest
        ]
        print(
            f"full client path (shape + encode, wall) vs the fastest server measured here "
            f"({fastest / 1000:.0f}k rows/s): "
            + (f"below the target ≥ 3: {', '.join(below)}" if below else "every target meets ≥ 3")
        )
    print(
        "not included: the network and any server; pymongo's OP_MSG framing around the BSON and GridDB's "
        "multiPut wire encoding (both run only against a server)"
    )
    print(
        f"figures are for one thread; the {server} figure is a load with 2 workers on these "
        "2 cores (a second worker adds at most one more core, less where Python holds the GIL)"
    )


if __name__ == "__main__":
    main()
