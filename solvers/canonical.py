"""Canonicalisation: validated per-node columns -> a breadth-first :class:`GameTree`.

Every way of building a tree (:meth:`GameTree.from_arrays`,
:class:`~solvers.builder.TreeBuilder`, :func:`~solvers.walk.materialize`)
ends here. :func:`canonical_fields` checks that the columns describe a finite
tree with consistent information sets (:mod:`solvers.canonical_checks`),
renumbers the nodes breadth-first (children of a decision node in
legal-action order, children of a chance node in input order) and the
information sets by first appearance, checks perfect recall (Kuhn 1953) and
derives the navigation arrays (``first_child``, ``child_rank``, ``br_order``,
...).

All work is vectorised NumPy, O(N log N) time. Memory is kept close to the
size of the result: inputs are popped from the ``columns`` mapping and
dropped as soon as their permuted copy exists, indices are ``int32`` and the
per-player passes (perfect recall, best-response order) run one player at a
time, so the peak stays below about twice the stored tree.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

import numpy as np

from solvers.canonical_checks import CHANCE_SUM_ATOL, Infosets, Nodes, check_columns, fail
from solvers.node_kinds import CHANCE, DECISION, TERMINAL

__all__ = ["CHANCE_SUM_ATOL", "canonical_fields"]


def canonical_fields(
    columns: MutableMapping[str, object],
    *,
    num_players: int,
    infoset_keys: Sequence[str],
    infoset_actions: Sequence[Sequence[int]],
    game_name: str = "",
) -> dict[str, Any]:
    """Validates per-node columns and returns the fields of the canonical :class:`GameTree`.

    :func:`solvers.game_tree.canonical_tree` wraps them in the tree type (this
    module does not import it, so that the tree type can import this one).

    Args:
        columns: Per-node columns ``parent``, ``kind``, ``action``,
            ``player``, ``chance_prob``, ``infoset`` and either ``returns``
            (``[N, num_players]``, only terminal rows used) or
            ``terminal_returns`` (``[Z, num_players]``, one row per terminal
            in node order); optionally ``rank`` (the legal-action position of
            each decision edge, as :class:`~solvers.builder.TreeBuilder`
            knows it; chance edges then carry their input position).
            Entries are **popped** (the mapping is emptied) so that the
            inputs can be freed while the tree is built.
        num_players: Number of players.
        infoset_keys: Unique information-state string per information set.
        infoset_actions: Legal action ids per information set.
        game_name: Optional name.

    Returns:
        The tree's fields, by name (see :meth:`GameTree.from_arrays` for the renumbering).

    Raises:
        ValueError: If the columns do not describe a finite tree with
            consistent information sets and perfect recall.
    """
    num_players = int(num_players)
    nodes, isets, root = check_columns(
        columns,
        num_players=num_players,
        infoset_keys=infoset_keys,
        infoset_actions=infoset_actions,
    )
    depth, returns, terminals = _renumber_breadth_first(nodes, root, num_players)
    counts, first_child, child_rank = _child_links(nodes.parent)
    _check_decision_order(nodes, child_rank)
    nodes.rank = _NO_RANK  # checked: freed before the per-player passes
    dn = np.flatnonzero(nodes.kind == DECISION).astype(np.int32)
    _renumber_infosets(nodes.infoset, dn, isets)
    br_order = _best_response_order(nodes, isets, dn, depth, child_rank, num_players)
    iset_nodes, iset_ptr = _infoset_index(nodes.infoset, dn, len(isets.keys))

    return dict(
        num_players=num_players,
        kind=_readonly(nodes.kind),
        player=_readonly(nodes.player),
        parent=_readonly(nodes.parent),
        action=_readonly(nodes.action),
        chance_prob=_readonly(nodes.chance_prob),
        infoset=_readonly(nodes.infoset),
        returns=_readonly(returns),
        depth=_readonly(depth),
        first_child=_readonly(first_child),
        num_children=_readonly(counts),
        child_rank=_readonly(child_rank),
        infoset_player=_readonly(isets.player),
        infoset_keys=isets.keys,
        infoset_actions=_readonly(isets.actions),
        infoset_num_actions=_readonly(isets.num.astype(np.int32)),
        infoset_node_ptr=_readonly(iset_ptr),
        infoset_nodes=_readonly(iset_nodes.astype(np.int32)),
        br_order=_readonly(br_order),
        terminals=_readonly(terminals),
        game_name=str(game_name),
    )


_NO_RANK = np.empty(0, dtype=np.int32)


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


# --- renumbering -------------------------------------------------------------------


def _renumber_breadth_first(
    nodes: Nodes, root: int, num_players: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Permutes every column of ``nodes`` into breadth-first order, dropping each input.

    Returns:
        ``(depth, returns, terminals)`` in the new order; ``nodes.rank`` is
        permuted too and ``nodes.term_returns`` emptied.
    """
    n = nodes.parent.shape[0]
    term_row = np.cumsum(nodes.kind == TERMINAL, dtype=np.int32) - 1  # row in term_returns
    order, depth = _bfs_order(nodes.parent, nodes.rank, root)
    depth = depth[order]
    nodes.rank = nodes.rank[order]
    new_id = np.empty(n, dtype=np.int32)
    new_id[order] = np.arange(n, dtype=np.int32)
    nodes.parent = parent = nodes.parent[order]
    parent[1:] = new_id[parent[1:]]
    del new_id
    nodes.kind = kind = nodes.kind[order]
    nodes.player = nodes.player[order]
    nodes.infoset = nodes.infoset[order]
    nodes.action = nodes.action[order]
    nodes.action[0] = -1
    nodes.chance_prob = nodes.chance_prob[order]
    term_row = term_row[order]
    del order
    is_chance_child = np.zeros(n, dtype=bool)
    is_chance_child[1:] = kind[parent[1:]] == CHANCE
    np.copyto(nodes.chance_prob, 1.0, where=~is_chance_child)
    del is_chance_child
    terminals = np.flatnonzero(kind == TERMINAL).astype(np.int32)
    returns = np.zeros((n, num_players))
    returns[terminals] = nodes.term_returns[term_row[terminals]]
    nodes.term_returns = _NO_RETURNS
    return depth, returns, terminals


_NO_RETURNS = np.empty((0, 0))


def _bfs_order(parent: np.ndarray, rank: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first order of the nodes (children sorted by rank) and depths (int32)."""
    n = parent.shape[0]
    # The root (parent -1) sorts first; the others are grouped by parent, then rank.
    by_parent = np.lexsort((rank, parent)).astype(np.int32)[1:]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(parent[by_parent], minlength=n), out=ptr[1:])
    order = np.empty(n, dtype=np.int32)
    depth = np.full(n, -1, dtype=np.int32)
    order[0] = root
    depth[root] = 0
    lo, hi, level = 0, 1, 0
    while hi > lo:
        frontier = order[lo:hi]
        starts = ptr[frontier]
        sizes = ptr[frontier + 1] - starts
        total = int(sizes.sum())
        if total == 0:
            break
        if hi + total > n:
            fail(
                "the parent array contains a cycle; every node must have one parent on a path to the root"
            )
        level += 1
        offsets = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(total)
        order[hi : hi + total] = by_parent[offsets]
        depth[order[hi : hi + total]] = level
        lo, hi = hi, hi + total
    if hi != n:
        fail(
            f"{n - hi} nodes are not reachable from the root; "
            "give every node except the root a valid parent"
        )
    return order, depth


def _child_links(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(num_children, first_child, child_rank)`` of a breadth-first tree."""
    n = parent.shape[0]
    counts = np.bincount(parent[1:], minlength=n).astype(np.int32)
    # Children are contiguous in BFS order: first child = 1 + children of earlier nodes.
    first_child = np.empty(n, dtype=np.int32)
    first_child[0] = 1
    np.cumsum(counts[:-1], out=first_child[1:])
    first_child[1:] += 1
    first_child[counts == 0] = -1
    child_rank = np.zeros(n, dtype=np.int32)
    child_rank[1:] = np.arange(1, n, dtype=np.int32) - first_child[parent[1:]]
    return counts, first_child, child_rank


def _check_decision_order(nodes: Nodes, child_rank: np.ndarray) -> None:
    """Asserts that the children of decision nodes came out in legal-action order."""
    kind, parent = nodes.kind, nodes.parent
    dec_child = np.zeros(parent.shape[0], dtype=bool)
    dec_child[1:] = kind[parent[1:]] == DECISION
    if (child_rank[dec_child] != nodes.rank[dec_child]).any():
        raise AssertionError("internal error: decision children not in legal-action order")


def _renumber_infosets(infoset: np.ndarray, dn: np.ndarray, isets: Infosets) -> None:
    """Numbers the information sets by first appearance in breadth-first order.

    ``infoset`` (the renumbered tree's own column) is changed in place, and
    every per-set array of ``isets`` is permuted to match.
    """
    if not dn.size:
        return
    num_isets = len(isets.keys)
    _, first = np.unique(infoset[dn], return_index=True)
    old_ids = infoset[dn][np.sort(first)]
    remap = np.empty(num_isets, dtype=np.int32)
    remap[old_ids] = np.arange(num_isets, dtype=np.int32)
    infoset[dn] = remap[infoset[dn]]
    isets.keys = tuple(isets.keys[i] for i in old_ids)
    isets.actions = isets.actions[old_ids]
    isets.num = isets.num[old_ids]
    isets.player = isets.player[old_ids]


# --- per player: perfect recall and the best-response order ---------------------------


def _best_response_order(
    nodes: Nodes,
    isets: Infosets,
    dn: np.ndarray,
    depth: np.ndarray,
    child_rank: np.ndarray,
    num_players: int,
) -> np.ndarray:
    """``int32[N, num_players]``: per player, the node order of the best-response pass.

    One player at a time (to bound memory), which also checks that player's
    perfect recall. Deeper own decisions first, then deeper nodes; ties keep
    node order.
    """
    n = nodes.parent.shape[0]
    level_ptr = np.searchsorted(depth, np.arange(int(depth.max()) + 2))
    max_depth = np.int64(depth.max())
    br_order = np.empty((n, num_players), dtype=np.int32)
    last_edge = np.empty(n, dtype=np.int32)  # node below the player's latest own decision
    own_depth = np.empty(n, dtype=np.int32)
    for p in range(num_players):
        _own_history(nodes.parent, nodes.player, level_ptr, p, last_edge, own_depth)
        _check_perfect_recall(nodes, isets, dn, p, last_edge, child_rank)
        key = own_depth.astype(np.int64) * (max_depth + 1) + depth
        np.negative(key, out=key)
        br_order[:, p] = np.argsort(key, kind="stable")
        del key
    return br_order


def _own_history(
    parent: np.ndarray,
    player: np.ndarray,
    level_ptr: np.ndarray,
    p: int,
    last_edge: np.ndarray,
    own_depth: np.ndarray,
) -> None:
    """Fills, level by level, ``last_edge`` (the node below ``p``'s latest decision above
    each node, -1 if none) and ``own_depth`` (``p``'s decisions above it)."""
    last_edge[0] = -1
    own_depth[0] = 0
    for lvl in range(1, level_ptr.shape[0] - 1):
        lo, hi = int(level_ptr[lvl]), int(level_ptr[lvl + 1])
        par = parent[lo:hi]
        mine = player[par] == p
        last_edge[lo:hi] = np.where(mine, np.arange(lo, hi, dtype=np.int32), last_edge[par])
        own_depth[lo:hi] = own_depth[par] + mine


def _check_perfect_recall(
    nodes: Nodes,
    isets: Infosets,
    dn: np.ndarray,
    p: int,
    last_edge: np.ndarray,
    child_rank: np.ndarray,
) -> None:
    """Every history of each of ``p``'s information sets has the same last own (set, action)."""
    infoset, parent = nodes.infoset, nodes.parent
    own_dn = dn[nodes.player[dn] == p]
    if not own_dn.size:
        return
    width = np.int64(isets.actions.shape[1])
    edge = last_edge[own_dn]
    seq = np.where(
        edge >= 0,
        infoset[parent[np.maximum(edge, 0)]].astype(np.int64) * width
        + child_rank[np.maximum(edge, 0)],
        -1,
    )
    iset = infoset[own_dn]
    num_isets = len(isets.keys)
    lo_seq = np.full(num_isets, np.iinfo(np.int64).max)
    hi_seq = np.full(num_isets, np.iinfo(np.int64).min)
    np.minimum.at(lo_seq, iset, seq)
    np.maximum.at(hi_seq, iset, seq)
    mixed = (lo_seq != hi_seq) & (isets.player == p)
    if mixed.any():
        bad = int(np.flatnonzero(mixed)[0])
        fail(
            f"information set {isets.keys[bad]!r} mixes histories with different own past actions "
            "(imperfect recall); information-state strings must include the player's own "
            "past information and actions (perfect recall)"
        )


def _infoset_index(
    infoset: np.ndarray, dn: np.ndarray, num_isets: int
) -> tuple[np.ndarray, np.ndarray]:
    """Decision nodes grouped by information set, and where each set's group starts."""
    iset_nodes = dn[np.argsort(infoset[dn], kind="stable")]
    iset_ptr = np.zeros(num_isets + 1, dtype=np.int32)
    np.cumsum(np.bincount(infoset[dn], minlength=num_isets), out=iset_ptr[1:])
    return iset_nodes, iset_ptr
