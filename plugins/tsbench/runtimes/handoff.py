"""A local server instance's record, handed from the task that provisioned it to the branch's later
tasks through the run folder (``server_instance.json`` in the target's folder of the run, which the
run store carries between workers), so a task on a worker with another state root still finds it.

A local server runs on the machine that started it: a task on another machine cannot reach it over
loopback, so the record names its machine and a task elsewhere refuses with both names
(``ElsewhereError``) instead of measuring something else.

Other runtimes keep records there too (``write_shared_record``): a cloud host's
(``cloud_instance.json``: target, stage, Terraform outputs) is bound to no machine — every worker
reaches the host, and with remote Terraform state every worker can destroy it; a container's
(``docker_instance.json``) is reachable wherever its engine is. Records hold no secrets.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsbench.results.files import read_json, write_json_atomic
from tsbench.runtimes.contract import TargetError

RECORD = "server_instance.json"


class ElsewhereError(TargetError):
    """The instance runs on another machine than this task's."""


def machine_id() -> str:
    """This machine: ``/etc/machine-id`` where there is one, else the host name."""
    try:
        return Path("/etc/machine-id").read_text().strip() or socket.gethostname()
    except OSError:
        return socket.gethostname()


def write_record(folder: Path, body: dict[str, Any]) -> None:
    """A local instance's ``body`` (instance, home, recipe, ports, pid, endpoint) as its shared
    record, with this machine's id."""
    write_shared_record(folder, RECORD, body["instance"], body)


def read_record(folder: Path, instance: str) -> dict[str, Any] | None:
    """The record of ``instance`` in ``folder``, None when there is none; ``ElsewhereError`` when
    it runs on another machine."""
    record = read_shared_record(folder, RECORD, instance)
    if record is None:
        return None
    if not record.written_here:
        raise ElsewhereError(
            f"local server instance {instance!r} runs on {record.host} and this task on "
            f"{socket.gethostname()}: with runtime local, a branch's tasks must run on the machine "
            "that provisioned its server (route them to one worker queue per machine), or use "
            "runtime aws, whose servers every worker reaches"
        )
    return record.state


@dataclass(frozen=True)
class SharedRecord:
    """An instance's record as another task reads it: ``state`` as the runtime wrote it, and the
    machine (``/etc/machine-id``) and host name of the worker that wrote it."""

    state: dict[str, Any]
    machine: str
    host: str

    @property
    def written_here(self) -> bool:
        return self.machine == machine_id()


def write_shared_record(folder: Path, name: str, instance: str, state: dict[str, Any]) -> None:
    """Record ``name`` of ``instance`` (``state``: no secrets) in ``folder``, atomically, with the
    machine that wrote it."""
    folder.mkdir(parents=True, exist_ok=True)
    body = {"instance": instance, "machine": machine_id(), "host": socket.gethostname(), "state": state}
    write_json_atomic(folder / name, body)


def read_shared_record(folder: Path, name: str, instance: str) -> SharedRecord | None:
    """Record ``name`` of ``instance`` in ``folder``; None when there is none or it is another
    instance's."""
    path = folder / name
    if not path.is_file():
        return None
    body = read_json(path)
    if body.get("instance") != instance:
        return None
    return SharedRecord(dict(body["state"]), str(body["machine"]), str(body["host"]))
