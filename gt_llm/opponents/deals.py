"""The deals a seat cannot rule out: role assignments consistent with what it knows.

A *deal* gives each of the other players one hypothesis (a role), with the
role counts of the table (:func:`count_prior`). What a seat knows for sure
fixes some players (a seer's check, a revealed role, a werewolf's partners)
and rules roles out for others (a negative check); the deals left are the
support of any exact posterior. An 8-player Werewolf table leaves a few
hundred (7 others, counts 2/3/1/1: 420; counts 3/1/1/1/1: 840), so they are
enumerated, not sampled. The exact Bayesian reference model
(:mod:`gt_llm.opponents.bayes`) reads them; anything else that needs the deals
consistent with a seat's knowledge should too.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gt_llm.opponents.base import OpponentContext

__all__ = ["count_prior", "deal_count", "enumerate_deals"]


def count_prior(context: OpponentContext) -> dict[str, int] | None:
    """The context's prior as whole role counts over the other players, or None.

    A count prior gives every hypothesis a whole number, and the numbers sum to
    the number of other players (Werewolf's :func:`role_prior`); fruit trading's
    empty prior is not one.
    """
    if not context.prior or not context.players:
        return None
    counts = {h: float(context.prior.get(h, 0.0)) for h in context.hypotheses}
    if any(v < 0 or v != int(v) for v in counts.values()):
        return None
    others = [p for p in context.players if p != context.self_id]
    if sum(counts.values()) != len(others):
        return None
    return {h: int(v) for h, v in counts.items()}


def deal_count(counts: Mapping[str, int]) -> int:
    """How many deals the counts allow without any knowledge (a multinomial coefficient)."""
    n = sum(counts.values())
    out = math.factorial(n)
    for c in counts.values():
        out //= math.factorial(c)
    return out


def enumerate_deals(
    players: Sequence[str],
    hypotheses: Sequence[str],
    counts: Mapping[str, int],
    fixed: Mapping[str, str] | None = None,
    excluded: Mapping[str, frozenset[str]] | None = None,
    *,
    limit: int = 200_000,
) -> np.ndarray:
    """Every deal of ``counts`` over ``players`` consistent with the facts, as role indices.

    Args:
      players: The players dealt (the observer's others), in a fixed order.
      hypotheses: The roles; a deal's entry is an index into it.
      counts: How many players hold each role (summing to ``len(players)``).
      fixed: Players whose role is known for sure.
      excluded: Roles each player is known not to have.
      limit: The most deals enumerated (a larger table should sample instead).

    Returns:
      A read-only ``(deals, players)`` integer array, deals in lexicographic order;
      empty (0 rows) when the facts contradict the counts.

    Raises:
      ValueError: counts that do not sum to the player count, an unknown role, or
        more than ``limit`` deals.
    """
    fixed = dict(fixed or {})
    excluded = {p: frozenset(x) for p, x in (excluded or {}).items()}
    if sum(counts.values()) != len(players):
        raise ValueError(
            f"enumerate_deals: counts sum to {sum(counts.values())}, "
            f"not the {len(players)} players dealt"
        )
    unknown = sorted({*counts, *fixed.values()} - set(hypotheses))
    if unknown:
        raise ValueError(f"enumerate_deals: unknown roles {unknown}; roles are {tuple(hypotheses)}")
    if deal_count(counts) > limit:
        raise ValueError(
            f"enumerate_deals: {deal_count(counts)} deals exceed the limit {limit}; sample instead"
        )
    key = (
        tuple(players),
        tuple(hypotheses),
        tuple(sorted(counts.items())),
        tuple(sorted(fixed.items())),
        tuple(sorted((p, tuple(sorted(x))) for p, x in excluded.items())),
    )
    return _deals(key)


@functools.lru_cache(maxsize=4096)
def _deals(key: tuple[Any, ...]) -> np.ndarray:
    players, hypotheses, counts_items, fixed_items, excluded_items = key
    index = {h: i for i, h in enumerate(hypotheses)}
    fixed = dict(fixed_items)
    excluded = {p: set(x) for p, x in excluded_items}
    left = dict(counts_items)
    out: list[tuple[int, ...]] = []
    deal: list[int] = []

    def allowed(player: str) -> list[str]:
        if player in fixed:
            return [fixed[player]]
        return [h for h in hypotheses if h in left and h not in excluded.get(player, ())]

    def walk(k: int) -> None:
        if k == len(players):
            out.append(tuple(deal))
            return
        for h in allowed(players[k]):
            if left.get(h, 0) <= 0:
                continue
            left[h] -= 1
            deal.append(index[h])
            walk(k + 1)
            deal.pop()
            left[h] += 1

    walk(0)
    arr = np.asarray(out, dtype=np.int16).reshape(len(out), len(players))
    arr.setflags(write=False)
    return arr
