"""A run folder in an S3 run store (a real MinIO server), materialised per task: what one task
writes, the next task on another worker (here: another private scratch folder) sees; a task pushes
only the files it created or changed, so two branches writing disjoint files keep both; a task that
fails still delivers what it wrote (its failure record)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tsbench.results.workspace import workspace

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


def test_a_skipped_file_stays_in_the_store_untouched(store_url: str, tmp_path: Path) -> None:
    """A task that never reads the reference answers does not download them (at any depth), and
    pushing its own files leaves them as they are."""
    with workspace(store_url, scratch=tmp_path) as oracle:
        (oracle / "scale-10").mkdir()
        (oracle / "scale-10" / "answers.jsonl").write_text("reference\n")
        (oracle / "scale-10" / "run.json").write_text("{}")
    with workspace(store_url, scratch=tmp_path, skip=frozenset({"answers.jsonl"})) as load:
        assert (load / "scale-10" / "run.json").is_file()
        assert not (load / "scale-10" / "answers.jsonl").exists()
        (load / "scale-10" / "load.json").write_text("{}")
    with workspace(store_url, scratch=tmp_path) as queries:
        assert (queries / "scale-10" / "answers.jsonl").read_text() == "reference\n"
        assert (queries / "scale-10" / "load.json").is_file()


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
