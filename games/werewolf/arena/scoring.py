"""Scoring the arena's role readings with proper scoring rules.

At every consultation every model gives, per living other player, a
distribution over roles (its one reading, :func:`games.werewolf.players.beliefs.belief_map`)
and a label that may abstain (:func:`gt_llm.opponents.identity_label`: a role
only when it rose at least :data:`gt_llm.opponents.IDENTITY_MARGIN` above the
model's reference, its prior with what is ruled out for certain; else
``unsure``). :func:`side_scores` scores them against the true roles:

* **Brier score** (multi-class): sum over roles of (p(role) - [role is true])^2,
  in [0, 2]; 0 is a certain right answer, the prior of a villager observer
  scores about 0.6.
* **Log-loss**: -ln p(true role), with p floored at :data:`PROB_FLOOR` so that a
  reading that rules out the truth counts as -ln 1e-6 = 13.8 (how often that
  happens is ``zero_truth``).
* Each game weighs the same: a score is the mean over games of the game's mean,
  with a normal 95 % interval over games (mean +- 1.96 sd / sqrt(games)).
* **Calibration**: every role probability of every judgment in ten equal bins
  of p, with the mean p and the observed frequency of the role in each bin.
* **Label accuracy**: the share of labels that named a role (not ``unsure``)
  and named the true one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from games.werewolf.arena.results import ProbabilityScore, SideScores
from gt_llm.opponents import UNSURE

__all__ = [
    "CALIBRATION_BINS",
    "PROB_FLOOR",
    "Judgment",
    "brier_score",
    "calibration_table",
    "log_loss",
    "mean_ci95",
    "probability_score",
    "side_scores",
]

#: The smallest probability log-loss reads (a 0 on the truth costs -ln 1e-6 = 13.8).
PROB_FLOOR = 1e-6
#: Equal-width bins of p in the calibration table.
CALIBRATION_BINS = 10

#: One scored judgment: (game, true role, label, reading {role: p}).
Judgment = tuple[int, str, str, Mapping[str, float]]


def brier_score(distribution: Mapping[str, float], truth: str) -> float:
    """Sum over roles of (p(role) - [role == truth])^2 (the truth counts even if absent)."""
    total = sum((p - (h == truth)) ** 2 for h, p in distribution.items())
    return float(total + (0.0 if truth in distribution else 1.0))


def log_loss(distribution: Mapping[str, float], truth: str) -> float:
    """-ln p(truth), with p floored at :data:`PROB_FLOOR`."""
    return -math.log(max(float(distribution.get(truth, 0.0)), PROB_FLOOR))


def mean_ci95(values: Sequence[float]) -> tuple[float, tuple[float | None, float | None]]:
    """The mean and its normal 95 % interval (None with fewer than two values)."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, (None, None)
    half = 1.96 * float(x.std(ddof=1)) / math.sqrt(len(x))
    return mean, (mean - half, mean + half)


def probability_score(judgments: Sequence[Judgment]) -> ProbabilityScore:
    """Brier score and log-loss (game means, intervals over games) and label accuracy."""
    per_game: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for game, truth, _label, dist in judgments:
        per_game[game].append((brier_score(dist, truth), log_loss(dist, truth)))
    briers = [float(np.mean([b for b, _ in v])) for _, v in sorted(per_game.items())]
    losses = [float(np.mean([x for _, x in v])) for _, v in sorted(per_game.items())]
    brier, brier_ci = mean_ci95(briers)
    loss, loss_ci = mean_ci95(losses)
    labelled = [(truth, label) for _, truth, label, _ in judgments if label != UNSURE]
    return ProbabilityScore(
        n=len(judgments),
        games=len(per_game),
        brier=brier,
        brier_ci95=brier_ci,
        log_loss=loss,
        log_loss_ci95=loss_ci,
        zero_truth=sum(float(d.get(t, 0.0)) <= 0.0 for _, t, _, d in judgments),
        labelled=len(labelled),
        label_accuracy=(float(np.mean([t == lab for t, lab in labelled])) if labelled else None),
    )


def calibration_table(
    judgments: Iterable[Judgment], bins: int = CALIBRATION_BINS
) -> tuple[tuple[float, float, float, float, int], ...]:
    """``(low, high, mean p, observed frequency, n)`` per non-empty bin of every role's p."""
    ps: list[list[float]] = [[] for _ in range(bins)]
    hits: list[list[float]] = [[] for _ in range(bins)]
    for _, truth, _, dist in judgments:
        for h, p in dist.items():
            i = min(int(p * bins), bins - 1)
            ps[i].append(float(p))
            hits[i].append(float(h == truth))
    return tuple(
        (i / bins, (i + 1) / bins, float(np.mean(ps[i])), float(np.mean(hits[i])), len(ps[i]))
        for i in range(bins)
        if ps[i]
    )


def side_scores(judgments: Sequence[Judgment]) -> SideScores:
    """Overall, per true role, and calibration scores of one observer side's judgments."""
    by_role: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_role[j[1]].append(j)
    return SideScores(
        overall=probability_score(judgments),
        by_role={r: probability_score(v) for r, v in sorted(by_role.items())},
        calibration=calibration_table(judgments),
    )
