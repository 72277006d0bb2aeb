"""The layers of the code: which package may import which, and how packages are found.

From the bottom: ``runs`` (results folders and the one atomic writer)
imports no other package; ``gt_llm`` (models, prompts, opponent models) and
``solvers`` (game trees and CFR) import at most ``runs``, never each other; ``games.engine`` imports those three; each game imports the engine
and the bottom layer, never another game; nothing imports upwards. Imports
are read from the source (every ``import`` statement, also inside functions),
so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator

import pytest
import tomllib
from setuptools import find_packages

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("gt_llm", "games", "solvers", "runs")


def _unit(module: str) -> str:
    """The layer unit of a module: a top-level package, or ``games.<sub>``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "games" and len(parts) > 1 else parts[0]


def _module_name(path: pathlib.Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imports() -> Iterator[tuple[str, str, list[str]]]:
    """Per import statement of the packages (lazy ones too): module, ``from`` part, names.

    ``import a.b`` gives ``(module, "a.b", [])``; ``from a.b import c, d`` gives
    ``(module, "a.b", ["c", "d"])``; relative imports are not used here.
    """
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = _module_name(path)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        yield module, a.name, []
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    yield module, node.module, [a.name for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """Unit -> the units it imports (within the project's packages)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for module, name, _ in imports():
        if name.split(".")[0] in PACKAGES and _unit(name) != _unit(module):
            edges[_unit(module)].add(_unit(name))
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v) :] + [v]
            if v not in state and (found := visit(v)):
                return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(edges):
        if u not in state and (found := visit(u)):
            return found
    return None


GRAPH = import_graph()


def module_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (every import statement, lazy ones too).

    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module of
    ours and ``a.b`` otherwise; importing a package's ``__init__`` is an edge to the package.
    """
    modules = {_module_name(p) for top in PACKAGES for p in (ROOT / top).rglob("*.py")}
    edges: dict[str, set[str]] = defaultdict(set)
    for module, name, names in imports():
        targets = [f"{name}.{n}" if f"{name}.{n}" in modules else name for n in names] or [name]
        edges[module].update(t for t in targets if t in modules and t != module)
    return edges


def test_no_cycle_between_packages():
    assert _cycle(GRAPH) is None, " -> ".join(_cycle(GRAPH) or [])


def test_no_import_cycle_between_modules():
    # Within a package too: two files that import each other (even lazily, inside a
    # function) are one module split in two, or a shared part waiting for a home of its own.
    cycle = _cycle(module_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


#: What each bottom-layer package may import.
BOTTOM = {"runs": set(), "gt_llm": {"runs"}, "solvers": {"runs"}}


@pytest.mark.parametrize("bottom", sorted(BOTTOM))
def test_the_bottom_layer_imports_only_what_is_below(bottom):
    extra = GRAPH.get(bottom, set()) - BOTTOM[bottom]
    assert not extra, f"{bottom} imports {sorted(extra)}"


def test_import_games_loads_neither_the_solver_kernels_nor_jax():
    # A command's start-up: numba (the solver kernels) loads with the first solve, jax
    # (through bm25s) with the first retrieval, neither with `import games`.
    code = "import sys, games; print(sorted({'numba', 'jax', 'solvers'} & set(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert proc.stdout.strip() == "[]", proc.stdout


def test_nothing_in_gt_llm_imports_games():
    assert not any(u.startswith("games") for u in GRAPH.get("gt_llm", ())), GRAPH["gt_llm"]


def test_the_engine_imports_no_game_and_games_import_no_other_game():
    games = {u for u in GRAPH if u.startswith("games.") and u != "games.engine"}
    assert games, "no game found: the graph is empty"
    assert not GRAPH["games.engine"] & games, GRAPH["games.engine"]
    for g in games:
        assert GRAPH[g] & {"games.engine"}, f"{g} does not use the engine"
        assert not GRAPH[g] & (games - {g}), f"{g} imports {sorted(GRAPH[g] & games)}"


def test_setuptools_finds_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    found = set(find_packages(where=str(ROOT), include=include))
    on_disk = {
        _module_name(p.parent / "__init__.py")
        for top in PACKAGES
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert on_disk and on_disk <= found, sorted(on_disk - found)
    assert not {p for p in found if p.split(".")[0] not in PACKAGES}, found
