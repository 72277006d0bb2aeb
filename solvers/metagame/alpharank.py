"""α-Rank of a meta-game, with OpenSpiel's implementation.

:func:`alpha_rank` ranks the agents by α-Rank (Omidshafiei et al. 2019, "α-Rank:
Multi-agent evaluation by evolution", Scientific Reports 9:9937) with OpenSpiel's
implementation (:mod:`open_spiel.python.egt.alpharank`, single population, local
selection model): a Markov chain over monomorphic populations where a mutant ``r``
fixates in a population of ``s`` with a probability that grows with
``α·(payoff[r][s] − payoff[s][r])``; the agents' masses in its stationary distribution
are the ranking. α is swept over a grid and one α is chosen by OpenSpiel's rule (see
:func:`alpha_rank`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.metagame.game import MetaGame, _Matrix, _matrix
from solvers.writers import finite_or_none

logger = logging.getLogger(__name__)

#: The default α grid of :func:`alpha_rank`: ``0.01·2^k`` for k = 0..17 (0.01 to
#: 1310.72), the doubling steps of OpenSpiel's ``sweep_pi_vs_alpha`` from a fixed start.
#: Payoff differences are in [−1, 1], so the top of the grid is far into the large-α
#: regime α-Rank is defined by (and past where 64-bit floats overflow for a difference of 1).
DEFAULT_ALPHAS: tuple[float, ...] = tuple(0.01 * 2.0**k for k in range(18))

#: Tolerances for "π has converged" between consecutive grid points (OpenSpiel's defaults).
_RTOL, _ATOL = 1e-5, 1e-8


@dataclass(frozen=True)
class AlphaRankResult:
    """α-Rank over a grid of selection intensities (:func:`alpha_rank`).

    Attributes:
      agents: The agent names, in the meta-game's order.
      alphas: The α grid, increasing.
      pis: The stationary distribution at each grid α (masses in the agents' order), or
        None where OpenSpiel's computation failed (no unique stationary distribution in
        floating point, or an overflow).
      alpha: The chosen α (see :func:`alpha_rank` for the rule).
      pi: The stationary distribution at the chosen α.
      ranking: Agents by decreasing mass at the chosen α (ties in the agents' order).
      population: The population size m.
      converged: Whether π had converged at the chosen α (else the sweep ran out of
        usable grid points).
      fixation: ``fixation[s][r]``: probability that a single mutant of agent ``r``
        takes over a population of agent ``s``, at the chosen α (0 on the diagonal);
        the neutral value is ``1/population``.
    """

    agents: tuple[str, ...]
    alphas: tuple[float, ...]
    pis: tuple[tuple[float, ...] | None, ...]
    alpha: float
    pi: tuple[float, ...]
    ranking: tuple[str, ...]
    population: int
    converged: bool
    fixation: _Matrix

    def mass(self, agent: str) -> float:
        """The stationary mass of ``agent`` at the chosen α."""
        return self.pi[self.agents.index(agent)]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (NaN as None), for results files."""
        return dict(
            finite_or_none(
                {
                    "method": "alpha_rank (OpenSpiel, single population, local selection)",
                    "agents": list(self.agents),
                    "alphas": self.alphas,
                    "pis": [list(p) if p is not None else None for p in self.pis],
                    "alpha": self.alpha,
                    "pi": self.pi,
                    "ranking": self.ranking,
                    "population": self.population,
                    "converged": self.converged,
                    "fixation": self.fixation,
                }
            )
        )


def _stationary(
    payoff: np.ndarray, alpha: float, population: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """OpenSpiel's α-Rank at one α: (π, fixation probabilities), or None on failure."""
    from open_spiel.python.egt import alpharank  # lazily: it imports pyplot and absl

    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            rhos, _, pi, _, _ = alpharank.compute(
                [payoff], m=population, alpha=alpha, use_local_selection_model=True
            )
    except ValueError as err:  # not exactly one stationary distribution, or NaN entries
        logger.debug("alpha_rank: alpha=%g failed: %s", alpha, err)
        return None
    pi = np.asarray(pi, dtype=float)
    rhos = np.asarray(rhos, dtype=float)
    if not (np.all(np.isfinite(pi)) and np.all(np.isfinite(rhos)) and pi.min() > -1e-9):
        logger.debug("alpha_rank: alpha=%g gave a non-finite or negative distribution", alpha)
        return None
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum(), rhos


def _check_sweep(alphas: Sequence[float] | None, population: int, where: str) -> tuple[float, ...]:
    """The α grid (default :data:`DEFAULT_ALPHAS`), with ``alphas`` and ``population`` checked."""
    grid = tuple(float(a) for a in (DEFAULT_ALPHAS if alphas is None else alphas))
    if not grid or any(not (math.isfinite(a) and a > 0) for a in grid):
        raise ValueError(f"{where}: alphas must be finite positive numbers, got {list(grid)}")
    if any(b <= a for a, b in zip(grid, grid[1:], strict=False)):
        raise ValueError(f"{where}: alphas must be strictly increasing, got {list(grid)}")
    if (
        isinstance(population, bool)
        or not isinstance(population, (int, np.integer))
        or population < 2
    ):
        raise ValueError(f"{where}: population must be an integer >= 2, got {population!r}")
    return grid


def _sweep(
    payoff: np.ndarray, grid: Sequence[float], population: int, *, lazy: bool
) -> tuple[list[tuple[np.ndarray, np.ndarray] | None], int | None, bool]:
    """α-Rank up the grid: ``(results, chosen index or None, converged)`` (rule: :func:`alpha_rank`).

    With ``lazy`` the walk stops at the chosen α (the bootstrap needs only its π);
    otherwise every grid point is computed (the results list then has one per α).
    """
    results: list[tuple[np.ndarray, np.ndarray] | None] = []
    chosen: int | None = None
    converged = stopped = False
    for k, alpha in enumerate(grid):
        if stopped and lazy:
            break
        res = _stationary(payoff, alpha, population)
        results.append(res)
        if stopped:
            continue
        if res is None:
            stopped = True
            continue
        chosen = k
        prev = results[k - 1] if k > 0 else None
        if prev is not None and np.allclose(res[0], prev[0], rtol=_RTOL, atol=_ATOL):
            converged = stopped = True
    return results, chosen, converged


def alpha_rank(
    metagame: MetaGame,
    *,
    alphas: Sequence[float] | None = None,
    population: int = 50,
) -> AlphaRankResult:
    """α-Rank of the meta-game's agents, with OpenSpiel's ``alpharank.compute``.

    π is computed at every α of the grid. The reported α follows OpenSpiel's
    ``sweep_pi_vs_alpha``: walking up the grid, the first α whose π is close to the
    previous grid point's (``np.allclose``, rtol 1e-5, atol 1e-8: the ranking has
    settled); if π never settles, the last α before the first failure (the largest α
    before numerical trouble); and if nothing fails, the largest α of the grid.

    Args:
      metagame: The meta-game.
      alphas: Positive, strictly increasing selection intensities (default
        :data:`DEFAULT_ALPHAS`).
      population: The population size m (≥ 2; OpenSpiel's default 50).

    Returns:
      The :class:`AlphaRankResult`.
    """
    where = "alpha_rank"
    grid = _check_sweep(alphas, population, where)
    payoff = metagame.payoff_matrix()
    results, chosen, converged = _sweep(payoff, grid, int(population), lazy=False)
    if chosen is None:
        raise ValueError(
            f"{where}: OpenSpiel's alpha-rank failed at the smallest alpha {grid[0]}; "
            "pass a grid starting lower"
        )
    pi, rhos = results[chosen]  # type: ignore[misc]
    order = sorted(range(len(pi)), key=lambda x: (-round(float(pi[x]), 12), x))
    logger.debug("alpha_rank: chose alpha=%g (converged=%s)", grid[chosen], converged)
    return AlphaRankResult(
        agents=metagame.agents,
        alphas=grid,
        pis=tuple(tuple(float(v) for v in r[0]) if r is not None else None for r in results),
        alpha=grid[chosen],
        pi=tuple(float(v) for v in pi),
        ranking=tuple(metagame.agents[x] for x in order),
        population=int(population),
        converged=converged,
        fixation=_matrix(rhos),
    )
