"""``tsbench.memory.release_freed_memory``: what a step freed — Arrow's pool pages, a worker
thread's glibc arena — really leaves the process's resident set (a child process each, so the
measurement is its own)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
PROBE = textwrap.dedent(
    """
    import sys, threading
    import pyarrow as pa

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024

    def thread_work():  # a load worker's many mid-sized objects, freed when it ends
        chunks = [bytes(200_000) + b"x" for _ in range(1500)]
        del chunks

    before = rss_mb()
    worker = threading.Thread(target=thread_work)
    worker.start()
    worker.join()
    column = pa.array(range(20_000_000))  # 160 MB from Arrow's pool
    del column
    freed = rss_mb()
    if RELEASE:
        from tsbench.memory import release_freed_memory
        release_freed_memory()
    print(before, freed, rss_mb())
    """
)


def _rss_mb(release: bool) -> tuple[int, int, int]:
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    code = f"RELEASE = {release}\n{PROBE}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    before, freed, after = (int(value) for value in done.stdout.split())
    return before, freed, after


def test_freed_memory_leaves_the_resident_set() -> None:
    before, freed, after = _rss_mb(release=True)
    assert freed - before > 150, (before, freed)  # the allocators kept what was freed …
    assert after - before < (freed - before) / 2, (before, freed, after)  # … until released


def test_without_the_release_the_allocators_keep_it() -> None:
    before, freed, after = _rss_mb(release=False)
    assert after - before > 150, (before, freed, after)
