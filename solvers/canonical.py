"""Canonicalisation: validated per-node columns -> a breadth-first :class:`GameTree`.

Every way of building a tree (:meth:`GameTree.from_arrays`,
:class:`~solvers.builder.TreeBuilder`, :func:`~solvers.walk.materialize`)
ends here. :func:`canonical_tree` checks that the columns describe a finite
tree with consistent information sets and perfect recall (Kuhn 1953), then
renumbers the nodes breadth-first (children of a decision node in
legal-action order, children of a chance node in input order) and the
information sets by first appearance, and derives the navigation arrays
(``first_child``, ``child_rank``, ``br_order``, ...).

All work is vectorised NumPy, O(N log N) time. Memory is kept close to the
size of the result: inputs are popped from the ``columns`` mapping and
dropped as soon as their permuted copy exists, indices are ``int32`` and the
per-player passes (perfect recall, best-response order) run one player at a
time, so the peak stays below about twice the stored tree.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

import numpy as np

from solvers.game_tree import CHANCE, CHANCE_PLAYER, DECISION, TERMINAL, TERMINAL_PLAYER, GameTree

CHANCE_SUM_ATOL = 1e-6
"""Tolerance on the outcome probabilities of a chance node summing to one."""

_INT32_MAX = np.iinfo(np.int32).max


def _fail(message: str) -> None:
    raise ValueError(f"GameTree.from_arrays: {message}")


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


def _index_column(columns: MutableMapping, name: str, dtype) -> np.ndarray:
    """Pops an integer column and narrows it to ``dtype`` (range-checked)."""
    arr = np.asarray(columns.pop(name))
    if arr.dtype == dtype:
        return arr
    wide = np.asarray(arr, dtype=np.int64)
    info = np.iinfo(dtype)
    if wide.size and (wide.min() < info.min or wide.max() > info.max):
        _fail(f"{name} has entries outside [{info.min}, {info.max}]")
    return wide.astype(dtype)


def _pad_actions(infoset_actions: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    counts = np.array([len(a) for a in infoset_actions], dtype=np.int32)
    width = int(counts.max()) if counts.size else 1
    padded = np.full((len(infoset_actions), max(width, 1)), -1, dtype=np.int64)
    for i, acts in enumerate(infoset_actions):
        if len(acts):
            padded[i, : len(acts)] = np.asarray(acts, dtype=np.int64)
    return padded, counts


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
            _fail(
                "the parent array contains a cycle; every node must have one parent on a path to the root"
            )
        level += 1
        offsets = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(total)
        order[hi : hi + total] = by_parent[offsets]
        depth[order[hi : hi + total]] = level
        lo, hi = hi, hi + total
    if hi != n:
        _fail(
            f"{n - hi} nodes are not reachable from the root; "
            "give every node except the root a valid parent"
        )
    return order, depth


def _decision_ranks(parent, action, infoset, iset_actions, keys, dec_edges) -> np.ndarray:
    """Position of each decision edge's action among its information set's legal actions."""
    edge_iset = infoset[parent[dec_edges]].astype(np.int64)
    edge_act = action[dec_edges]
    legal = iset_actions[iset_actions >= 0]
    uniq, inverse = np.unique(np.concatenate([legal, edge_act]), return_inverse=True)
    width = np.int64(uniq.shape[0] + 1)
    rows, cols = np.nonzero(iset_actions >= 0)
    table = rows.astype(np.int64) * width + inverse[: legal.shape[0]]
    sorter = np.argsort(table)
    table = table[sorter]
    query = edge_iset * width + inverse[legal.shape[0] :]
    pos = np.minimum(np.searchsorted(table, query), table.shape[0] - 1)
    found = table[pos] == query
    if not found.all():
        bad = int(dec_edges[np.flatnonzero(~found)[0]])
        _fail(
            f"node {bad} hangs from decision node {int(parent[bad])} with action "
            f"{int(action[bad])}, which is not a legal action of information set "
            f"{keys[int(infoset[parent[bad]])]!r}; use one of its legal actions"
        )
    return cols[sorter[pos]]


def canonical_tree(
    columns: MutableMapping[str, object],
    *,
    num_players: int,
    infoset_keys: Sequence[str],
    infoset_actions: Sequence[Sequence[int]],
    game_name: str = "",
) -> GameTree:
    """Validates per-node columns and returns the canonical :class:`GameTree`.

    Args:
        columns: Per-node columns ``parent``, ``kind``, ``action``,
            ``player``, ``chance_prob``, ``infoset`` and either ``returns``
            (``[N, num_players]``, only terminal rows used) or
            ``terminal_returns`` (``[Z, num_players]``, one row per terminal
            in node order); optionally ``rank`` (the legal-action position of
            each decision edge, as :class:`~solvers.builder.TreeBuilder`
            knows it; chance edges then carry their input position). Entries are **popped** (the mapping is emptied) so that
            the inputs can be freed while the tree is built.
        num_players: Number of players.
        infoset_keys: Unique information-state string per information set.
        infoset_actions: Legal action ids per information set.
        game_name: Optional name.

    Returns:
        The tree (see :meth:`GameTree.from_arrays` for the renumbering).

    Raises:
        ValueError: If the columns do not describe a finite tree with
            consistent information sets and perfect recall.
    """
    num_players = int(num_players)
    if num_players < 1:
        _fail(f"num_players={num_players}; a game needs at least one player")
    parent = np.asarray(columns.pop("parent"))
    n = parent.shape[0]
    if n == 0:
        _fail("the tree is empty; add at least a root node")
    if n > _INT32_MAX:
        _fail(f"{n} nodes exceed the int32 node index; split the tree")
    columns["parent"] = parent
    parent = _index_column(columns, "parent", np.int32)
    kind = np.asarray(columns.pop("kind"), dtype=np.int8)
    action = np.asarray(columns.pop("action"), dtype=np.int64)
    player = _index_column(columns, "player", np.int32)
    chance_prob = np.asarray(columns.pop("chance_prob"), dtype=np.float64)
    infoset = _index_column(columns, "infoset", np.int32)
    given_rank = columns.pop("rank", None)
    for name, arr in (
        ("kind", kind),
        ("action", action),
        ("player", player),
        ("chance_prob", chance_prob),
        ("infoset", infoset),
    ):
        if arr.shape != (n,):
            _fail(f"{name} has shape {arr.shape}, expected ({n},) like parent")
    if not np.isin(kind, (TERMINAL, CHANCE, DECISION)).all():
        _fail("kind must contain only TERMINAL (0), CHANCE (1) or DECISION (2)")
    term = kind == TERMINAL
    num_terminals = int(np.count_nonzero(term))
    if "terminal_returns" in columns:
        term_returns = np.asarray(columns.pop("terminal_returns"), dtype=np.float64).reshape(
            -1, num_players
        )
        if term_returns.shape[0] != num_terminals:
            _fail(f"{term_returns.shape[0]} terminal_returns rows for {num_terminals} terminals")
    else:
        returns = np.asarray(columns.pop("returns"), dtype=np.float64)
        returns = returns.reshape(n, -1) if returns.size else returns.reshape(n, 0)
        if returns.shape != (n, num_players):
            _fail(f"returns has shape {returns.shape}, expected ({n}, {num_players})")
        term_returns = returns[term]
        del returns
    del term
    if not np.isfinite(term_returns).all():
        _fail("terminal returns must be finite")
    columns.clear()

    keys = tuple(str(k) for k in infoset_keys)
    if len(keys) != len(infoset_actions):
        _fail(
            f"{len(keys)} infoset_keys but {len(infoset_actions)} infoset_actions; give one list of legal actions per key"
        )
    if len(set(keys)) != len(keys):
        _fail("infoset_keys must be unique; merge duplicated information sets")
    iset_actions, iset_num = _pad_actions(infoset_actions)
    num_isets = len(keys)
    if num_isets and (iset_num < 1).any():
        _fail(f"information set {keys[int(np.argmin(iset_num))]!r} has no legal actions")
    for i in range(num_isets):
        acts = iset_actions[i, : iset_num[i]]
        if np.unique(acts).shape[0] != acts.shape[0]:
            _fail(f"information set {keys[i]!r} lists a legal action twice")

    roots = np.flatnonzero(parent < 0)
    if roots.shape[0] != 1:
        _fail(f"found {roots.shape[0]} roots (parent == -1); a tree has exactly one")
    root = int(roots[0])
    if (parent >= n).any():
        _fail("parent indices must be < number of nodes")
    is_dec = kind == DECISION
    if is_dec.any():
        if (infoset[is_dec] < 0).any() or (infoset[is_dec] >= num_isets).any():
            _fail("every decision node needs an infoset id in [0, len(infoset_keys))")
        if (player[is_dec] < 0).any() or (player[is_dec] >= num_players).any():
            _fail(f"decision-node players must be in [0, {num_players})")
    # New arrays (not in-place): the inputs may be the caller's arrays.
    infoset = np.where(is_dec, infoset, np.int32(-1))
    player = np.where(
        is_dec,
        player,
        np.where(kind == CHANCE, np.int32(CHANCE_PLAYER), np.int32(TERMINAL_PLAYER)),
    )

    # Information-set player consistency.
    iset_player = np.full(num_isets, -1, dtype=np.int32)
    if num_isets:
        iset_player[infoset[is_dec]] = player[is_dec]
        if (iset_player[infoset[is_dec]] != player[is_dec]).any():
            _fail("all nodes of an information set must belong to the same player")
        if (iset_player < 0).any():
            missing = keys[int(np.flatnonzero(iset_player < 0)[0])]
            _fail(f"information set {missing!r} has no decision node; drop unused infoset_keys")

    # Edge ranks: decisions by legal-action position, chance by input order.
    par_kind = np.full(n, -1, dtype=np.int8)
    has_parent = parent >= 0
    par_kind[has_parent] = kind[parent[has_parent]]
    del has_parent
    if (par_kind == TERMINAL).any():
        _fail("a terminal node has children; terminals must be leaves")
    dec_edges = np.flatnonzero(par_kind == DECISION)
    if given_rank is not None:
        rank = np.asarray(given_rank, dtype=np.int32)
    else:
        rank = np.zeros(n, dtype=np.int32)
        if dec_edges.size:
            rank[dec_edges] = _decision_ranks(
                parent, action, infoset, iset_actions, keys, dec_edges
            )
    if dec_edges.size:
        pair = (
            parent[dec_edges].astype(np.int64) * np.int64(iset_actions.shape[1]) + rank[dec_edges]
        )
        if np.unique(pair).shape[0] != pair.shape[0]:
            _fail(
                "a decision node has two children for the same action; give each legal action one child"
            )
        del pair
    del dec_edges
    chance_edges = np.flatnonzero(par_kind == CHANCE)
    if chance_edges.size:
        if given_rank is None:
            rank[chance_edges] = chance_edges  # input order
        cp = chance_prob[chance_edges]
        if not np.isfinite(cp).all() or (cp < 0).any():
            _fail("chance probabilities must be finite and >= 0")
        del cp
        pair = parent[chance_edges].astype(np.int64) * np.int64(n) + np.unique(
            action[chance_edges], return_inverse=True
        )[1].reshape(-1)
        if np.unique(pair).shape[0] != chance_edges.shape[0]:
            _fail(
                "a chance node has two children with the same outcome id; give each outcome a distinct id"
            )
        del pair
    del chance_edges
    counts = np.bincount(parent[parent >= 0], minlength=n)
    nonterm = kind != TERMINAL
    if (counts[nonterm] == 0).any():
        bad = int(np.flatnonzero(nonterm & (counts == 0))[0])
        _fail(f"non-terminal node {bad} has no children; give it children or make it TERMINAL")
    del nonterm
    dec_nodes = np.flatnonzero(is_dec)
    if dec_nodes.size and (counts[dec_nodes] != iset_num[infoset[dec_nodes]]).any():
        bad = int(dec_nodes[np.flatnonzero(counts[dec_nodes] != iset_num[infoset[dec_nodes]])[0]])
        _fail(
            f"decision node {bad} has {int(counts[bad])} children but its information set "
            f"{keys[int(infoset[bad])]!r} has {int(iset_num[infoset[bad]])} legal actions; "
            "add one child per legal action"
        )
    del dec_nodes, is_dec, counts
    chance_nodes = np.flatnonzero(kind == CHANCE)
    if chance_nodes.size:
        from_chance = par_kind == CHANCE
        sums = np.bincount(parent[from_chance], weights=chance_prob[from_chance], minlength=n)
        del from_chance
        bad_sum = np.abs(sums[chance_nodes] - 1.0) > CHANCE_SUM_ATOL
        if bad_sum.any():
            bad = int(chance_nodes[np.flatnonzero(bad_sum)[0]])
            _fail(
                f"the outcome probabilities of chance node {bad} sum to {sums[bad]!r}; they must sum to 1"
            )
        del sums
    del chance_nodes, par_kind

    # Breadth-first renumbering; each input is dropped once permuted.
    term_row = np.cumsum(kind == TERMINAL, dtype=np.int32) - 1  # row in term_returns
    order, depth = _bfs_order(parent, rank, root)
    depth = depth[order]
    rank = rank[order]
    new_id = np.empty(n, dtype=np.int32)
    new_id[order] = np.arange(n, dtype=np.int32)
    parent = parent[order]
    parent[1:] = new_id[parent[1:]]
    del new_id
    kind = kind[order]
    player = player[order]
    infoset = infoset[order]
    action = action[order]
    action[0] = -1
    chance_prob = chance_prob[order]
    term_row = term_row[order]
    del order
    is_chance_child = np.zeros(n, dtype=bool)
    is_chance_child[1:] = kind[parent[1:]] == CHANCE
    np.copyto(chance_prob, 1.0, where=~is_chance_child)
    del is_chance_child
    terminals = np.flatnonzero(kind == TERMINAL).astype(np.int32)
    returns = np.zeros((n, num_players))
    returns[terminals] = term_returns[term_row[terminals]]
    del term_returns, term_row

    counts = np.bincount(parent[1:], minlength=n).astype(np.int32)
    # Children are contiguous in BFS order: first child = 1 + children of earlier nodes.
    first_child = np.empty(n, dtype=np.int32)
    first_child[0] = 1
    np.cumsum(counts[:-1], out=first_child[1:])
    first_child[1:] += 1
    first_child[counts == 0] = -1
    child_rank = np.zeros(n, dtype=np.int32)
    child_rank[1:] = np.arange(1, n, dtype=np.int32) - first_child[parent[1:]]
    dec_child = np.zeros(n, dtype=bool)
    dec_child[1:] = kind[parent[1:]] == DECISION
    if (child_rank[dec_child] != rank[dec_child]).any():
        raise AssertionError("internal error: decision children not in legal-action order")
    del dec_child, rank
    # Canonical information-set ids: order of first appearance in breadth-first order.
    dn = np.flatnonzero(kind == DECISION).astype(np.int32)
    if dn.size:
        _, first = np.unique(infoset[dn], return_index=True)
        old_ids = infoset[dn][np.sort(first)]
        remap = np.empty(num_isets, dtype=np.int32)
        remap[old_ids] = np.arange(num_isets, dtype=np.int32)
        infoset[dn] = remap[infoset[dn]]
        keys = tuple(keys[i] for i in old_ids)
        iset_actions = iset_actions[old_ids]
        iset_num = iset_num[old_ids]
        iset_player = iset_player[old_ids]
        del first, old_ids, remap

    # Per player: perfect recall and decision depth (for the best-response order).
    level_ptr = np.searchsorted(depth, np.arange(int(depth.max()) + 2))
    max_depth = np.int64(depth.max())
    br_order = np.empty((n, num_players), dtype=np.int32)
    last_edge = np.empty(n, dtype=np.int32)  # node below the player's latest own decision
    own_depth = np.empty(n, dtype=np.int32)
    width = np.int64(iset_actions.shape[1])
    for p in range(num_players):
        last_edge[0] = -1
        own_depth[0] = 0
        for lvl in range(1, level_ptr.shape[0] - 1):
            lo, hi = int(level_ptr[lvl]), int(level_ptr[lvl + 1])
            par = parent[lo:hi]
            mine = player[par] == p
            last_edge[lo:hi] = np.where(mine, np.arange(lo, hi, dtype=np.int32), last_edge[par])
            own_depth[lo:hi] = own_depth[par] + mine
        own_dn = dn[player[dn] == p]
        if own_dn.size:
            edge = last_edge[own_dn]
            seq = np.where(
                edge >= 0,
                infoset[parent[np.maximum(edge, 0)]].astype(np.int64) * width
                + child_rank[np.maximum(edge, 0)],
                -1,
            )
            iset = infoset[own_dn]
            lo_seq = np.full(num_isets, np.iinfo(np.int64).max)
            hi_seq = np.full(num_isets, np.iinfo(np.int64).min)
            np.minimum.at(lo_seq, iset, seq)
            np.maximum.at(hi_seq, iset, seq)
            mixed = (lo_seq != hi_seq) & (iset_player == p)
            if mixed.any():
                bad = int(np.flatnonzero(mixed)[0])
                _fail(
                    f"information set {keys[bad]!r} mixes histories with different own past actions "
                    "(imperfect recall); information-state strings must include the player's own "
                    "past information and actions (perfect recall)"
                )
            del edge, seq, iset
        # Deeper own decisions first, then deeper nodes; ties keep node order.
        key = own_depth.astype(np.int64) * (max_depth + 1) + depth
        np.negative(key, out=key)
        br_order[:, p] = np.argsort(key, kind="stable")
        del key
    del last_edge, own_depth

    iset_nodes = dn[np.argsort(infoset[dn], kind="stable")]
    iset_ptr = np.zeros(num_isets + 1, dtype=np.int32)
    np.cumsum(np.bincount(infoset[dn], minlength=num_isets), out=iset_ptr[1:])

    return GameTree(
        num_players=num_players,
        kind=_readonly(kind),
        player=_readonly(player),
        parent=_readonly(parent),
        action=_readonly(action),
        chance_prob=_readonly(chance_prob),
        infoset=_readonly(infoset),
        returns=_readonly(returns),
        depth=_readonly(depth),
        first_child=_readonly(first_child),
        num_children=_readonly(counts),
        child_rank=_readonly(child_rank),
        infoset_player=_readonly(iset_player),
        infoset_keys=keys,
        infoset_actions=_readonly(iset_actions),
        infoset_num_actions=_readonly(iset_num.astype(np.int32)),
        infoset_node_ptr=_readonly(iset_ptr),
        infoset_nodes=_readonly(iset_nodes.astype(np.int32)),
        br_order=_readonly(br_order),
        terminals=_readonly(terminals),
        game_name=str(game_name),
    )
