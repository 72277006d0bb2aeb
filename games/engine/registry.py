"""The registry of games built on the engine.

A game registers a :class:`GameSpec` when its package is imported (importing
``games`` imports every game): its command name, its OpenSpiel short name, the
hook that adds ``gt-llm <name> ...`` to the command line, and the small
parameters the conformance suite (``tests/games/test_conformance.py``) runs
it with. ``gt-llm`` finds its game commands here instead of a hard-coded list.
"""

from __future__ import annotations

import argparse
import dataclasses
import threading
from collections.abc import Callable, Sequence

import pyspiel

from solvers import GameTree

__all__ = [
    "ConformanceParams",
    "GameSpec",
    "get_game_spec",
    "register_game_spec",
    "registered_game_specs",
]


@dataclasses.dataclass(frozen=True)
class ConformanceParams:
    """What the conformance suite runs a game with (keep it small: seconds, not minutes).

    Attributes:
      game_strings: ``pyspiel.load_game`` strings of small instances; every check
        runs on each (``random_sim_test``, determinism, hidden information).
      tree_game_strings: Instances small enough to materialise completely
        (perfect recall, builder tree equals materialised tree); default none.
      private_info: ``private_info(state, player)`` — strings only ``player``
        may know at ``state`` (e.g. its valuation, its role); the suite checks
        that no other player's information state contains them.
      build_tree: ``build_tree(game)`` — the game's own tree builder (e.g.
        engine expansion with the game's model) for a loaded instance; the
        suite checks it equals ``solvers.materialize(game)``. None when the
        game has none.
      num_sims: Simulations per ``random_sim_test`` and determinism check.
    """

    game_strings: tuple[str, ...]
    tree_game_strings: tuple[str, ...] = ()
    private_info: Callable[[pyspiel.State, int], Sequence[str]] | None = None
    build_tree: Callable[[pyspiel.Game], GameTree] | None = None
    num_sims: int = 4

    def __post_init__(self) -> None:
        if not self.game_strings:
            raise ValueError("ConformanceParams: give at least one game string")


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """A game the toolkit knows.

    Attributes:
      name: The command name (``gt-llm <name> ...``), e.g. ``"fruit-trading"``.
      short_name: The OpenSpiel short name, e.g. ``"python_fruit_trading"``.
      help: One line for ``gt-llm --help``.
      add_parser: ``add_parser(subparsers)`` adds the game's command group and
        sets ``func(args) -> int`` on each command.
      conformance: Small parameters for the conformance suite.
    """

    name: str
    short_name: str
    help: str
    add_parser: Callable[[argparse._SubParsersAction], None]
    conformance: ConformanceParams


_SPECS: dict[str, GameSpec] = {}
_LOCK = threading.Lock()


def register_game_spec(spec: GameSpec) -> None:
    """Registers a game; registering the same name twice is an error.

    Raises:
      ValueError: an empty name, or a name already registered by another spec.
    """
    if not spec.name or spec.name.strip() != spec.name or " " in spec.name:
        raise ValueError(f"register_game_spec: bad game name {spec.name!r}; use e.g. 'werewolf'")
    with _LOCK:
        old = _SPECS.get(spec.name)
        if old is not None and old != spec:
            raise ValueError(
                f"register_game_spec: {spec.name!r} is already registered "
                f"(by {old.short_name}); choose another name"
            )
        _SPECS[spec.name] = spec


def registered_game_specs() -> tuple[GameSpec, ...]:
    """Every registered game, sorted by name."""
    with _LOCK:
        return tuple(_SPECS[k] for k in sorted(_SPECS))


def get_game_spec(name: str) -> GameSpec:
    """The spec registered under ``name``.

    Raises:
      KeyError: no such game (the message lists the registered ones).
    """
    with _LOCK:
        if name not in _SPECS:
            raise KeyError(
                f"get_game_spec: unknown game {name!r}; registered: {', '.join(sorted(_SPECS))}"
            )
        return _SPECS[name]
