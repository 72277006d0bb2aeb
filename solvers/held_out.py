"""A solved policy scored on held-out samples: the same decisions, other LLM seeds.

A solved policy conditions on the sampled messages, which fresh samples do
not repeat, so it is carried over by what the solved and the evaluation trees
share: at a decision of player ``i`` with its own earlier actions ``h`` at
decision level ``l``, play the reach-weighted mean of the solved policy over
the solved tree's information sets with the same ``(i, l, h)``
(:func:`path_policy`). Its CFR-Gain on the evaluation tree, both profiles
scored on the fresh samples, is the held-out CFR-Gain (:func:`held_out_gain`);
the same mapped policy on the solved tree separates what the mapping loses
from what the samples gave. Part of the noise checks (:mod:`solvers.noise`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from runs.intervals import Interval, percentile_interval
from solvers.cfr_gain import cfr_gain
from solvers.policy import PolicyLike, TreePolicy, check_policy
from solvers.resampling import bootstrap_tree, sample_nodes
from solvers.tree import GameTree
from solvers.values import reach_probabilities

__all__ = ["HeldOut", "PathKey", "held_out_gain", "path_keys", "path_policy"]


@dataclasses.dataclass(frozen=True)
class HeldOut:
    """A solved policy scored on fresh samples (:func:`held_out_gain`).

    Attributes:
      cfr_gain: CFR-Gain of the mapped policy on the evaluation tree.
      ci95: Its seed-bootstrap 95 % interval over the evaluation tree's samples.
      in_sample_mapped: CFR-Gain of the same mapped policy on the solved tree.
      unmatched: Information sets of the evaluation tree without a counterpart
        (they play the baseline).
      infosets: Information sets of the evaluation tree.
    """

    cfr_gain: float
    ci95: Interval
    in_sample_mapped: float
    unmatched: int
    infosets: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "cfr_gain": self.cfr_gain,
            "ci95": list(self.ci95),
            "in_sample_mapped": self.in_sample_mapped,
            "unmatched_infosets": self.unmatched,
            "infosets": self.infosets,
        }


#: What a carried-over policy conditions on: (player, decision level, own earlier actions).
PathKey = tuple[int, int, tuple[int, ...]]


def path_keys(tree: GameTree) -> list[PathKey]:
    """Per information set, its (player, decision level, own earlier actions) key.

    Raises:
      ValueError: A node listed before its parent (trees are breadth-first).
    """
    own: list[tuple[tuple[int, ...], ...]] = [()] * tree.num_nodes
    level = np.zeros(tree.num_nodes, dtype=np.int64)
    is_dec = tree.infoset >= 0
    n_players = tree.num_players
    own[0] = tuple(() for _ in range(n_players))
    for n in range(1, tree.num_nodes):
        p = int(tree.parent[n])
        if p >= n:
            raise ValueError("path_keys: a node precedes its parent; build the tree breadth-first")
        level[n] = level[p] + int(is_dec[p])
        hist = own[p]
        if is_dec[p]:
            who = int(tree.player[p])
            hist = hist[:who] + (hist[who] + (int(tree.action[n]),),) + hist[who + 1 :]
        own[n] = hist
    keys: list[PathKey] = []
    for s in range(tree.num_infosets):
        node = int(tree.infoset_nodes[tree.infoset_node_ptr[s]])
        who = int(tree.player[node])
        keys.append((who, int(level[node]), own[node][who]))
    return keys


def path_policy(tree: GameTree, policy: PolicyLike) -> dict[PathKey, np.ndarray]:
    """The policy's reach-weighted mean per (player, level, own earlier actions).

    An information set weighs by the probability of reaching it when everybody
    plays ``policy``; a key reached with probability 0 gets the plain mean.
    """
    probs = check_policy(tree, policy, caller="path_policy")
    reach = reach_probabilities(tree, probs)
    ptr, nodes = tree.infoset_node_ptr, tree.infoset_nodes
    weight = np.array([reach[nodes[ptr[s] : ptr[s + 1]]].sum() for s in range(tree.num_infosets)])
    groups: dict[PathKey, list[int]] = {}
    for s, key in enumerate(path_keys(tree)):
        groups.setdefault(key, []).append(s)
    out: dict[PathKey, np.ndarray] = {}
    for key, sets in groups.items():
        w = weight[sets]
        rows = probs[sets]
        out[key] = (w @ rows) / w.sum() if w.sum() > 0 else rows.mean(axis=0)
    return out


def _apply_path_policy(
    tree: GameTree, dists: dict[PathKey, np.ndarray], baseline: np.ndarray
) -> tuple[TreePolicy, int]:
    probs = baseline.copy()
    unmatched = 0
    for s, key in enumerate(path_keys(tree)):
        d = dists.get(key)
        n = int(tree.infoset_num_actions[s])
        if d is None or d.shape[0] < n:
            unmatched += 1
            continue
        row = np.asarray(d[:n], dtype=float)
        total = row.sum()
        if total <= 0:
            unmatched += 1
            continue
        probs[s, :] = 0.0
        probs[s, :n] = row / total
    return TreePolicy(probs), unmatched


def held_out_gain(
    solved_tree: GameTree,
    policy: PolicyLike,
    eval_tree: GameTree,
    baseline: Callable[[GameTree], PolicyLike],
    *,
    replicates: int,
    rng: np.random.Generator,
) -> HeldOut:
    """CFR-Gain of ``policy`` carried to ``eval_tree`` by (player, level, own actions).

    Args:
      solved_tree: The tree ``policy`` was solved on.
      policy: The solved profile.
      eval_tree: The same decisions expanded with other LLM seeds.
      baseline: ``tree -> profile`` of the baseline (on both trees).
      replicates: Bootstrap replicates of the evaluation tree's samples for the
        interval (the policy fixed; 0: no interval).
      rng: The random stream.
    """
    dists = path_policy(solved_tree, policy)
    base_solved = check_policy(solved_tree, baseline(solved_tree), caller="held_out_gain")
    base_eval = check_policy(eval_tree, baseline(eval_tree), caller="held_out_gain")
    mapped_solved, _ = _apply_path_policy(solved_tree, dists, base_solved)
    mapped_eval, unmatched = _apply_path_policy(eval_tree, dists, base_eval)
    gain = cfr_gain(eval_tree, mapped_eval, base_eval).cfr_gain
    ci: Interval = (None, None)
    if replicates > 0:
        nodes = sample_nodes(eval_tree)
        reps = [
            cfr_gain(bootstrap_tree(eval_tree, rng, nodes), mapped_eval, base_eval).cfr_gain
            for _ in range(replicates)
        ]
        ci = percentile_interval(reps)
    return HeldOut(
        cfr_gain=float(gain),
        ci95=ci,
        in_sample_mapped=float(cfr_gain(solved_tree, mapped_solved, base_solved).cfr_gain),
        unmatched=unmatched,
        infosets=eval_tree.num_infosets,
    )
