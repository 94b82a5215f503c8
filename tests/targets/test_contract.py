"""Contract tests over the registry: every target folder is complete and covers every query type."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tsbench.runtimes.definition import load_definition
from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Capabilities, Endpoint, Target
from tsbench.targets.registry import load_target, target_names
from tsbench.workload.queries import DataRange, generate_queries
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import get_use_case

TARGETS = Path(__file__).resolve().parents[2] / "plugins" / "tsbench" / "targets"
EXPECTED = {
    "clickhouse",
    "griddb",
    "influxdb",
    "mongodb",
    "mongodb_naive",
    "postgres",
    "questdb",
    "timescaledb",
}


def test_registry_finds_the_local_targets() -> None:
    assert set(target_names()) >= EXPECTED


@pytest.mark.parametrize("name", target_names())
def test_folder_has_the_same_parts(name: str) -> None:
    folder = TARGETS / name
    for part in (
        "__init__.py",
        "target.py",
        "server.py",  # local process
        "container.py",  # pinned official images (runtime docker; ports and login for runtime aws)
        "cloud_install.sh",  # the cloud host's install (runtime aws)
        "definition.py",  # version pin, tuning table and install recipe for every runtime
        "install.sh",  # the local install recipe
        "dialect.py",
        "README.md",
    ):
        assert (folder / part).is_file(), f"targets/{name}/{part} is missing"
    readme = (folder / "README.md").read_text().lower()
    assert "version" in readme and "schema" in readme


@pytest.mark.parametrize("name", target_names())
def test_a_runtime_can_build_its_ready_check_from_an_endpoint_alone(name: str) -> None:
    """``runtimes.contract.ServedTarget.answering``: no server is contacted before ``version``."""
    endpoint = Endpoint("127.0.0.1", {role: 1 for role in load_target(name).server_recipe().port_roles})
    target = load_target(name).answering(endpoint)
    try:
        assert isinstance(target, load_target(name)) and target.endpoint == endpoint
    finally:
        target.close()


@pytest.mark.parametrize("name", target_names())
def test_target_class_declares_what_it_is(name: str) -> None:
    target = load_target(name)
    assert issubclass(target, Target) and not inspect.isabstract(target)
    assert isinstance(target.capabilities, Capabilities) and target.title
    assert issubclass(target.server_recipe(), ServerRecipe)
    recipe, definition = target.server_recipe().definition, load_definition(name)
    assert recipe is not None and definition is not None, (
        f"{name}: the local recipe installs its definition's"
    )
    assert (recipe.server_folder, recipe.version) == (definition.server_folder, definition.version)
    for qtype, reason in target.capabilities.unsupported.items():
        assert qtype in QUERY_TYPES, f"{name} declares unknown query type {qtype}"
        assert len(reason) > 15, f"{name}: give a real reason for not supporting {qtype}"


@pytest.mark.parametrize("name", target_names())
@pytest.mark.parametrize("use_case_name", ["cpu-only", "iot"])
def test_every_query_type_is_rendered_or_declared_unsupported(name: str, use_case_name: str) -> None:
    """Fails while any query type of the use case's families is neither rendered nor declared
    unsupported with a reason (devops and YCSB-TS types on cpu data, the iot types on iot data)."""
    target_type = load_target(name)
    from tsbench.spec import DatasetSpec
    from tsbench.workload.generate import generate

    spec = DatasetSpec.parse(use_case=use_case_name, scale=10, end="2016-01-01T00:00:10Z")
    data = generate(spec)
    use_case = get_use_case(use_case_name)
    target = target_type.__new__(target_type)
    Target.__init__(target, None, use_case, data.tags)  # rendering needs no connection
    span = DataRange(
        1_451_606_400 * 10**9,
        1_451_692_800 * 10**9,
        10**10,
        10,
        use_case.entity_prefix,
        use_case.queried,
        use_case.entity_key,
        use_case.query_fields,
        use_case.groups,
    )
    types = [n for n, q in QUERY_TYPES.items() if q.family in use_case.query_families]
    for query in generate_queries(span, types, 2, seed=1):
        if query.type in target_type.capabilities.unsupported:
            with pytest.raises(NotImplementedError):
                target.render(query)
            continue
        text = target.render(query)
        assert isinstance(text, str) and text.strip(), f"{name}: empty rendering of {query.type}"
