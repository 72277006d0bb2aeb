"""Building a :class:`~solvers.game_tree.GameTree` node by node.

:class:`TreeBuilder` appends nodes to compact typed buffers (``array.array``:
about ``30 + 8 * num_players`` bytes per node, no Python object per node),
checks each edge as it is added, and hands the buffers to
:func:`solvers.game_tree.canonical_tree`, which validates the whole tree and
renumbers it breadth-first. :func:`solvers.walk.materialize` drives the same
builder from an OpenSpiel game.
"""

from __future__ import annotations

import array
from collections.abc import Sequence

import numpy as np

from solvers.game_tree import (
    CHANCE,
    CHANCE_PLAYER,
    DECISION,
    TERMINAL,
    TERMINAL_PLAYER,
    GameTree,
    canonical_tree,
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
        self._reset()

    def _reset(self) -> None:
        """Empties the builder: no node, no information set."""
        self._reset_buffers()
        self._has_root = False
        self._iset_ids: dict[str, int] = {}
        self._iset_keys: list[str] = []
        self._iset_actions: list[tuple[int, ...]] = []
        self._iset_rank: list[dict[int, int]] = []
        self._iset_player: list[int] = []
        # One (tuple, action -> position) pair per distinct legal-action list, shared by
        # the information sets that have it: most games repeat a few action lists.
        self._legal_cache: dict[tuple[int, ...], tuple[tuple[int, ...], dict[int, int]]] = {}

    def _reset_buffers(self) -> None:
        # Typed buffers: a few bytes per node instead of a Python object per entry.
        self._parent = array.array("i")
        self._kind = array.array("b")
        self._action = array.array("q")
        self._player = array.array("i")
        self._prob = array.array("d")
        self._infoset = array.array("i")
        self._rank = array.array("i")  # legal-action position (decision edges), node id (chance)
        self._returns = array.array("d")  # one row per terminal, in node order

    def __len__(self) -> int:
        return len(self._kind)

    def _add(self, kind: int, parent: int | None, action: int | None, prob: float | None) -> int:
        node = len(self._kind)
        if parent is None:
            if self._has_root:
                raise ValueError(
                    "TreeBuilder: the tree already has a root; pass parent= for every later node"
                )
            if action is not None or prob is not None:
                raise ValueError(
                    "TreeBuilder: the root has no incoming edge; drop action= and prob="
                )
            self._has_root = True
            self._parent.append(-1)
            self._action.append(-1)
            self._prob.append(1.0)
            self._rank.append(0)
        else:
            parent = int(parent)
            if not 0 <= parent < node:
                raise ValueError(
                    f"TreeBuilder: parent={parent} is not an existing node id; add the parent first"
                )
            parent_kind = self._kind[parent]
            if parent_kind == TERMINAL:
                raise ValueError(
                    f"TreeBuilder: parent={parent} is a terminal node; terminals cannot have children"
                )
            if action is None:
                raise ValueError(
                    f"TreeBuilder: node below parent {parent} needs action= (the edge's action id)"
                )
            action = int(action)
            if parent_kind == CHANCE:
                if prob is None:
                    raise ValueError(
                        f"TreeBuilder: parent={parent} is a chance node; pass prob= for this outcome"
                    )
                rank = node
            else:
                if prob is not None:
                    raise ValueError(
                        f"TreeBuilder: parent={parent} is a decision node; drop prob= (only chance edges have one)"
                    )
                iset = self._infoset[parent]
                rank = self._iset_rank[iset].get(action, -1)
                if rank < 0:
                    raise ValueError(
                        f"TreeBuilder: action={action} is not a legal action of parent {parent} (information set "
                        f"{self._iset_keys[iset]!r}, legal {self._iset_actions[iset]}); use one of them"
                    )
            self._parent.append(parent)
            self._action.append(action)
            self._prob.append(1.0 if prob is None else float(prob))
            self._rank.append(rank)
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
        key = infoset_key if type(infoset_key) is str else str(infoset_key)
        player = int(player)
        if not 0 <= player < self.num_players:
            raise ValueError(
                f"TreeBuilder.add_decision: player={player} is not in [0, {self.num_players})"
            )
        # The cache maps the list as given to its int tuple: no per-node conversion.
        given = tuple(legal_actions)
        shared = self._legal_cache.get(given)
        if shared is None:
            legal = tuple(int(a) for a in given)
            shared = self._legal_cache.get(legal) or (legal, {a: j for j, a in enumerate(legal)})
            self._legal_cache[legal] = self._legal_cache[given] = shared
        legal = shared[0]
        iset = self._iset_ids.get(key)
        if iset is None:
            iset = len(self._iset_keys)
            self._iset_ids[key] = iset
            self._iset_keys.append(key)
            self._iset_actions.append(legal)
            self._iset_rank.append(shared[1])
            self._iset_player.append(player)
        elif self._iset_actions[iset] is not legal or self._iset_player[iset] != player:
            raise ValueError(
                f"TreeBuilder.add_decision: information set {key!r} was first added for player "
                f"{self._iset_player[iset]} with legal actions {self._iset_actions[iset]}; every node of "
                "an information set must have the same player and legal actions (or use a different key)"
            )
        node = self._add(DECISION, parent, action, prob)
        self._player.append(player)
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
        self._returns.extend(values)
        return node

    def build(self) -> GameTree:
        """Validates the nodes and returns the :class:`GameTree`.

        The builder stays usable: more nodes may be added and ``build``
        called again.

        Raises:
            ValueError: If the nodes do not form a valid tree (see
                :meth:`GameTree.from_arrays`).
        """
        return self._build(release=False)

    def _build(self, *, release: bool) -> GameTree:
        """Builds the tree; ``release=True`` hands the buffers over and empties the builder.

        Releasing lets the canonicaliser free each buffer as soon as it is
        consumed, which keeps :func:`~solvers.walk.materialize`'s peak memory
        near the size of the finished tree.
        """
        columns = {
            "parent": np.frombuffer(self._parent, dtype=np.int32),
            "kind": np.frombuffer(self._kind, dtype=np.int8),
            "action": np.frombuffer(self._action, dtype=np.int64),
            "player": np.frombuffer(self._player, dtype=np.int32),
            "chance_prob": np.frombuffer(self._prob, dtype=np.float64),
            "infoset": np.frombuffer(self._infoset, dtype=np.int32),
            "rank": np.frombuffer(self._rank, dtype=np.int32),
            "terminal_returns": np.frombuffer(self._returns, dtype=np.float64),
        }
        keys, actions = self._iset_keys, self._iset_actions
        if release:
            self._reset()
        return canonical_tree(
            columns,
            num_players=self.num_players,
            infoset_keys=keys,
            infoset_actions=actions,
            game_name=self.game_name,
        )
