"""Scoring the arena's role readings with proper scoring rules.

At every consultation every model gives, per living other player, a
distribution over roles (its one reading, :func:`games.werewolf.players.beliefs.belief_map`)
and a label that may abstain (:func:`gt_llm.opponents.identity_label`: a role
only when the evidence singled it out against the model's reference, its prior
with what is ruled out for certain; else ``unsure``). A :data:`Judgment` is ``(game, true role, label, reading)``, where
``game`` is the game's seed (unique within a pair; game i of every pair has
the same seed, hence the same dealt roles and seats). :func:`side_scores`
scores one observer side's judgments against the true roles:

* **Brier score** (multi-class): sum over roles of (p(role) - [role is true])^2,
  in [0, 2]; 0 is a certain right answer, the prior of a villager observer
  scores about 0.6.
* **Log-loss**: -ln p(true role), with p floored at :data:`PROB_FLOOR` so that a
  reading that rules out the truth counts as -ln 1e-6 = 13.8. ``zero_truth``
  counts those judgments apart: the true role given probability exactly 0 (or
  left out of the reading).
* **Intervals**: each game weighs the same: a score is the mean over games of
  the game's mean, with a Student-t 95 % interval over the n games,
  mean +- t(0.975, n - 1) * sd / sqrt(n) (sd with n - 1 in the divisor); n is
  written beside it (``ci95_n``) and there is no interval (None) for n < 2.
  With few games t is much wider than 1.96 (4.30 for n = 3).
* **Calibration**: every role probability 0 < p < 1 of every judgment, in ten
  equal bins of p, with the mean p and the observed frequency of the role in
  each bin. Probabilities of exactly 0 or 1 are a seat's certain facts, not
  forecasts; they are left out of the table and counted apart
  (``calibration_certain``): how many p = 1 and how many of those were on the
  true role, how many p = 0 and how many of those were on a role that was not
  true.
* **Label accuracy**: the share of labels that named a role (not ``unsure``)
  and named the true one, overall (``labelled``, ``label_accuracy``) and apart
  for *facts* -- labels whose role the reading gives probability exactly 1
  (``labelled_facts``, ``label_accuracy_facts``) -- and *inferences*, every
  other label (``labelled_inferences``, ``label_accuracy_inferences``).
* **Gap to the reference model** (``brier_gap``, ``log_loss_gap``): when the
  arena ran a model named :data:`REFERENCE_MODEL` (``bayes``, an exact
  Bayesian reading), every score (a model in a pair, an observer side, all
  roles or one true role) carries its Brier score and log-loss minus the
  reference's, on the reference's judgments of the same side (and true role)
  pooled over every pair it played. The reference's value at a seed is the
  mean over its pairs of its game mean at that seed (:func:`reference_scores`).
  The two models' judgments come from different seats, and on the werewolf
  side from different games, so :func:`score_gap` compares game means:

  - **paired** when at least two seeds have judgments of both: per seed s the
    difference d_s = model's game mean - reference's; the gap is the mean of
    d_s over those seeds (the difference of the two game-weighted means over
    the seeds in common; seeds where only one has judgments are left out),
    with the t interval of that mean (n = seeds in common, n - 1 degrees of
    freedom). A seed pairs the same deal of roles and seats, not the same
    play, so the pairing removes only the deal's share of the variance.
  - **Welch** otherwise (e.g. werewolf observers of two models that hold the
    werewolf side in games of opposite parity): the difference of the two
    game-weighted means over all their games, with Welch's interval
    +- t(0.975, df) * sqrt(s_m^2 / n_m + s_r^2 / n_r), df by
    Welch-Satterthwaite; no interval unless both have two games.

  ``method``, ``n`` and ``df`` say which was used. A negative gap: the model
  scores better (lower) than the reference. Without the reference in the
  run there is no gap (the fields are None and absent from the JSON).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from games.werewolf.arena.results import (
    CertainProbabilities,
    ProbabilityScore,
    ScoreGap,
    SideScores,
)
from gt_llm.opponents import UNSURE
from runs.intervals import Interval, mean_ci95, t_quantile, welch_half_width

__all__ = [
    "CALIBRATION_BINS",
    "CI_KIND",
    "PROB_FLOOR",
    "REFERENCE_MODEL",
    "GameScores",
    "Judgment",
    "brier_score",
    "calibration_table",
    "certain_probabilities",
    "game_scores",
    "is_fact",
    "label_accuracy",
    "log_loss",
    "mean_ci95",
    "probability_score",
    "reference_scores",
    "score_gap",
    "side_scores",
    "t_quantile",
]

#: The smallest probability log-loss reads (a 0 on the truth costs -ln 1e-6 = 13.8).
PROB_FLOOR = 1e-6
#: Equal-width bins of p in the calibration table.
CALIBRATION_BINS = 10
#: The model whose scores the others are compared with, when the arena ran it.
REFERENCE_MODEL = "bayes"
#: What :func:`mean_ci95` computes (``ProbabilityScore.ci95_kind``).
CI_KIND = "student_t"

#: One scored judgment: (game seed, true role, label, reading {role: p}).
Judgment = tuple[int, str, str, Mapping[str, float]]
#: Per game seed, the game's mean (Brier score, log-loss).
GameScores = Mapping[int, tuple[float, float]]


def brier_score(distribution: Mapping[str, float], truth: str) -> float:
    """Sum over roles of (p(role) - [role == truth])^2 (the truth counts even if absent)."""
    total = sum((p - (h == truth)) ** 2 for h, p in distribution.items())
    return float(total + (0.0 if truth in distribution else 1.0))


def log_loss(distribution: Mapping[str, float], truth: str) -> float:
    """-ln p(truth), with p floored at :data:`PROB_FLOOR`."""
    return -math.log(max(float(distribution.get(truth, 0.0)), PROB_FLOOR))


def game_scores(judgments: Iterable[Judgment]) -> dict[int, tuple[float, float]]:
    """Per game seed, the mean Brier score and mean log-loss of its judgments."""
    per_game: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for game, truth, _label, dist in judgments:
        per_game[game].append((brier_score(dist, truth), log_loss(dist, truth)))
    return {
        g: (float(np.mean([b for b, _ in v])), float(np.mean([x for _, x in v])))
        for g, v in sorted(per_game.items())
    }


def reference_scores(groups: Iterable[Sequence[Judgment]]) -> dict[int, tuple[float, float]]:
    """The reference model's game means per seed, each group (a pair's games) weighing the same.

    Args:
      groups: The reference's judgments, one sequence per pair it played (a
        seed appears once in a pair, perhaps in several pairs).

    Returns:
      Per seed, the mean over the groups that have it of their game means.
    """
    per_seed: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for group in groups:
        for seed, scores in game_scores(group).items():
            per_seed[seed].append(scores)
    return {
        s: (float(np.mean([b for b, _ in v])), float(np.mean([x for _, x in v])))
        for s, v in sorted(per_seed.items())
    }


def _welch(model: Sequence[float], reference: Sequence[float]) -> tuple[Interval, float | None]:
    """Welch's 95 % interval as offsets from the difference of means, and its df.

    ``((None, None), None)`` unless both have at least two values.
    """
    nm, nr = len(model), len(reference)
    if nm < 2 or nr < 2:
        return (None, None), None
    welch = welch_half_width(float(np.var(model, ddof=1)), nm, float(np.var(reference, ddof=1)), nr)
    assert welch is not None  # both have two values
    half, df = welch
    return (-half, half), df


def score_gap(
    model: Mapping[int, float],
    reference: Mapping[int, float],
    name: str = REFERENCE_MODEL,
) -> ScoreGap | None:
    """Model minus reference, paired by seed when possible, else Welch (module docstring).

    Args:
      model: Per seed, the model's game mean.
      reference: Per seed, the reference's game mean.
      name: The reference model's name.

    Returns:
      The gap with its interval; None when either has no game.
    """
    if not model or not reference:
        return None
    common = sorted(set(model) & set(reference))
    if len(common) >= 2:
        diffs = [model[s] - reference[s] for s in common]
        mean_diff, paired_ci = mean_ci95(diffs)
        n = len(common)
        return ScoreGap(name, mean_diff, paired_ci, "paired", n, n, float(n - 1))
    xm, xr = list(model.values()), list(reference.values())
    gap = float(np.mean(xm)) - float(np.mean(xr))
    (lo, hi), df = _welch(xm, xr)
    ci: Interval = (None, None) if lo is None or hi is None else (gap + lo, gap + hi)
    return ScoreGap(name, gap, ci, "welch", len(xm), len(xr), df)


def is_fact(label: str, distribution: Mapping[str, float]) -> bool:
    """Whether a label names a role the reading gives probability exactly 1 (a certain fact)."""
    return label != UNSURE and float(distribution.get(label, 0.0)) == 1.0


def label_accuracy(judgments: Iterable[Judgment]) -> tuple[int, float | None]:
    """``(labels that named a role, share of them naming the true role)`` (None without one)."""
    hits = [truth == label for _, truth, label, _ in judgments if label != UNSURE]
    return len(hits), (float(np.mean(hits)) if hits else None)


def probability_score(
    judgments: Sequence[Judgment],
    reference: GameScores | None = None,
    *,
    reference_name: str = REFERENCE_MODEL,
) -> ProbabilityScore:
    """Brier score and log-loss (game means, t intervals over games) and label accuracy.

    Args:
      judgments: The judgments scored.
      reference: The reference model's game means per seed (:func:`reference_scores`)
        of the same side and true role; None: no gap.
      reference_name: The reference model's name.
    """
    per_game = game_scores(judgments)
    brier, brier_ci = mean_ci95([b for b, _ in per_game.values()])
    loss, loss_ci = mean_ci95([x for _, x in per_game.values()])
    labelled, accuracy = label_accuracy(judgments)
    facts = [j for j in judgments if is_fact(j[2], j[3])]
    inferences = [j for j in judgments if j[2] != UNSURE and not is_fact(j[2], j[3])]
    n_facts, acc_facts = label_accuracy(facts)
    n_inferences, acc_inferences = label_accuracy(inferences)
    gaps: tuple[ScoreGap | None, ScoreGap | None] = (None, None)
    if reference is not None:
        gaps = (
            score_gap(
                {g: b for g, (b, _) in per_game.items()},
                {g: b for g, (b, _) in reference.items()},
                reference_name,
            ),
            score_gap(
                {g: x for g, (_, x) in per_game.items()},
                {g: x for g, (_, x) in reference.items()},
                reference_name,
            ),
        )
    return ProbabilityScore(
        n=len(judgments),
        games=len(per_game),
        brier=brier,
        brier_ci95=brier_ci,
        log_loss=loss,
        log_loss_ci95=loss_ci,
        zero_truth=sum(float(d.get(t, 0.0)) == 0.0 for _, t, _, d in judgments),
        labelled=labelled,
        label_accuracy=accuracy,
        ci95_n=len(per_game),
        ci95_kind=CI_KIND,
        labelled_facts=n_facts,
        label_accuracy_facts=acc_facts,
        labelled_inferences=n_inferences,
        label_accuracy_inferences=acc_inferences,
        brier_gap=gaps[0],
        log_loss_gap=gaps[1],
    )


def calibration_table(
    judgments: Iterable[Judgment], bins: int = CALIBRATION_BINS
) -> tuple[tuple[float, float, float, float, int], ...]:
    """``(low, high, mean p, observed frequency, n)`` per non-empty bin of every role's p.

    Only uncertain probabilities (0 < p < 1) enter; :func:`certain_probabilities`
    counts the others.
    """
    ps: list[list[float]] = [[] for _ in range(bins)]
    hits: list[list[float]] = [[] for _ in range(bins)]
    for _, truth, _, dist in judgments:
        for h, p in dist.items():
            p = float(p)
            if not 0.0 < p < 1.0:
                continue
            i = min(int(p * bins), bins - 1)
            ps[i].append(p)
            hits[i].append(float(h == truth))
    return tuple(
        (i / bins, (i + 1) / bins, float(np.mean(ps[i])), float(np.mean(hits[i])), len(ps[i]))
        for i in range(bins)
        if ps[i]
    )


def certain_probabilities(judgments: Iterable[Judgment]) -> CertainProbabilities:
    """The role probabilities of exactly 1 and 0, and how many were right.

    A p = 1 is right on the true role; a p = 0 is right on a role that was not true.
    """
    ones = ones_right = zeros = zeros_right = 0
    for _, truth, _, dist in judgments:
        for h, p in dist.items():
            if float(p) == 1.0:
                ones += 1
                ones_right += h == truth
            elif float(p) == 0.0:
                zeros += 1
                zeros_right += h != truth
    return CertainProbabilities(ones, ones_right, zeros, zeros_right)


def side_scores(
    judgments: Sequence[Judgment],
    reference: Sequence[Sequence[Judgment]] | None = None,
    *,
    reference_name: str = REFERENCE_MODEL,
) -> SideScores:
    """Overall, per true role, and calibration scores of one observer side's judgments.

    Args:
      judgments: The side's judgments.
      reference: The reference model's judgments of the same side, one sequence
        per pair it played (:func:`reference_scores`); None: no gaps.
      reference_name: The reference model's name.
    """
    by_role: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_role[j[1]].append(j)

    def ref(role: str | None) -> GameScores | None:
        if reference is None:
            return None
        return reference_scores(
            [[j for j in group if role is None or j[1] == role] for group in reference]
        )

    return SideScores(
        overall=probability_score(judgments, ref(None), reference_name=reference_name),
        by_role={
            r: probability_score(v, ref(r), reference_name=reference_name)
            for r, v in sorted(by_role.items())
        },
        calibration=calibration_table(judgments),
        calibration_certain=certain_probabilities(judgments),
    )
