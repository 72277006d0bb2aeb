"""The deals consistent with what a seat (or the public) knows, and their histories.

A *deal* gives every seat a role, with the preset's role counts. The deal step
draws roles uniformly (:func:`games.werewolf.rules.chance_outcomes`), so the
prior is uniform over deals, and the deals consistent with what an observer
knows (:class:`games.werewolf.redeal.SeatKnowledge`: its own role, partners,
checks, revealed roles, who cannot be a werewolf, that the game went on after
each death) are the support of its posterior. :func:`consistent_deals`
enumerates them (:func:`gt_llm.opponents.deals.enumerate_deals`, the same
enumeration the exact Bayesian reference model reads); :func:`public_deals`
keeps all of them when there are at most ``k``, else ``k`` drawn uniformly
without replacement, each with probability ``1 / len(kept)``.

**Weighted by the prior.** Every consistent deal gets the same weight: the
likelihood of the public history under a deal (the night's victim, the bids,
speeches and votes the players chose) is not weighed in. Under uniform night
moves the victim's likelihood is the same for every consistent deal (the
werewolves' choice among the same living non-werewolves); the players' day
choices would tilt it, and that tilt is left out.

**A deal's history.** :func:`deal_history` replays the real history on a deal
(:func:`games.werewolf.redeal.alternative_history` with the public as the
observer): every public move as it was, every hidden night move (the wolves'
votes, protections, checks) drawn anew so that each night ends with the same
deaths. The day tree (:mod:`games.werewolf.day.roots`) builds one root per
chosen deal from :func:`history_records` of it, as from a game's log.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from games.werewolf import rules
from games.werewolf.redeal import (
    SeatKnowledge,
    Unreproducible,
    alternative_history,
    replay_states,
    seat_knowledge,
)
from games.werewolf.rules import CHANCE, ROLES, Config, GameState, decode_action
from gt_llm.opponents.deals import enumerate_deals

__all__ = [
    "DayDeals",
    "consistent_deals",
    "deal_history",
    "history_records",
    "public_deals",
    "public_knowledge",
    "records_history",
]

logger = logging.getLogger(__name__)


def consistent_deals(config: Config, known: SeatKnowledge) -> list[tuple[str, ...]]:
    """Every deal of ``config`` consistent with ``known``, in lexicographic seat order.

    Args:
      config: The rules config (its role counts).
      known: What the observer knows (:func:`games.werewolf.redeal.seat_knowledge`).

    Returns:
      The deals, each a role per seat; empty when the knowledge contradicts the counts.
    """
    n = config.num_players
    players = [str(q) for q in range(n)]
    counts = {r: c for r, c in config.roles.as_dict().items() if c > 0}
    hypotheses = [r for r in ROLES if r in counts]
    fixed = {str(q): r for q, r in known.roles.items()}
    fixed |= {str(q): "werewolf" for q, w in known.werewolf.items() if w and q not in known.roles}
    excluded = {
        str(q): frozenset({"werewolf"})
        for q, w in known.werewolf.items()
        if not w and q not in known.roles
    }
    if any(r not in counts for r in fixed.values()):
        return []
    table = enumerate_deals(players, hypotheses, counts, fixed, excluded)
    deals = [tuple(hypotheses[i] for i in row) for row in table]
    return [d for d in deals if all(rules.winner_of(d, alive) is None for alive in known.went_on)]


def records_history(
    config: Config, records: Sequence[Mapping[str, Any]], stop: GameState
) -> tuple[int, ...]:
    """The action ids of a game's ``chance`` and ``action`` records up to the state ``stop``.

    Raises:
      ValueError: the records never reach ``stop``.
    """
    history: list[int] = []
    s = rules.initial_state(config)
    for rec in records:
        if s == stop:
            return tuple(history)
        if rec["type"] == "chance":
            history.append(int(rec["outcome"]))
            s = rules.apply(s, CHANCE, rec["outcome"])
        elif rec["type"] == "action":
            action = rules.action_from_json(rec["action"])
            history.append(rules.encode_action(config.num_players, action))
            s = rules.apply(s, rec["player"], action)
    if s == stop:
        return tuple(history)
    raise ValueError("records_history: the records never reach the given state")


def public_knowledge(config: Config, history: Sequence[int]) -> SeatKnowledge:
    """What every player at the table knows about the deal after ``history`` (public events)."""
    return seat_knowledge(replay_states(config, tuple(history)), None)


def history_records(config: Config, history: Sequence[int]) -> list[dict[str, Any]]:
    """The ``chance`` and ``action`` log records of an action-id history (the runner's schema)."""
    out: list[dict[str, Any]] = []
    s = rules.initial_state(config)
    for action in history:
        actor = rules.current_player(s)
        if actor == CHANCE:
            out.append({"type": "chance", "step": s.num_steps, "phase": s.phase, "outcome": action})
            s = rules.apply(s, CHANCE, action)
            continue
        move = decode_action(config.num_players, action)
        out.append(
            {
                "type": "action",
                "step": s.num_steps,
                "round": s.round,
                "phase": s.phase,
                "player": actor,
                "action": rules.action_to_json(move),
                "id": action,
            }
        )
        s = rules.apply(s, actor, move)
    return out


def deal_history(
    config: Config, history: Sequence[int], roles: Sequence[str], rng: np.random.Generator
) -> tuple[int, ...]:
    """``history`` replayed on the deal ``roles``, every hidden night move drawn anew (module doc).

    Raises:
      Unreproducible: no hidden moves give the public history under this deal.
    """
    states = replay_states(config, tuple(history))
    return alternative_history(states, list(history), None, roles, rng)


@dataclasses.dataclass(frozen=True)
class DayDeals:
    """The deals a day tree's root chance node is over.

    Attributes:
      histories: Per kept deal, its history (the real one replayed on it).
      roles: Per kept deal, every seat's role.
      consistent: How many deals are consistent with the public history.
      enumerated: Every consistent deal is kept (else ``len(roles)`` were drawn).
      skipped: Drawn deals dropped because no hidden moves reproduce the history.
    """

    histories: tuple[tuple[int, ...], ...]
    roles: tuple[tuple[str, ...], ...]
    consistent: int
    enumerated: bool
    skipped: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "deals": len(self.roles),
            "consistent": self.consistent,
            "enumerated": self.enumerated,
            "skipped": self.skipped,
            "roles": [list(r) for r in self.roles],
        }


def public_deals(config: Config, history: Sequence[int], k: int, seed: int) -> DayDeals:
    """Up to ``k`` deals consistent with the public history ``history``, with their histories.

    The consistent deals (:func:`consistent_deals` of the public's knowledge) are
    all kept when at most ``k``, else ``k`` are drawn uniformly without
    replacement (a generator seeded by ``seed``); a drawn deal whose history cannot be
    reproduced is replaced by another draw and counted in ``skipped``.

    Raises:
      ValueError: no consistent deal reproduces the history.
    """
    states = replay_states(config, tuple(history))
    known = seat_knowledge(states, None)
    deals = consistent_deals(config, known)
    if k < 1:
        raise ValueError(f"public_deals: k must be >= 1, got {k}")
    rng = np.random.default_rng([seed, 0x6465616C])  # "deal": its own stream per game seed
    # All of them, or a uniform draw order: replacements for skipped deals come from the rest.
    perm = range(len(deals)) if len(deals) <= k else [int(i) for i in rng.permutation(len(deals))]
    kept: list[tuple[int, tuple[int, ...]]] = []
    skipped = 0
    for i in perm:
        if len(kept) == k:
            break
        try:
            alt = alternative_history(
                states, list(history), None, deals[i], np.random.default_rng([seed, i])
            )
        except Unreproducible as why:
            logger.debug("public_deals: deal %d of seed %d skipped: %s", i, seed, why)
            skipped += 1
            continue
        kept.append((i, alt))
    if not kept:
        raise ValueError(
            f"public_deals: no deal consistent with the public history of seed {seed} reproduces it"
        )
    kept.sort()
    return DayDeals(
        histories=tuple(h for _, h in kept),
        roles=tuple(deals[i] for i, _ in kept),
        consistent=len(deals),
        enumerated=len(kept) == len(deals),
        skipped=skipped,
    )
