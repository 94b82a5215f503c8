"""Disk facts and cache control of this machine, for the runtimes and targets that measure here."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def allocated_bytes(paths: list[Path]) -> int:
    """Bytes allocated on disk (``st_blocks × 512``, like ``du``) under ``paths``; links not followed."""
    total = 0
    for root in paths:
        if not root.exists():
            continue
        for folder, _, files in os.walk(root):
            for name in files:
                with contextlib.suppress(FileNotFoundError):  # removed while walking (compaction, WAL)
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def drop_os_caches() -> tuple[bool, str]:
    """``sync`` then drop the page cache, dentries and inodes. Returns ``(done, how or why not)``."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as error:
        return False, f"could not write /proc/sys/vm/drop_caches: {error.strerror or error}"
    return True, "sync; echo 3 > /proc/sys/vm/drop_caches"
