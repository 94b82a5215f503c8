"""TSBS data files: export in TSBS's formats, import them back, the published sample row, bad input."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tsbench.progress import Progress
from tsbench.spec import DatasetSpec
from tsbench.timeutil import parse_instant
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.tsbs import (
    CHUNK_BYTES,
    TsbsFormatError,
    detect_format,
    export_dataset,
    import_tsbs,
    number_strings,
    timescaledb_header,
)
from tsbench.workload.usecases import CPU_FIELDS, HOST_TAGS, get_use_case

START = parse_instant("2016-01-01T00:00:00Z")
SAMPLE_TAGS = dict(
    zip(
        HOST_TAGS,
        ["host_0", "eu-central-1", "eu-central-1a", "6", "Ubuntu15.10", "x86", "SF", "19", "1", "test"],
        strict=True,
    )
)
SAMPLE_VALUES = dict(zip(CPU_FIELDS, [58, 2, 24, 61, 22, 63, 6, 44, 80, 38], strict=True))
SAMPLE_INFLUX = (
    "cpu,hostname=host_0,region=eu-central-1,datacenter=eu-central-1a,rack=6,os=Ubuntu15.10,arch=x86,"
    "team=SF,service=19,service_version=1,service_environment=test usage_user=58i,usage_system=2i,"
    "usage_idle=24i,usage_nice=61i,usage_iowait=22i,usage_irq=63i,usage_softirq=6i,usage_steal=44i,"
    "usage_guest=80i,usage_guest_nice=38i 1451606400000000000\n"
)
CPU_HEADER = (
    "tags,hostname string,region string,datacenter string,rack string,os string,arch string,team string,"
    "service string,service_version string,service_environment string\n"
    "cpu,usage_user,usage_system,usage_idle,usage_nice,usage_iowait,usage_irq,usage_softirq,usage_steal,"
    "usage_guest,usage_guest_nice\n\n"
)
SAMPLE_TIMESCALEDB = (
    CPU_HEADER
    + "tags,hostname=host_0,region=eu-central-1,datacenter=eu-central-1a,rack=6,os=Ubuntu15.10,arch=x86,"
    "team=SF,service=19,service_version=1,service_environment=test\n"
    "cpu,1451606400000000000,58,2,24,61,22,63,6,44,80,38\n"
)
HOST0 = ",".join(f"{k}={v}" for k, v in SAMPLE_TAGS.items())
CPU_VALUES = ",".join(f"{k}={v}i" for k, v in SAMPLE_VALUES.items())


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Dataset]:
    root = tmp_path_factory.mktemp("generated")
    out = {}
    for use_case in ("cpu-only", "devops", "iot"):
        spec = DatasetSpec.parse(use_case=use_case, scale=5, end="2016-01-01T01:00:00Z")
        out[use_case], _ = ensure_dataset(spec, root)
    return out


def plain(table: pa.Table) -> pa.Table:
    """Dictionary columns decoded, so that tables compare by value."""
    columns = {}
    for name in table.column_names:
        column = table.column(name)
        columns[name] = column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column
    return pa.table(columns)


def without_empty_rows(dataset: Dataset, measurement: str, table: pa.Table) -> pa.Table:
    """The rows an influx file keeps: TSBS writes no line for a point without any field."""
    fields = dataset.use_case.measurement(measurement).field_names
    empty = pc.is_null(table.column(fields[0]))
    for name in fields[1:]:
        empty = pc.and_(empty, pc.is_null(table.column(name)))
    return table.filter(pc.invert(empty))


def assert_same_data(original: Dataset, imported: Dataset, fmt: str) -> None:
    assert imported.use_case.name == original.use_case.name
    assert imported.tags().to_pylist() == original.tags().to_pylist()
    for m in original.measurements:
        expected = plain(original.read(m))
        if fmt == "influx":
            expected = without_empty_rows(original, m, expected)
        got = plain(imported.read(m))
        assert got.schema.names == expected.schema.names
        assert got.num_rows == expected.num_rows, m
        for name in expected.column_names:
            assert got.column(name).equals(expected.column(name)), (m, name)
    for m, schema in original.manifest.to_json()["schema"].items():
        assert imported.manifest.to_json()["schema"][m] == schema
    assert imported.start_ns == original.start_ns
    assert imported.end_ns == original.end_ns
    assert imported.interval_ns == original.interval_ns
    assert imported.scale == original.scale


def read_text(path: Path) -> str:
    if path.name.endswith(".gz"):
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("fmt", ["influx", "timescaledb"])
def test_cpu_only_round_trip(generated: dict[str, Dataset], tmp_path: Path, fmt: str, suffix: str) -> None:
    dataset = generated["cpu-only"]
    path = tmp_path / f"cpu.{fmt}{suffix}"
    assert export_dataset(dataset, fmt, path) == 5 * 360
    assert not list(tmp_path.glob(".*partial"))
    if suffix:
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert detect_format(path) == fmt
    imported, reused = import_tsbs(path, cache=tmp_path / "cache")
    assert not reused
    assert_same_data(dataset, imported, fmt)
    source = imported.manifest.to_json()["source"]
    assert source["kind"] == "tsbs-import" and source["file"] == path.name and source["format"] == fmt
    assert len(source["sha256"]) == 64 and source["skipped_rows"] == 0
    assert imported.manifest.entities == 5
    # exported again, the imported dataset gives the same bytes
    again = tmp_path / f"again.{fmt}"
    export_dataset(imported, fmt, again)
    assert again.read_text() == read_text(path)


@pytest.mark.parametrize("fmt", ["influx", "timescaledb"])
@pytest.mark.parametrize("use_case", ["devops", "iot"])
def test_devops_and_iot_round_trip(
    generated: dict[str, Dataset], tmp_path: Path, use_case: str, fmt: str
) -> None:
    dataset = generated[use_case]
    path = tmp_path / f"{use_case}.{fmt}.gz"
    written = export_dataset(dataset, fmt, path)
    imported, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert_same_data(dataset, imported, fmt)
    assert sum(imported.rows.values()) == written
    if fmt == "timescaledb":
        assert written == sum(dataset.rows.values())
    text = read_text(path)
    if use_case == "devops":
        # TSBS's order: per epoch, every measurement in turn, each for all 5 hosts
        rows = text.splitlines()
        if fmt == "timescaledb":
            rows = rows[1 + 9 + 1 :][1::2]  # after the header, the data line of each pair
        names = [row.split(",", 1)[0] for row in rows[: 2 * 9 * 5]]
        assert names == 2 * [m.name for m in dataset.use_case.measurements for _ in range(5)]
        assert ",serial=" in text and ",path=" in text and ",port=" in text
    if use_case == "iot" and fmt == "influx":
        assert ",," not in text and "= " not in text  # missing fields are left out, never empty
    if use_case == "iot":  # nameless points travel without a name (influx) or with an empty one
        nameless = sum(dataset.read(m).column("name").null_count for m in dataset.measurements)
        assert nameless and imported.manifest.to_json()["source"]["nameless_rows"] == nameless
    if use_case == "iot" and fmt == "timescaledb":
        assert text.startswith(timescaledb_header(dataset.use_case))
        assert ",load_capacity=" in text.splitlines()[4]


def test_headers_are_tsbs_shaped() -> None:
    assert timescaledb_header(get_use_case("cpu-only")) == CPU_HEADER
    devops = timescaledb_header(get_use_case("devops")).split("\n")
    assert devops[0] == CPU_HEADER.split("\n")[0]
    assert [line.split(",")[0] for line in devops[1:10]] == sorted(
        m.name for m in get_use_case("devops").measurements
    )
    assert devops[10:] == ["", ""]
    iot = timescaledb_header(get_use_case("iot")).split("\n")
    assert iot[0].endswith(
        ",device_version string,load_capacity float32,fuel_capacity float32,nominal_fuel_consumption float32"
    )
    assert iot[1] == "diagnostics,fuel_state,current_load,status"
    assert iot[2].startswith("readings,latitude,")


def check_sample(dataset: Dataset) -> None:
    assert dataset.use_case.name == "cpu-only"
    assert dataset.tags().to_pylist() == [SAMPLE_TAGS]
    rows = plain(dataset.read("cpu")).to_pylist()
    assert len(rows) == 1
    row = rows[0]
    assert row.pop("time").value == START == 1451606400000000000
    assert row == {"hostname": "host_0", **SAMPLE_VALUES}
    assert dataset.start_ns == START and dataset.interval_ns == 10_000_000_000
    assert dataset.end_ns == START + 10_000_000_000


@pytest.mark.parametrize("fmt", ["influx", "timescaledb"])
def test_published_sample_row(tmp_path: Path, fmt: str) -> None:
    text = SAMPLE_INFLUX if fmt == "influx" else SAMPLE_TIMESCALEDB
    path = tmp_path / f"sample.{fmt}"
    path.write_text(text)
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    check_sample(dataset)
    assert dataset.manifest.to_json()["source"]["format"] == fmt
    # and written back exactly as TSBS writes it, to a path or to a file object
    out = io.BytesIO()
    assert export_dataset(dataset, fmt, out) == 1
    assert out.getvalue().decode() == text


def test_sample_row_with_crlf_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "sample.txt"
    path.write_bytes(b"\r\n" + SAMPLE_INFLUX.replace("\n", "\r\n").encode() + b"\r\n")
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    check_sample(dataset)


def test_second_import_is_reused(tmp_path: Path) -> None:
    path = tmp_path / "sample.influx"
    path.write_text(SAMPLE_INFLUX)
    first, reused_first = import_tsbs(path, cache=tmp_path / "cache")
    second, reused_second = import_tsbs(path, fmt="influx", cache=tmp_path / "cache")
    assert (reused_first, reused_second) == (False, True)
    assert second.path == first.path and second.id == first.id
    copy = tmp_path / "renamed.txt"  # the content decides, not the name
    copy.write_text(SAMPLE_INFLUX)
    assert import_tsbs(copy, cache=tmp_path / "cache")[0].path == first.path
    other = tmp_path / "other.influx"
    other.write_text(SAMPLE_INFLUX.replace("58i", "57i"))
    assert import_tsbs(other, cache=tmp_path / "cache")[0].path != first.path


def test_use_case_is_inferred_and_can_be_given(tmp_path: Path) -> None:
    mem = f"mem,{HOST0} total=100i,available=50i,used=50i,used_percent=50.5 1451606400000000000\n"
    path = tmp_path / "devops.influx"
    path.write_text(SAMPLE_INFLUX + mem)
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert dataset.use_case.name == "devops"
    assert dataset.rows["cpu"] == 1 and dataset.rows["mem"] == 1 and dataset.rows["disk"] == 0
    row = plain(dataset.read("mem")).to_pylist()[0]
    assert row["total"] == 100 and row["used_percent"] == 50.5 and row["free"] is None
    sample = tmp_path / "sample.influx"
    sample.write_text(SAMPLE_INFLUX)
    as_devops, _ = import_tsbs(sample, use_case="devops", cache=tmp_path / "cache")
    assert as_devops.use_case.name == "devops" and as_devops.rows["cpu"] == 1
    with pytest.raises(TsbsFormatError, match=r"line 2: measurement 'mem' is not part of use case cpu-only"):
        import_tsbs(path, use_case="cpu-only", cache=tmp_path / "cache")
    with pytest.raises(TsbsFormatError, match="looks like influx"):
        import_tsbs(sample, fmt="timescaledb", cache=tmp_path / "cache")


def test_iot_points_with_cleared_tags(tmp_path: Path) -> None:
    """TSBS's iot data clears a random tag on some points: not a change; a point without a name is
    kept as a nameless row (null name), in both formats."""
    tags = "name=truck_0,fleet=South,driver=Trish,model=H-2,device_version=v2.3"
    fields = (
        "load_capacity=1500,fuel_capacity=150,nominal_fuel_consumption=12,latitude=72.5,fuel_consumption=25"
    )
    lines = [
        f"readings,{tags} {fields} 1451606400000000000",
        f"readings,{tags.replace(',fleet=South', '')} {fields} 1451606410000000000",
        f"readings,{tags.replace('name=truck_0,', '')} {fields} 1451606420000000000",
        f"diagnostics,{tags} fuel_state=0.5,current_load=100,status=3i 1451606440000000000",
    ]
    path = tmp_path / "iot.influx"
    path.write_text("\n".join(lines) + "\n")
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert dataset.use_case.name == "iot"
    assert dataset.rows == {"readings": 3, "diagnostics": 1}
    assert dataset.manifest.to_json()["source"]["skipped_rows"] == 0
    assert dataset.manifest.to_json()["source"]["nameless_rows"] == 1
    assert dataset.tags().to_pylist() == [
        {"name": "truck_0", "fleet": "South", "driver": "Trish", "model": "H-2", "device_version": "v2.3"}
    ]
    readings = plain(dataset.read("readings")).to_pylist()
    assert readings[0]["latitude"] == 72.5 and readings[0]["longitude"] is None
    assert readings[1]["load_capacity"] == 1500.0
    assert readings[2]["name"] is None and readings[2]["latitude"] == 72.5
    assert [row["name"] for row in readings] == ["truck_0", "truck_0", None]
    diagnostics = plain(dataset.read("diagnostics")).to_pylist()[0]
    assert diagnostics["status"] == 3 and diagnostics["load_capacity"] is None
    # the same in TSBS's timescaledb format, where the truck's capacities travel on the tags line
    header = timescaledb_header(get_use_case("iot"))
    caps = "load_capacity=1500,fuel_capacity=150,nominal_fuel_consumption=12"
    rows = [
        f"tags,{tags},{caps}\nreadings,1451606400000000000,72.5,,,,,,25",
        f"tags,{tags.replace('fleet=South', 'fleet=')},{caps}\nreadings,1451606410000000000,72.5,,,,,,25",
        f"tags,{tags.replace('name=truck_0', 'name=')},{caps}\nreadings,1451606420000000000,72.5,,,,,,25",
        f"tags,{tags},load_capacity=,fuel_capacity=,nominal_fuel_consumption=\ndiagnostics,1451606440000000000,0.5,100,3",
    ]
    path = tmp_path / "iot.timescaledb"
    path.write_text(header + "\n".join(rows) + "\n")
    again, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert again.rows == dataset.rows and again.tags().to_pylist() == dataset.tags().to_pylist()
    assert plain(again.read("readings")).equals(plain(dataset.read("readings")))
    assert plain(again.read("diagnostics")).equals(plain(dataset.read("diagnostics")))


def test_a_cpu_row_without_hostname_is_skipped_and_counted(tmp_path: Path) -> None:
    """Only iot has nameless rows (TSBS clears no devops tag): a cpu line without its host is
    skipped, counted in the manifest, and never stored with a null host."""
    values = ",".join(f"{f}=1i" for f in CPU_FIELDS)
    lines = [
        f"cpu,hostname=host_0,region=r {values} 1451606400000000000",
        f"cpu,region=r {values} 1451606410000000000",
    ]
    path = tmp_path / "cpu.influx"
    path.write_text("\n".join(lines) + "\n")
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert dataset.rows == {"cpu": 1}
    source = dataset.manifest.to_json()["source"]
    assert source["skipped_rows"] == 1 and source["nameless_rows"] == 0
    assert dataset.read("cpu").column("hostname").null_count == 0


@pytest.mark.parametrize(
    ("stamps", "interval"),
    [
        ([0, 10, 30, 40], 10),  # regular with a missing point: the smallest gap
        ([0, 20, 60, 80], 20),
        ([0, 7, 17, 27, 37], 10),  # irregular: the most common gap
    ],
)
def test_interval_is_inferred(tmp_path: Path, stamps: list[int], interval: int) -> None:
    second = 1_000_000_000
    lines = [SAMPLE_INFLUX.replace("1451606400000000000", str(START + s * second)) for s in stamps]
    path = tmp_path / "gaps.influx"
    path.write_text("".join(lines))
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert dataset.interval_ns == interval * second
    assert dataset.start_ns == START and dataset.end_ns == START + (stamps[-1] + interval) * second


def test_floats_are_written_in_plain_notation() -> None:
    values = pa.array([1500.0, 0.25, 1e-7, 1.5e17, 12345678901.0, 1e15, -2.5, 72.45258, 0.0, None])
    assert number_strings(values).to_pylist() == [
        "1500",
        "0.25",
        "0.0000001",
        "150000000000000000",
        "12345678901",
        "1000000000000000",
        "-2.5",
        "72.45258",
        "0",
        None,
    ]
    assert number_strings(pa.array([58, -3, None], pa.int64())).to_pylist() == ["58", "-3", None]


GOOD = SAMPLE_INFLUX.strip()
TAGS_LINE = SAMPLE_TIMESCALEDB.splitlines()[3]
DATA_LINE = SAMPLE_TIMESCALEDB.splitlines()[4]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{GOOD}\ncpu,{HOST0} {CPU_VALUES}\n", r"line 2: not of the form <series> <fields> <timestamp>"),
        (f"{GOOD}\n{GOOD} extra\n", r"line 2: not of the form"),
        (
            f"{GOOD}\n\n{GOOD.replace('usage_idle=24i', 'usage_idle=abc')}\n",
            r"line 3: cpu field usage_idle 'abc' is not an integer",
        ),
        (
            f"{GOOD}\n{GOOD.replace('usage_idle=24i', 'usage_idle=24.5')}\n",
            r"line 2: cpu field usage_idle '24.5' is not an integer",
        ),
        (
            f"{GOOD}\n{GOOD.replace(' 1451606400000000000', ' 2016-01-01')}\n",
            r"line 2: timestamp '2016-01-01' is not an integer",
        ),
        (f"{GOOD}\n{GOOD.replace('cpu,', 'cpux,')}\n", r"line 2: unknown measurement 'cpux'"),
        (
            f"{GOOD}\n{GOOD.replace('usage_irq=', 'usage_bogus=')}\n",
            r"line 2: field 'usage_bogus' is not a field of cpu-only measurement cpu",
        ),
        (
            f"{GOOD}\n{GOOD.replace('usage_irq=63i', 'usage_user=63i')}\n",
            r"line 2: field 'usage_user' appears twice",
        ),
        (
            f"{GOOD}\n{GOOD.replace('usage_irq=63i', 'usage_irq')}\n",
            r"line 2: fields must be '<field>=<value>",
        ),
        (f"{GOOD}\n{GOOD.replace('rack=6', 'rack6')}\n", r"line 2: malformed tag 'rack6'"),
        (f"{GOOD}\n{GOOD.replace('rack=6', 'shelf=6')}\n", r"line 2: tag 'shelf' is not a tag of cpu-only"),
        (
            f"{GOOD}\n{GOOD}\n{GOOD.replace('region=eu-central-1,', 'region=us-east-1,')}\n",
            r"line 3: hostname host_0: tag region changed from 'eu-central-1' to 'us-east-1'",
        ),
    ],
)
def test_malformed_influx_names_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.influx"
    path.write_text(text)
    with pytest.raises(TsbsFormatError, match=message):
        import_tsbs(path, cache=tmp_path / "cache")
    assert not [
        p for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")
    ]  # nothing left behind


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            f"{SAMPLE_TIMESCALEDB}{DATA_LINE}\n{TAGS_LINE}\n",
            r"line 6: expected a 'tags,<tag>=<value>,…' line",
        ),
        (f"{SAMPLE_TIMESCALEDB}{TAGS_LINE}\n", r"line 6: a tags line without its data line"),
        (
            f"{SAMPLE_TIMESCALEDB}{TAGS_LINE}\n{DATA_LINE},1\n",
            r"line 7: cpu rows need 12 comma-separated values",
        ),
        (
            f"{SAMPLE_TIMESCALEDB}{TAGS_LINE}\n{DATA_LINE.replace(',58,', ',x,')}\n",
            r"line 7: cpu field usage_user 'x' is not an integer",
        ),
        (
            f"{SAMPLE_TIMESCALEDB}{TAGS_LINE}\nmem,1451606400000000000,1\n",
            r"line 7: measurement 'mem' is not declared in the header",
        ),
        (
            f"{SAMPLE_TIMESCALEDB}{TAGS_LINE.replace('rack=6', 'rack=7')}\n{DATA_LINE}\n",
            r"line 7: hostname host_0: tag rack changed",
        ),
        (
            SAMPLE_TIMESCALEDB.replace("usage_irq,", "usage_bogus,"),
            r"line 2: 'usage_bogus' is not a field of cpu-only measurement cpu",
        ),
        (SAMPLE_TIMESCALEDB.replace("\n\n", "\n"), r"the file ends inside the timescaledb header"),
        (SAMPLE_TIMESCALEDB.replace(",rack string", ",shelf string"), r"line 1: unknown tag 'shelf'"),
    ],
)
def test_malformed_timescaledb_names_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.timescaledb"
    path.write_text(text)
    with pytest.raises(TsbsFormatError, match=message):
        import_tsbs(path, cache=tmp_path / "cache")


def test_empty_file_and_bad_arguments(tmp_path: Path, generated: dict[str, Dataset]) -> None:
    empty = tmp_path / "empty.influx"
    empty.write_text("")
    with pytest.raises(TsbsFormatError, match="empty"):
        import_tsbs(empty, cache=tmp_path / "cache")
    with pytest.raises(FileNotFoundError):
        import_tsbs(tmp_path / "missing.influx", cache=tmp_path / "cache")
    with pytest.raises(ValueError, match="unknown TSBS format"):
        export_dataset(generated["cpu-only"], "csv", tmp_path / "x.csv")  # type: ignore[arg-type]


def test_export_and_import_report_progress(generated: dict[str, Dataset], tmp_path: Path) -> None:
    path = tmp_path / "cpu.influx"
    with Progress("export", total=5 * 360, bar=False) as progress:
        export_dataset(generated["cpu-only"], "influx", path, progress=progress)
    assert progress.done == 5 * 360
    with Progress("import", bar=False) as progress:
        import_tsbs(path, cache=tmp_path / "cache", progress=progress)
    assert progress.done == 5 * 360


@pytest.mark.parametrize("fmt", ["influx", "timescaledb"])
def test_file_larger_than_a_chunk(tmp_path: Path, fmt: str) -> None:
    """Rows (and timescaledb's line pairs) that straddle the chunks the reader parses at once."""
    spec = DatasetSpec.parse(scale=60, end="2016-01-01T03:00:00Z")
    dataset, _ = ensure_dataset(spec, tmp_path / "generated")
    path = tmp_path / f"cpu.{fmt}"
    export_dataset(dataset, fmt, path)
    assert path.stat().st_size > 1.2 * CHUNK_BYTES
    imported, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert_same_data(dataset, imported, fmt)


def test_devops_extra_tags_are_required(tmp_path: Path) -> None:
    line = f"diskio,{HOST0} reads=1i 1451606400000000000\n"
    path = tmp_path / "diskio.influx"
    path.write_text(SAMPLE_INFLUX + line)
    with pytest.raises(TsbsFormatError, match=r"line 2: measurement diskio needs tag 'serial'"):
        import_tsbs(path, cache=tmp_path / "cache")
    path.write_text(SAMPLE_INFLUX + line.replace(" reads", ",serial=123-456 reads"))
    dataset, _ = import_tsbs(path, cache=tmp_path / "cache")
    assert plain(dataset.read("diskio")).to_pylist()[0]["serial"] == "123-456"


def test_tags_must_be_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.influx"
    path.write_bytes(SAMPLE_INFLUX.encode() + SAMPLE_INFLUX.replace("host_0", "h\xf6st").encode("latin-1"))
    with pytest.raises(TsbsFormatError, match="line 2: tags are not valid UTF-8"):
        import_tsbs(path, cache=tmp_path / "cache")
