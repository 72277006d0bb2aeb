"""α-Rank and Nash on cluster-bootstrap resamples of a tournament's games.

:func:`bootstrap_metagame` resamples clusters of games (the tournament's game seeds) and
recomputes α-Rank and Nash on each resample: the α-Rank masses and Nash weights are point
estimates of a noisy game, and their percentile intervals, how often each agent is on top
of α-Rank and how often it is in the Nash support say how much of them the games support.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.metagame.alpharank import _check_sweep, _sweep, alpha_rank
from solvers.metagame.game import _cell_sums, _constant_sum, empirical_metagame
from solvers.metagame.nash import _SUPPORT_TOL, _equilibria, nash
from solvers.outcomes import Outcome, check_outcomes
from solvers.writers import finite_or_none

logger = logging.getLogger(__name__)


#: Masses within this of the largest count as on top of α-Rank (exact ties: identical agents).
_TOP_TOL = 1e-9


@dataclass(frozen=True)
class AgentUncertainty:
    """One agent's α-Rank and Nash numbers over the resamples of :func:`bootstrap_metagame`.

    Attributes:
      agent: The agent's name.
      alpha_rank_mass: Its α-Rank mass on the full meta-game (the point estimate).
      alpha_rank_low: Lower end of the mass's percentile interval over resamples.
      alpha_rank_high: Upper end.
      alpha_rank_top: Share of resamples where its mass is the largest (within 1e-9:
        tied agents are each on top, so these shares can sum above 1).
      nash_weight: Its weight in the reported Nash equilibrium of the full meta-game.
      nash_low: Lower end of the weight's percentile interval over resamples (each
        resample's reported equilibrium: the unique one or the maximum-entropy one).
      nash_high: Upper end.
      nash_support: Share of resamples where it is in the support (some equilibrium
        plays it).
    """

    agent: str
    alpha_rank_mass: float
    alpha_rank_low: float
    alpha_rank_high: float
    alpha_rank_top: float
    nash_weight: float
    nash_low: float
    nash_high: float
    nash_support: float


@dataclass(frozen=True)
class MetaGameBootstrap:
    """α-Rank and Nash of a meta-game with cluster-bootstrap intervals (:func:`bootstrap_metagame`).

    Attributes:
      agents: The agent names, in the given order.
      rows: One :class:`AgentUncertainty` per agent, in that order.
      replicates: Number of resamples.
      seed: Seed of the resampling generator (``numpy.random.default_rng``).
      level: Confidence level of the percentile intervals.
      clusters: Number of clusters resampled.
      alpha_rank_settled: Share of resamples where α-Rank's sweep settled.
      alphas: The chosen α's smallest and largest value over resamples.
      nash_unique: Share of resamples whose Nash equilibrium is unique.
    """

    agents: tuple[str, ...]
    rows: tuple[AgentUncertainty, ...]
    replicates: int
    seed: int
    level: float
    clusters: int
    alpha_rank_settled: float
    alphas: tuple[float, float]
    nash_unique: float

    def row(self, agent: str) -> AgentUncertainty:
        """The row of ``agent`` (KeyError if unknown)."""
        for r in self.rows:
            if r.agent == agent:
                return r
        raise KeyError(agent)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (NaN as None), for results files."""
        return dict(
            finite_or_none(
                {
                    "method": "cluster bootstrap: clusters of games resampled with replacement, "
                    "alpha-Rank (same grid and rule) and Nash recomputed on every resample",
                    "replicates": self.replicates,
                    "seed": self.seed,
                    "level": self.level,
                    "clusters": self.clusters,
                    "alpha_rank_settled": self.alpha_rank_settled,
                    "alphas": list(self.alphas),
                    "nash_unique": self.nash_unique,
                    "agents": [
                        {k: getattr(r, k) for k in AgentUncertainty.__dataclass_fields__}
                        for r in self.rows
                    ],
                }
            )
        )


def bootstrap_metagame(
    agents: Sequence[str],
    outcomes: Sequence[Outcome],
    clusters: Sequence[Hashable],
    *,
    replicates: int = 200,
    seed: int = 0,
    level: float = 0.95,
    alphas: Sequence[float] | None = None,
    population: int = 50,
) -> MetaGameBootstrap:
    """α-Rank masses and Nash weights with percentile intervals from a cluster bootstrap.

    Each resample draws as many clusters as there are, with replacement
    (:func:`solvers.ratings.cluster_counts`, ``numpy.random.default_rng(seed)``), weights
    every game by how often its cluster was drawn, rebuilds the meta-game (weighted mean
    scores) and recomputes α-Rank (the grid and rule of :func:`alpha_rank`) and the Nash
    equilibrium (:func:`nash`'s reported one: unique, or maximum entropy). Games that
    share a cluster (in a tournament: a deal, played by every pair from both sides) are
    not independent, so they are resampled together.

    Args:
      agents: Distinct agent names (the meta-game's order).
      outcomes: ``(a, b, score)`` triples.
      clusters: Per outcome, its cluster's key (e.g. the game's seed). Every cluster
        must hold a game of every pair, so that every resample has every payoff.
      replicates: Number of resamples (≥ 1).
      seed: Seed of the resampling generator.
      level: Confidence level in (0, 1) of the intervals.
      alphas: α-Rank's grid (default :data:`DEFAULT_ALPHAS`).
      population: α-Rank's population size.

    Returns:
      The :class:`MetaGameBootstrap` (point estimates from the full meta-game beside it).
    """
    from solvers.ratings import cluster_counts, cluster_index

    where = "bootstrap_metagame"
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)):
        raise ValueError(f"{where}: replicates must be an integer >= 1, got {replicates!r}")
    if replicates < 1:
        raise ValueError(f"{where}: replicates must be an integer >= 1, got {replicates!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"{where}: level must be in (0, 1), got {level!r}; e.g. 0.95")
    grid = _check_sweep(alphas, population, where)
    full = empirical_metagame(agents, outcomes)
    checked = check_outcomes(agents, outcomes, where=where)
    game_cluster = cluster_index(clusters, len(outcomes), where)
    n, k = len(checked.agents), int(game_cluster.max()) + 1
    pair = np.minimum(checked.a, checked.b) * n + np.maximum(checked.a, checked.b)
    held = {(int(c), int(p)) for c, p in zip(game_cluster, pair, strict=True)}
    for x in range(n):
        for y in range(x + 1, n):
            lacking = [c for c in range(k) if (c, x * n + y) not in held]
            if lacking:
                key = next(
                    c for c, i in zip(clusters, game_cluster, strict=True) if i == lacking[0]
                )
                raise ValueError(
                    f"{where}: cluster {key!r} has no game between {checked.agents[x]!r} and "
                    f"{checked.agents[y]!r}; every cluster must hold every pair (e.g. one "
                    "game seed played by every pair)"
                )
    point_ar = alpha_rank(full, alphas=grid, population=population)
    point_ne = nash(full)

    counts = cluster_counts(k, int(replicates), np.random.default_rng(seed))
    masses = np.empty((int(replicates), n))
    weights = np.empty((int(replicates), n))
    settled, unique = np.zeros(int(replicates), bool), np.zeros(int(replicates), bool)
    chosen = np.empty(int(replicates))
    for b in range(int(replicates)):
        _, mean, _ = _cell_sums(checked, counts[b, game_cluster])
        payoff = _constant_sum(mean)
        results, c, settled[b] = _sweep(payoff, grid, int(population), lazy=True)
        if c is None:
            raise ValueError(
                f"{where}: OpenSpiel's alpha-rank failed at the smallest alpha {grid[0]} "
                f"on resample {b}; pass a grid starting lower"
            )
        masses[b], chosen[b] = results[c][0], grid[c]  # type: ignore[index]
        eq = _equilibria(payoff - 0.5, lows=False)
        weights[b], unique[b] = eq["strategy"], eq["unique"]
    q = (100 * (1.0 - level) / 2.0, 100 * (1.0 + level) / 2.0)
    ar_low, ar_high = np.percentile(masses, q, axis=0)
    ne_low, ne_high = np.percentile(weights, q, axis=0)
    top = (masses >= masses.max(axis=1, keepdims=True) - _TOP_TOL).mean(axis=0)
    in_support = (weights > _SUPPORT_TOL).mean(axis=0)
    rows = tuple(
        AgentUncertainty(
            agent=name,
            alpha_rank_mass=point_ar.pi[x],
            alpha_rank_low=float(ar_low[x]),
            alpha_rank_high=float(ar_high[x]),
            alpha_rank_top=float(top[x]),
            nash_weight=point_ne.strategy[x],
            nash_low=float(ne_low[x]),
            nash_high=float(ne_high[x]),
            nash_support=float(in_support[x]),
        )
        for x, name in enumerate(checked.agents)
    )
    logger.debug("%s: %d agents, %d clusters, %d resamples", where, n, k, replicates)
    return MetaGameBootstrap(
        agents=checked.agents,
        rows=rows,
        replicates=int(replicates),
        seed=int(seed),
        level=float(level),
        clusters=k,
        alpha_rank_settled=float(settled.mean()),
        alphas=(float(chosen.min()), float(chosen.max())),
        nash_unique=float(unique.mean()),
    )
