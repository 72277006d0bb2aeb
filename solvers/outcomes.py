"""Pairwise tournament outcomes and their validation, shared by ratings and the meta-game.

An :data:`Outcome` is ``(a, b, score)``: agent ``a`` played agent ``b`` and scored
``score`` in [0, 1] (1 a win, 0 a loss, 0.5 a draw). :func:`check_outcomes` turns a
list of them into index arrays, or raises one line naming the caller and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CheckedOutcomes", "Outcome", "check_outcomes"]

#: One game: (agent A, agent B, A's score in [0, 1]; 1 win, 0 loss, 0.5 draw).
Outcome = tuple[str, str, float]


@dataclass(frozen=True)
class CheckedOutcomes:
    """Validated outcomes as index arrays (see :func:`check_outcomes`).

    Attributes:
      agents: The agent names, in the given order.
      a: Index of agent A of every game.
      b: Index of agent B of every game.
      score: A's score of every game, in [0, 1].
    """

    agents: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray


def check_outcomes(
    agents: Sequence[str], outcomes: Sequence[Outcome], *, where: str
) -> CheckedOutcomes:
    """Validates agents and outcomes, raising a one-line ``ValueError`` naming ``where``.

    Args:
      agents: Distinct agent names (at least 2).
      outcomes: ``(a, b, score)`` triples, at least one; ``a`` and ``b`` distinct
        known agents, ``score`` a finite number in [0, 1].
      where: The calling function's name, for the error messages.

    Returns:
      The outcomes as index arrays.
    """
    if isinstance(agents, str):
        raise ValueError(f"{where}: agents must be a sequence of names, not one string")
    names = tuple(agents)
    if len(names) < 2:
        raise ValueError(f"{where}: needs at least 2 agents, got {len(names)}; list every agent")
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"{where}: agent names must be strings, got {name!r}")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{where}: agent names must be distinct, repeated: {dup}")
    if len(outcomes) == 0:
        raise ValueError(f"{where}: needs at least one outcome (a, b, score); got none")
    index = {n: i for i, n in enumerate(names)}
    a = np.empty(len(outcomes), dtype=np.intp)
    b = np.empty(len(outcomes), dtype=np.intp)
    score = np.empty(len(outcomes), dtype=float)
    for k, outcome in enumerate(outcomes):
        if not isinstance(outcome, (tuple, list)) or len(outcome) != 3:
            raise ValueError(
                f"{where}: outcome {k} is {outcome!r}; give a triple (agent A, agent B, A's score)"
            )
        x, y, s = outcome
        for name in (x, y):
            if name not in index:
                raise ValueError(
                    f"{where}: unknown agent {name!r} in outcome {k}; add it to agents {list(names)}"
                )
        if x == y:
            raise ValueError(f"{where}: outcome {k} has {x!r} playing itself; drop self-play games")
        try:
            value = float(s)
        except (TypeError, ValueError):
            raise ValueError(
                f"{where}: score {s!r} of outcome {k} is not a number; use 1 win, 0 loss, 0.5 draw"
            ) from None
        if not (0.0 <= value <= 1.0):  # also rejects NaN
            raise ValueError(
                f"{where}: score {s!r} of outcome {k} is outside [0, 1]; use 1 win, 0 loss, 0.5 draw"
            )
        a[k], b[k], score[k] = index[x], index[y], value
    return CheckedOutcomes(names, a, b, score)
