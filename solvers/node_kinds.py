"""Node kinds and the player ids of non-decision nodes (OpenSpiel's ``PlayerId`` conventions).

A leaf module: :mod:`solvers.game_tree` and the modules that build its arrays
(:mod:`solvers.canonical`, :mod:`solvers.canonical_checks`, :mod:`solvers.collapse`)
read them from here.
"""

from __future__ import annotations

__all__ = ["CHANCE", "CHANCE_PLAYER", "DECISION", "TERMINAL", "TERMINAL_PLAYER"]

TERMINAL = 0
CHANCE = 1
DECISION = 2

CHANCE_PLAYER = -1
TERMINAL_PLAYER = -4
