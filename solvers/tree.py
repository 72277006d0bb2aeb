"""Materialised extensive-form game trees (compatibility module).

The tree code lives in four modules; this one re-exports their public names
so that ``from solvers.tree import ...`` keeps working:

* :mod:`solvers.game_tree` -- the :class:`GameTree` type and the node-kind
  constants;
* :mod:`solvers.canonical` -- validation and breadth-first canonicalisation
  (:meth:`GameTree.from_arrays` and everything else end there);
* :mod:`solvers.builder` -- :class:`TreeBuilder`, node by node;
* :mod:`solvers.walk` -- :func:`materialize`, the OpenSpiel walk (drives a
  :class:`TreeBuilder`).
"""

from solvers.builder import TreeBuilder
from solvers.canonical import CHANCE_SUM_ATOL
from solvers.game_tree import (
    CHANCE,
    CHANCE_PLAYER,
    DECISION,
    TERMINAL,
    TERMINAL_PLAYER,
    GameTree,
    canonical_tree,
)
from solvers.walk import DEFAULT_MAX_NODES, materialize

__all__ = [
    "CHANCE",
    "CHANCE_PLAYER",
    "CHANCE_SUM_ATOL",
    "DECISION",
    "DEFAULT_MAX_NODES",
    "TERMINAL",
    "TERMINAL_PLAYER",
    "GameTree",
    "TreeBuilder",
    "canonical_tree",
    "materialize",
]
