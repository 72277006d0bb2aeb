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
constant-sum meta-game (von Neumann's minimax theorem); its value is 0.5. The equilibria
of a zero-sum game are the products of the two players' maximin sets, and here both
players have the same set ``X* = {x ∈ Δ : xᵀ(payoff − 0.5) ≥ 0}``, a polytope: the
equilibrium is unique exactly when ``X*`` is one point. :func:`nash` maximises each
agent's weight over ``X*`` (one linear programme per agent, and one minimising it): the
agents whose largest weight is positive are those in *some* equilibrium, and the
equilibrium is unique exactly when no weight can rise above its value at a solution
(a second point of ``X*`` has some coordinate larger, since both sum to 1). When it is not
unique, the reported equilibrium is the maximum-entropy point of ``X*`` (unique, since
entropy is strictly concave; its support is every agent in some equilibrium) instead of
whichever vertex the solver returned.

:func:`bootstrap_metagame` resamples clusters of games (the tournament's game seeds) and
recomputes α-Rank and Nash on each resample: the α-Rank masses and Nash weights are point
estimates of a noisy game, and their percentile intervals, how often each agent is on top
of α-Rank and how often it is in the Nash support say how much of them the games support.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.outcomes import CheckedOutcomes, Outcome, check_outcomes
from solvers.writers import finite_or_none

__all__ = [
    "DEFAULT_ALPHAS",
    "NASH_TOLERANCE",
    "AgentUncertainty",
    "AlphaRankResult",
    "MetaGame",
    "MetaGameBootstrap",
    "NashResult",
    "alpha_rank",
    "bootstrap_metagame",
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

#: How far below the game's value (0.5) a mixture may score against some agent and still
#: count as an equilibrium: the rounding of payoffs that are means of game scores (real
#: differences are at least 1/games, many orders larger).
NASH_TOLERANCE = 1e-9
#: Weights at or below this are outside a support; weight ranges narrower than
#: ``_UNIQUE_TOL`` count as one point (the LP solver's own tolerance is about 1e-9).
_SUPPORT_TOL = 1e-7
_UNIQUE_TOL = 1e-6


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
    games, mean, total_sq = _cell_sums(checked, np.ones(len(checked.score)))
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
        # Sample variance (ddof=1) from sums; clipped at 0 against rounding.
        var = np.clip((total_sq - games * mean * mean) / (games - 1), 0.0, None)
        stderr = np.where(off & (games >= 2), np.sqrt(var / games), np.nan)
    return MetaGame(
        agents=checked.agents,
        payoff=_matrix(_constant_sum(mean)),
        stderr=_matrix(stderr),
        games=tuple(tuple(int(g) for g in row) for row in games),
    )


def _cell_sums(
    checked: CheckedOutcomes, weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (row agent, column agent): weighted games, mean score, weighted sum of squares.

    Each game counts once from each side: a's score against b, b's against a. The mean
    is 0.5 on the diagonal and where a cell has no weight.
    """
    n = len(checked.agents)
    rows = np.concatenate([checked.a, checked.b])
    cols = np.concatenate([checked.b, checked.a])
    scores = np.concatenate([checked.score, 1.0 - checked.score])
    w = np.concatenate([weight, weight])
    flat = rows * n + cols
    games = np.bincount(flat, w, n * n).reshape(n, n)
    total = np.bincount(flat, w * scores, n * n).reshape(n, n)
    total_sq = np.bincount(flat, w * scores * scores, n * n).reshape(n, n)
    off = ~np.eye(n, dtype=bool)
    mean = np.where(off & (games > 0), total / np.maximum(games, 1e-300), 0.5)
    return games, mean, total_sq


def _constant_sum(mean: np.ndarray) -> np.ndarray:
    """Makes the constant sum exact despite rounding: payoff[j][i] = 1 − payoff[i][j]."""
    n = mean.shape[0]
    upper = np.triu(mean, 1)
    return upper + (1.0 - upper.T) * np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)


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


# --------------------------------------------------------------------------- Nash


@dataclass(frozen=True)
class NashResult:
    """The symmetric Nash equilibria of the meta-game (:func:`nash`).

    Attributes:
      agents: The agent names, in the meta-game's order.
      strategy: The reported equilibrium mixture over agents (sums to 1): the
        equilibrium when it is unique, else the maximum-entropy one (``selection``).
      value: The score the mixture guarantees against any agent (0.5 for an exact
        equilibrium of a symmetric constant-sum game).
      support: Agents with probability above ``1e-7`` in ``strategy``, in the agents'
        order; when ``strategy`` is the maximum-entropy equilibrium these are exactly
        the agents that some equilibrium plays.
      exploitability: ``max_j (payoff @ strategy)[j] − 0.5``: what the best pure
        response gains over an even score (≈ 0 at an equilibrium, never below 0).
      unique: Whether the equilibrium is unique (every weight's range is one point).
      weight_low: Per agent, its smallest weight over all equilibria.
      weight_high: Per agent, its largest weight over all equilibria.
      vertex: The one equilibrium the maximin linear programme returned (a vertex of
        the equilibrium set; arbitrary when the equilibrium is not unique).
      selection: How ``strategy`` was chosen: ``unique``, ``maximum entropy``, or
        ``centre of the extreme equilibria`` (the entropy maximisation failed; still an
        equilibrium with the same support).
      tolerance: :data:`NASH_TOLERANCE`, the slack of the equilibrium constraints.
    """

    agents: tuple[str, ...]
    strategy: tuple[float, ...]
    value: float
    support: tuple[str, ...]
    exploitability: float
    unique: bool = True
    weight_low: tuple[float, ...] = ()
    weight_high: tuple[float, ...] = ()
    vertex: tuple[float, ...] = ()
    selection: str = "unique"
    tolerance: float = NASH_TOLERANCE

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (NaN as None), for results files."""
        return dict(
            finite_or_none(
                {
                    "method": "maximin linear programme (scipy.optimize.linprog, HiGHS); "
                    "each weight maximised and minimised over the equilibrium set",
                    "agents": list(self.agents),
                    "strategy": self.strategy,
                    "selection": self.selection,
                    "value": self.value,
                    "support": self.support,
                    "exploitability": self.exploitability,
                    "unique": self.unique,
                    "weight_low": self.weight_low,
                    "weight_high": self.weight_high,
                    "vertex": self.vertex,
                    "tolerance": self.tolerance,
                }
            )
        )


def _linprog(cost: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray, n: int) -> np.ndarray | None:
    """A solution of ``min cost·x`` over ``a_ub·x ≤ b_ub``, ``x`` in the simplex (None if failed)."""
    from scipy.optimize import linprog  # type: ignore[import-untyped]

    res = linprog(
        cost,
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=np.ones((1, n)),
        b_eq=[1.0],
        bounds=[(0.0, 1.0)] * n,
        method="highs",
    )
    return np.asarray(res.x, dtype=float) if res.success else None


def _maximin(zero_sum: np.ndarray) -> np.ndarray:
    """One maximin mixture of the zero-sum game (a vertex of the equilibrium set)."""
    # scipy lazily (as in solvers.ratings): it would double the time of `import solvers`.
    from scipy.optimize import linprog

    n = zero_sum.shape[0]
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
    return x / x.sum()


def _weight_extremes(
    zero_sum: np.ndarray, *, lows: bool
) -> tuple[np.ndarray, np.ndarray | None, list[np.ndarray]]:
    """Each weight's largest (and with ``lows`` smallest) value over the equilibrium set.

    The set is ``{x in the simplex : xᵀ·zero_sum ≥ −NASH_TOLERANCE}`` (the game's value
    is 0: the zero-sum part is antisymmetric). Returns ``(high, low or None, the
    maximisers)``; a failed programme (never expected: the set is not empty) raises.
    """
    n = zero_sum.shape[0]
    a_ub, b_ub = -zero_sum.T, np.full(n, NASH_TOLERANCE)
    high, low = np.empty(n), np.empty(n) if lows else None
    maximisers = []
    for i in range(n):
        unit = np.zeros(n)
        unit[i] = 1.0
        for sign, out in ((-1.0, high), (1.0, low)):
            if out is None:
                continue
            x = _linprog(sign * unit, a_ub, b_ub, n)
            if x is None:
                raise ValueError(
                    "nash: a linear programme over the equilibrium set failed; "
                    "check that the payoffs are finite scores in [0, 1]"
                )
            out[i] = min(max(x[i], 0.0), 1.0)
            if sign < 0:
                maximisers.append(np.clip(x, 0.0, None) / np.clip(x, 0.0, None).sum())
    return high, low, maximisers


def _max_entropy(zero_sum: np.ndarray, support: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """The maximum-entropy equilibrium on ``support`` (boolean mask), from ``start``.

    None when SLSQP fails or its answer leaves the equilibrium set (then the caller
    keeps ``start``, the centre of the extreme equilibria, an equilibrium too).
    """
    from scipy.optimize import minimize

    idx = np.flatnonzero(support)
    sub = zero_sum[np.ix_(idx, np.arange(zero_sum.shape[0]))]  # rows: the support's agents

    def negentropy(x: np.ndarray) -> tuple[float, np.ndarray]:
        safe = np.clip(x, 1e-300, None)
        return float(np.sum(x * np.log(safe))), np.log(safe) + 1.0

    res = minimize(
        negentropy,
        start[idx],
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * len(idx),
        constraints=[
            {"type": "eq", "fun": lambda x: np.sum(x) - 1.0, "jac": lambda x: np.ones_like(x)},
            {"type": "ineq", "fun": lambda x: x @ sub + NASH_TOLERANCE, "jac": lambda x: sub.T},
        ],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    if not res.success:
        logger.debug("nash: maximum entropy: %s", res.message)
        return None
    x = np.zeros(zero_sum.shape[0])
    x[idx] = np.clip(res.x, 0.0, None)
    x /= x.sum()
    # SLSQP meets its constraints to about its tolerance: accept a little more slack.
    if float(np.min(x @ zero_sum)) < -10 * _UNIQUE_TOL:
        return None
    return x


def _equilibria(zero_sum: np.ndarray, *, lows: bool) -> dict[str, Any]:
    """The equilibrium analysis of :func:`nash` on the zero-sum part (no names)."""
    vertex = _maximin(zero_sum)
    high, low, maximisers = _weight_extremes(zero_sum, lows=lows)
    # A second equilibrium raises some weight above the vertex's (both sum to 1).
    unique = bool(np.all(high - vertex <= _UNIQUE_TOL))
    if unique:
        return {
            "strategy": vertex,
            "vertex": vertex,
            "high": high,
            "low": low,
            "unique": True,
            "selection": "unique",
        }
    support = high > _SUPPORT_TOL
    # The centre of the extreme points: an equilibrium (the set is convex) with every
    # weight that some equilibrium has positive, so the entropy's gradient is finite.
    centre = np.mean([m for m, on in zip(maximisers, support, strict=True) if on], axis=0)
    best = _max_entropy(zero_sum, support, centre)
    return {
        "strategy": centre if best is None else best,
        "vertex": vertex,
        "high": high,
        "low": low,
        "unique": False,
        "selection": "centre of the extreme equilibria" if best is None else "maximum entropy",
    }


def nash(metagame: MetaGame) -> NashResult:
    """The symmetric Nash equilibria of the meta-game by linear programming.

    Solves ``max v`` subject to ``Σ_i x_i·(payoff[i][j] − 0.5) ≥ v`` for every agent
    ``j``, ``Σ_i x_i = 1``, ``x ≥ 0`` with ``scipy.optimize.linprog`` (HiGHS): the
    maximin ``x``, played by both seats, is a Nash equilibrium (``vertex``). The
    equilibrium set is ``X* = {x : Σ_i x_i·(payoff[i][j] − 0.5) ≥ −tolerance for all
    j}`` (the value is 0.5, see the module docstring); each agent's weight is maximised
    and minimised over it (2n more programmes). The equilibrium is *unique* when no
    weight's maximum exceeds its value at ``vertex`` (by more than 1e-6); otherwise the
    reported ``strategy`` is the maximum-entropy point of ``X*`` (SLSQP over the agents
    whose maximum weight is positive, from the centre of the maximisers), whose support
    is every agent some equilibrium plays.

    Args:
      metagame: The meta-game.

    Returns:
      The :class:`NashResult`.
    """
    payoff = metagame.payoff_matrix()
    zero_sum = payoff - 0.5
    eq = _equilibria(zero_sum, lows=True)
    x = eq["strategy"]
    value = 0.5 + float(np.min(x @ zero_sum))
    exploitability = float(np.max(payoff @ x) - 0.5)
    support = tuple(name for name, p in zip(metagame.agents, x, strict=True) if p > _SUPPORT_TOL)
    logger.debug(
        "nash: support %s, unique %s, exploitability %.3g", support, eq["unique"], exploitability
    )
    return NashResult(
        agents=metagame.agents,
        strategy=tuple(float(p) for p in x),
        value=value,
        support=support,
        exploitability=exploitability,
        unique=eq["unique"],
        weight_low=tuple(float(p) for p in eq["low"]),
        weight_high=tuple(float(p) for p in eq["high"]),
        vertex=tuple(float(p) for p in eq["vertex"]),
        selection=eq["selection"],
    )


# --------------------------------------------------------------------------- the bootstrap

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
