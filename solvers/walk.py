"""The OpenSpiel walk: any sequential OpenSpiel game -> :class:`GameTree`.

:func:`materialize` enumerates the game tree once, depth first, from
``game.new_initial_state()``: chance nodes through
``state.chance_outcomes()``, decision nodes through
``state.legal_actions()`` and ``state.information_state_string(player)``,
terminals through ``state.returns()``. It feeds the nodes to a
:class:`~solvers.builder.TreeBuilder`, whose buffers and canonicalisation
(:mod:`solvers.canonical`) it shares, so the walk holds only compact
per-node buffers plus the states on the current path and their unexpanded
siblings.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from typing import Any

from solvers.builder import TreeBuilder
from solvers.game_tree import GameTree

logger = logging.getLogger(__name__)

DEFAULT_MAX_NODES = 5_000_000
"""Default node limit of :func:`materialize`."""


def _check_game_supported(game) -> None:
    import pyspiel

    game_type = game.get_type()
    name = game_type.short_name
    if game_type.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        raise ValueError(
            f"materialize: game {name!r} has simultaneous moves; convert it first with "
            "pyspiel.convert_to_turn_based(game) (or pyspiel.load_game_as_turn_based(name))"
        )
    if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(
            f"materialize: game {name!r} has {game_type.dynamics}; only sequential games can be materialised"
        )
    if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(
            f"materialize: game {name!r} samples chance outcomes (SAMPLED_STOCHASTIC), so its tree cannot be "
            "enumerated; use a version of the game with explicit chance outcomes"
        )
    if not game_type.provides_information_state_string:
        raise ValueError(
            f"materialize: game {name!r} does not provide information-state strings; implement "
            "information_state_string(player) (perfect recall) for the game"
        )


def _return_free_heap() -> None:
    """Gives the heap the walk freed back to the operating system (glibc only).

    The walk creates and frees millions of small Python objects; glibc keeps
    the freed memory in its arenas, so without this the process keeps a
    sizeable fraction of the tree's size as resident memory it no longer
    needs.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (e.g. musl): nothing to trim
        return
    trim(0)


def materialize(game, *, max_nodes: int = DEFAULT_MAX_NODES) -> GameTree:
    """Walks an OpenSpiel game once and stores its full tree as arrays.

    Works for C++ and Python-registered games with any number of players,
    explicit chance nodes and imperfect information. Information sets are
    keyed by ``state.information_state_string(player)``; legal actions are
    OpenSpiel action ids.

    Args:
        game: A ``pyspiel.Game`` with sequential (turn-based) dynamics.
        max_nodes: Abort with ``ValueError`` once the tree exceeds this many
            nodes (the tree takes about ``50 + 12 * num_players`` bytes per
            node plus the information-state strings; the walk peaks below
            twice that).

    Returns:
        The materialised tree.

    Raises:
        ValueError: For simultaneous-move or sampled-chance games, games
            without information-state strings, trees larger than
            ``max_nodes``, or information sets violating perfect recall.
    """
    import pyspiel

    _check_game_supported(game)
    name = game.get_type().short_name
    builder = TreeBuilder(game.num_players(), game_name=name)
    # Depth-first; a stack entry is (state, parent node, action, chance prob or None).
    stack: list[tuple[Any, int | None, int | None, float | None]] = [  # Any: pyspiel.State
        (game.new_initial_state(), None, None, None)
    ]
    while stack:
        state, parent, action, prob = stack.pop()
        if len(builder) >= max_nodes:
            raise ValueError(
                f"materialize: the tree of {name!r} has more than max_nodes={max_nodes} nodes; pass a larger "
                "max_nodes (memory grows linearly with the node count) or materialise a smaller game or subgame"
            )
        if state.is_terminal():
            builder.add_terminal(state.returns(), parent=parent, action=action, prob=prob)
            continue
        if state.is_chance_node():
            node = builder.add_chance(parent=parent, action=action, prob=prob)
            for a, pa in reversed(state.chance_outcomes()):
                stack.append((state.child(a), node, a, pa))
            continue
        current = state.current_player()
        if current < 0:
            if current == pyspiel.PlayerId.SIMULTANEOUS:
                raise ValueError(
                    f"materialize: game {name!r} reached a simultaneous-move node; convert it with "
                    "pyspiel.convert_to_turn_based(game)"
                )
            raise ValueError(f"materialize: unexpected current player {current} in game {name!r}")
        legal = state.legal_actions(current)
        node = builder.add_decision(
            current,
            state.information_state_string(current),
            legal,
            parent=parent,
            action=action,
            prob=prob,
        )
        for a in reversed(legal):
            stack.append((state.child(a), node, a, None))

    tree = builder._build(release=True)
    del stack, builder
    _return_free_heap()
    logger.debug("materialised %r: %d nodes, %d infosets", name, tree.num_nodes, tree.num_infosets)
    return tree
