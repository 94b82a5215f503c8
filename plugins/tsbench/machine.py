"""Facts about the machine and the client software, for every result file and report."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

CLIENT_PACKAGES = ("pyarrow", "duckdb", "numpy", "pandas", "psycopg", "questdb", "requests", "psutil")


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


def client_versions() -> dict[str, str]:
    versions = {}
    for name in CLIENT_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
