"""tsbench's own commit in every run's facts (``machine.source_commit``), as the report shows it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tsbench.machine import CHECKOUT, source_commit


def test_the_commit_is_the_checkouts_head_marked_when_changed(tmp_path: Path) -> None:
    head = subprocess.run(
        ["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert source_commit().split(" ")[0] == head and len(head) == 40
    changed = subprocess.run(
        ["git", "-C", str(CHECKOUT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert source_commit().endswith("(with local changes)") == bool(changed)


def test_outside_a_checkout_the_commit_is_unknown(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "plugins" / "tsbench"
    copy.parent.mkdir(parents=True)
    monkeypatch.setattr("tsbench.machine.CHECKOUT", tmp_path)  # a source tree without .git
    assert shutil.which("git") and source_commit().startswith("unknown")
