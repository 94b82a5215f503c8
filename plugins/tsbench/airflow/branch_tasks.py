"""What a branch's tasks (one server group of points × one target, ``tsbench.run.group``) run:
its phases, the machine lease around them.

Every task works in a workspace of the part of the run folder it opens (``results.workspace``,
``group_phases.branch_part``: its points' folders, not the other targets' in them). Exclusivity: one branch
measures on a benchmark host at a time. ``acquire_machine`` is an ordinary task that blocks (polling
every 0.2 s) until it holds one of the branch's host leases (``runtimes.select.host_lease_keys``);
its record names the lease, which the phases beat and ``teardown`` gives back. Every phase task
beats the lease while it runs; a holder that died without teardown stops beating and its lease is
taken over after 15 min, and a phase whose lease was taken over fails (``LeaseLost``) rather than
measure beside another branch. Under ``dag.test()`` / ``airflow dags test`` (one task at a time,
in-process, no executor) a blocking wait would stop the holder too, so there the waiter hands its
turn back (a reschedule, which that loop handles without any scheduler race): 2 s later when
another process holds the lease; when this very process holds it (another branch of the same run),
only when that branch's teardown gives the lease back and wakes it (``_wake_waiting_turns``), with
a try after 5 min (or at the wait limit) as a safety net — not after each of the holder's tasks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import get_current_context

log = logging.getLogger("tsbench.airflow")
RETRY_OUTSIDE_HOLDER_S = 2  # in-process wait: next try when another process holds the lease
RETRY_OWN_HOLDER_S = 300  # … when this process holds it (teardown wakes the waiter sooner)


def verbose() -> None:
    logging.getLogger("tsbench").setLevel(logging.INFO)


def _phases(folder: Path, item: dict[str, Any]):
    """The branch's phases over its points, in ``folder`` (this task's workspace of the run)."""
    from tsbench.airflow.connections import runtime_environment
    from tsbench.airflow.docker_client import docker_client_factory
    from tsbench.run.comparison import point_dir
    from tsbench.run.group import GroupPhases

    options = {"environment": runtime_environment, "docker_client_factory": docker_client_factory}
    run_dirs = [point_dir(folder, name) for name in item["points"]]
    return GroupPhases(run_dirs, item["target"], runtime_options=options)


def _lease_owner(item: dict[str, Any]) -> str:
    return f"{item['label']} @ {item['folder']}"


def _host_leases(phases: Any) -> Any:
    """The leases this branch may take: this machine's, or its run's aws host slots."""
    from tsbench.run.lease import HostLeases
    from tsbench.runtimes.select import host_lease_keys

    return HostLeases.at(host_lease_keys(phases.first.spec, phases.first.run["run_id"]))


def _held_lease(phases: Any) -> Any:
    """The lease ``acquire_machine`` took for this branch (its record names the host key)."""
    from tsbench.results.files import read_json
    from tsbench.run.lease import lease_at

    record = phases.dir / "acquire_machine.json"
    return lease_at(read_json(record).get("lease") if record.is_file() else None)


def _label(item: dict[str, Any]) -> None:
    """Logging at INFO, and the branch label for ``BRANCH_LABEL`` (rendered from this context)."""
    verbose()
    get_current_context()["tsbench_branch"] = item["label"]  # type: ignore[typeddict-unknown-key]


def _phase(item: dict[str, Any], names: tuple[str, ...], measuring: bool = True) -> dict[str, Any]:
    """Run one step of one branch — its phases ``names`` in order (``measuring``: while beating the
    machine lease, which it must hold) — in a workspace of the run folder; a failure is recorded in
    the run folders (``GroupPhases``), then fails the task (its log ends with the reason) — without
    its retries when the error says another try would only repeat it (``TargetError.retryable``).
    Returns the figures of the step's own phase (``phases.step_name``)."""
    from airflow.sdk.exceptions import AirflowFailException

    from tsbench.results.workspace import workspace
    from tsbench.run.group import branch_part
    from tsbench.run.phases import step_name
    from tsbench.targets.base import TargetError

    _label(item)
    with workspace(item["folder"], part=branch_part(item["points"], item["target"], names)) as folder:
        phases = _phases(folder, item)
        lease = _held_lease(phases)
        try:
            with lease.keep_alive(_lease_owner(item)) if measuring else nullcontext():
                bodies = {name: phases.run_phase(name) for name in names}
        except TargetError as error:
            if error.retryable:
                raise
            raise AirflowFailException(f"{error} (not retried)") from error
        finally:
            if not measuring:  # teardown: the lease is given back whatever happened
                lease.release(_lease_owner(item))
                if in_process_test_run():
                    try:
                        _wake_waiting_turns()
                    except Exception as wake_error:  # the waiter still tries at its safety date
                        log.warning("could not wake the waiting branch: %s", wake_error)
    return {k: v for k, v in bodies[step_name(names)].items() if isinstance(v, int | float | str | bool)}


def in_process_test_run() -> bool:
    """True under ``dag.test()`` / ``airflow dags test``: tasks run one at a time inside the test's
    own process (Airflow's in-process supervisor), so a blocking wait would stop the lease
    holder's tasks too."""
    from airflow.sdk.execution_time import task_runner
    from airflow.sdk.execution_time.supervisor import InProcessSupervisorComms

    return isinstance(getattr(task_runner, "SUPERVISOR_COMMS", None), InProcessSupervisorComms)


def _try_or_give_the_turn_back(
    leases: Any, owner: str, since_file: Path, waiting: Callable[[dict[str, Any] | None, float], None]
) -> tuple[Any, float]:
    """The in-process form of the wait: take the lease now, or hand the turn back to the test
    loop (a reschedule in 2 s, which ``dag.test`` runs without executor or scheduler, so without
    the race a rescheduling task has under a real scheduler). Returns the lease taken and the
    seconds waited since the first try, which ``since_file`` keeps across tries."""
    from airflow.sdk.exceptions import AirflowRescheduleException

    from tsbench.run.lease import busy, held_by_this_process, wait_limit_s

    if not since_file.is_file():
        since_file.parent.mkdir(parents=True, exist_ok=True)
        since_file.write_text(repr(time.time()))
    waited = time.time() - float(since_file.read_text())
    held = leases.try_acquire(owner)
    if held is not None:
        return held, waited
    holder, limit = leases.holders(), wait_limit_s()
    if waited >= limit:
        raise busy(waited, limit, holder)
    waiting(holder, waited)
    own = held_by_this_process(holder)
    if not own:
        time.sleep(0.5)  # the test loop reruns the task at once: no spinning on an outside holder
    delay = (
        max(RETRY_OUTSIDE_HOLDER_S, min(RETRY_OWN_HOLDER_S, limit - waited))
        if own
        else RETRY_OUTSIDE_HOLDER_S
    )
    raise AirflowRescheduleException(reschedule_date=pendulum.now("UTC").add(seconds=delay))


def _wake_waiting_turns() -> None:
    """Under ``dag.test()``: the first (lowest map index) of this run's ``acquire_machine`` that
    handed their turn back is due at once (its reschedule date moved to now), so the test loop
    tries it on its next pass; the others stay asleep until it gives the lease back in turn. The
    test loop reads reschedule dates from the metadata DB, which tasks share with it in this one
    process."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.taskreschedule import TaskReschedule
    from airflow.utils.session import create_session
    from airflow.utils.state import TaskInstanceState
    from sqlalchemy import select, update

    ti = get_current_context()["ti"]
    waiting = (
        select(TaskInstance.id)
        .where(
            TaskInstance.dag_id == ti.dag_id,
            TaskInstance.run_id == ti.run_id,
            TaskInstance.task_id == ti.task_id.rsplit(".", 1)[0] + ".acquire_machine",
            TaskInstance.state == TaskInstanceState.UP_FOR_RESCHEDULE,
        )
        .order_by(TaskInstance.map_index)
        .limit(1)
    )
    now = pendulum.now("UTC")
    with create_session() as session:
        session.execute(
            update(TaskReschedule)
            .where(TaskReschedule.ti_id == waiting.scalar_subquery(), TaskReschedule.reschedule_date > now)
            .values(reschedule_date=now)
        )


def acquire_machine(item: dict[str, Any], name: str = "acquire_machine") -> dict[str, Any]:
    """Block until this branch holds the machine lease (see the module docstring); a branch that
    never gets it is recorded as failed in ``acquire_machine`` with the holder named."""
    from tsbench.results.workspace import workspace
    from tsbench.run.group import branch_part

    _label(item)
    with workspace(item["folder"], part=branch_part(item["points"], item["target"], ())) as folder:
        return _acquire(item, name, _phases(folder, item))


def _acquire(item: dict[str, Any], name: str, phases: Any) -> dict[str, Any]:
    from airflow.sdk.exceptions import AirflowRescheduleException

    from tsbench.run.lease import describe, wait_limit_s

    owner, leases = _lease_owner(item), _host_leases(phases)

    def waiting(holder: dict[str, Any] | None, waited_s: float) -> None:
        log.info("machine busy (%.0f s so far): %s", waited_s, describe(holder))

    try:
        if in_process_test_run():
            since_file = phases.dir / f"{name}.since"
            lease, waited = _try_or_give_the_turn_back(leases, owner, since_file, waiting)
        else:
            lease, waited = leases.acquire(owner, wait_limit_s(), on_wait=waiting)
        phases.write(name, {"waited_s": waited, "lease": lease.key})
    except AirflowRescheduleException:
        raise
    except Exception as error:
        for each in leases.leases:  # no teardown follows a failed setup
            each.release(owner)
        phases.fail(name, error)
        raise
    log.info("lease %s taken by %s after %.1f s", lease.where, item["label"], waited)
    return {"waited_s": waited}


def teardown(item: dict[str, Any], name: str) -> dict[str, Any]:
    """The teardown phase (also when the lease was lost), then the machine lease given back."""
    return _phase(item, (name,), measuring=False)


def phase(item: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A measured step of one branch (its phases in order), while beating the machine lease."""
    return _phase(item, names)
