"""The game-tree type: a materialised extensive-form game as flat NumPy arrays.

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

Trees come from :func:`~solvers.walk.materialize` (any OpenSpiel
game), from :class:`~solvers.builder.TreeBuilder` (node by node, no OpenSpiel
needed), or from :meth:`GameTree.from_arrays` (vectorised construction of
large trees); all three end in :func:`canonical_tree`, which
validates the nodes and renumbers them into the layout above.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import MutableMapping, Sequence

import numpy as np

from solvers.canonical import canonical_fields
from solvers.collapse import collapse_policy_free
from solvers.node_kinds import CHANCE, CHANCE_PLAYER, DECISION, TERMINAL, TERMINAL_PLAYER

__all__ = [
    "CHANCE",
    "CHANCE_PLAYER",
    "DECISION",
    "TERMINAL",
    "TERMINAL_PLAYER",
    "GameTree",
    "canonical_tree",
]


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

    @functools.cached_property
    def payoff_scale(self) -> float:
        """Largest absolute terminal return (at least 1.0); computed once (a pass over ``returns``)."""
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

    @functools.cached_property
    def returns_by_player(self) -> np.ndarray:
        """``returns`` transposed, ``float64[P, N]`` C-contiguous (the fused metric pass reads it; internal)."""
        return np.ascontiguousarray(self.returns.T)

    @functools.cached_property
    def collapsed(self) -> GameTree:
        """The tree the solvers walk: every decision-free subtree replaced by one terminal.

        A subtree without decision nodes has expected returns no policy can
        change; :func:`solvers.collapse.collapse_policy_free` computes them
        once (in the kernels' summation order, so CFR and best responses are
        bit-for-bit unchanged) and keeps the information sets and their ids.
        ``self`` when there is nothing to collapse. Built on first use, not
        pickled.
        """
        walked = collapse_policy_free(self)
        walked.__dict__["collapsed"] = walked  # already collapsed: no second pass
        return walked

    def __getstate__(self) -> dict:
        # Cached views (kernel_arrays, collapsed, key_to_infoset) are rebuilt on demand, not pickled.
        state = dict(self.__dict__)
        state.pop("kernel_arrays", None)
        state.pop("returns_by_player", None)
        state.pop("collapsed", None)
        state.pop("key_to_infoset", None)
        return state

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
        columns: dict[str, object] = {
            "parent": parent,
            "kind": kind,
            "action": action,
            "player": player,
            "chance_prob": chance_prob,
            "infoset": infoset,
            "returns": returns,
        }
        return canonical_tree(
            columns,
            num_players=num_players,
            infoset_keys=infoset_keys,
            infoset_actions=infoset_actions,
            game_name=game_name,
        )

    @property
    def nbytes(self) -> int:
        """Bytes held by the tree's arrays and information-state strings."""
        total = sum(
            getattr(self, f.name).nbytes
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), np.ndarray)
        )
        return total + sum(sys.getsizeof(key) for key in self.infoset_keys)


def canonical_tree(
    columns: MutableMapping[str, object],
    *,
    num_players: int,
    infoset_keys: Sequence[str],
    infoset_actions: Sequence[Sequence[int]],
    game_name: str = "",
) -> GameTree:
    """Validates per-node columns and returns the canonical :class:`GameTree`.

    The work is :func:`solvers.canonical.canonical_fields` (its docstring
    gives the columns, the checks and the renumbering); this wraps its fields
    in the tree type.
    """
    return GameTree(
        **canonical_fields(
            columns,
            num_players=num_players,
            infoset_keys=infoset_keys,
            infoset_actions=infoset_actions,
            game_name=game_name,
        )
    )
