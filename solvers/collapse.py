"""Policy-free subtrees collapsed into terminals: the tree the solvers walk.

A subtree that contains no decision node (in the chat games: the chance
nodes that draw the model's message after the last decision, and their
leaves) has a value vector that no policy can change:
``v(h) = sum_a p(h, a) v(ha)`` down to the terminals. Every solver pass --
CFR's backward pass, a best response, the fused metric pass -- recomputes it
in every iteration all the same. :func:`collapse_policy_free` replaces each
maximal such subtree by one terminal whose returns are that vector, computed
once, bottom-up, in the order the kernels sum a chance node's children
(``v = 0.0``, then ``v += p(h, a_j) * v(h a_j)`` for ``j = 0, 1, ...``).

Exactness: the kernels' backward passes (CFR, simultaneous CFR, best
response) compute the value of a chance node exactly that way, so on the
collapsed tree they see the same floats at every kept node: regrets,
cumulative policies, iterates, average policies and best-response actions are
bit-for-bit those of the full tree. Passes that instead accumulate
``reach(z) * u(z)`` over terminals ``z`` (expected values, the fused
NashConv / CFR-Gain pass) now add ``reach(r) * v(r)`` once per collapsed root
``r``: the same sum in another association, equal to rounding (relative
~1e-15 per term).

Kept nodes retain their relative (breadth-first) order, so the collapsed tree
has the layout of :class:`~solvers.game_tree.GameTree` (children contiguous,
parents first) and the same information sets with the same ids; only node
ids change. Public results (policies, ``num_nodes``, per-node outputs such as
:func:`solvers.reach_probabilities`) stay those of the original tree.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

from solvers.node_kinds import CHANCE, DECISION, TERMINAL, TERMINAL_PLAYER

# A solvers.game_tree.GameTree; typed loosely because game_tree imports this module.
TreeT = TypeVar("TreeT")


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


def has_decision_below(tree: Any) -> np.ndarray:
    """``bool[N]``: the node or one of its descendants is a decision node."""
    mark = tree.kind == DECISION
    frontier = np.flatnonzero(mark)
    parent = tree.parent
    while frontier.size:
        up = parent[frontier]
        up = up[up >= 0]
        up = np.unique(up[~mark[up]])
        mark[up] = True
        frontier = up
    return mark


def collapse_policy_free(given: TreeT) -> TreeT:
    """``given`` (a tree) with every maximal decision-free subtree replaced by a terminal.

    The new terminal's returns are the subtree's expected returns (see the
    module docstring for the summation order and why results stay exact).
    Returns ``given`` itself when no such subtree has more than one node.
    """
    tree: Any = given
    n = tree.num_nodes
    kind, parent = tree.kind, tree.parent
    live = has_decision_below(tree)
    # Roots of maximal policy-free subtrees: policy-free nodes whose parent is not (or the root).
    root_free = ~live
    root_free[1:] &= live[parent[1:]]
    collapse = root_free & (kind != TERMINAL)
    if not collapse.any():
        return given

    # Values of every policy-free node, bottom-up, level by level (nodes are sorted by depth).
    free = np.flatnonzero(~live)
    pos = np.full(n, -1, dtype=np.int64)
    pos[free] = np.arange(free.size)
    vals = np.array(tree.returns[free], dtype=np.float64)
    inner = free[kind[free] == CHANCE]
    if inner.size:
        depth = tree.depth[inner]
        bounds = np.flatnonzero(np.diff(depth)) + 1
        for level in reversed(np.split(inner, bounds)):
            fc = tree.first_child[level].astype(np.int64)
            nc = tree.num_children[level]
            acc = np.zeros((level.size, tree.num_players))
            for j in range(int(nc.max())):
                sel = nc > j
                child = fc[sel] + j
                # The kernels' order: v = 0.0, then v += p(h, a_j) * v(h a_j) for j = 0, 1, ...
                acc[sel] += tree.chance_prob[child][:, None] * vals[pos[child]]
            vals[pos[level]] = acc

    keep = live | root_free
    kept = np.flatnonzero(keep)
    m = kept.size
    new_id = np.full(n + 1, -1, dtype=np.int32)  # new_id[-1] == -1 maps "no node" to itself
    new_id[kept] = np.arange(m, dtype=np.int32)
    is_collapsed = collapse[kept]
    coll_new = np.flatnonzero(is_collapsed)
    coll_old = kept[is_collapsed]

    new_kind = kind[kept].copy()
    new_kind[coll_new] = TERMINAL
    new_player = tree.player[kept].copy()
    new_player[coll_new] = TERMINAL_PLAYER
    returns = tree.returns[kept].copy()
    returns[coll_new] = vals[pos[coll_old]]
    first_child = new_id[tree.first_child[kept]]
    first_child[coll_new] = -1
    num_children = tree.num_children[kept].copy()
    num_children[coll_new] = 0
    # Filtering a best-response order to the kept nodes keeps its constraints.
    br_order = np.empty((m, tree.num_players), dtype=np.int32)
    for p in range(tree.num_players):
        column = tree.br_order[:, p]
        br_order[:, p] = new_id[column[keep[column]]]

    return dataclasses.replace(
        tree,
        kind=_readonly(new_kind),
        player=_readonly(new_player),
        parent=_readonly(new_id[parent[kept]]),
        action=_readonly(tree.action[kept]),
        chance_prob=_readonly(tree.chance_prob[kept]),
        infoset=_readonly(tree.infoset[kept]),
        returns=_readonly(returns),
        depth=_readonly(tree.depth[kept]),
        first_child=_readonly(first_child),
        num_children=_readonly(num_children),
        child_rank=_readonly(tree.child_rank[kept]),
        infoset_nodes=_readonly(new_id[tree.infoset_nodes]),
        br_order=_readonly(br_order),
        terminals=_readonly(np.flatnonzero(new_kind == TERMINAL).astype(np.int32)),
    )
