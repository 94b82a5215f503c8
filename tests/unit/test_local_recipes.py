"""The local runtime finds an instance's server recipe by importing the target folder that declares
it, not every target (a fresh task process would pay ~1 s of client-library imports per attach)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
PROBE = textwrap.dedent(
    """
    import sys
    from tsbench.runtimes.local import _recipe_named
    recipe = _recipe_named("questdb")
    loaded = sorted(name.split(".")[2] for name in sys.modules
                    if name.startswith("tsbench.targets.") and name.endswith(".target"))
    print(recipe.name, loaded)
    """
)


def test_attaching_imports_only_the_target_that_declares_the_recipe() -> None:
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "questdb ['questdb']", done.stdout


def test_a_recipe_shared_by_two_targets_and_an_unknown_one() -> None:
    from tsbench.runtimes.local import _recipe_named
    from tsbench.targets.base import TargetError
    from tsbench.targets.registry import load_target

    assert _recipe_named("mongodb") is load_target("mongodb_naive").server_recipe()
    assert _recipe_named("timescaledb_tsl").name == "timescaledb_tsl"
    with pytest.raises(TargetError, match="no target declares the server recipe 'nosuchdb'"):
        _recipe_named("nosuchdb")
