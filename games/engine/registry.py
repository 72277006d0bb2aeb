"""The registry of games built on the engine, and how games are found.

A game is a subpackage of ``games`` that registers a :class:`GameSpec` when it
is imported: its command name, its OpenSpiel short name, the hook that adds
``gt-llm <name> ...`` to the command line, and the small parameters the
conformance runner (:mod:`games.engine.conformance`) checks it with.

Importing ``games`` calls :func:`discover_games`, which imports every
subpackage of ``games`` (``pkgutil``; no list to edit, and setuptools finds the
packages by pattern). A game whose import fails is logged in one line and
kept in :func:`broken_games`; the others still load. ``gt-llm`` adds the game
commands through :func:`add_command_parsers`, which lists the broken games in
its help.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import pkgutil
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyspiel

if TYPE_CHECKING:  # a type only: importing solvers would load numba with every game
    from solvers import GameTree

__all__ = [
    "ConformanceParams",
    "GameLoadError",
    "RedealHook",
    "Redeals",
    "GameSpec",
    "add_command_parsers",
    "broken_games",
    "discover_games",
    "game_commands",
    "parser_commands",
    "get_game_spec",
    "register_game_spec",
    "registered_game_specs",
]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Redeals:
    """What a re-deal hook (:data:`RedealHook`) returns.

    Attributes:
      histories: Alternative action histories, each from the initial state: a
        node the player cannot tell apart from the one it was given.
      skipped: Attempts dropped because the new deal could not reproduce what
        the player saw (a replayed action became illegal, say).
    """

    histories: tuple[tuple[int, ...], ...] = ()
    skipped: int = 0


#: ``redeal(game, history, player, rng, num) -> Redeals``: up to ``num`` action
#: histories that ``player`` cannot tell apart from ``history``. The hook keeps
#: the player's own private chance outcomes and everything it saw, re-draws the
#: hidden ones (e.g. the other players' roles) consistently with what it knows,
#: chooses the hidden moves anew where they depend on them, and replays the
#: public actions; an attempt whose replay fails is skipped and counted.
RedealHook = Callable[[pyspiel.Game, Sequence[int], int, np.random.Generator, int], Redeals]


@dataclasses.dataclass(frozen=True)
class ConformanceParams:
    """What the conformance suite runs a game with (keep it small: seconds, not minutes).

    Attributes:
      game_strings: ``pyspiel.load_game`` strings of small instances; every check
        runs on each (``random_sim_test``, determinism, hidden information).
      tree_game_strings: Instances small enough to materialise completely
        (perfect recall, builder tree equals materialised tree). Required by
        the runner: left empty, those checks fail.
      private_info: ``private_info(state, player)`` — strings only ``player``
        may know at ``state`` (e.g. its valuation, its role); the runner checks
        that no other player's information state contains them. Required by
        the runner: left out, that check fails.
      build_tree: ``build_tree(game)`` — a tree builder for a loaded instance
        that the runner compares with ``solvers.materialize(game)``. Default:
        the engine's batched expansion (:meth:`EngineGame.build_tree
        <games.engine.spiel.EngineGame.build_tree>`) for an engine game, else
        a walk that replays each node's history.
      num_sims: Simulations per ``random_sim_test`` and determinism check.
      redeal: Optional :data:`RedealHook`: alternative histories a player
        cannot tell apart from a given one (its hidden chance outcomes
        re-drawn). With it, the ``indistinguishable`` check requires the
        player's observation and information-state strings to be the same at
        both; without it, that check is skipped (and says so).
      redeal_games: Random games whose every node the ``indistinguishable``
        check re-deals, for every player.
      redeals_per_node: Alternatives asked of the hook per node and player.
    """

    game_strings: tuple[str, ...]
    tree_game_strings: tuple[str, ...] = ()
    private_info: Callable[[pyspiel.State, int], Sequence[str]] | None = None
    build_tree: Callable[[pyspiel.Game], GameTree] | None = None
    num_sims: int = 4
    redeal: RedealHook | None = None
    redeal_games: int = 1
    redeals_per_node: int = 1

    def __post_init__(self) -> None:
        if not self.game_strings:
            raise ValueError("ConformanceParams: give at least one game string")
        if self.redeal_games < 1 or self.redeals_per_node < 1:
            raise ValueError(
                "ConformanceParams: redeal_games and redeals_per_node must be at least 1 "
                f"(got {self.redeal_games} and {self.redeals_per_node})"
            )


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
      commands: Small end-to-end runs of every command the game adds, on the
        scripted stand-in, run in order by the command test
        (``tests/games/engine/test_commands.py``) in an empty folder that ``{tmp}``
        stands for; each is the argument list after ``gt-llm``, and a later
        one may read what an earlier one wrote (``replay`` a ``play --log``).
        Every command of the game must appear in one (the test names a
        missing one); a game with no commands gives none.
    """

    name: str
    short_name: str
    help: str
    add_parser: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]
    conformance: ConformanceParams
    commands: tuple[tuple[str, ...], ...] = ()


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


def parser_commands(
    parser: argparse.ArgumentParser,
) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command below ``parser`` (``("werewolf", "play")``, ...) with its own parser.

    A command is a parser with no sub-commands; the result is sorted by path.
    """
    out: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    stack: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = [((), parser)]
    while stack:
        path, current = stack.pop()
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and path:
            out[path] = current
        for action in subs:
            stack += [((*path, name), child) for name, child in action.choices.items()]
    return dict(sorted(out.items()))


def game_commands(spec: GameSpec) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command ``spec`` adds, with its parser (see :func:`parser_commands`).

    The command test and the refusal probes use it, so a new command is
    covered without an edit.
    """
    root = argparse.ArgumentParser()
    spec.add_parser(root.add_subparsers())
    return parser_commands(root)


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


@dataclasses.dataclass(frozen=True)
class GameLoadError:
    """A game package that failed to import (or to add its commands).

    Attributes:
      name: The package (or command) name, e.g. ``"werewolf"``.
      error: ``"<ExceptionType>: <message>"`` on one line.
    """

    name: str
    error: str

    def line(self) -> str:
        """One line for a log or a help text."""
        return f"{self.name}: {self.error}"


_BROKEN: dict[str, GameLoadError] = {}

#: Subpackages of ``games`` that are not games.
NOT_GAMES = frozenset({"engine"})


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def discover_games(package: str, path: Iterable[str]) -> tuple[GameLoadError, ...]:
    """Imports every game subpackage of ``package`` (each registers its spec on import).

    A subpackage whose import raises is logged as one warning and remembered
    (:func:`broken_games`); the others are imported all the same.

    Args:
      package: The parent package's name (``"games"``).
      path: Its ``__path__``.

    Returns:
      The games that failed to import in this call.
    """
    failed = []
    for info in sorted(pkgutil.iter_modules(list(path)), key=lambda m: m.name):
        if not info.ispkg or info.name in NOT_GAMES or info.name.startswith("_"):
            continue
        try:
            importlib.import_module(f"{package}.{info.name}")
        except Exception as exc:  # noqa: BLE001 - one broken game must not hide the others
            err = GameLoadError(info.name, _one_line(exc))
            logger.warning("game %s failed to load: %s", info.name, err.error)
            logger.debug("traceback", exc_info=True)
            with _LOCK:
                _BROKEN[info.name] = err
            failed.append(err)
        else:
            with _LOCK:
                _BROKEN.pop(info.name, None)
    return tuple(failed)


def broken_games() -> tuple[GameLoadError, ...]:
    """The game packages that failed to import, sorted by name."""
    with _LOCK:
        return tuple(_BROKEN[k] for k in sorted(_BROKEN))


def add_command_parsers(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> list[str]:
    """Adds ``gt-llm <game> ...`` for every registered game (the ``gt-llm`` plugin hook).

    Returns:
      One line per game that could not be offered (failed import, or its
      ``add_parser`` raised), for the help text.
    """
    problems = [e.line() for e in broken_games()]
    for spec in registered_game_specs():
        try:
            spec.add_parser(subparsers)
        except Exception as exc:  # noqa: BLE001 - the other games' commands still work
            err = GameLoadError(spec.name, _one_line(exc))
            logger.warning("the %s commands failed to load: %s", spec.name, err.error)
            problems.append(err.line())
    return problems
