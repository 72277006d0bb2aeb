"""Sequential Elo ratings (Elo 1978) of pairwise outcomes, and their dependence on order.

:func:`elo` applies ``R_a ← R_a + k·(s − E_a)``, ``E_a = 1 / (1 + 10^((R_b − R_a)/400))``
(and the mirror update for ``b``) in the order the outcomes are given; its result
depends on that order, and :func:`elo_spread` shows how much, over random orders of
the same games. :mod:`solvers.ratings` reports it beside Bradley–Terry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solvers.outcomes import Outcome, check_outcomes

__all__ = ["EloSpread", "elo", "elo_spread"]


def _check_k(k: float, where: str) -> None:
    if not (math.isfinite(k) and k > 0.0):
        raise ValueError(f"{where}: k must be a finite number > 0, got {k!r}; e.g. 16")


def _elo_run(
    n_agents: int, a: np.ndarray, b: np.ndarray, score: np.ndarray, k: float, initial: float
) -> np.ndarray:
    r = [initial] * n_agents
    for x, y, s in zip(a.tolist(), b.tolist(), score.tolist(), strict=True):
        expected = 1.0 / (1.0 + 10.0 ** ((r[y] - r[x]) / 400.0))
        delta = k * (s - expected)
        r[x] += delta
        r[y] -= delta
    return np.asarray(r)


def elo(
    agents: Sequence[str],
    outcomes: Sequence[Outcome],
    *,
    k: float = 16.0,
    initial: float = 1500.0,
) -> dict[str, float]:
    """Sequential Elo ratings (Elo 1978), updating after each outcome in the given order.

    For a game ``(a, b, s)``: ``E = 1 / (1 + 10^((R_b − R_a)/400))``, then
    ``R_a += k·(s − E)`` and ``R_b −= k·(s − E)``.

    Args:
      agents: Distinct agent names; the result keeps their order.
      outcomes: ``(a, b, score)`` triples, in playing order.
      k: The K-factor (> 0).
      initial: Every agent's starting rating.

    Returns:
      Agent -> final rating.
    """
    where = "elo"
    _check_k(k, where)
    checked = check_outcomes(agents, outcomes, where=where)
    r = _elo_run(len(checked.agents), checked.a, checked.b, checked.score, k, initial)
    return dict(zip(checked.agents, (float(v) for v in r), strict=True))


@dataclass(frozen=True)
class EloSpread:
    """Sequential Elo of one agent over random orders of the same games (:func:`elo_spread`).

    Attributes:
      mean: Mean final rating over the orders.
      low: 2.5th percentile.
      high: 97.5th percentile.
    """

    mean: float
    low: float
    high: float


def elo_spread(
    agents: Sequence[str],
    outcomes: Sequence[Outcome],
    *,
    permutations: int = 200,
    seed: int = 0,
    k: float = 16.0,
    initial: float = 1500.0,
) -> dict[str, EloSpread]:
    """How much sequential Elo depends on match order: ratings over random orders.

    Args:
      agents: Distinct agent names; the result keeps their order.
      outcomes: ``(a, b, score)`` triples.
      permutations: Number of random orders (≥ 1), drawn by
        ``numpy.random.default_rng(seed)``.
      seed: Seed of the generator.
      k: The K-factor.
      initial: Every agent's starting rating.

    Returns:
      Agent -> mean and 2.5/97.5 percentiles of its final Elo rating.
    """
    where = "elo_spread"
    if (
        isinstance(permutations, bool)
        or not isinstance(permutations, (int, np.integer))
        or permutations < 1
    ):
        raise ValueError(f"{where}: permutations must be an integer >= 1, got {permutations!r}")
    _check_k(k, where)
    checked = check_outcomes(agents, outcomes, where=where)
    rng = np.random.default_rng(seed)
    n_agents = len(checked.agents)
    runs = np.empty((int(permutations), n_agents))
    for p in range(int(permutations)):
        order = rng.permutation(len(checked.score))
        runs[p] = _elo_run(
            n_agents, checked.a[order], checked.b[order], checked.score[order], k, initial
        )
    mean = runs.mean(axis=0)
    low, high = np.percentile(runs, [2.5, 97.5], axis=0)
    return {
        name: EloSpread(float(mean[x]), float(low[x]), float(high[x]))
        for x, name in enumerate(checked.agents)
    }
