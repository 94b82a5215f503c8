"""The house stays easy to see and to change: small modules and functions, and the layering
contracts of ``pyproject.toml`` (``[tool.importlinter]``) hold. These read the real tree."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "plugins", ROOT / "dags"]
MODULE_LINES = 400  # ~400 lines per module
FUNCTION_LINES = 60  # ~60 lines per function


def _python_files() -> list[Path]:
    return sorted(path for folder in CODE for path in folder.rglob("*.py"))


def test_no_module_over_the_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _python_files()
        if (lines := len(path.read_text().splitlines())) > MODULE_LINES
    }
    assert not long, f"modules over {MODULE_LINES} lines: {long}"


def test_no_function_over_the_limit() -> None:
    long = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, f"functions over {FUNCTION_LINES} lines: {long}"


def test_layering_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def _import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_import_cycles_between_modules() -> None:
    """No module reaches itself through imports, counting those under ``TYPE_CHECKING`` (a cycle
    there is a cycle of meaning; protocols break them: ``report/sections/point_view.py`` …). The
    ``acyclic_siblings`` contract checks siblings only: a cycle through a package's ``__init__``
    and one of its own modules is not between siblings, and only this walk sees it."""
    import grimp

    sys.path.insert(0, str(ROOT / "plugins"))
    graph = grimp.build_graph("tsbench", include_external_packages=False)
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert _import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _import_cycles(edges) == []
