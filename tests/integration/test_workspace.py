"""A run folder in an S3 run store (a real MinIO server), materialised per task: what one task
writes, the next task on another worker (here: another private scratch folder) sees; a task pushes
only the files it created or changed, so two branches writing disjoint files keep both; a task that
fails still delivers what it wrote (its failure record)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tsbench.results.workspace import workspace
from tsbench.run.comparison import point_part
from tsbench.run.group import branch_part
from tsbench.run.pipeline import STEPS, post_part

if TYPE_CHECKING:
    from integration.minio import MinioServer

pytest_plugins = ("integration.minio",)
pytestmark = pytest.mark.integration


@pytest.fixture
def store_url(minio_server: MinioServer, monkeypatch: pytest.MonkeyPatch) -> str:
    for key, value in minio_server.aws_environment().items():
        monkeypatch.setenv(key, value)
    return f"s3://{minio_server.new_bucket()}/team/runs/20261126T000000Z-abc123"


def test_what_one_task_writes_the_next_task_elsewhere_reads(store_url: str, tmp_path: Path) -> None:
    with workspace(store_url, scratch=tmp_path) as first:
        (first / "plan.json").write_text('{"points": ["scale-10"]}')
        (first / "scale-10").mkdir()
        (first / "scale-10" / "run.json").write_text("{}")
    assert not list(tmp_path.iterdir()), "the scratch copy outlived its task"
    with workspace(store_url, scratch=tmp_path) as second:
        assert second != first and second.name == first.name == "20261126T000000Z-abc123"
        assert (second / "plan.json").read_text() == '{"points": ["scale-10"]}'
        assert (second / "scale-10" / "run.json").read_text() == "{}"


def test_branches_push_only_their_own_files(
    store_url: str, tmp_path: Path, minio_server: MinioServer
) -> None:
    with workspace(store_url, scratch=tmp_path) as setup:
        (setup / "scale-10").mkdir()
        (setup / "scale-10" / "run.json").write_text('{"v": 1}')
    with (
        workspace(store_url, scratch=tmp_path) as questdb,
        workspace(store_url, scratch=tmp_path) as postgres,
    ):
        (questdb / "scale-10" / "targets" / "questdb").mkdir(parents=True)
        (questdb / "scale-10" / "targets" / "questdb" / "load.json").write_text("q")
        (postgres / "scale-10" / "targets" / "postgres").mkdir(parents=True)
        (postgres / "scale-10" / "targets" / "postgres" / "load.json").write_text("p")
        with workspace(store_url, scratch=tmp_path) as oracle:  # meanwhile another task updates run.json
            (oracle / "scale-10" / "run.json").write_text('{"v": 2}')
    with workspace(store_url, scratch=tmp_path) as reader:
        assert (reader / "scale-10" / "targets" / "questdb" / "load.json").read_text() == "q"
        assert (reader / "scale-10" / "targets" / "postgres" / "load.json").read_text() == "p"
        assert (reader / "scale-10" / "run.json").read_text() == '{"v": 2}', (
            "a branch pushed back its stale copy"
        )


def test_a_branch_fetches_only_its_own_part_and_leaves_the_rest_untouched(
    store_url: str, tmp_path: Path
) -> None:
    """A branch's phase task opens its points' folders, not the other targets' folders in them nor
    other points; the reference answers only in the query phase. What it leaves out stays in the
    store as it was after it pushes its own files."""
    with workspace(store_url, scratch=tmp_path) as earlier:
        for point in ("scale-10", "scale-20"):
            (earlier / point / "targets" / "postgres").mkdir(parents=True)
            (earlier / point / "answers.jsonl").write_text("reference\n")
            (earlier / point / "run.json").write_text("{}")
            (earlier / point / "targets" / "postgres" / "load.json").write_text("p")
        (earlier / "plan.json").write_text("{}")
    with workspace(store_url, scratch=tmp_path, part=branch_part(["scale-10"], "questdb", ("load",))) as load:
        assert sorted(p.relative_to(load).as_posix() for p in load.rglob("*") if p.is_file()) == [
            "scale-10/run.json"
        ]
        (load / "scale-10" / "targets" / "questdb").mkdir(parents=True)
        (load / "scale-10" / "targets" / "questdb" / "load.json").write_text("q")
    part = branch_part(["scale-10"], "questdb", ("cache_reset", "queries"))
    with workspace(store_url, scratch=tmp_path, part=part) as queries:
        assert (queries / "scale-10" / "answers.jsonl").read_text() == "reference\n"
        assert (queries / "scale-10" / "targets" / "questdb" / "load.json").read_text() == "q"
        assert not (queries / "scale-10" / "targets" / "postgres").exists()
    with workspace(store_url, scratch=tmp_path) as reader:
        for point in ("scale-10", "scale-20"):
            assert (reader / point / "answers.jsonl").read_text() == "reference\n"
            assert (reader / point / "targets" / "postgres" / "load.json").read_text() == "p"
        assert (reader / "plan.json").is_file()


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_point_and_post_steps_fetch_only_what_they_open(store_url: str, tmp_path: Path) -> None:
    """A point's steps open the plan and their own point folder; the post steps all of the run
    folder, but the reference answers only publish, which uploads them."""
    with workspace(store_url, scratch=tmp_path) as earlier:
        (earlier / "plan.json").write_text("{}")
        for point in ("scale-10", "scale-20"):
            (earlier / point / "targets" / "questdb").mkdir(parents=True)
            (earlier / point / "answers.jsonl").write_text("reference\n")
            (earlier / point / "targets" / "questdb" / "load.json").write_text("q")
    with workspace(store_url, scratch=tmp_path, part=point_part("scale-20")) as oracle:
        assert _files(oracle) == [
            "plan.json",
            "scale-20/answers.jsonl",
            "scale-20/targets/questdb/load.json",
        ]
    every = ["plan.json"] + [
        f"{point}/{name}"
        for point in ("scale-10", "scale-20")
        for name in ("answers.jsonl", "targets/questdb/load.json")
    ]
    for step in (s for s in STEPS if s.scope == "post"):
        with workspace(store_url, scratch=tmp_path, part=post_part(step)) as post:
            expected = every if step.name == "publish" else [f for f in every if "answers" not in f]
            assert _files(post) == sorted(expected), step.name


def test_a_failing_task_still_delivers_its_failure_record(store_url: str, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="load failed"), workspace(store_url, scratch=tmp_path) as task:
        (task / "error.json").write_text('{"failed_phase": "load"}')
        raise RuntimeError("load failed")
    with workspace(store_url, scratch=tmp_path) as reader:
        assert (reader / "error.json").read_text() == '{"failed_phase": "load"}'


def test_a_local_store_is_the_folder_itself(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "r1"
    with workspace(str(folder)) as local:
        assert local == folder and not folder.exists()  # nothing is made before a task writes
        local.mkdir(parents=True)
        (local / "plan.json").write_text("{}")
    assert (folder / "plan.json").is_file()
