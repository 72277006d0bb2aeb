"""Is a solved tree's CFR-Gain above noise? A label null, a seed bootstrap and held-out samples.

A chat game's tree is built from a few sampled answers per decision (the LLM
seeds are chance nodes), and CFR is solved and scored on those same samples,
so its CFR-Gain partly fits their noise. Three checks, each per tree:

* **Label null** (:func:`label_permutation_test`). Under the null hypothesis
  that the labels of the actions (the tones) do not matter, the actions of an
  information set are exchangeable: relabelling them by a random permutation
  at every information set gives a tree as likely as the observed one. The
  relabelled tree is isomorphic to the observed one, so CFR re-solved on it
  plays the relabelled average policy (CFR's updates treat actions alike; a
  test checks it), and the one thing that changes is which action the
  baseline ("any") stands on. The null CFR-Gain of a permutation is therefore
  the gain of the observed CFR policy over the *permuted baseline*; the
  p-value is ``(1 + #{null >= observed}) / (1 + B)``
  (:func:`runs.intervals.permutation_p_value`). NashConv does not depend on
  action labels, so this null leaves it unchanged: its noise is the
  bootstrap's.
* **Seed bootstrap** (:func:`seed_bootstrap`). Each chance node with equally
  likely outcomes (an LLM seed, or a root drawn from many) is a sample; a
  replicate draws its outcomes again with replacement (multinomial counts as
  the new probabilities, Efron's bootstrap applied at every such node), re-solves
  CFR for the same iterations and records NashConv and CFR-Gain. The 2.5 and
  97.5 percentiles are their intervals. Chance nodes with unequal
  probabilities are a model's stated probabilities, not samples, and are kept.
* **Held-out samples** (:func:`solvers.held_out.held_out_gain`). The same decision structure
  expanded with LLM seeds not used for solving gives an evaluation tree. A
  solved policy conditions on the sampled messages, which the fresh samples
  do not repeat, so it is carried over by what both trees share: at a decision
  of player ``i`` with its own earlier actions ``h`` at decision level ``l``,
  play the reach-weighted mean of the solved policy over the solved tree's
  information sets with the same ``(i, l, h)`` (:func:`solvers.held_out.path_policy`). Its
  CFR-Gain on the evaluation tree, both profiles scored on the fresh samples,
  is the held-out CFR-Gain; the same mapped policy on the solved tree
  separates what the mapping loses from what the samples gave.

Over the trees of a study, :func:`study_noise` counts the trees above noise
with Benjamini-Hochberg false-discovery control at level ``q``
(:func:`runs.intervals.benjamini_hochberg`), gives Student-t intervals of
the means, and the null distribution of the mean CFR-Gain (one value per
permutation: the mean over trees of each tree's permuted gain), drawn as a
band in the curves' figure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runs.intervals import (
    TIE_TOLERANCE,
    Interval,
    benjamini_hochberg,
    mean_ci95,
    percentile_interval,
    permutation_p_value,
)
from solvers.best_response import nash_conv
from solvers.cfr import CFRSolver
from solvers.cfr_gain import cfr_gain
from solvers.held_out import HeldOut, held_out_gain
from solvers.policy import PolicyLike, check_policy
from solvers.resampling import bootstrap_tree, sample_nodes
from solvers.tree import CHANCE, GameTree

__all__ = [
    "NoiseSettings",
    "StudyNoise",
    "TreeNoise",
    "label_permutation_test",
    "permuted_baseline",
    "random_relabelling",
    "relabel_actions",
    "seed_bootstrap",
    "study_noise",
    "tree_held_out",
    "tree_noise",
]


@dataclasses.dataclass(frozen=True)
class NoiseSettings:
    """How much resampling a study does.

    Attributes:
      permutations: Label permutations per tree (0: no null).
      bootstrap: Seed-bootstrap replicates per tree, each re-solved (0: none).
      q: False-discovery rate of the "above noise" count.
      seed: Seeds every tree's random streams (with the tree's index).
    """

    permutations: int = 999
    bootstrap: int = 200
    q: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        if self.permutations < 0 or self.bootstrap < 0:
            raise ValueError(
                "NoiseSettings: permutations and bootstrap must be >= 0 "
                f"(got {self.permutations}, {self.bootstrap}); 0 turns one off"
            )
        if not 0.0 < self.q < 1.0:
            raise ValueError(f"NoiseSettings: q must be in (0, 1), got {self.q}")


@dataclasses.dataclass(frozen=True, eq=False)
class TreeNoise:
    """One tree's CFR-Gain and NashConv beside their noise.

    Attributes:
      name: The tree's label.
      cfr_gain: In-sample CFR-Gain of the solved policy.
      nash_conv: In-sample NashConv of the solved policy.
      p_value: Label-permutation p-value of ``cfr_gain`` (None without permutations).
      null: The permuted CFR-Gains (empty without permutations).
      cfr_gain_ci95: Seed-bootstrap interval of CFR-Gain (re-solved per replicate).
      nash_conv_ci95: Seed-bootstrap interval of NashConv.
      held_out: The held-out evaluation, when an evaluation tree was given.
    """

    name: str
    cfr_gain: float
    nash_conv: float
    p_value: float | None
    null: np.ndarray
    cfr_gain_ci95: Interval
    nash_conv_ci95: Interval
    held_out: HeldOut | None = None

    def to_dict(self) -> dict[str, Any]:
        null = self.null
        return {
            "tree": self.name,
            "cfr_gain": self.cfr_gain,
            "cfr_gain_ci95": list(self.cfr_gain_ci95),
            "nash_conv": self.nash_conv,
            "nash_conv_ci95": list(self.nash_conv_ci95),
            "p_value": self.p_value,
            "null_cfr_gain": (
                {
                    "permutations": int(null.size),
                    "median": float(np.median(null)),
                    "q05": float(np.percentile(null, 5)),
                    "q95": float(np.percentile(null, 95)),
                }
                if null.size
                else None
            ),
            "held_out": self.held_out.to_dict() if self.held_out is not None else None,
        }


def _mean_entry(values: Sequence[float]) -> dict[str, Any]:
    mean, (lo, hi) = mean_ci95(values)
    return {"mean": mean, "ci95": [lo, hi], "n": len(values)}


@dataclasses.dataclass(frozen=True, eq=False)
class StudyNoise:
    """The trees of one study (a variant, a day study) beside their noise.

    Attributes:
      trees: One :class:`TreeNoise` per tree.
      settings: The resampling used.
      above_noise: Per tree, whether it is a discovery at ``settings.q``
        (Benjamini-Hochberg over the trees' p-values); empty without permutations.
      mean_null: The mean over trees of each permutation's CFR-Gain (the null of
        the mean CFR-Gain; empty without permutations).
    """

    trees: tuple[TreeNoise, ...]
    settings: NoiseSettings
    above_noise: np.ndarray
    mean_null: np.ndarray

    @property
    def mean_p_value(self) -> float | None:
        """Permutation p-value of the mean CFR-Gain over trees."""
        if not self.mean_null.size:
            return None
        return permutation_p_value(float(np.mean([t.cfr_gain for t in self.trees])), self.mean_null)

    def to_dict(self) -> dict[str, Any]:
        gains = [t.cfr_gain for t in self.trees]
        held = [t.held_out for t in self.trees if t.held_out is not None]
        out: dict[str, Any] = {
            "permutations": self.settings.permutations,
            "bootstrap": self.settings.bootstrap,
            "q": self.settings.q,
            "cfr_gain": _mean_entry(gains),
            "nash_conv": _mean_entry([t.nash_conv for t in self.trees]),
            "held_out_cfr_gain": _mean_entry([h.cfr_gain for h in held]) if held else None,
            "in_sample_mapped_cfr_gain": (
                _mean_entry([h.in_sample_mapped for h in held]) if held else None
            ),
            "above_noise": (
                {
                    "count": int(self.above_noise.sum()),
                    "of": len(self.trees),
                    "q": self.settings.q,
                    "trees": [
                        t.name for t, a in zip(self.trees, self.above_noise, strict=True) if a
                    ],
                }
                if self.above_noise.size
                else None
            ),
            "mean_cfr_gain_p_value": self.mean_p_value,
            # A baseline that relabelling cannot change (uniform) leaves the null at the
            # observed value: the test cannot tell anything apart, and says so.
            "null_degenerate": bool(
                self.above_noise.size and all(np.ptp(t.null) <= TIE_TOLERANCE for t in self.trees)
            ),
            "mean_null_cfr_gain": (
                {
                    "q05": float(np.percentile(self.mean_null, 5)),
                    "median": float(np.median(self.mean_null)),
                    "q95": float(np.percentile(self.mean_null, 95)),
                }
                if self.mean_null.size
                else None
            ),
            "per_tree": [t.to_dict() for t in self.trees],
        }
        return out


# --- the label null -----------------------------------------------------------------


def permuted_baseline(tree: GameTree, baseline: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``baseline`` with its actions relabelled by a random permutation at every information set.

    Args:
      tree: The tree.
      baseline: ``float[num_infosets, max_actions]`` probabilities.
      rng: The random stream.
    """
    out = np.zeros_like(baseline)
    num = tree.infoset_num_actions
    # Argsort of uniform keys gives a uniform permutation per row; padding sorts last.
    keys = rng.random(baseline.shape)
    keys[np.arange(baseline.shape[1])[None, :] >= num[:, None]] = np.inf
    perm = np.argsort(keys, axis=1)
    rows = np.arange(baseline.shape[0])[:, None]
    out[:, :] = baseline[rows, perm]
    return out


def label_permutation_test(
    tree: GameTree,
    policy: PolicyLike,
    baseline: PolicyLike,
    *,
    permutations: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray, float]:
    """CFR-Gain of ``policy`` over ``baseline``, its label-permutation null and p-value.

    Returns:
      ``(observed, null, p_value)``; ``null`` has ``permutations`` values.

    Raises:
      ValueError: ``permutations`` below 1, or a profile that does not fit the tree.
    """
    if permutations < 1:
        raise ValueError(f"label_permutation_test: permutations must be >= 1, got {permutations}")
    probs = check_policy(tree, policy, caller="label_permutation_test")
    base = check_policy(tree, baseline, caller="label_permutation_test", name="the baseline")
    observed = cfr_gain(tree, probs, base).cfr_gain
    null = np.array(
        [
            cfr_gain(tree, probs, permuted_baseline(tree, base, rng)).cfr_gain
            for _ in range(permutations)
        ]
    )
    return observed, null, permutation_p_value(observed, null)


def relabel_actions(tree: GameTree, perms: Sequence[np.ndarray]) -> GameTree:
    """``tree`` with action ``a`` of information set ``s`` renamed ``perms[s][a]``.

    What the label null assumes is as likely as the observed tree; the tests
    re-solve such trees to check that CFR plays the relabelled policy, and the
    calibration studies draw null trees with it.

    Args:
      tree: The tree (legal action ids ``0 .. k-1`` at every information set).
      perms: Per information set, a permutation of its legal action ids.

    Raises:
      ValueError: A permutation that does not match its information set's actions.
    """
    from solvers.builder import TreeBuilder
    from solvers.tree import DECISION

    for s in range(tree.num_infosets):
        legal = tree.infoset_actions[s, : tree.infoset_num_actions[s]]
        if sorted(int(a) for a in perms[s]) != sorted(int(a) for a in legal):
            raise ValueError(
                f"relabel_actions: permutation {list(perms[s])} of information set {s} is not "
                f"a permutation of its actions {list(legal)}"
            )
    b = TreeBuilder(tree.num_players, game_name=tree.game_name)
    stack: list[tuple[int, int | None, int | None, float | None]] = [(0, None, None, None)]
    while stack:
        node, parent, action, prob = stack.pop()
        kind = int(tree.kind[node])
        if kind == DECISION:
            s = int(tree.infoset[node])
            actions = [int(a) for a in tree.infoset_actions[s, : tree.infoset_num_actions[s]]]
            key = tree.infoset_keys[s]
            new = b.add_decision(
                int(tree.player[node]), key, actions, parent=parent, action=action, prob=prob
            )
        elif kind == CHANCE:
            new = b.add_chance(parent=parent, action=action, prob=prob)
        else:
            b.add_terminal(tree.returns[node], parent=parent, action=action, prob=prob)
            continue
        first = int(tree.first_child[node])
        for c in range(first + int(tree.num_children[node]) - 1, first - 1, -1):
            a = int(tree.action[c])
            if kind == DECISION:
                a = int(perms[int(tree.infoset[node])][a])
            stack.append((c, new, a, float(tree.chance_prob[c]) if kind == CHANCE else None))
    return b.build()


def random_relabelling(tree: GameTree, rng: np.random.Generator) -> list[np.ndarray]:
    """A uniformly random permutation of the legal actions at every information set."""
    return [
        rng.permutation(tree.infoset_actions[s, : tree.infoset_num_actions[s]])
        for s in range(tree.num_infosets)
    ]


# --- the seed bootstrap ---------------------------------------------------------------


def seed_bootstrap(
    tree: GameTree,
    baseline: PolicyLike,
    *,
    iterations: int,
    variant: str = "cfr",
    replicates: int,
    rng: np.random.Generator,
    nodes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """NashConv and CFR-Gain of CFR re-solved on bootstrap replicates of ``tree``.

    ``nodes`` are the tree's sample chance nodes (default: found here).

    Returns:
      ``(nash_conv, cfr_gain)`` arrays, one value per replicate.

    Raises:
      ValueError: ``replicates`` or ``iterations`` below 1.
    """
    if replicates < 1 or iterations < 1:
        raise ValueError(
            f"seed_bootstrap: replicates and iterations must be >= 1, got {replicates}, {iterations}"
        )
    base = check_policy(tree, baseline, caller="seed_bootstrap", name="the baseline")
    nodes = sample_nodes(tree) if nodes is None else nodes
    nc = np.empty(replicates)
    gain = np.empty(replicates)
    for r in range(replicates):
        rep = bootstrap_tree(tree, rng, nodes)
        solver = CFRSolver(rep, variant=variant).run(iterations)
        m = solver.evaluate(base)
        nc[r], gain[r] = m.nash_conv, m.cfr_gain
    return nc, gain


# --- per tree and per study --------------------------------------------------------------


def tree_noise(
    tree: GameTree,
    policy: PolicyLike,
    baseline: Callable[[GameTree], PolicyLike],
    *,
    iterations: int,
    variant: str = "cfr",
    settings: NoiseSettings,
    index: int = 0,
    name: str = "",
    eval_tree: GameTree | None = None,
) -> TreeNoise:
    """One tree's in-sample metrics, label null, seed bootstrap and held-out gain.

    Args:
      tree: The solved tree.
      policy: CFR's average policy on it after ``iterations``.
      baseline: ``tree -> profile`` CFR-Gain is measured against.
      iterations: The CFR iterations ``policy`` had (the bootstrap re-solves as many).
      variant: The CFR variant.
      settings: The resampling.
      index: The tree's index in its study (its random streams derive from it).
      name: The tree's label.
      eval_tree: The held-out evaluation tree, if any.
    """
    base = baseline(tree)
    streams = _streams(settings, index)
    nc = nash_conv(tree, policy).nash_conv
    null = np.empty(0)
    p_value = None
    if settings.permutations:
        observed, null, p_value = label_permutation_test(
            tree,
            policy,
            base,
            permutations=settings.permutations,
            rng=np.random.default_rng(streams[0]),
        )
    else:
        observed = cfr_gain(tree, policy, base).cfr_gain
    nc_ci: Interval = (None, None)
    gain_ci: Interval = (None, None)
    nodes = sample_nodes(tree)
    # With one seed per decision there is nothing to redraw: no interval rather than a zero-width one.
    if settings.bootstrap and nodes.size:
        ncs, gains = seed_bootstrap(
            tree,
            base,
            iterations=iterations,
            variant=variant,
            replicates=settings.bootstrap,
            rng=np.random.default_rng(streams[1]),
            nodes=nodes,
        )
        nc_ci, gain_ci = percentile_interval(ncs), percentile_interval(gains)
    held = None
    if eval_tree is not None:
        held = tree_held_out(tree, policy, eval_tree, baseline, settings=settings, index=index)
    return TreeNoise(
        name=name or str(index),
        cfr_gain=float(observed),
        nash_conv=float(nc),
        p_value=p_value,
        null=null,
        cfr_gain_ci95=gain_ci,
        nash_conv_ci95=nc_ci,
        held_out=held,
    )


def _streams(settings: NoiseSettings, index: int) -> list[np.random.SeedSequence]:
    """A tree's three random streams (null, bootstrap, held-out), from its index alone."""
    return np.random.SeedSequence([settings.seed, index]).spawn(3)


def tree_held_out(
    tree: GameTree,
    policy: PolicyLike,
    eval_tree: GameTree,
    baseline: Callable[[GameTree], PolicyLike],
    *,
    settings: NoiseSettings,
    index: int = 0,
) -> HeldOut:
    """The held-out part of :func:`tree_noise` alone, from the same random stream.

    ``dataclasses.replace(tree_noise(..., eval_tree=None), held_out=tree_held_out(...))``
    equals ``tree_noise(..., eval_tree=eval_tree)``: a caller can check a tree's
    in-sample noise while its held-out tree is still being built.
    """
    return held_out_gain(
        tree,
        policy,
        eval_tree,
        baseline,
        replicates=settings.bootstrap,
        rng=np.random.default_rng(_streams(settings, index)[2]),
    )


def study_noise(trees: Sequence[TreeNoise], settings: NoiseSettings) -> StudyNoise:
    """The study's discoveries (Benjamini-Hochberg at ``settings.q``) and the mean's null.

    Raises:
      ValueError: No trees.
    """
    if not trees:
        raise ValueError("study_noise: no trees")
    p_values = [t.p_value for t in trees if t.p_value is not None]
    above = np.zeros(0, dtype=bool)
    mean_null = np.empty(0)
    if p_values and len(p_values) == len(trees):
        above = benjamini_hochberg(p_values, settings.q)
        mean_null = np.mean(np.stack([t.null for t in trees]), axis=0)
    return StudyNoise(trees=tuple(trees), settings=settings, above_noise=above, mean_null=mean_null)
