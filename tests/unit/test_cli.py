"""``python -m tsbench``: help, summaries, bad input rejected before any work (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tsbench.parameters import limit_text

ROOT = Path(__file__).resolve().parents[2]


def tsbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.run(
        [sys.executable, "-m", "tsbench", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


@pytest.mark.parametrize("command", ["generate", "import", "export", "queries", "answers"])
def test_every_subcommand_has_help(command: str) -> None:
    result = tsbench(command, "--help")
    assert result.returncode == 0 and "usage:" in result.stdout


def test_generate_queries_answers_pipeline(tmp_path: Path) -> None:
    flags = ["--scale", "10", "--end", "2016-01-01T12:00:00Z", "--cache-dir", str(tmp_path / "cache")]
    first = tsbench("generate", *flags)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("generated 43,200 rows in ") and "rows/s) → " in first.stdout
    second = tsbench("generate", *flags)
    assert second.stdout.startswith("reused 43,200 rows")
    queries = tsbench("queries", *flags, "--queries-per-type", "3", "--out", str(tmp_path / "q.jsonl"))
    assert queries.returncode == 0, queries.stderr
    assert queries.stdout.startswith("wrote 60 queries")  # 20 types fit 12 h × 10 hosts
    answers = tsbench(
        "answers", *flags, "--queries", str(tmp_path / "q.jsonl"), "--out", str(tmp_path / "a.jsonl")
    )
    assert answers.returncode == 0, answers.stderr
    assert (
        answers.stdout.startswith("answered 60 queries")
        and len((tmp_path / "a.jsonl").read_text().splitlines()) == 60
    )


def test_bad_input_fails_before_any_work(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    result = tsbench("generate", "--scale", "0", "--seed", "-1", "--cache-dir", str(cache))
    assert result.returncode == 2
    assert "scale:" in result.stderr and "seed:" in result.stderr
    result = tsbench("generate", "--interval", "7s", "--cache-dir", str(cache))
    assert result.returncode == 2 and "interval: 7s does not divide the data span 1d" in result.stderr
    assert not cache.exists()
    result = tsbench(
        "queries",
        "--scale",
        "4",
        "--end",
        "2016-01-01T02:00:00Z",
        "--query-types",
        "cpu-max-all-8",
        "--cache-dir",
        str(cache),
        "--out",
        str(tmp_path / "q"),
    )
    assert result.returncode == 2 and "need more hosts than scale 4" in result.stderr
    result = tsbench("answers", "--dataset", str(tmp_path / "missing"), "--queries", "x", "--out", "y")
    assert result.returncode == 2 and "not a complete dataset" in result.stderr


def test_run_flags_are_runspecs_schema() -> None:
    """One flag per comparison parameter: RunSpec's fields (``scales``/``duration`` in place of
    ``scale``/``end``), each with the schema's default and limits in its help."""
    from tsbench.cli import build_parser
    from tsbench.spec import RunSpec
    from tsbench.sweep.axes import ComparisonAxes

    schema = RunSpec.model_json_schema(mode="serialization")["properties"]
    axes = ComparisonAxes.model_json_schema(mode="serialization")["properties"]
    expected = (schema.keys() - {"scale", "end"}) | axes.keys()
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "run")[1]
    flags = {a.dest: a for a in run._actions if a.option_strings and a.dest in expected}
    assert flags.keys() == expected
    assert {a.option_strings[0] for a in flags.values()} == {"--" + n.replace("_", "-") for n in expected}
    assert flags["targets"].required and not any(a.required for n, a in flags.items() if n != "targets")
    for name, action in flags.items():
        body = axes.get(name) or schema[name]  # a sweep axis: a list of RunSpec's field
        limits = schema.get(name, body)
        assert action.default is None, name  # left out → the spec's own default
        for key in ("minimum", "maximum"):
            if key in limits:
                assert limit_text(limits[key]) in action.help, (name, action.help)
        if "default" in body and body["default"] not in (None, []) and not isinstance(body["default"], dict):
            assert f"(default: {body['default']})" in action.help.replace("[", "").replace("]", ""), name
    scale = schema["scale"]
    assert f"each {scale['minimum']} … {scale['maximum']:,}" in flags["scales"].help


def test_bad_run_flags_name_the_field_before_any_work(tmp_path: Path) -> None:
    out, cache = tmp_path / "out" / "runs", tmp_path / "cache"
    where = ["--results-dir", str(out), "--cache-dir", str(cache), "--state-dir", str(tmp_path / "state")]
    result = tsbench("run", "--targets", "questdb,nosuchdb", "--workers", "0", "--scales", "10,0", *where)
    assert result.returncode == 2, result.stderr
    assert "workers (0): Input should be greater than or equal to 1" in result.stderr
    assert "targets: unknown target(s) nosuchdb" in result.stderr and "scales (0):" in result.stderr
    result = tsbench("run", "--targets", "questdb", "--hot-runs", "many", *where)
    assert result.returncode == 2 and "argument --hot-runs: invalid int value: 'many'" in result.stderr
    assert not out.exists() and not cache.exists() and not (tmp_path / "state").exists()
