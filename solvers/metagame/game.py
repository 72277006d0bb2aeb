"""The empirical meta-game of a tournament (see :mod:`solvers.metagame`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.outcomes import CheckedOutcomes, Outcome, check_outcomes
from solvers.writers import finite_or_none

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
