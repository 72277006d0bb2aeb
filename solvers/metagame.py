"""The empirical meta-game of a tournament, and its solutions: α-Rank and Nash.

Empirical game-theoretic analysis (Wellman 2006) treats each agent as one pure strategy
of a *meta-game* whose payoffs are estimated from play: :func:`empirical_metagame` turns
:data:`~solvers.outcomes.Outcome` triples into the matrix ``payoff[i][j]`` = mean score of
agent ``i`` against agent ``j`` over their games in both seat orders. Scores are in
[0, 1] and a game's two scores sum to 1, so the meta-game is symmetric and
constant-sum: ``payoff[i][j] + payoff[j][i] = 1``, with ``payoff[i][i] = 0.5`` by
convention (an agent against itself is an even match; no self-play is measured).

:func:`alpha_rank` ranks the agents by α-Rank (Omidshafiei et al. 2019, "α-Rank:
Multi-agent evaluation by evolution", Scientific Reports 9:9937) with OpenSpiel's
implementation (:mod:`open_spiel.python.egt.alpharank`, single population, local
selection model): a Markov chain over monomorphic populations where a mutant ``r``
fixates in a population of ``s`` with a probability that grows with
``α·(payoff[r][s] − payoff[s][r])``; the agents' masses in its stationary distribution
are the ranking. α is swept over a grid and one α is chosen by OpenSpiel's rule (see
:func:`alpha_rank`).

:func:`nash` solves the meta-game by linear programming: a maximin mixed strategy of the
zero-sum game ``payoff − 0.5`` is a symmetric Nash equilibrium of the symmetric
constant-sum meta-game (von Neumann's minimax theorem); its value is 0.5.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.outcomes import Outcome, check_outcomes
from solvers.writers import finite_or_none

__all__ = [
    "DEFAULT_ALPHAS",
    "AlphaRankResult",
    "MetaGame",
    "NashResult",
    "alpha_rank",
    "empirical_metagame",
    "nash",
]

logger = logging.getLogger(__name__)

#: The default α grid of :func:`alpha_rank`: ``0.01·2^k`` for k = 0..17 (0.01 to
#: 1310.72), the doubling steps of OpenSpiel's ``sweep_pi_vs_alpha`` from a fixed start.
#: Payoff differences are in [−1, 1], so the top of the grid is far into the large-α
#: regime α-Rank is defined by (and past where 64-bit floats overflow for a difference of 1).
DEFAULT_ALPHAS: tuple[float, ...] = tuple(0.01 * 2.0**k for k in range(18))

#: Tolerances for "π has converged" between consecutive grid points (OpenSpiel's defaults).
_RTOL, _ATOL = 1e-5, 1e-8

_Matrix = tuple[tuple[float, ...], ...]


def _matrix(values: Any) -> _Matrix:
    return tuple(tuple(float(v) for v in row) for row in np.asarray(values, dtype=float))


# --------------------------------------------------------------------------- the meta-game


@dataclass(frozen=True)
class MetaGame:
    """A symmetric constant-sum meta-game estimated from a tournament.

    Attributes:
      agents: The agent names (the pure strategies), in the given order.
      payoff: ``payoff[i][j]``: mean score of agent ``i`` against agent ``j`` over their
        games in both seat orders; ``payoff[i][i] = 0.5`` by convention.
        ``payoff[i][j] + payoff[j][i] = 1``.
      stderr: Standard error of each mean (sample standard deviation / √games); NaN on
        the diagonal and where a pair has fewer than 2 games.
      games: Number of games behind each entry (0 on the diagonal).
    """

    agents: tuple[str, ...]
    payoff: _Matrix
    stderr: _Matrix
    games: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        n = len(self.agents)
        p = np.asarray(self.payoff, dtype=float)
        if n < 2 or p.shape != (n, n) or np.shape(self.stderr) != (n, n):
            raise ValueError(f"MetaGame: payoff and stderr must be {n}x{n} (n >= 2 agents)")
        if np.shape(self.games) != (n, n):
            raise ValueError(f"MetaGame: games must be {n}x{n}")
        if not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0:
            raise ValueError("MetaGame: payoffs must be finite scores in [0, 1]")
        if not np.allclose(p + p.T, 1.0, atol=1e-9):
            raise ValueError(
                "MetaGame: payoff[i][j] + payoff[j][i] must be 1 (diagonal 0.5); "
                "build it with empirical_metagame"
            )

    def payoff_matrix(self) -> np.ndarray:
        """``payoff`` as an n×n float array."""
        return np.asarray(self.payoff, dtype=float)

    def stderr_matrix(self) -> np.ndarray:
        """``stderr`` as an n×n float array (NaN where undefined)."""
        return np.asarray(self.stderr, dtype=float)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (NaN as None), for results files."""
        return dict(
            finite_or_none(
                {
                    "agents": list(self.agents),
                    "payoff": self.payoff,
                    "stderr": self.stderr,
                    "games": self.games,
                    "convention": "payoff[i][j] = mean score of row agent i against column agent j; diagonal 0.5",
                }
            )
        )


def empirical_metagame(agents: Sequence[str], outcomes: Sequence[Outcome]) -> MetaGame:
    """The empirical meta-game: mean score of each agent against each other.

    Args:
      agents: Distinct agent names (the order of rows and columns).
      outcomes: ``(a, b, score)`` triples; every pair of agents must have played.

    Returns:
      The :class:`MetaGame`.
    """
    where = "empirical_metagame"
    checked = check_outcomes(agents, outcomes, where=where)
    n = len(checked.agents)
    # Each game counts once from each side: a's score against b, b's against a.
    rows = np.concatenate([checked.a, checked.b])
    cols = np.concatenate([checked.b, checked.a])
    scores = np.concatenate([checked.score, 1.0 - checked.score])
    flat = rows * n + cols
    games = np.bincount(flat, minlength=n * n).reshape(n, n)
    total = np.bincount(flat, scores, n * n).reshape(n, n)
    total_sq = np.bincount(flat, scores * scores, n * n).reshape(n, n)
    off = ~np.eye(n, dtype=bool)
    missing = [
        (checked.agents[x], checked.agents[y])
        for x in range(n)
        for y in range(x + 1, n)
        if games[x, y] == 0
    ]
    if missing:
        raise ValueError(
            f"{where}: no games between {len(missing)} pair(s), e.g. {missing[0]}; "
            "play every pair at least once"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(off, total / np.maximum(games, 1), 0.5)
        # Sample variance (ddof=1) from sums; clipped at 0 against rounding.
        var = np.clip((total_sq - games * mean * mean) / (games - 1), 0.0, None)
        stderr = np.where(off & (games >= 2), np.sqrt(var / games), np.nan)
    # Make the constant sum exact despite rounding: payoff[j][i] = 1 − payoff[i][j].
    upper = np.triu(mean, 1)
    mean = upper + (1.0 - upper.T) * np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return MetaGame(
        agents=checked.agents,
        payoff=_matrix(mean),
        stderr=_matrix(stderr),
        games=tuple(tuple(int(g) for g in row) for row in games),
    )


# --------------------------------------------------------------------------- α-Rank


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
    payoff = metagame.payoff_matrix()

    results = [_stationary(payoff, a, int(population)) for a in grid]
    chosen: int | None = None
    converged = False
    for k, res in enumerate(results):
        if res is None:
            break
        chosen = k
        prev = results[k - 1] if k > 0 else None
        if prev is not None and np.allclose(res[0], prev[0], rtol=_RTOL, atol=_ATOL):
            converged = True
            break
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


# --------------------------------------------------------------------------- Nash


@dataclass(frozen=True)
class NashResult:
    """A symmetric Nash equilibrium of the meta-game (:func:`nash`).

    Attributes:
      agents: The agent names, in the meta-game's order.
      strategy: The equilibrium mixture over agents (sums to 1).
      value: The score the mixture guarantees against any agent (0.5 for an exact
        equilibrium of a symmetric constant-sum game).
      support: Agents with probability above ``1e-9``, in the agents' order.
      exploitability: ``max_j (payoff @ strategy)[j] − 0.5``: what the best pure
        response gains over an even score (≈ 0 at an equilibrium, never below 0).
    """

    agents: tuple[str, ...]
    strategy: tuple[float, ...]
    value: float
    support: tuple[str, ...]
    exploitability: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (NaN as None), for results files."""
        return dict(
            finite_or_none(
                {
                    "method": "maximin linear programme (scipy.optimize.linprog, HiGHS)",
                    "agents": list(self.agents),
                    "strategy": self.strategy,
                    "value": self.value,
                    "support": self.support,
                    "exploitability": self.exploitability,
                }
            )
        )


def nash(metagame: MetaGame) -> NashResult:
    """A Nash equilibrium of the meta-game by linear programming.

    Solves ``max v`` subject to ``Σ_i x_i·(payoff[i][j] − 0.5) ≥ v`` for every agent
    ``j``, ``Σ_i x_i = 1``, ``x ≥ 0`` with ``scipy.optimize.linprog`` (HiGHS). The
    maximin ``x``, played by both seats, is a Nash equilibrium; it need not be unique
    (the solver returns one vertex of the optimal set).

    Args:
      metagame: The meta-game.

    Returns:
      The :class:`NashResult`.
    """
    # scipy lazily (as in solvers.ratings): it would double the time of `import solvers`.
    from scipy.optimize import linprog  # type: ignore[import-untyped]

    payoff = metagame.payoff_matrix()
    n = payoff.shape[0]
    zero_sum = payoff - 0.5
    # Variables (x_1..x_n, v): minimise −v; v − Σ_i x_i·A[i, j] ≤ 0 for every column j.
    cost = np.zeros(n + 1)
    cost[-1] = -1.0
    a_ub = np.hstack([-zero_sum.T, np.ones((n, 1))])
    a_eq = np.concatenate([np.ones(n), [0.0]])[None, :]
    bounds = [(0.0, None)] * n + [(None, None)]
    res = linprog(
        cost, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs"
    )
    if not res.success:
        raise ValueError(f"nash: the linear programme failed: {res.message}")
    x = np.clip(np.asarray(res.x[:n], dtype=float), 0.0, None)
    x /= x.sum()
    value = 0.5 + float(np.min(x @ zero_sum))
    exploitability = float(np.max(payoff @ x) - 0.5)
    support = tuple(name for name, p in zip(metagame.agents, x, strict=True) if p > 1e-9)
    logger.debug("nash: support %s, exploitability %.3g", support, exploitability)
    return NashResult(
        agents=metagame.agents,
        strategy=tuple(float(p) for p in x),
        value=value,
        support=support,
        exploitability=exploitability,
    )
