"""Test selection by game: ``pytest -k NAME`` selects every test of a game.

A game is known by its folder (``fruit_trading``), its command (``fruit-trading``)
and its OpenSpiel short name (``python_fruit_trading``). A test whose id names
any of them gets all of them as keywords, so ``-k fruit_trading`` also selects
``test_commands.py::...[fruit-trading]`` and ``-k fruit-trading`` the tests under
``tests/games/fruit_trading/``. A game folder that fails to import still has a
test of its own, ``test_game_package_imports[<folder>]``, which ``-k <folder>``
selects and which fails (``tests/games/engine/test_conformance.py``).

With ``-n`` (xdist), the controller compiles the solver kernels into numba's
on-disk cache before the workers start (:func:`pytest_configure`), so each
worker loads them instead of compiling its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def game_folders() -> list[str]:
    """Every game package under ``games/`` (a folder with ``__init__.py``), engine aside."""
    from games.engine.registry import NOT_GAMES

    return sorted(
        p.parent.name
        for p in (ROOT / "games").glob("*/__init__.py")
        if p.parent.name not in NOT_GAMES and not p.parent.name.startswith("_")
    )


def game_aliases() -> list[frozenset[str]]:
    """Per game folder, every name a test id may use for it (lower case)."""
    import games  # noqa: F401  (imports every game; a broken one is only logged)
    from games.engine.registry import registered_game_specs

    aliases = {folder: {folder} for folder in game_folders()}
    for spec in registered_game_specs():
        folder = spec.add_parser.__module__.split(".")[1]
        names = aliases.setdefault(folder, {folder})
        names |= {spec.name, spec.name.replace("-", "_"), spec.short_name}
    return [frozenset(n.lower() for n in names) for names in aliases.values()]


def keywords_for(nodeid: str, aliases: list[frozenset[str]]) -> set[str]:
    """The game names a test with this id answers to under ``-k``."""
    text = nodeid.lower()
    return {name for names in aliases if any(n in text for n in names) for name in names}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("keyword"):
        return  # only -k reads the extra keywords
    aliases = game_aliases()
    for item in items:
        item.extra_keyword_matches.update(keywords_for(item.nodeid, aliases))


def compile_solver_kernels() -> None:
    """Runs every solver kernel once on Kuhn poker (numba compiles and caches each).

    Every CFR variant with its curves, NashConv, CFR-Gain, best responses and
    reach probabilities: the 29 kernels of ``solvers/_kernels``. Cold, about
    30 s of CPU on this kind of machine; from the cache, about 3 s.
    """
    import pyspiel

    import solvers
    from solvers.values import reach_probabilities

    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    base = solvers.pure_policy(tree, lambda key, legal: legal[0])
    for variant in solvers.VARIANTS:
        solvers.cfr_curves([tree], [base], 3, variant=variant)
    solver = solvers.CFRSolver(tree)
    solver.run(3)
    policy = solver.average_policy()
    solvers.nash_conv(tree, policy)
    solvers.cfr_gain(tree, policy, base)
    solvers.best_response_values(tree, policy)
    reach_probabilities(tree, policy)


def pytest_configure(config: pytest.Config) -> None:
    # xdist's controller (workers have ``workerinput``) compiles once for all workers:
    # four workers compiling at once on two cores cost about a minute of wall time.
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    compile_solver_kernels()


@pytest.hookimpl(optionalhook=True)  # xdist's hook: -p no:xdist runs without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: three workers per two cores.

    Many tests wait (on a fake server's latency, a timeout, a subprocess, a
    signal): more workers than cores keep the cores busy meanwhile, but each
    worker pays its own collection (about 10 s of CPU). Measured on 2 idle
    cores (2026-11-29): 200-201 s with 3 workers against 205-216 s with 4.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, 3 * (cores or 1) // 2)
