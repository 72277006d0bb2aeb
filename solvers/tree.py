"""Materialised extensive-form game trees stored as flat NumPy arrays.

A :class:`GameTree` is the whole game tree of a finite, sequential,
perfect-recall extensive-form game (Kuhn 1953; Osborne & Rubinstein 1994,
ch. 11), walked once and stored node by node in breadth-first order:

* ``kind`` -- terminal / chance / decision (:data:`TERMINAL`, :data:`CHANCE`,
  :data:`DECISION`);
* ``player`` -- acting player (``-1`` at chance nodes, ``-4`` at terminals, the
  OpenSpiel ``PlayerId`` conventions);
* ``parent`` and ``action`` -- the edge that leads to the node (OpenSpiel
  action ids);
* ``chance_prob`` -- probability of that edge when the parent is a chance node
  (``1.0`` otherwise);
* ``infoset`` -- information-set id of decision nodes (``-1`` otherwise);
* ``returns`` -- terminal returns, one column per player.

Information sets carry their OpenSpiel information-state string
(``infoset_keys``) and their legal actions as OpenSpiel action ids
(``infoset_actions``), so policies round-trip to ``TabularPolicy``.

Because nodes are stored breadth-first, the children of a node are contiguous
(``first_child``, ``num_children``), every parent precedes its children, and a
single forward (top-down) or backward (bottom-up) loop over the arrays visits
the tree in a valid order. Memory is linear in the number of nodes: about
``50 + 12 * num_players`` bytes per node plus the information-state strings.

Trees come from :func:`materialize` (any OpenSpiel game), from
:class:`TreeBuilder` (node by node, no OpenSpiel needed), or from
:meth:`GameTree.from_arrays` (vectorised construction of large trees).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)

TERMINAL = 0
CHANCE = 1
DECISION = 2

CHANCE_PLAYER = -1
TERMINAL_PLAYER = -4

DEFAULT_MAX_NODES = 5_000_000
"""Default node limit of :func:`materialize`."""

_CHANCE_SUM_ATOL = 1e-6


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


@dataclasses.dataclass(frozen=True, eq=False)
class GameTree:
    """A materialised game tree (see the module docstring for the layout).

    Build it with :func:`materialize`, :class:`TreeBuilder` or
    :meth:`GameTree.from_arrays`; do not call the constructor directly. All
    arrays are read-only.

    Attributes:
        num_players: Number of players.
        kind: ``int8[N]`` node kinds (``TERMINAL``, ``CHANCE``, ``DECISION``).
        player: ``int32[N]`` acting player, ``-1`` chance, ``-4`` terminal.
        parent: ``int32[N]`` parent node, ``-1`` at the root (node 0).
        action: ``int64[N]`` action id on the edge from the parent (``-1`` at
            the root).
        chance_prob: ``float64[N]`` probability of the edge from a chance
            parent, ``1.0`` for other nodes.
        infoset: ``int32[N]`` information-set id of decision nodes, else ``-1``.
        returns: ``float64[N, num_players]`` terminal returns (zero elsewhere).
        depth: ``int32[N]`` distance from the root.
        first_child: ``int32[N]`` index of the first child (``-1`` at leaves).
        num_children: ``int32[N]`` number of children.
        child_rank: ``int32[N]`` position of the node among its siblings; for
            children of decision nodes this is the index of ``action`` in the
            information set's legal actions.
        infoset_player: ``int32[I]`` player of each information set.
        infoset_keys: information-state strings, one per information set.
        infoset_actions: ``int64[I, A]`` legal action ids, padded with ``-1``.
        infoset_num_actions: ``int32[I]`` number of legal actions.
        infoset_node_ptr: ``int32[I + 1]`` CSR pointer into ``infoset_nodes``.
        infoset_nodes: ``int32[D]`` decision nodes grouped by information set.
        br_order: ``int32[N, num_players]``; column ``i`` is a node order in
            which, for player ``i``, children come before parents and every
            node of an information set of ``i`` comes after all descendants of
            all nodes of that set (used by best response).
        terminals: ``int32[Z]`` terminal nodes.
        game_name: Free-form name (the OpenSpiel short name when materialised).
    """

    num_players: int
    kind: np.ndarray
    player: np.ndarray
    parent: np.ndarray
    action: np.ndarray
    chance_prob: np.ndarray
    infoset: np.ndarray
    returns: np.ndarray
    depth: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    child_rank: np.ndarray
    infoset_player: np.ndarray
    infoset_keys: tuple[str, ...]
    infoset_actions: np.ndarray
    infoset_num_actions: np.ndarray
    infoset_node_ptr: np.ndarray
    infoset_nodes: np.ndarray
    br_order: np.ndarray
    terminals: np.ndarray
    game_name: str = ""

    @property
    def num_nodes(self) -> int:
        """Number of nodes ``N``."""
        return int(self.kind.shape[0])

    @property
    def num_infosets(self) -> int:
        """Number of information sets ``I``."""
        return int(self.infoset_player.shape[0])

    @property
    def max_actions(self) -> int:
        """Largest number of legal actions of an information set (``A``)."""
        return int(self.infoset_actions.shape[1])

    @property
    def num_terminals(self) -> int:
        """Number of terminal nodes."""
        return int(self.terminals.shape[0])

    @property
    def payoff_scale(self) -> float:
        """Largest absolute terminal return (at least 1.0)."""
        if self.returns.size == 0:
            return 1.0
        return max(1.0, float(np.max(np.abs(self.returns))))

    @functools.cached_property
    def key_to_infoset(self) -> dict[str, int]:
        """Map from information-state string to information-set id."""
        return {key: i for i, key in enumerate(self.infoset_keys)}

    def legal_actions(self, infoset_id: int) -> tuple[int, ...]:
        """Legal OpenSpiel action ids of one information set."""
        n = int(self.infoset_num_actions[infoset_id])
        return tuple(int(a) for a in self.infoset_actions[infoset_id, :n])

    def infosets_of(self, player: int) -> np.ndarray:
        """Ids of the information sets of ``player``."""
        return np.flatnonzero(self.infoset_player == player)

    @functools.cached_property
    def kernel_arrays(self) -> tuple:
        """Arrays in the order the compiled kernels expect (internal)."""
        return (
            self.kind,
            self.player,
            self.parent,
            self.child_rank,
            self.chance_prob,
            self.infoset,
            self.returns,
            self.first_child,
            self.num_children,
            self.infoset_player,
            self.infoset_num_actions,
            self.infoset_node_ptr,
            self.infoset_nodes,
            self.br_order,
            self.terminals,
        )

    def __repr__(self) -> str:
        return (
            f"GameTree(game_name={self.game_name!r}, num_players={self.num_players}, "
            f"num_nodes={self.num_nodes}, num_infosets={self.num_infosets}, "
            f"num_terminals={self.num_terminals})"
        )

    @classmethod
    def from_arrays(
        cls,
        *,
        num_players: int,
        parent: Sequence[int] | np.ndarray,
        kind: Sequence[int] | np.ndarray,
        action: Sequence[int] | np.ndarray,
        player: Sequence[int] | np.ndarray,
        chance_prob: Sequence[float] | np.ndarray,
        infoset: Sequence[int] | np.ndarray,
        returns: Sequence[Sequence[float]] | np.ndarray,
        infoset_keys: Sequence[str],
        infoset_actions: Sequence[Sequence[int]],
        game_name: str = "",
    ) -> GameTree:
        """Builds a validated tree from explicit per-node arrays.

        Nodes may be given in any order; node ``j`` of the input is the
        ``j``-th entry of every array. The tree is canonicalised: nodes are
        renumbered breadth-first (children of a decision node in legal-action
        order, children of a chance node in input order) and information sets
        by first appearance in that order, so find them by key
        (``tree.key_to_infoset``), not by input id.

        Args:
            num_players: Number of players (>= 1).
            parent: Parent index per node, ``-1`` for the single root.
            kind: ``TERMINAL`` (0), ``CHANCE`` (1) or ``DECISION`` (2).
            action: Action id on the edge from the parent (ignored at the
                root). For children of a decision node it must be one of the
                information set's legal actions, each exactly once; for
                children of a chance node it is the chance outcome id.
            player: Acting player of decision nodes (ignored elsewhere).
            chance_prob: Edge probability for children of chance nodes
                (ignored elsewhere). Each chance node's outgoing probabilities
                must be >= 0 and sum to 1.
            infoset: Information-set id (index into ``infoset_keys``) of
                decision nodes (ignored elsewhere).
            returns: ``[N, num_players]`` returns; only terminal rows are used.
            infoset_keys: Unique information-state string per information set.
            infoset_actions: Legal action ids per information set; the order
                fixes the column order of policies.
            game_name: Optional name.

        Returns:
            The tree.

        Raises:
            ValueError: If the arrays do not describe a finite tree with
                consistent information sets and perfect recall.
        """
        return _build_tree(
            num_players=num_players,
            parent=parent,
            kind=kind,
            action=action,
            player=player,
            chance_prob=chance_prob,
            infoset=infoset,
            returns=returns,
            infoset_keys=infoset_keys,
            infoset_actions=infoset_actions,
            game_name=game_name,
        )


def _fail(message: str) -> None:
    raise ValueError(f"GameTree.from_arrays: {message}")


def _pad_actions(infoset_actions: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    counts = np.array([len(a) for a in infoset_actions], dtype=np.int32)
    width = int(counts.max()) if counts.size else 1
    padded = np.full((len(infoset_actions), max(width, 1)), -1, dtype=np.int64)
    for i, acts in enumerate(infoset_actions):
        if len(acts):
            padded[i, : len(acts)] = np.asarray(acts, dtype=np.int64)
    return padded, counts


def _bfs_order(parent: np.ndarray, rank: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first order of the nodes (children sorted by rank) and depths."""
    n = parent.shape[0]
    others = np.flatnonzero(parent >= 0)
    by_parent = others[np.lexsort((rank[others], parent[others]))]
    counts = np.bincount(parent[others], minlength=n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    order_parts = [np.array([root], dtype=np.int64)]
    depth = np.full(n, -1, dtype=np.int32)
    depth[root] = 0
    frontier = order_parts[0]
    level = 0
    visited = 1
    while frontier.size:
        level += 1
        starts = ptr[frontier]
        sizes = ptr[frontier + 1] - starts
        total = int(sizes.sum())
        if total == 0:
            break
        offsets = np.repeat(starts - np.cumsum(sizes) + sizes, sizes)
        frontier = by_parent[offsets + np.arange(total)]
        visited += total
        if visited > n:
            _fail(
                "the parent array contains a cycle; every node must have one parent on a path to the root"
            )
        depth[frontier] = level
        order_parts.append(frontier)
    order = np.concatenate(order_parts)
    if order.shape[0] != n:
        _fail(
            f"{n - order.shape[0]} nodes are not reachable from the root; "
            "give every node except the root a valid parent"
        )
    return order, depth


def _build_tree(
    *,
    num_players: int,
    parent,
    kind,
    action,
    player,
    chance_prob,
    infoset,
    returns,
    infoset_keys: Sequence[str],
    infoset_actions: Sequence[Sequence[int]],
    game_name: str,
) -> GameTree:
    num_players = int(num_players)
    if num_players < 1:
        _fail(f"num_players={num_players}; a game needs at least one player")
    parent = np.asarray(parent, dtype=np.int64)
    n = parent.shape[0]
    if n == 0:
        _fail("the tree is empty; add at least a root node")
    kind = np.asarray(kind, dtype=np.int8)
    action = np.asarray(action, dtype=np.int64)
    player = np.asarray(player, dtype=np.int64)
    chance_prob = np.asarray(chance_prob, dtype=np.float64)
    infoset = np.asarray(infoset, dtype=np.int64)
    returns = (
        np.asarray(returns, dtype=np.float64).reshape(n, -1) if n else np.zeros((0, num_players))
    )
    for name, arr in (
        ("kind", kind),
        ("action", action),
        ("player", player),
        ("chance_prob", chance_prob),
        ("infoset", infoset),
    ):
        if arr.shape != (n,):
            _fail(f"{name} has shape {arr.shape}, expected ({n},) like parent")
    if returns.shape != (n, num_players):
        _fail(f"returns has shape {returns.shape}, expected ({n}, {num_players})")
    if not np.isin(kind, (TERMINAL, CHANCE, DECISION)).all():
        _fail("kind must contain only TERMINAL (0), CHANCE (1) or DECISION (2)")
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
    infoset = np.where(is_dec, infoset, -1)
    player = np.where(is_dec, player, np.where(kind == CHANCE, CHANCE_PLAYER, TERMINAL_PLAYER))

    # Information-set player consistency.
    iset_player = np.full(num_isets, -1, dtype=np.int64)
    if num_isets:
        iset_player[infoset[is_dec]] = player[is_dec]
        if (iset_player[infoset[is_dec]] != player[is_dec]).any():
            _fail("all nodes of an information set must belong to the same player")
        if (iset_player < 0).any():
            missing = keys[int(np.flatnonzero(iset_player < 0)[0])]
            _fail(f"information set {missing!r} has no decision node; drop unused infoset_keys")

    # Children: decisions by legal-action position, chance by input order.
    others = np.flatnonzero(parent >= 0)
    par = parent[others]
    if (kind[par] == TERMINAL).any():
        _fail("a terminal node has children; terminals must be leaves")
    rank = np.zeros(n, dtype=np.int64)
    dec_edges = others[kind[par] == DECISION]
    if dec_edges.size:
        edge_iset = infoset[parent[dec_edges]]
        edge_act = action[dec_edges]
        all_acts = np.concatenate([iset_actions[iset_actions >= 0], edge_act])
        uniq, inverse = np.unique(all_acts, return_inverse=True)
        width = np.int64(uniq.shape[0] + 1)
        dense_iset = inverse[: iset_actions[iset_actions >= 0].shape[0]]
        dense_edge = inverse[iset_actions[iset_actions >= 0].shape[0] :]
        rows, cols = np.nonzero(iset_actions >= 0)
        table_keys = rows.astype(np.int64) * width + dense_iset
        sorter = np.argsort(table_keys)
        table_sorted = table_keys[sorter]
        query = edge_iset * width + dense_edge
        pos = np.searchsorted(table_sorted, query)
        pos_clipped = np.minimum(pos, table_sorted.shape[0] - 1)
        found = table_sorted[pos_clipped] == query
        if not found.all():
            bad = int(dec_edges[np.flatnonzero(~found)[0]])
            _fail(
                f"node {bad} hangs from decision node {int(parent[bad])} with action "
                f"{int(action[bad])}, which is not a legal action of information set "
                f"{keys[int(infoset[parent[bad]])]!r}; use one of its legal actions"
            )
        rank[dec_edges] = cols[sorter[pos_clipped]]
        pair = parent[dec_edges] * np.int64(iset_actions.shape[1]) + rank[dec_edges]
        if np.unique(pair).shape[0] != pair.shape[0]:
            _fail(
                "a decision node has two children for the same action; give each legal action one child"
            )
    chance_edges = others[kind[par] == CHANCE]
    if chance_edges.size:
        rank[chance_edges] = np.arange(chance_edges.shape[0])  # input order, made relative below
        cp = chance_prob[chance_edges]
        if not np.isfinite(cp).all() or (cp < 0).any():
            _fail("chance probabilities must be finite and >= 0")
        pair = np.stack([parent[chance_edges], action[chance_edges]])
        if np.unique(pair, axis=1).shape[1] != chance_edges.shape[0]:
            _fail(
                "a chance node has two children with the same outcome id; give each outcome a distinct id"
            )
    counts = np.bincount(par, minlength=n)
    nonterm = kind != TERMINAL
    if (counts[nonterm] == 0).any():
        bad = int(np.flatnonzero(nonterm & (counts == 0))[0])
        _fail(f"non-terminal node {bad} has no children; give it children or make it TERMINAL")
    dec_nodes = np.flatnonzero(is_dec)
    if dec_nodes.size and (counts[dec_nodes] != iset_num[infoset[dec_nodes]]).any():
        bad = int(dec_nodes[np.flatnonzero(counts[dec_nodes] != iset_num[infoset[dec_nodes]])[0]])
        _fail(
            f"decision node {bad} has {int(counts[bad])} children but its information set "
            f"{keys[int(infoset[bad])]!r} has {int(iset_num[infoset[bad]])} legal actions; "
            "add one child per legal action"
        )
    chance_nodes = np.flatnonzero(kind == CHANCE)
    if chance_nodes.size:
        sums = np.bincount(
            par, weights=np.where(kind[par] == CHANCE, chance_prob[others], 0.0), minlength=n
        )
        bad_sum = np.abs(sums[chance_nodes] - 1.0) > _CHANCE_SUM_ATOL
        if bad_sum.any():
            bad = int(chance_nodes[np.flatnonzero(bad_sum)[0]])
            _fail(
                f"the outcome probabilities of chance node {bad} sum to {sums[bad]!r}; they must sum to 1"
            )
    term = kind == TERMINAL
    if not np.isfinite(returns[term]).all():
        _fail("terminal returns must be finite")

    # Breadth-first renumbering.
    order, depth_old = _bfs_order(parent, rank, root)
    new_id = np.empty(n, dtype=np.int64)
    new_id[order] = np.arange(n)
    kind = kind[order]
    player = player[order]
    old_parent = parent[order]
    parent = np.where(old_parent >= 0, new_id[np.maximum(old_parent, 0)], -1)
    action = np.where(old_parent >= 0, action[order], -1)
    infoset = infoset[order]
    depth = depth_old[order]
    returns = np.where((kind == TERMINAL)[:, None], returns[order], 0.0)
    rank = rank[order]
    is_chance_child = np.zeros(n, dtype=bool)
    is_chance_child[1:] = kind[parent[1:]] == CHANCE
    chance_prob = np.where(is_chance_child, chance_prob[order], 1.0)

    counts = np.bincount(parent[1:], minlength=n).astype(np.int64)
    first_child = np.full(n, -1, dtype=np.int64)
    has_children = counts > 0
    # Children are contiguous in BFS order: first child = 1 + children of earlier nodes.
    starts = 1 + np.concatenate([[0], np.cumsum(counts)[:-1]])
    first_child[has_children] = starts[has_children]
    child_rank = np.zeros(n, dtype=np.int64)
    child_rank[1:] = np.arange(1, n) - first_child[parent[1:]]
    # Canonical information-set ids: order of first appearance in breadth-first order.
    dn = np.flatnonzero(kind == DECISION)
    if dn.size:
        _, first = np.unique(infoset[dn], return_index=True)
        old_ids = infoset[dn][np.sort(first)]
        remap = np.empty(num_isets, dtype=np.int64)
        remap[old_ids] = np.arange(num_isets)
        infoset = np.where(kind == DECISION, remap[np.maximum(infoset, 0)], -1)
        keys = tuple(keys[i] for i in old_ids)
        iset_actions = iset_actions[old_ids]
        iset_num = iset_num[old_ids]
        iset_player = iset_player[old_ids]
    dec_child = np.zeros(n, dtype=bool)
    dec_child[1:] = kind[parent[1:]] == DECISION
    if (child_rank[dec_child] != rank[dec_child]).any():
        raise AssertionError("internal error: decision children not in legal-action order")

    # Perfect recall and per-player decision depth (for the best-response order).
    level_ptr = np.searchsorted(depth, np.arange(int(depth.max()) + 2))
    last_seq = np.full((n, num_players), -1, dtype=np.int64)
    own_depth = np.zeros((n, num_players), dtype=np.int32)
    width = np.int64(iset_actions.shape[1])
    for lvl in range(1, level_ptr.shape[0] - 1):
        nodes = np.arange(level_ptr[lvl], level_ptr[lvl + 1])
        par = parent[nodes]
        last_seq[nodes] = last_seq[par]
        own_depth[nodes] = own_depth[par]
        from_dec = kind[par] == DECISION
        dn = nodes[from_dec]
        dp = par[from_dec]
        pl = player[dp]
        last_seq[dn, pl] = infoset[dp] * width + child_rank[dn]
        own_depth[dn, pl] += 1
    if dec_nodes.size:
        dn = np.flatnonzero(kind == DECISION)
        seq = last_seq[dn, player[dn]]
        iset = infoset[dn]
        lo = np.full(num_isets, np.iinfo(np.int64).max)
        hi = np.full(num_isets, np.iinfo(np.int64).min)
        np.minimum.at(lo, iset, seq)
        np.maximum.at(hi, iset, seq)
        if (lo != hi).any():
            bad = int(np.flatnonzero(lo != hi)[0])
            _fail(
                f"information set {keys[bad]!r} mixes histories with different own past actions "
                "(imperfect recall); information-state strings must include the player's own "
                "past information and actions (perfect recall)"
            )
    br_order = np.empty((n, num_players), dtype=np.int32)
    for p in range(num_players):
        br_order[:, p] = np.lexsort((-depth, -own_depth[:, p]))

    dn = np.flatnonzero(kind == DECISION)
    sorter = np.argsort(infoset[dn], kind="stable")
    iset_nodes = dn[sorter]
    iset_ptr = np.zeros(num_isets + 1, dtype=np.int64)
    np.cumsum(np.bincount(infoset[dn], minlength=num_isets), out=iset_ptr[1:])

    return GameTree(
        num_players=num_players,
        kind=_readonly(kind.astype(np.int8)),
        player=_readonly(player.astype(np.int32)),
        parent=_readonly(parent.astype(np.int32)),
        action=_readonly(action.astype(np.int64)),
        chance_prob=_readonly(chance_prob.astype(np.float64)),
        infoset=_readonly(infoset.astype(np.int32)),
        returns=_readonly(returns.astype(np.float64)),
        depth=_readonly(depth.astype(np.int32)),
        first_child=_readonly(first_child.astype(np.int32)),
        num_children=_readonly(counts.astype(np.int32)),
        child_rank=_readonly(child_rank.astype(np.int32)),
        infoset_player=_readonly(iset_player.astype(np.int32)),
        infoset_keys=keys,
        infoset_actions=_readonly(iset_actions),
        infoset_num_actions=_readonly(iset_num.astype(np.int32)),
        infoset_node_ptr=_readonly(iset_ptr.astype(np.int32)),
        infoset_nodes=_readonly(iset_nodes.astype(np.int32)),
        br_order=_readonly(br_order),
        terminals=_readonly(np.flatnonzero(kind == TERMINAL).astype(np.int32)),
        game_name=str(game_name),
    )


class TreeBuilder:
    """Builds a :class:`GameTree` node by node, without an OpenSpiel game.

    Every ``add_*`` method returns the new node's id. The first node added
    without ``parent`` is the root; every other node names its ``parent`` (an
    id returned earlier) and the ``action`` on the edge from it. A child of a
    decision node uses one of the parent's legal actions (each exactly once);
    a child of a chance node uses a chance-outcome id and must give ``prob``.

    Example (a coin flip, then player 0 guesses; the guess is unseen by the
    coin, so both decision nodes share one information set)::

        b = TreeBuilder(num_players=2)
        root = b.add_chance()
        for coin in (0, 1):
            d = b.add_decision(0, "guess", [0, 1], parent=root, action=coin, prob=0.5)
            for guess in (0, 1):
                win = 1.0 if guess == coin else -1.0
                b.add_terminal([win, -win], parent=d, action=guess)
        tree = b.build()

    Args:
        num_players: Number of players.
        game_name: Optional name stored in the tree.
    """

    def __init__(self, num_players: int, *, game_name: str = "") -> None:
        if int(num_players) < 1:
            raise ValueError(f"TreeBuilder: num_players={num_players}; pass at least 1")
        self.num_players = int(num_players)
        self.game_name = game_name
        self._parent: list[int] = []
        self._kind: list[int] = []
        self._action: list[int] = []
        self._player: list[int] = []
        self._prob: list[float] = []
        self._infoset: list[int] = []
        self._returns: dict[int, Sequence[float]] = {}
        self._iset_ids: dict[str, int] = {}
        self._iset_keys: list[str] = []
        self._iset_actions: list[tuple[int, ...]] = []
        self._iset_player: list[int] = []

    def __len__(self) -> int:
        return len(self._kind)

    def _add(self, kind: int, parent: int | None, action: int | None, prob: float | None) -> int:
        node = len(self._kind)
        if parent is None:
            if node and -1 in self._parent:
                raise ValueError(
                    "TreeBuilder: the tree already has a root; pass parent= for every later node"
                )
            if action is not None or prob is not None:
                raise ValueError(
                    "TreeBuilder: the root has no incoming edge; drop action= and prob="
                )
            self._parent.append(-1)
            self._action.append(-1)
            self._prob.append(1.0)
        else:
            parent = int(parent)
            if not 0 <= parent < node:
                raise ValueError(
                    f"TreeBuilder: parent={parent} is not an existing node id; add the parent first"
                )
            if self._kind[parent] == TERMINAL:
                raise ValueError(
                    f"TreeBuilder: parent={parent} is a terminal node; terminals cannot have children"
                )
            if action is None:
                raise ValueError(
                    f"TreeBuilder: node below parent {parent} needs action= (the edge's action id)"
                )
            if self._kind[parent] == CHANCE:
                if prob is None:
                    raise ValueError(
                        f"TreeBuilder: parent={parent} is a chance node; pass prob= for this outcome"
                    )
            elif prob is not None:
                raise ValueError(
                    f"TreeBuilder: parent={parent} is a decision node; drop prob= (only chance edges have one)"
                )
            self._parent.append(parent)
            self._action.append(int(action))
            self._prob.append(1.0 if prob is None else float(prob))
        self._kind.append(kind)
        return node

    def add_decision(
        self,
        player: int,
        infoset_key: str,
        legal_actions: Sequence[int],
        *,
        parent: int | None = None,
        action: int | None = None,
        prob: float | None = None,
    ) -> int:
        """Adds a decision node.

        Args:
            player: Acting player in ``[0, num_players)``.
            infoset_key: Information-state string; nodes sharing it form one
                information set and must share ``player`` and
                ``legal_actions``.
            legal_actions: Legal action ids, in the order policy columns use.
            parent: Parent node id, or None for the root.
            action: Action id on the edge from ``parent``.
            prob: Edge probability when ``parent`` is a chance node.

        Returns:
            The node id.
        """
        key = str(infoset_key)
        legal = tuple(int(a) for a in legal_actions)
        if not 0 <= int(player) < self.num_players:
            raise ValueError(
                f"TreeBuilder.add_decision: player={player} is not in [0, {self.num_players})"
            )
        iset = self._iset_ids.get(key)
        if iset is None:
            iset = len(self._iset_keys)
            self._iset_ids[key] = iset
            self._iset_keys.append(key)
            self._iset_actions.append(legal)
            self._iset_player.append(int(player))
        elif self._iset_actions[iset] != legal or self._iset_player[iset] != int(player):
            raise ValueError(
                f"TreeBuilder.add_decision: information set {key!r} was first added for player "
                f"{self._iset_player[iset]} with legal actions {self._iset_actions[iset]}; every node of "
                "an information set must have the same player and legal actions (or use a different key)"
            )
        node = self._add(DECISION, parent, action, prob)
        self._player.append(int(player))
        self._infoset.append(iset)
        return node

    def add_chance(
        self, *, parent: int | None = None, action: int | None = None, prob: float | None = None
    ) -> int:
        """Adds a chance node; its children carry the outcome probabilities.

        Args:
            parent: Parent node id, or None for the root.
            action: Action id on the edge from ``parent``.
            prob: Edge probability when ``parent`` is a chance node.

        Returns:
            The node id.
        """
        node = self._add(CHANCE, parent, action, prob)
        self._player.append(CHANCE_PLAYER)
        self._infoset.append(-1)
        return node

    def add_terminal(
        self,
        returns: Sequence[float],
        *,
        parent: int | None = None,
        action: int | None = None,
        prob: float | None = None,
    ) -> int:
        """Adds a terminal node.

        Args:
            returns: One return per player.
            parent: Parent node id, or None for the root.
            action: Action id on the edge from ``parent``.
            prob: Edge probability when ``parent`` is a chance node.

        Returns:
            The node id.
        """
        values = tuple(float(r) for r in returns)
        if len(values) != self.num_players:
            raise ValueError(
                f"TreeBuilder.add_terminal: got {len(values)} returns for {self.num_players} players; pass one per player"
            )
        node = self._add(TERMINAL, parent, action, prob)
        self._player.append(TERMINAL_PLAYER)
        self._infoset.append(-1)
        self._returns[node] = values
        return node

    def build(self) -> GameTree:
        """Validates the nodes and returns the :class:`GameTree`.

        Raises:
            ValueError: If the nodes do not form a valid tree (see
                :meth:`GameTree.from_arrays`).
        """
        n = len(self._kind)
        returns = np.zeros((n, self.num_players))
        for node, values in self._returns.items():
            returns[node] = values
        return GameTree.from_arrays(
            num_players=self.num_players,
            parent=self._parent,
            kind=self._kind,
            action=self._action,
            player=self._player,
            chance_prob=self._prob,
            infoset=self._infoset,
            returns=returns,
            infoset_keys=self._iset_keys,
            infoset_actions=self._iset_actions,
            game_name=self.game_name,
        )


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
            node plus the information-state strings; the walk itself holds a
            few hundred bytes per node in Python lists).

    Returns:
        The materialised tree.

    Raises:
        ValueError: For simultaneous-move or sampled-chance games, games
            without information-state strings, trees larger than
            ``max_nodes``, or information sets violating perfect recall.
    """
    import pyspiel

    _check_game_supported(game)
    num_players = game.num_players()
    name = game.get_type().short_name
    parent: list[int] = []
    kind: list[int] = []
    action: list[int] = []
    player: list[int] = []
    prob: list[float] = []
    infoset: list[int] = []
    returns: dict[int, list[float]] = {}
    iset_ids: dict[str, int] = {}
    iset_keys: list[str] = []
    iset_actions: list[list[int]] = []

    stack = [(game.new_initial_state(), -1, -1, 1.0)]
    while stack:
        state, par, act, p = stack.pop()
        node = len(kind)
        if node >= max_nodes:
            raise ValueError(
                f"materialize: the tree of {name!r} has more than max_nodes={max_nodes} nodes; pass a larger "
                "max_nodes (memory grows linearly with the node count) or materialise a smaller game or subgame"
            )
        parent.append(par)
        action.append(act)
        prob.append(p)
        if state.is_terminal():
            kind.append(TERMINAL)
            player.append(TERMINAL_PLAYER)
            infoset.append(-1)
            returns[node] = state.returns()
            continue
        if state.is_chance_node():
            kind.append(CHANCE)
            player.append(CHANCE_PLAYER)
            infoset.append(-1)
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
        key = state.information_state_string(current)
        iset = iset_ids.get(key)
        legal = state.legal_actions(current)
        if iset is None:
            iset = len(iset_keys)
            iset_ids[key] = iset
            iset_keys.append(key)
            iset_actions.append(list(legal))
        kind.append(DECISION)
        player.append(current)
        infoset.append(iset)
        for a in reversed(legal):
            stack.append((state.child(a), node, a, 1.0))

    n = len(kind)
    ret = np.zeros((n, num_players))
    for node, values in returns.items():
        ret[node] = values
    tree = GameTree.from_arrays(
        num_players=num_players,
        parent=parent,
        kind=kind,
        action=action,
        player=player,
        chance_prob=prob,
        infoset=infoset,
        returns=ret,
        infoset_keys=iset_keys,
        infoset_actions=iset_actions,
        game_name=name,
    )
    logger.debug("materialised %r: %d nodes, %d infosets", name, tree.num_nodes, tree.num_infosets)
    return tree
