"""Random layered game trees for tests and benchmarks.

:func:`layered_tree` builds the shape of the chat games' subgames (e.g. the
fruit-trading game): a fixed opening message, then ``len(players)`` decision
levels; at level ``k`` player ``players[k]`` picks one of ``num_actions``
actions (a tone), and a chance node with ``num_outcomes`` outcomes (the
message actually produced) follows. Players observe every message but not
each other's choices, and remember their own (perfect recall). Terminal
payoffs are random and general-sum. With ``players=(0, 1, 0)``, 4 actions
and 2 outcomes the tree has 877 nodes and 512 leaves.

The construction is vectorised (NumPy) and goes through
:meth:`GameTree.from_arrays` (no per-node Python loop), so it also builds
large trees for benchmarks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from solvers.tree import CHANCE, DECISION, TERMINAL, GameTree


def layered_tree(
    rng: np.random.Generator,
    *,
    players: Sequence[int] = (0, 1, 0),
    num_actions: int = 4,
    num_outcomes: int = 2,
    num_players: int | None = None,
    random_chance: bool = True,
    game_name: str = "layered",
) -> GameTree:
    """A random tree of the chat-game shape (see the module docstring).

    Args and the tree's layout: see :func:`layered_columns`, whose output this
    passes to :meth:`GameTree.from_arrays`.
    """
    return GameTree.from_arrays(
        **layered_columns(
            rng,
            players=players,
            num_actions=num_actions,
            num_outcomes=num_outcomes,
            num_players=num_players,
            random_chance=random_chance,
            game_name=game_name,
        )
    )


def layered_columns(
    rng: np.random.Generator,
    *,
    players: Sequence[int] = (0, 1, 0),
    num_actions: int = 4,
    num_outcomes: int = 2,
    num_players: int | None = None,
    random_chance: bool = True,
    game_name: str = "layered",
) -> dict:
    """The :meth:`GameTree.from_arrays` keyword arguments of :func:`layered_tree`.

    Separate so that the cost of building a tree from arrays can be measured
    apart from generating them (``benchmarks/solvers.py``).

    Args:
        rng: Random generator (``np.random.default_rng(seed)``).
        players: Acting player of each decision level.
        num_actions: Actions per decision node.
        num_outcomes: Outcomes per chance node.
        num_players: Number of players (default ``max(players) + 1``).
        random_chance: Draw chance probabilities from Dirichlet(1) (else
            uniform).
        game_name: Name stored in the tree.

    Returns:
        The keyword arguments; the tree has returns uniform in ``[-1, 1]``
        per player.
    """
    players = [int(p) for p in players]
    if not players or min(players) < 0:
        raise ValueError("layered_tree: players must be a non-empty list of player ids >= 0")
    if num_actions < 1 or num_outcomes < 1:
        raise ValueError("layered_tree: num_actions and num_outcomes must be >= 1")
    n_players = max(players) + 1 if num_players is None else int(num_players)
    if max(players) >= n_players:
        raise ValueError(f"layered_tree: player ids must be < num_players={n_players}")
    a_count, c_count = int(num_actions), int(num_outcomes)

    parent_parts = [np.array([-1])]
    kind_parts = [np.array([DECISION])]
    action_parts = [np.array([-1])]
    player_parts = [np.array([players[0]])]
    prob_parts = [np.array([1.0])]
    iset_parts: list[np.ndarray] = []
    keys: list[str] = []
    next_id = 1

    frontier = np.array([0])  # decision nodes of the current level
    own = np.zeros((1, n_players), dtype=np.int64)  # encoded own past actions
    msg = np.zeros(1, dtype=np.int64)  # encoded messages seen
    for level, p in enumerate(players):
        # Information sets of this level: (own actions of p, messages).
        code = own[:, p] * (c_count**level) + msg
        uniq, inv = np.unique(code, return_inverse=True)
        iset_parts.append(len(keys) + inv)
        for u in uniq:
            o, m = divmod(int(u), c_count**level)
            keys.append(f"L{level}|p{p}|own{o}|msg{m}")
        # Chance nodes after each action.
        nf = frontier.shape[0]
        chance_ids = next_id + np.arange(nf * a_count)
        next_id += nf * a_count
        parent_parts.append(np.repeat(frontier, a_count))
        kind_parts.append(np.full(nf * a_count, CHANCE))
        action_parts.append(np.tile(np.arange(a_count), nf))
        player_parts.append(np.full(nf * a_count, -1))
        prob_parts.append(np.ones(nf * a_count))
        own = np.repeat(own, a_count, axis=0)
        own[:, p] = own[:, p] * a_count + np.tile(np.arange(a_count), nf)
        msg = np.repeat(msg, a_count)
        # Outcomes of each chance node.
        nc = chance_ids.shape[0]
        if random_chance:
            probs = rng.dirichlet(np.ones(c_count), size=nc).ravel()
        else:
            probs = np.full(nc * c_count, 1.0 / c_count)
        last = level == len(players) - 1
        child_ids = next_id + np.arange(nc * c_count)
        next_id += nc * c_count
        parent_parts.append(np.repeat(chance_ids, c_count))
        kind_parts.append(np.full(nc * c_count, TERMINAL if last else DECISION))
        action_parts.append(np.tile(np.arange(c_count), nc))
        player_parts.append(np.full(nc * c_count, -4 if last else players[level + 1]))
        prob_parts.append(probs)
        own = np.repeat(own, c_count, axis=0)
        msg = np.repeat(msg, c_count) * c_count + np.tile(np.arange(c_count), nc)
        frontier = child_ids

    n = next_id
    kind = np.concatenate(kind_parts)
    infoset = np.full(n, -1, dtype=np.int64)
    decision_nodes = np.flatnonzero(kind == DECISION)
    infoset[decision_nodes] = np.concatenate(iset_parts)
    returns = np.zeros((n, n_players))
    returns[frontier] = rng.uniform(-1.0, 1.0, size=(frontier.shape[0], n_players))
    return dict(
        num_players=n_players,
        parent=np.concatenate(parent_parts),
        kind=kind,
        action=np.concatenate(action_parts),
        player=np.concatenate(player_parts),
        chance_prob=np.concatenate(prob_parts),
        infoset=infoset,
        returns=returns,
        infoset_keys=keys,
        infoset_actions=[list(range(a_count))] * len(keys),
        game_name=game_name,
    )


def fruit_shaped_tree(seed: int) -> GameTree:
    """A 512-leaf tree of the fruit-trading shape with random payoffs."""
    return layered_tree(np.random.default_rng(seed), game_name=f"fruit_shaped_{seed}")


def planted_action_cost(tree: GameTree, action: int, cost: float) -> GameTree:
    """``tree`` where choosing ``action`` costs its chooser ``cost`` at every decision.

    A known effect of one action label, for measuring the power of tests that
    ask whether action labels matter (:mod:`solvers.noise`): each terminal's
    return of player ``i`` drops by ``cost`` times the number of times ``i``
    chose ``action`` on the way to it.
    """
    returns = tree.returns.copy()
    chosen = np.zeros((tree.num_nodes, tree.num_players))
    for n in range(1, tree.num_nodes):  # parents precede children (breadth-first)
        p = int(tree.parent[n])
        chosen[n] = chosen[p]
        if tree.infoset[p] >= 0 and int(tree.action[n]) == action:
            chosen[n, int(tree.player[p])] += 1
    returns[tree.terminals] -= cost * chosen[tree.terminals]
    return dataclasses.replace(tree, returns=returns)
