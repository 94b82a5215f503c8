"""The Airflow side of a branch's tasks: each task opens its part of the run folder and calls one
step of the branch's execution (``tsbench.run.branch``, the one the command line runs too).

What only Airflow adds: the branch label in the task's context (the UI names mapped task instances
by it), a non-retryable failure as ``AirflowFailException`` (``TargetError.retryable``), and how
``acquire_machine`` waits. It blocks (polling every 0.2 s) until it holds one of the branch's
host leases — an ordinary running task, no sensor, no trigger. One case cannot block: when the
holder is this very process. That happens only where one process runs every task of a run one after
another (``dag.test()`` / ``airflow dags test``): blocking there would stop the holder's own tasks.
So there the waiter hands its turn back (``AirflowRescheduleException``, public API) and is tried
again 2 s later; the test loop runs the holder's tasks meanwhile. Under an executor every task is a
process of its own, the holder is never the waiter's process, and nothing is rescheduled.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pendulum
from airflow.sdk import get_current_context

if TYPE_CHECKING:  # at run time imported inside the task that uses it, as the rest of the core
    from tsbench.runtimes.select import RuntimeOptions

log = logging.getLogger("tsbench.airflow")
RETRY_OWN_HOLDER_S = 2  # in-process test loop: the next try while this process holds the lease


def verbose() -> None:
    logging.getLogger("tsbench").setLevel(logging.INFO)


def _runtime_options() -> RuntimeOptions:
    """What Airflow gives a branch's runtime (``runtime_for``): credentials from connections, the
    Docker client."""
    from tsbench.airflow.connections import runtime_environment
    from tsbench.airflow.docker_client import docker_client_factory
    from tsbench.runtimes.select import RuntimeOptions

    return RuntimeOptions(environment=runtime_environment, docker_client_factory=docker_client_factory)


def _item(item: dict[str, Any]) -> Any:
    """The task's branch, typed; logging at INFO and its label in the context (``BRANCH_LABEL``)."""
    from tsbench.run.branch import BranchItem

    branch = BranchItem.model_validate(item)
    verbose()
    get_current_context()["tsbench_branch"] = branch.label  # type: ignore[typeddict-unknown-key]
    return branch


def _scalars(record: Any) -> dict[str, Any]:
    """The figures of a step's record an XCom shows (numbers, strings, flags)."""
    return {k: v for k, v in record.to_json().items() if isinstance(v, int | float | str | bool)}


def phase(item: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A measured step of one branch (its phases in order), while beating the machine lease; a
    failure fails the task — without its retries when another try would only repeat it."""
    from airflow.sdk.exceptions import AirflowFailException

    from tsbench.run.branch import opened_branch
    from tsbench.targets.base import TargetError

    with opened_branch(_item(item), names, runtime_options=_runtime_options()) as branch:
        try:
            return _scalars(branch.run_step(names))
        except TargetError as error:
            if error.retryable:
                raise
            raise AirflowFailException(f"{error} (not retried)") from error


def teardown(item: dict[str, Any], name: str) -> dict[str, Any]:
    """The teardown phase (also when the lease was lost), then the machine lease given back."""
    from tsbench.run.branch import opened_branch

    with opened_branch(_item(item), (name,), runtime_options=_runtime_options()) as branch:
        return _scalars(branch.teardown())


def acquire_machine(item: dict[str, Any], name: str = "acquire_machine") -> dict[str, Any]:
    """Block until this branch holds the machine lease (see the module docstring); a branch that
    never gets it is recorded as failed with the holder named."""
    from airflow.sdk.exceptions import AirflowRescheduleException

    from tsbench.run.branch import opened_branch

    with opened_branch(_item(item), runtime_options=_runtime_options()) as branch:
        since = branch.phases.first.folder.wait_started
        waited = branch.acquire(wait=_waiting_in_turn(since), passes=(AirflowRescheduleException,))
    return {"waited_s": waited}


def _waiting_in_turn(since_file: Path) -> Callable[..., Any]:
    """The wait: block, unless the holder is this very process (then hand the turn back). The
    seconds waited count from the first try (``since_file`` keeps them across handed-back turns)."""
    from airflow.sdk.exceptions import AirflowRescheduleException

    from tsbench.run.lease import Waiting, busy, held_by_this_process, wait_limit_s

    def wait(leases: Any, owner: str, waiting: Waiting) -> Any:
        if not since_file.is_file():
            since_file.parent.mkdir(parents=True, exist_ok=True)
            since_file.write_text(repr(time.time()))
        earlier = time.time() - float(since_file.read_text())
        held = leases.try_acquire(owner)
        if held is not None:
            return held, earlier
        holder, limit = leases.holders(), wait_limit_s()
        if earlier >= limit:
            raise busy(earlier, limit, holder)
        if not held_by_this_process(holder):
            lease, waited = leases.acquire(owner, limit - earlier, on_wait=waiting)
            return lease, earlier + waited
        waiting(holder, earlier)
        due = pendulum.now("UTC").add(seconds=RETRY_OWN_HOLDER_S)
        raise AirflowRescheduleException(reschedule_date=due)

    return wait
