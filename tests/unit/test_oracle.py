"""The oracle (DuckDB) against an independent pandas computation, for every query type."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsbench.spec import DatasetSpec
from tsbench.workload.answer_file import AnswerFile, read_answers, write_answers
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import Kind, get_query_type, types_of
from tsbench.workload.usecases import get_use_case

CPU_TYPES = types_of(get_use_case("cpu-only").query_families)  # the types a cpu dataset answers


@pytest.fixture(scope="module")
def frame(small_dataset: Dataset) -> pd.DataFrame:
    table = small_dataset.read("cpu").to_pandas()
    table["t"] = table["time"].astype("int64")
    table["hostname"] = table["hostname"].astype(str)
    return table


@pytest.fixture(scope="module")
def oracle(small_dataset: Dataset) -> Oracle:
    return Oracle(small_dataset)


def pandas_answer(df: pd.DataFrame, q: LogicalQuery) -> Answer:
    """A second, independent implementation of every query kind."""
    qtype = q.query_type
    fields = list(q.fields)
    rows = df if q.hosts is None else df[df.hostname.isin(q.hosts)]
    if qtype.kind is Kind.LASTPOINT:
        last = rows.sort_values("t").groupby("hostname").tail(1)
        return Answer.build(qtype, last[["hostname", "t", *fields]].values.tolist())
    if qtype.kind is Kind.READ:
        hit = rows[rows.t == q.at_ns]
        return Answer.build(qtype, hit[["t", "hostname", *fields]].values.tolist())
    if qtype.kind is Kind.ORDERBY_LIMIT:
        before = rows[rows.t < q.end_ns]
        buckets = before.assign(b=before.t // qtype.bucket_ns * qtype.bucket_ns).groupby("b")[fields[0]].max()
        top = buckets.sort_index(ascending=False).head(qtype.limit)
        return Answer.build(qtype, [[int(b), float(v)] for b, v in top.items()])
    window = rows[(rows.t >= q.start_ns) & (rows.t < q.end_ns)]
    if qtype.kind in (Kind.HIGH_CPU, Kind.SCAN):
        if qtype.kind is Kind.HIGH_CPU:
            window = window[window.usage_user > qtype.threshold]
        return Answer.build(qtype, window[["t", "hostname", *fields]].values.tolist())
    if qtype.kind is Kind.RANGE_AGG:
        series = window[fields[0]].astype(float)
        value = {"count": series.count(), "sum": series.sum(), "avg": series.mean() if len(series) else None}[
            qtype.agg
        ]
        return Answer.build(qtype, [[value]])
    keys = ["b", "hostname"] if qtype.kind is Kind.GROUPBY_HOST else ["b"]
    grouped = window.assign(b=window.t // qtype.bucket_ns * qtype.bucket_ns).groupby(keys)[fields]
    result = (grouped.max() if qtype.agg == "max" else grouped.mean()).reset_index()
    return Answer.build(qtype, result[[*keys, *fields]].values.tolist())


@pytest.mark.parametrize("type_name", CPU_TYPES)
def test_oracle_agrees_with_pandas(
    type_name: str, small_dataset: Dataset, frame: pd.DataFrame, oracle: Oracle
) -> None:
    queries = generate_queries(DataRange.of(small_dataset), [type_name], 8, seed=11)
    nonempty = 0
    for q in queries:
        expected = pandas_answer(frame, q)
        actual = oracle.answer(q)
        result = compare(expected, actual)
        assert result.ok, (q.id, result.reason, result.diff)
        nonempty += bool(expected.rows)
    assert nonempty >= 3, f"{type_name}: answers are mostly empty, the cross-check proves little"


def test_answer_shapes(small_dataset: Dataset, oracle: Oracle) -> None:
    data = DataRange.of(small_dataset)
    q = generate_queries(data, ["groupby-orderby-limit"], 1, seed=2)[0]
    answer = oracle.answer(q)
    assert answer.columns == ["bucket", "max_usage_user"] and len(answer.rows) == 5
    buckets = [row[0] for row in answer.rows]
    assert max(buckets) == (q.end_ns - 1) // 60_000_000_000 * 60_000_000_000  # the *last* 5 minutes
    last = oracle.answer(generate_queries(data, ["lastpoint"], 1, seed=2)[0])
    assert len(last.rows) == 12 and all(row[1] == data.end_ns - data.interval_ns for row in last.rows)
    dg = oracle.answer(generate_queries(data, ["double-groupby-all"], 1, seed=2)[0])
    assert len(dg.rows) in (12 * 12, 12 * 13) and len(dg.columns) == 12


def test_answers_file_round_trip(tmp_path, small_dataset: Dataset, oracle: Oracle) -> None:
    queries = generate_queries(DataRange.of(small_dataset), CPU_TYPES, 2, seed=4)
    path = write_answers(tmp_path / "answers.jsonl", oracle.answers(queries))
    loaded = read_answers(path)
    assert set(loaded) == {q.id for q in queries}
    for q in queries:
        assert compare(oracle.answer(q), loaded[q.id]).ok
    lines = [
        json.dumps({"id": q.id, "type": q.type, **oracle.answer(q).to_json()}, separators=(",", ":"))
        for q in queries
    ]
    assert path.read_text() == "".join(f"{line}\n" for line in lines)  # chunked writing, one JSON line each
    lazy = AnswerFile(path)  # one answer at a time, the same answers
    assert list(lazy) == list(loaded) and len(lazy) == len(loaded)
    assert all(lazy[query_id] == answer for query_id, answer in loaded.items())
    assert "nope#0" not in lazy


def test_streamed_answers_are_written_as_the_answers_held_in_memory(
    tmp_path, monkeypatch, small_dataset: Dataset, oracle: Oracle
) -> None:
    """DuckDB's order (``sorted_sql``) is the order ``Answer`` sorts into in Python, part by part:
    fetched 7 rows at a time, the streamed file is byte for byte the in-memory one."""
    queries = generate_queries(DataRange.of(small_dataset), CPU_TYPES, 2, seed=5)
    held = write_answers(tmp_path / "held.jsonl", oracle.answers(queries))
    monkeypatch.setattr("tsbench.workload.oracle.FETCH_ROWS", 7)
    streamed = write_answers(tmp_path / "streamed.jsonl", oracle.streamed_answers(queries))
    assert streamed.read_bytes() == held.read_bytes()
    assert max(len(line) for line in held.read_text().splitlines()) > 10_000  # answers of many parts


def test_float_means_are_exact_enough(small_dataset: Dataset, frame: pd.DataFrame, oracle: Oracle) -> None:
    q = generate_queries(DataRange.of(small_dataset), ["double-groupby-5"], 1, seed=9)[0]
    ours = np.array([row[2:] for row in oracle.answer(q).rows], dtype=float)
    theirs = np.array([row[2:] for row in pandas_answer(frame, q).rows], dtype=float)
    assert np.max(np.abs(ours - theirs)) < 1e-9


def test_reference_answers_are_cached_beside_the_dataset(tmp_path, dataset_cache) -> None:
    """A second run with the same dataset and query set reuses the answers, byte for byte."""
    from tsbench.run.comparison import parse_comparison
    from tsbench.run.point_setup import prepare_dataset, prepare_oracle

    spec = parse_comparison(
        {"scales": [5], "end": "2016-01-01T12:00:00Z", "targets": ["questdb"], "queries_per_type": 2}
    )[0]
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        prepare_dataset(spec, folder, dataset_cache)
    assert prepare_oracle(first).oracle_reused is False
    assert prepare_oracle(second).oracle_reused is True
    assert (first / "answers.jsonl").read_bytes() == (second / "answers.jsonl").read_bytes()
    other = parse_comparison(
        {"scales": [5], "end": "2016-01-01T12:00:00Z", "targets": ["questdb"], "queries_per_type": 3}
    )[0]
    prepare_dataset(other, tmp_path / "c", dataset_cache)
    assert prepare_oracle(tmp_path / "c").oracle_reused is False  # another query set, other key


def test_large_answers_are_compared_row_by_row_from_the_file(
    tmp_path, small_dataset: Dataset, oracle: Oracle, monkeypatch
) -> None:
    """Streamed from its line (as every answer over STREAM_ABOVE_BYTES is), the check gives the
    same verdicts as comparing whole answers: equal answers agree, a lost row and a changed value
    are caught with the same reason."""
    from tsbench.workload import answer_file
    from tsbench.workload.answers import Answer

    monkeypatch.setattr(answer_file, "STREAM_ABOVE_BYTES", 0)
    monkeypatch.setattr(answer_file, "READ_BLOCK_BYTES", 7)  # rows and the header cut across blocks
    queries = generate_queries(
        DataRange.of(small_dataset), ["high-cpu-all", "lastpoint", "ycsb-avg"], 2, seed=4
    )
    path = write_answers(tmp_path / "answers.jsonl", oracle.answers(queries))
    answers = AnswerFile(path)
    for q in queries:
        good = oracle.answer(q)
        assert answers.compare_with(q.id, good).ok
        if len(good.rows) < 2:
            continue
        lost = Answer(good.columns, good.rows[1:], good.key)
        changed = Answer(good.columns, [(*good.rows[0][:-1], -1.0), *good.rows[1:]], good.key)
        for wrong in (lost, changed):
            streamed, whole = answers.compare_with(q.id, wrong), compare(good, wrong)
            assert not streamed.ok and streamed.reason == whole.reason and streamed.diff == whole.diff


def test_answers_held_by_columns_stream_through_the_file(
    tmp_path, small_dataset: Dataset, oracle: Oracle, monkeypatch
) -> None:
    """Fetched from DuckDB in parts (so held by columns), written a few rows at a time and read back
    a few bytes at a time (a non-ASCII tag cut inside its UTF-8 bytes): the same answers."""
    from tsbench.workload import answer_file
    from tsbench.workload import oracle as oracle_module
    from tsbench.workload.answer_columns import ColumnRows

    queries = generate_queries(DataRange.of(small_dataset), ["high-cpu-all", "double-groupby-1"], 1, seed=6)
    whole = {q.id: oracle.answer(q) for q in queries}
    monkeypatch.setattr(oracle_module, "FETCH_ROWS", 5)
    monkeypatch.setattr(answer_file, "WRITE_CHUNK_ROWS", 3)
    parted = {q.id: oracle.answer(q) for q in queries}
    assert all(isinstance(a.rows, ColumnRows) for a in parted.values())
    assert all(list(parted[i].rows) == whole[i].rows for i in whole)
    tagged = LogicalQuery("tags#0", "high-cpu-all", whole[queries[0].id].columns[2:])
    renamed = [(row[0], f"hôst_ü{row[1]}", *row[2:]) for row in whole[queries[0].id].rows]
    unicode = Answer(whole[queries[0].id].columns, renamed, whole[queries[0].id].key)
    path = write_answers(
        tmp_path / "answers.jsonl", [*((q, parted[q.id]) for q in queries), (tagged, unicode)]
    )
    monkeypatch.setattr(answer_file, "STREAM_ABOVE_BYTES", 0)
    monkeypatch.setattr(answer_file, "READ_BLOCK_BYTES", 3)
    answers = AnswerFile(path)
    assert all(answers.compare_with(i, whole[i]).ok for i in whole)
    assert answers.compare_with("tags#0", unicode).ok
    assert not answers.compare_with("tags#0", whole[queries[0].id]).ok


def test_membership_reads_the_index_not_the_answer(tmp_path) -> None:
    """``id in answers`` (asked before every check) must not parse the answer: a 1.6 M-row line
    parsed whole costs ~1 GB. A line whose rows are cut off is in the file but cannot be read."""
    path = tmp_path / "answers.jsonl"
    path.write_text(
        '{"id":"ok","type":"lastpoint","columns":["x"],"key":[],"rows":[[1]]}\n{"id":"cut","rows":[[1,\n'
    )
    answers = AnswerFile(path)
    assert "cut" in answers and "ok" in answers and "other" not in answers
    with pytest.raises(json.JSONDecodeError):
        answers["cut"]


def test_rows_whose_keys_repeat_are_ordered_by_their_other_columns() -> None:
    """A database that keeps rows sent twice returns two rows of one (time, host) in its own order;
    both sides are ordered by the other columns next, as the oracle's SQL orders them."""
    qtype = get_query_type("ycsb-scan")
    first = [[5, "host_0", *([2.0] * 10)], [5, "host_0", *([1.0] * 10)], [4, "host_1", *([3.0] * 10)]]
    second = [first[1], first[2], first[0]]
    assert compare(Answer.build(qtype, first), Answer.build(qtype, second)).ok
    assert Answer.build(qtype, first).rows[1][2] == 1.0  # (4, host_1) first, then 1.0 before 2.0
    many = [[t // 2, "host_0", *([float(-t)] * 10)] for t in range(10_000)]  # held by columns
    assert compare(Answer.build(qtype, many), Answer.build(qtype, many[::-1])).ok


def test_a_query_asked_again_is_answered_once_and_written_each_time(tmp_path: Path) -> None:
    """lastpoint has no random part: a query set asks it ``queries_per_type`` times; the oracle
    answers it once and writes it under each id, as it would have written each."""
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=6, end="2016-01-04T00:00:00Z"), tmp_path)
    queries = generate_queries(DataRange.of(dataset), ["lastpoint", "high-cpu-1"], 3, seed=5)
    assert len({q.asks for q in queries if q.type == "lastpoint"}) == 1
    assert len({q.asks for q in queries}) == 4 and len({q.id for q in queries}) == 6
    oracle = Oracle(dataset)
    asked: list[str] = []
    answer = oracle.answer

    def counted(query: LogicalQuery) -> Answer:
        asked.append(query.id)
        return answer(query)

    oracle.answer = counted  # type: ignore[method-assign]
    once = write_answers(tmp_path / "once.jsonl", oracle.streamed_answers(queries))
    assert asked == ["lastpoint#0"]  # the repeated query, in memory; the others streamed
    oracle.answer = answer  # type: ignore[method-assign]
    each = write_answers(tmp_path / "each.jsonl", ((q, oracle.answer(q)) for q in queries))
    assert once.read_bytes() == each.read_bytes()
