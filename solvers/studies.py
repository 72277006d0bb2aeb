"""Studies over solved game trees: ESS iteration, level strategies, generalisation, whole game.

Game-independent parts of the belief-revision experiment (Lindström et al.)
and of the studies beyond it, for any family of subgame trees:

* :func:`first_ess_iteration` / :func:`ess_iterations` — the first recorded
  CFR iteration at which CFR-Gain exceeds NashConv (an approximate
  evolutionarily-stable-strategy point, after the paper); :func:`final_metrics`
  — mean and std over trees at the last iteration;
* :func:`decision_levels`, :func:`level_distributions`, :func:`mapped_policy`
  — a tree policy summarised as an action distribution per decision level
  (reach-weighted under that policy), and played back on another tree;
* :func:`generalisation_study` — each subgame's strategy, mapped by level,
  played in every other subgame: its CFR-Gain there;
* :func:`whole_game_study` — CFR on the whole game (a chance node over the
  subgames) against the profile assembled from per-subgame solutions.

Functions return frozen dataclasses; ``to_dict()`` gives the JSON-ready form
the experiment summaries store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from runs.intervals import mean_ci95
from solvers.best_response import nash_conv
from solvers.cfr import CFRSolver
from solvers.cfr_gain import cfr_gain
from solvers.policy import TreePolicy
from solvers.values import reach_probabilities

if TYPE_CHECKING:
    from solvers.curve_data import Curves
    from solvers.game_tree import GameTree

__all__ = [
    "GeneralisationResult",
    "WholeGameResult",
    "decision_levels",
    "ess_iterations",
    "final_metrics",
    "first_ess_iteration",
    "generalisation_study",
    "level_distributions",
    "mapped_policy",
    "whole_game_study",
]

#: A baseline policy per tree (e.g. "always the default LLM action").
Baseline = Callable[["GameTree"], TreePolicy]


def first_ess_iteration(iterations: np.ndarray, gain: np.ndarray, nash: np.ndarray) -> int | None:
    """First recorded iteration with CFR-Gain > NashConv, or None."""
    hit = np.nonzero(np.asarray(gain) > np.asarray(nash))[0]
    return int(np.asarray(iterations)[hit[0]]) if hit.size else None


def ess_iterations(curves: Curves) -> list[int | None]:
    """Per tree of ``curves``, the first recorded iteration with CFR-Gain > NashConv."""
    return [
        first_ess_iteration(curves.iterations, curves.cfr_gain[t], curves.nash_conv[t])
        for t in range(curves.num_trees)
    ]


def final_metrics(curves: Curves) -> dict[str, Any]:
    """NashConv and CFR-Gain over trees at the last recorded iteration.

    Each with its mean, its Student-t 95 % interval over the ``n`` trees
    (:func:`runs.intervals.mean_ci95`; None for one tree) and the trees'
    standard deviation (ddof = 0, a spread, not an interval).
    """
    out: dict[str, Any] = {"iteration": int(curves.iterations[-1]), "n": curves.num_trees}
    for metric in ("nash_conv", "cfr_gain"):
        values = getattr(curves, metric)[:, -1]
        mean, (lo, hi) = mean_ci95(values)
        out[f"{metric}_mean"] = mean
        out[f"{metric}_ci95"] = [lo, hi]
        out[f"{metric}_std"] = float(values.std())
    return out


def decision_levels(tree: GameTree) -> np.ndarray:
    """Per node, its number of decision ancestors (0 for the first decision)."""
    levels = np.zeros(tree.num_nodes, dtype=np.int64)
    is_dec = tree.infoset >= 0
    for n in range(1, tree.num_nodes):  # parents precede children (breadth-first)
        p = tree.parent[n]
        levels[n] = levels[p] + int(is_dec[p])
    return levels


def level_distributions(
    tree: GameTree, policy: TreePolicy, *, num_actions: int | None = None
) -> dict[int, np.ndarray]:
    """Action distribution per decision level, weighted by reach under ``policy``.

    Args:
      tree: The tree.
      policy: A policy on it.
      num_actions: Actions kept (default ``tree.max_actions``).

    Returns:
      ``{level: distribution}``; a level reached with probability 0 gets the
      plain mean of its information sets' distributions.
    """
    k = tree.max_actions if num_actions is None else num_actions
    reach = reach_probabilities(tree, policy)
    dec = np.nonzero(tree.infoset >= 0)[0]
    levels = decision_levels(tree)
    out: dict[int, np.ndarray] = {}
    for lv in np.unique(levels[dec]):
        nodes = dec[levels[dec] == lv]
        w = reach[nodes]
        probs = policy.probs[tree.infoset[nodes], :k]
        total = w.sum()
        out[int(lv)] = (w @ probs) / total if total > 0 else probs.mean(axis=0)
    return out


def mapped_policy(
    tree: GameTree, dists: dict[int, np.ndarray], *, default_action: int
) -> TreePolicy:
    """Plays ``dists[level]`` at every information set of that level.

    Args:
      tree: The tree to play on.
      dists: Distribution per decision level (from :func:`level_distributions`).
      default_action: Played with probability 1 at levels ``dists`` lacks.
    """
    levels = decision_levels(tree)
    probs = np.zeros((tree.num_infosets, tree.max_actions))
    for s in range(tree.num_infosets):
        node = tree.infoset_nodes[tree.infoset_node_ptr[s]]
        d = dists.get(int(levels[node]))
        if d is None:
            probs[s, default_action] = 1.0
        else:
            probs[s, : len(d)] = d
    return TreePolicy(probs)


@dataclasses.dataclass(frozen=True)
class GeneralisationResult:
    """CFR-Gain of each subgame's strategy on every subgame.

    Attributes:
      matrix: ``matrix[i, j]`` — strategy of subgame ``i`` (mapped by level
        when ``i != j``) played in subgame ``j``.
      own_gain: The diagonal.
      transfer_gain_mean: Per strategy, its mean CFR-Gain on the other subgames.
      transfer_positive_fraction: Per strategy, the fraction of other subgames
        where its CFR-Gain is positive.
    """

    matrix: np.ndarray
    own_gain: np.ndarray
    transfer_gain_mean: np.ndarray
    transfer_positive_fraction: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        n = self.matrix.shape[0]
        return {
            "own_gain": self.own_gain.tolist(),
            "transfer_gain_mean": self.transfer_gain_mean.tolist(),
            "transfer_positive_fraction": self.transfer_positive_fraction.tolist(),
            "summary": {
                "own_gain_mean": float(np.mean(self.own_gain)),
                "transfer_gain_mean": float(np.nanmean(self.transfer_gain_mean)) if n > 1 else None,
                "transfer_gain_std": float(np.nanstd(self.transfer_gain_mean)) if n > 1 else None,
                "transfer_positive_fraction": float(np.nanmean(self.transfer_positive_fraction))
                if n > 1
                else None,
            },
            "matrix": self.matrix.tolist(),
        }


def generalisation_study(
    trees: Sequence[GameTree],
    policies: Sequence[TreePolicy],
    baseline: Baseline,
    *,
    default_action: int,
    num_actions: int | None = None,
) -> GeneralisationResult:
    """CFR-Gain of each subgame's strategy on its own and on every other subgame.

    Args:
      trees: The subgame trees.
      policies: One solved policy per tree.
      baseline: The baseline policy of a tree (CFR-Gain is measured against it).
      default_action: Played at levels a strategy has no distribution for.
      num_actions: Actions kept per level (default each tree's ``max_actions``).
    """
    if len(trees) != len(policies) or not trees:
        raise ValueError(
            "generalisation_study: give one policy per tree (and at least one tree), "
            f"got {len(trees)} trees and {len(policies)} policies"
        )
    n = len(trees)
    gains = np.full((n, n), np.nan)
    baselines = [baseline(t) for t in trees]
    dists = [
        level_distributions(t, p, num_actions=num_actions)
        for t, p in zip(trees, policies, strict=True)
    ]
    for i in range(n):
        for j in range(n):
            pol = (
                policies[i]
                if i == j
                else mapped_policy(trees[j], dists[i], default_action=default_action)
            )
            gains[i, j] = cfr_gain(trees[j], pol, baselines[j]).cfr_gain
    off = ~np.eye(n, dtype=bool)
    transfer = np.array([gains[i][off[i]].mean() if n > 1 else np.nan for i in range(n)])
    positive = np.array([(gains[i][off[i]] > 0).mean() if n > 1 else np.nan for i in range(n)])
    return GeneralisationResult(
        matrix=gains,
        own_gain=np.diag(gains).copy(),
        transfer_gain_mean=transfer,
        transfer_positive_fraction=positive,
    )


@dataclasses.dataclass(frozen=True)
class WholeGameResult:
    """The whole game solved by CFR against the assembled per-subgame solutions."""

    iterations: int
    nodes: int
    infosets: int
    infosets_shared_across_subgames: int
    whole_nash_conv: float
    whole_cfr_gain: float
    assembled_nash_conv: float
    assembled_cfr_gain: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "iterations": self.iterations,
            "nodes": self.nodes,
            "infosets": self.infosets,
            "infosets_shared_across_subgames": self.infosets_shared_across_subgames,
            "whole_game_cfr": {
                "nash_conv": self.whole_nash_conv,
                "cfr_gain": self.whole_cfr_gain,
            },
            "per_subgame_cfr_assembled": {
                "nash_conv": self.assembled_nash_conv,
                "cfr_gain": self.assembled_cfr_gain,
            },
        }


def whole_game_study(
    tree: GameTree,
    subgame_trees: Sequence[GameTree],
    policies: Sequence[TreePolicy],
    baseline: Baseline,
    *,
    iterations: int,
    cfr_variant: str = "cfr",
) -> WholeGameResult:
    """Solves the whole game and compares with the assembled per-subgame solutions.

    Args:
      tree: The whole game (a chance node over the subgames; its information
        sets are those of the subgames, keyed by the same strings).
      subgame_trees: The subgame trees.
      policies: One solved policy per subgame tree.
      baseline: The baseline policy of a tree.
      iterations: CFR iterations on the whole game.
      cfr_variant: CFR variant for :class:`solvers.CFRSolver`.
    """
    if len(subgame_trees) != len(policies):
        raise ValueError(
            f"whole_game_study: give one policy per subgame tree, got {len(subgame_trees)} "
            f"trees and {len(policies)} policies"
        )
    whole = CFRSolver(tree, variant=cfr_variant).run(iterations).average_policy()
    base = baseline(tree)
    # The per-subgame profile: each information set takes the policy of the subgame it
    # comes from (an information set shared by two subgames takes the first).
    assembled = np.zeros((tree.num_infosets, tree.max_actions))
    filled = np.zeros(tree.num_infosets, dtype=bool)
    shared = 0
    for sub, pol in zip(subgame_trees, policies, strict=True):
        for s, key in enumerate(sub.infoset_keys):
            w = tree.key_to_infoset[key]
            if filled[w]:
                shared += 1
                continue
            assembled[w] = pol.probs[s]
            filled[w] = True
    assembled_policy = TreePolicy(assembled)
    return WholeGameResult(
        iterations=iterations,
        nodes=tree.num_nodes,
        infosets=tree.num_infosets,
        infosets_shared_across_subgames=shared,
        whole_nash_conv=nash_conv(tree, whole).nash_conv,
        whole_cfr_gain=cfr_gain(tree, whole, base).cfr_gain,
        assembled_nash_conv=nash_conv(tree, assembled_policy).nash_conv,
        assembled_cfr_gain=cfr_gain(tree, assembled_policy, base).cfr_gain,
    )
