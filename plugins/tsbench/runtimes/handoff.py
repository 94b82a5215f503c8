"""A local server instance's record, handed from the task that provisioned it to the branch's later
tasks through the run folder (``server_instance.json`` in the target's folder of the run, which the
run store carries between workers), so a task on a worker with another state root still finds it.

A local server runs on the machine that started it: a task on another machine cannot reach it over
loopback, so the record names its machine and a task elsewhere refuses with both names
(``ElsewhereError``) instead of measuring something else.

A cloud host's record (``cloud_instance.json``: target, stage, Terraform outputs — no secrets) is
bound to no machine: every worker reaches the host, and with remote Terraform state every worker
can destroy it.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from tsbench.results.files import read_json, write_json_atomic
from tsbench.targets.base import TargetError

RECORD = "server_instance.json"
CLOUD_RECORD = "cloud_instance.json"


class ElsewhereError(TargetError):
    """The instance runs on another machine than this task's."""


def machine_id() -> str:
    """This machine: ``/etc/machine-id`` where there is one, else the host name."""
    try:
        return Path("/etc/machine-id").read_text().strip() or socket.gethostname()
    except OSError:
        return socket.gethostname()


def write_record(folder: Path, body: dict[str, Any]) -> None:
    """``body`` (instance, home, recipe, ports, pid, endpoint) with this machine's id, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / RECORD, {**body, "machine": machine_id(), "host": socket.gethostname()})


def read_record(folder: Path, instance: str) -> dict[str, Any] | None:
    """The record of ``instance`` in ``folder``, None when there is none; ``ElsewhereError`` when
    it runs on another machine."""
    path = folder / RECORD
    if not path.is_file():
        return None
    body = read_json(path)
    if body.get("instance") != instance:
        return None
    if body.get("machine") != machine_id():
        raise ElsewhereError(
            f"local server instance {instance!r} runs on {body.get('host')} and this task on "
            f"{socket.gethostname()}: with runtime local, a branch's tasks must run on the machine "
            "that provisioned its server (route them to one worker queue per machine), or use "
            "runtime aws, whose servers every worker reaches"
        )
    return body


def write_cloud_record(folder: Path, instance: str, body: dict[str, Any]) -> None:
    """The cloud ``instance``'s record (no secrets) in ``folder``, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / CLOUD_RECORD, {**body, "instance": instance})


def read_cloud_record(folder: Path, instance: str) -> dict[str, Any] | None:
    """The record of cloud ``instance`` in ``folder`` (without its ``instance`` key); None when
    there is none or it is another instance's."""
    path = folder / CLOUD_RECORD
    if not path.is_file():
        return None
    body = read_json(path)
    if body.pop("instance", None) != instance:
        return None
    return body
