"""Symmetric Nash equilibria of a constant-sum meta-game, by linear programming.

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
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.metagame.game import MetaGame
from solvers.writers import finite_or_none

logger = logging.getLogger(__name__)

#: How far below the game's value (0.5) a mixture may score against some agent and still
#: count as an equilibrium: the rounding of payoffs that are means of game scores (real
#: differences are at least 1/games, many orders larger).
NASH_TOLERANCE = 1e-9
#: Weights at or below this are outside a support; weight ranges narrower than
#: ``_UNIQUE_TOL`` count as one point (the LP solver's own tolerance is about 1e-9).
_SUPPORT_TOL = 1e-7
_UNIQUE_TOL = 1e-6


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
