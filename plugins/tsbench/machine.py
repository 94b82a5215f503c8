"""Facts about the machine and the client software, for every result file and report."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

CHECKOUT = Path(__file__).resolve().parents[2]  # tsbench's own source tree
# The benchmark client's own packages; each target adds the ones its client code imports.
CORE_PACKAGES = ("pyarrow", "duckdb", "numpy", "pandas", "psutil")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _os_name() -> str:
    try:
        fields = dict(
            line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line
        )
        return fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        return platform.system()


def machine_facts() -> dict[str, Any]:
    return {
        "hostname_hash": hex(hash(platform.node()) & 0xFFFF),  # not the name itself
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "os": _os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def source_commit() -> str:
    """tsbench's own commit (``git rev-parse HEAD`` of its checkout), marked when tracked files
    differ from it; "unknown" outside a git checkout."""
    git = ["git", "-C", str(CHECKOUT)]
    try:
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"unknown ({error})"
    if head.returncode:
        return "unknown (not a git checkout)"
    commit = head.stdout.strip()
    return f"{commit} (with local changes)" if changed.stdout.strip() else commit


def client_packages() -> tuple[str, ...]:
    """The core packages, then every target's declared ``client_packages`` (registry order)."""
    from tsbench.targets.registry import client_packages as target_packages

    return tuple(dict.fromkeys((*CORE_PACKAGES, *target_packages())))


def client_versions() -> dict[str, str]:
    """Installed version of every client package (``"not installed"`` when missing)."""
    versions = {}
    for name in client_packages():
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
