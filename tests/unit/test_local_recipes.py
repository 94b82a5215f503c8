"""The local runtime finds an instance's server recipe by the class its state records, importing
only the module that declares it: never the targets package nor every target (a fresh task process
would pay ~1 s of client-library imports per attach)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tsbench.runtimes.contract import TargetError, class_at, class_path
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.registry import load_target

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
PROBE = textwrap.dedent(
    """
    import json
    import sys
    from pathlib import Path
    from tsbench.runtimes.local import LocalRuntime
    server = LocalRuntime(Path(sys.argv[1])).attach("one")
    loaded = sorted(name for name in sys.modules if name.startswith("tsbench.targets."))
    print(json.dumps([server.recipe.name, loaded]))
    """
)


def _state(root: Path, recipe: type | None) -> None:
    home = root / "one"
    home.mkdir(parents=True)
    body = {"instance": "one", "home": str(home), "recipe": "questdb", "ports": {"http": 1}, "pid": None}
    if recipe is not None:
        body["recipe_class"] = class_path(recipe)
    (home / "instance.json").write_text(json.dumps(body))


def test_attaching_imports_only_the_module_that_declares_the_recipe(tmp_path: Path) -> None:
    _state(tmp_path, load_target("questdb").server_recipe())
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    name, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert name == "questdb"
    assert "tsbench.targets.questdb.server" in modules
    others = [module for module in modules if module.split(".")[2] not in ("questdb", "base")]
    assert others == [], others
    assert "tsbench.targets.questdb.target" not in modules


def test_a_recipe_shared_by_two_targets_round_trips() -> None:
    shared = load_target("mongodb_naive").server_recipe()
    assert shared is load_target("mongodb").server_recipe()
    assert class_at(class_path(shared)) is shared


def test_an_unknown_class_or_none_recorded_is_a_target_error(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"no class 'tsbench\.targets\.questdb\.server:Nosuch'"):
        class_at("tsbench.targets.questdb.server:Nosuch")
    _state(tmp_path, None)
    with pytest.raises(TargetError, match="names no recipe class"):
        LocalRuntime(tmp_path).attach("one")
    (tmp_path / "one" / "instance.json").unlink()
    _state(tmp_path / "other", Path)
    with pytest.raises(TargetError, match="is not a server recipe"):
        LocalRuntime(tmp_path / "other").attach("one")
