"""Reading and checking the columns a :class:`~solvers.game_tree.GameTree` is built from.

:func:`check_columns` is the first half of :func:`solvers.game_tree.canonical_tree`:
it pops the per-node columns, narrows them to the stored dtypes and checks
that they describe a finite tree with consistent information sets (one root,
valid ids, terminals as leaves, one child per legal action and per chance
outcome, chance probabilities summing to one), ranking every edge among its
siblings on the way. Perfect recall needs the breadth-first order and is
checked by :mod:`solvers.canonical`. Every check is vectorised NumPy; each
failure is one ``ValueError`` saying what to fix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping, Sequence
from typing import NoReturn

import numpy as np
from numpy.typing import ArrayLike

from solvers.node_kinds import CHANCE, CHANCE_PLAYER, DECISION, TERMINAL, TERMINAL_PLAYER

__all__ = ["CHANCE_SUM_ATOL", "Infosets", "Nodes", "check_columns", "fail"]

CHANCE_SUM_ATOL = 1e-6
"""Tolerance on the outcome probabilities of a chance node summing to one."""

_INT32_MAX = np.iinfo(np.int32).max


def fail(message: str) -> NoReturn:
    """Raises the ``ValueError`` of an invalid tree."""
    raise ValueError(f"GameTree.from_arrays: {message}")


def _index_column(columns: MutableMapping, name: str, dtype) -> np.ndarray:
    """Pops an integer column and narrows it to ``dtype`` (range-checked)."""
    arr = np.asarray(columns.pop(name))
    if arr.dtype == dtype:
        return arr
    wide = np.asarray(arr, dtype=np.int64)
    info = np.iinfo(dtype)
    if wide.size and (wide.min() < info.min or wide.max() > info.max):
        fail(f"{name} has entries outside [{info.min}, {info.max}]")
    return wide.astype(dtype)


def _pad_actions(infoset_actions: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    counts = np.array([len(a) for a in infoset_actions], dtype=np.int32)
    width = int(counts.max()) if counts.size else 1
    padded = np.full((len(infoset_actions), max(width, 1)), -1, dtype=np.int64)
    for i, acts in enumerate(infoset_actions):
        if len(acts):
            padded[i, : len(acts)] = np.asarray(acts, dtype=np.int64)
    return padded, counts


@dataclasses.dataclass(slots=True, eq=False)
class Nodes:
    """The per-node columns while they are checked and renumbered (inside the canonicaliser).

    Mutable on purpose: a helper replaces a column by its checked or permuted
    copy, so that the input it came from can be freed at once (the peak stays
    near the size of the result).

    Attributes:
        parent: ``int32[N]``; ``-1`` at the root.
        kind: ``int8[N]``.
        action: ``int64[N]``.
        player: ``int32[N]``.
        chance_prob: ``float64[N]``.
        infoset: ``int32[N]``.
        term_returns: ``float64[Z, num_players]``, one row per terminal in
            node order (emptied once the renumbered ``returns`` exist).
        rank: ``int32[N]`` position of each edge among its siblings (empty
            until :func:`check_columns` ranks the edges, and again once the
            breadth-first order has been checked against it).
    """

    parent: np.ndarray
    kind: np.ndarray
    action: np.ndarray
    player: np.ndarray
    chance_prob: np.ndarray
    infoset: np.ndarray
    term_returns: np.ndarray
    rank: np.ndarray


@dataclasses.dataclass(slots=True, eq=False)
class Infosets:
    """The information sets while they are checked and renumbered (inside the canonicaliser).

    Attributes:
        keys: Information-state string per set.
        actions: ``int64[M, width]`` legal actions, padded with ``-1``.
        num: ``int32[M]`` number of legal actions.
        player: ``int32[M]`` acting player (empty until :func:`check_columns`).
    """

    keys: tuple[str, ...]
    actions: np.ndarray
    num: np.ndarray
    player: np.ndarray


def check_columns(
    columns: MutableMapping[str, object],
    *,
    num_players: int,
    infoset_keys: Sequence[str],
    infoset_actions: Sequence[Sequence[int]],
) -> tuple[Nodes, Infosets, int]:
    """Pops and checks the columns (see :func:`solvers.game_tree.canonical_tree`).

    Returns:
        ``(nodes, infosets, root)``: the checked columns in input order (the
        infoset and player of non-decision nodes set to ``-1`` and the
        OpenSpiel player ids, every edge ranked), the information sets with
        their players, and the root's index.

    Raises:
        ValueError: If the columns do not describe a finite tree with
            consistent information sets.
    """
    if num_players < 1:
        fail(f"num_players={num_players}; a game needs at least one player")
    nodes, given_rank = _pop_columns(columns, num_players)
    isets = _infoset_table(infoset_keys, infoset_actions)
    root = _root(nodes.parent)
    is_dec = nodes.kind == DECISION
    _check_decision_ids(nodes, isets, is_dec, num_players)
    isets.player = _infoset_players(nodes, isets, is_dec)
    par_kind = _parent_kinds(nodes)
    nodes.rank = _rank_edges(nodes, isets, par_kind, given_rank)
    del given_rank
    _check_child_counts(nodes, isets, is_dec)
    del is_dec
    _check_chance_sums(nodes, par_kind)
    return nodes, isets, root


_NO_RANK = np.empty(0, dtype=np.int32)


def _pop_columns(columns: MutableMapping, num_players: int) -> tuple[Nodes, ArrayLike | None]:
    """Pops, narrows and shape-checks every column; returns the nodes and the given ranks (or None)."""
    parent = np.asarray(columns.pop("parent"))
    n = parent.shape[0]
    if n == 0:
        fail("the tree is empty; add at least a root node")
    if n > _INT32_MAX:
        fail(f"{n} nodes exceed the int32 node index; split the tree")
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
            fail(f"{name} has shape {arr.shape}, expected ({n},) like parent")
    if not np.isin(kind, (TERMINAL, CHANCE, DECISION)).all():
        fail("kind must contain only TERMINAL (0), CHANCE (1) or DECISION (2)")
    term_returns = _pop_terminal_returns(columns, kind, num_players)
    columns.clear()
    nodes = Nodes(parent, kind, action, player, chance_prob, infoset, term_returns, _NO_RANK)
    return nodes, given_rank


def _pop_terminal_returns(
    columns: MutableMapping, kind: np.ndarray, num_players: int
) -> np.ndarray:
    """The terminals' returns, one row per terminal in node order (finite)."""
    n = kind.shape[0]
    term = kind == TERMINAL
    num_terminals = int(np.count_nonzero(term))
    if "terminal_returns" in columns:
        term_returns = np.asarray(columns.pop("terminal_returns"), dtype=np.float64).reshape(
            -1, num_players
        )
        if term_returns.shape[0] != num_terminals:
            fail(f"{term_returns.shape[0]} terminal_returns rows for {num_terminals} terminals")
    else:
        returns = np.asarray(columns.pop("returns"), dtype=np.float64)
        returns = returns.reshape(n, -1) if returns.size else returns.reshape(n, 0)
        if returns.shape != (n, num_players):
            fail(f"returns has shape {returns.shape}, expected ({n}, {num_players})")
        term_returns = returns[term]
        del returns
    del term
    if not np.isfinite(term_returns).all():
        fail("terminal returns must be finite")
    return term_returns


def _infoset_table(
    infoset_keys: Sequence[str], infoset_actions: Sequence[Sequence[int]]
) -> Infosets:
    """The keys and padded legal actions, checked: unique keys, actions, at least one each."""
    keys = tuple(str(k) for k in infoset_keys)
    if len(keys) != len(infoset_actions):
        fail(
            f"{len(keys)} infoset_keys but {len(infoset_actions)} infoset_actions; give one list of legal actions per key"
        )
    if len(set(keys)) != len(keys):
        fail("infoset_keys must be unique; merge duplicated information sets")
    iset_actions, iset_num = _pad_actions(infoset_actions)
    num_isets = len(keys)
    if num_isets and (iset_num < 1).any():
        fail(f"information set {keys[int(np.argmin(iset_num))]!r} has no legal actions")
    for i in range(num_isets):
        acts = iset_actions[i, : iset_num[i]]
        if np.unique(acts).shape[0] != acts.shape[0]:
            fail(f"information set {keys[i]!r} lists a legal action twice")
    return Infosets(keys, iset_actions, iset_num, np.empty(0, dtype=np.int32))


def _root(parent: np.ndarray) -> int:
    """The one node without a parent (parents checked to be node ids)."""
    n = parent.shape[0]
    roots = np.flatnonzero(parent < 0)
    if roots.shape[0] != 1:
        fail(f"found {roots.shape[0]} roots (parent == -1); a tree has exactly one")
    root = int(roots[0])
    if (parent >= n).any():
        fail("parent indices must be < number of nodes")
    return root


def _check_decision_ids(
    nodes: Nodes, isets: Infosets, is_dec: np.ndarray, num_players: int
) -> None:
    """Checks decision nodes' infoset and player ids; sets the others' to the conventions."""
    num_isets = len(isets.keys)
    infoset, player = nodes.infoset, nodes.player
    if is_dec.any():
        if (infoset[is_dec] < 0).any() or (infoset[is_dec] >= num_isets).any():
            fail("every decision node needs an infoset id in [0, len(infoset_keys))")
        if (player[is_dec] < 0).any() or (player[is_dec] >= num_players).any():
            fail(f"decision-node players must be in [0, {num_players})")
    # New arrays (not in-place): the inputs may be the caller's arrays.
    nodes.infoset = np.where(is_dec, infoset, np.int32(-1))
    nodes.player = np.where(
        is_dec,
        player,
        np.where(nodes.kind == CHANCE, np.int32(CHANCE_PLAYER), np.int32(TERMINAL_PLAYER)),
    )


def _infoset_players(nodes: Nodes, isets: Infosets, is_dec: np.ndarray) -> np.ndarray:
    """The player of each information set (one per set, every set used)."""
    infoset, player = nodes.infoset, nodes.player
    num_isets = len(isets.keys)
    iset_player = np.full(num_isets, -1, dtype=np.int32)
    if num_isets:
        iset_player[infoset[is_dec]] = player[is_dec]
        if (iset_player[infoset[is_dec]] != player[is_dec]).any():
            fail("all nodes of an information set must belong to the same player")
        if (iset_player < 0).any():
            missing = isets.keys[int(np.flatnonzero(iset_player < 0)[0])]
            fail(f"information set {missing!r} has no decision node; drop unused infoset_keys")
    return iset_player


def _parent_kinds(nodes: Nodes) -> np.ndarray:
    """``int8[N]`` kind of each node's parent (``-1`` at the root); terminals are leaves."""
    parent = nodes.parent
    par_kind = np.full(parent.shape[0], -1, dtype=np.int8)
    has_parent = parent >= 0
    par_kind[has_parent] = nodes.kind[parent[has_parent]]
    del has_parent
    if (par_kind == TERMINAL).any():
        fail("a terminal node has children; terminals must be leaves")
    return par_kind


def _rank_edges(
    nodes: Nodes, isets: Infosets, par_kind: np.ndarray, given_rank: ArrayLike | None
) -> np.ndarray:
    """Edge ranks (decisions by legal-action position, chance by input order), checked.

    A decision node has one child per action; a chance node's outcomes have
    distinct ids and finite, non-negative probabilities.
    """
    parent, action = nodes.parent, nodes.action
    n = parent.shape[0]
    dec_edges = np.flatnonzero(par_kind == DECISION)
    if given_rank is not None:
        rank = np.asarray(given_rank, dtype=np.int32)
    else:
        rank = np.zeros(n, dtype=np.int32)
        if dec_edges.size:
            rank[dec_edges] = _decision_ranks(
                parent, action, nodes.infoset, isets.actions, isets.keys, dec_edges
            )
    if dec_edges.size:
        pair = (
            parent[dec_edges].astype(np.int64) * np.int64(isets.actions.shape[1]) + rank[dec_edges]
        )
        if np.unique(pair).shape[0] != pair.shape[0]:
            fail(
                "a decision node has two children for the same action; give each legal action one child"
            )
        del pair
    del dec_edges
    chance_edges = np.flatnonzero(par_kind == CHANCE)
    if chance_edges.size:
        if given_rank is None:
            rank[chance_edges] = chance_edges  # input order
        _check_chance_edges(nodes, chance_edges)
    return rank


def _check_chance_edges(nodes: Nodes, chance_edges: np.ndarray) -> None:
    """Outcome probabilities finite and >= 0; one child per outcome id of a chance node."""
    n = nodes.parent.shape[0]
    cp = nodes.chance_prob[chance_edges]
    if not np.isfinite(cp).all() or (cp < 0).any():
        fail("chance probabilities must be finite and >= 0")
    del cp
    pair = nodes.parent[chance_edges].astype(np.int64) * np.int64(n) + np.unique(
        nodes.action[chance_edges], return_inverse=True
    )[1].reshape(-1)
    if np.unique(pair).shape[0] != chance_edges.shape[0]:
        fail(
            "a chance node has two children with the same outcome id; give each outcome a distinct id"
        )


def _check_child_counts(nodes: Nodes, isets: Infosets, is_dec: np.ndarray) -> None:
    """Every non-terminal has children; a decision node one per legal action of its set."""
    parent, kind, infoset = nodes.parent, nodes.kind, nodes.infoset
    n = parent.shape[0]
    counts = np.bincount(parent[parent >= 0], minlength=n)
    nonterm = kind != TERMINAL
    if (counts[nonterm] == 0).any():
        bad = int(np.flatnonzero(nonterm & (counts == 0))[0])
        fail(f"non-terminal node {bad} has no children; give it children or make it TERMINAL")
    del nonterm
    iset_num = isets.num
    dec_nodes = np.flatnonzero(is_dec)
    if dec_nodes.size and (counts[dec_nodes] != iset_num[infoset[dec_nodes]]).any():
        bad = int(dec_nodes[np.flatnonzero(counts[dec_nodes] != iset_num[infoset[dec_nodes]])[0]])
        fail(
            f"decision node {bad} has {int(counts[bad])} children but its information set "
            f"{isets.keys[int(infoset[bad])]!r} has {int(iset_num[infoset[bad]])} legal actions; "
            "add one child per legal action"
        )


def _check_chance_sums(nodes: Nodes, par_kind: np.ndarray) -> None:
    """The outcome probabilities of every chance node sum to one (:data:`CHANCE_SUM_ATOL`)."""
    parent = nodes.parent
    chance_nodes = np.flatnonzero(nodes.kind == CHANCE)
    if chance_nodes.size:
        from_chance = par_kind == CHANCE
        sums = np.bincount(
            parent[from_chance], weights=nodes.chance_prob[from_chance], minlength=parent.shape[0]
        )
        del from_chance
        bad_sum = np.abs(sums[chance_nodes] - 1.0) > CHANCE_SUM_ATOL
        if bad_sum.any():
            bad = int(chance_nodes[np.flatnonzero(bad_sum)[0]])
            fail(
                f"the outcome probabilities of chance node {bad} sum to {sums[bad]!r}; they must sum to 1"
            )


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
        fail(
            f"node {bad} hangs from decision node {int(parent[bad])} with action "
            f"{int(action[bad])}, which is not a legal action of information set "
            f"{keys[int(infoset[parent[bad]])]!r}; use one of its legal actions"
        )
    return cols[sorter[pos]]
