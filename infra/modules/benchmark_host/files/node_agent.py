#!/usr/bin/env python3
"""tsbench node agent: what the orchestrator cannot do over a database's own protocol.

Runs on a benchmark host (installed by cloud-init, Python standard library only) and answers JSON
over HTTP, every request authenticated with ``Authorization: Bearer <token>`` (the token file is
written by cloud-init from a per-run secret; the security group admits only the orchestrator):

    GET  /health        {"ok": true, "active": <database service running>}
    GET  /usage         {"cpu_seconds": user+system CPU seconds of the service's processes,
                         "rss_bytes": their summed resident memory, "processes": n, "clock_s": monotonic}
    GET  /disk          {"bytes": bytes allocated under the data directory (st_blocks × 512, like du),
                         "filesystem": size/free of the data directory's filesystem}
    GET  /facts         kernel, CPU model and count, memory, block devices, OS release, and the
                         server's version and configuration as the install script recorded them
                         (/etc/tsbench/server-version, /etc/tsbench/server-config)
    POST /restart-cold  stop the service → sync → drop the page cache, dentries and inodes → start;
                         {"stop_s", "start_s", "was_down", "os_cache_dropped", "os_cache_note"}

The database service is a systemd unit (``--unit``); ``--start``/``--stop``/``--pids`` shell
commands replace systemd where there is none (tests run the agent beside a local server that way).
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import json
import os
import platform
import subprocess
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
RECORDS = Path(os.environ.get("TSBENCH_RECORDS", "/etc/tsbench"))


class Service:
    """The database service: a systemd unit, or three shell commands."""

    def __init__(self, unit: str | None, start: str | None, stop: str | None, pids: str | None):
        self.unit, self.start_cmd, self.stop_cmd, self.pids_cmd = unit, start, stop, pids

    def _run(self, command: list[str] | str) -> str:
        shell = isinstance(command, str)
        done = subprocess.run(command, shell=shell, capture_output=True, text=True, timeout=600)
        if done.returncode:
            raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        return done.stdout

    def start(self) -> None:
        self._run(["systemctl", "start", self.unit] if self.unit else self.start_cmd or "true")

    def stop(self) -> None:
        self._run(["systemctl", "stop", self.unit] if self.unit else self.stop_cmd or "true")

    def pids(self) -> list[int]:
        if self.unit:
            cgroup = Path("/sys/fs/cgroup/system.slice") / self.unit / "cgroup.procs"
            text = cgroup.read_text() if cgroup.exists() else ""
        else:
            text = self._run(self.pids_cmd or "true")
        return [int(word) for word in text.split() if word.isdigit()]


def process_usage(pids: list[int]) -> tuple[float, int]:
    """(user+system CPU seconds, resident bytes) summed over ``pids`` (vanished ones skipped)."""
    cpu, rss = 0.0, 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            statm = Path(f"/proc/{pid}/statm").read_text().split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
        rss += int(statm[1]) * PAGE_BYTES
    return cpu, rss


def allocated_bytes(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(FileNotFoundError):  # removed while walking (compaction, WAL)
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def drop_caches() -> tuple[bool, str]:
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as error:
        return False, f"could not write /proc/sys/vm/drop_caches: {error.strerror or error}"
    return True, "sync; echo 3 > /proc/sys/vm/drop_caches (on the benchmark host)"


def host_facts(data_dir: Path) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            facts["cpu_model"] = line.split(":", 1)[1].strip()
            break
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            facts["memory_bytes"] = int(line.split()[1]) * 1024
    release = Path("/etc/os-release")
    if release.exists():
        pairs = dict(line.split("=", 1) for line in release.read_text().splitlines() if "=" in line)
        facts["os"] = pairs.get("PRETTY_NAME", "").strip('"')
    try:
        facts["block_devices"] = json.loads(
            subprocess.run(
                ["lsblk", "--json", "--bytes", "-o", "NAME,SIZE,TYPE,MOUNTPOINT,MODEL,ROTA"],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout
            or "{}"
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        facts["block_devices"] = None
    for key, name in (("server_version", "server-version"), ("server_config", "server-config")):
        recorded = RECORDS / name
        facts[key] = recorded.read_text().strip() if recorded.exists() else ""
    stat = os.statvfs(data_dir) if data_dir.exists() else None
    if stat:
        facts["data_filesystem"] = {"size_bytes": stat.f_blocks * stat.f_frsize}
    return facts


class Agent:
    def __init__(self, service: Service, data_dir: Path, token: str):
        self.service, self.data_dir, self.token = service, data_dir, token

    def health(self) -> dict[str, Any]:
        return {"ok": True, "active": bool(self.service.pids())}

    def usage(self) -> dict[str, Any]:
        pids = self.service.pids()
        cpu, rss = process_usage(pids)
        return {"cpu_seconds": cpu, "rss_bytes": rss, "processes": len(pids), "clock_s": time.monotonic()}

    def disk(self) -> dict[str, Any]:
        body: dict[str, Any] = {"bytes": allocated_bytes(self.data_dir), "path": str(self.data_dir)}
        if self.data_dir.exists():
            stat = os.statvfs(self.data_dir)
            body["filesystem"] = {
                "size_bytes": stat.f_blocks * stat.f_frsize,
                "free_bytes": stat.f_bavail * stat.f_frsize,
            }
        return body

    def restart_cold(self) -> dict[str, Any]:
        started = time.monotonic()
        self.service.stop()
        stop_s = time.monotonic() - started
        was_down = not self.service.pids()
        dropped, note = drop_caches()
        started = time.monotonic()
        self.service.start()
        return {
            "restarted": True,
            "was_down": was_down,
            "os_cache_dropped": dropped,
            "os_cache_note": note,
            "stop_s": round(stop_s, 3),
            "start_s": round(time.monotonic() - started, 3),
        }

    def facts(self) -> dict[str, Any]:
        return host_facts(self.data_dir)


def handler_for(agent: Agent) -> type[BaseHTTPRequestHandler]:
    routes = {
        ("GET", "/health"): agent.health,
        ("GET", "/usage"): agent.usage,
        ("GET", "/disk"): agent.disk,
        ("GET", "/facts"): agent.facts,
        ("POST", "/restart-cold"): agent.restart_cold,
    }

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            given = self.headers.get("Authorization", "").removeprefix("Bearer ")
            if not hmac.compare_digest(given.encode(), agent.token.encode()):
                return self._send(401, {"error": "unauthorised"})
            route = routes.get((method, self.path.split("?", 1)[0]))
            if route is None:
                return self._send(404, {"error": f"no route {method} {self.path}"})
            try:
                return self._send(200, route())
            except Exception as error:
                return self._send(500, {"error": f"{type(error).__name__}: {error}"})

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=9700)
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--unit", help="systemd unit of the database service")
    parser.add_argument("--start", help="shell command that starts the service (without --unit)")
    parser.add_argument("--stop", help="shell command that stops the service (without --unit)")
    parser.add_argument("--pids", help="shell command printing the service's pids (without --unit)")
    args = parser.parse_args(argv)
    if not args.unit and not (args.start and args.stop and args.pids):
        parser.error("give --unit, or all of --start, --stop and --pids")
    token = args.token_file.read_text().strip()
    if len(token) < 16:
        parser.error("the token must have at least 16 characters")
    agent = Agent(Service(args.unit, args.start, args.stop, args.pids), args.data_dir, token)
    server = ThreadingHTTPServer((args.bind, args.port), handler_for(agent))
    server.serve_forever()


if __name__ == "__main__":
    main()
