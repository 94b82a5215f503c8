"""Apache IoTDB's local server (the pin, 2.0.1-beta, from Maven Central: targets/iotdb/install.sh;
scripts/test.sh installs it in the background and these tests wait for that install, failing when it
failed): a ConfigNode and a DataNode run as one server, every listener on loopback, a stock login
refused."""

from __future__ import annotations

import pytest
from builds import wait_for_build

from tsbench.runtimes.listening import is_loopback
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.base import TargetError
from tsbench.targets.iotdb.client import DEFAULT_PASSWORD, USER, endpoint_session, open_session
from tsbench.targets.iotdb.server import PORT_KEYS, IoTDBServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def iotdb(tmp_path_factory):
    wait_for_build("TSBENCH_IOTDB_BUILD_STATUS", "IoTDB (install.sh)")
    runtime = LocalRuntime(tmp_path_factory.mktemp("iotdb-runtime"))
    server = runtime.provision_recipe(IoTDBServer, "iotdb")
    try:
        yield server
    finally:
        runtime.teardown("iotdb")


def test_both_processes_listen_on_loopback_only(iotdb) -> None:
    """Seven TCP listeners (the RPC port and IoTDB's internal ones), each on 127.0.0.1 at the port
    allocated for it, although IoTDB binds every address it is not stopped from binding; no UDP."""
    names = sorted(process.name() for process in iotdb.processes())
    assert names.count("java") == 2, names  # the ConfigNode and the DataNode, under run.sh
    listeners = iotdb.listening
    assert {listener.port for listener in listeners} == set(iotdb.recipe.ports.values())
    assert all(listener.protocol == "tcp" and is_loopback(listener.address) for listener in listeners)
    assert len(PORT_KEYS) == len(listeners) == 7


def test_a_stock_or_wrong_password_is_refused(iotdb) -> None:
    endpoint = iotdb.endpoint()
    port = endpoint.port("rpc")
    with pytest.raises(TargetError, match="801"):
        open_session("127.0.0.1", port, USER, DEFAULT_PASSWORD)
    wrong = iotdb.recipe.password[:-1] + ("x" if iotdb.recipe.password[-1] != "x" else "y")
    with pytest.raises(TargetError, match="801") as refused:
        open_session("127.0.0.1", port, USER, wrong)
    assert wrong not in str(refused.value) and iotdb.recipe.password[:-1] not in str(refused.value)
    session = endpoint_session(endpoint)
    try:
        assert session.execute_statement("SHOW VERSION").has_next()
    finally:
        session.close()


def test_a_restart_keeps_the_password_and_the_version(iotdb) -> None:
    assert iotdb.stop() < iotdb.recipe.stop_timeout_s
    assert not iotdb.processes()
    iotdb.start()
    assert iotdb.recipe.version() == "2.0.1-beta"
    with pytest.raises(TargetError, match="801"):
        open_session("127.0.0.1", iotdb.endpoint().port("rpc"), USER, DEFAULT_PASSWORD)
    endpoint_session(iotdb.endpoint()).close()
