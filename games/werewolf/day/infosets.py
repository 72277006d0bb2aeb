"""What a seat of the day tree can tell apart, from the rules' state (not from strings).

The day tree's root is a chance node over deals (:mod:`games.werewolf.deals`),
and a seat's information state must not depend on the deal beyond what the
seat knows. :func:`seat_view` is what the seat knows at a state, taken from
the rules' state and the day's statements: its role, partners, checks and
every event it saw under the deal (:func:`games.werewolf.rules.knowledge`),
the speech acts said (speaker, tone, concrete target / role / result) and its
own actions. :func:`day_redeal` is the conformance runner's re-deal hook
(:data:`games.engine.registry.RedealHook`): for a history of the day game it
returns the same history with another deal drawn at the root wherever the
seat's view comes out the same, and the ``indistinguishable`` check then
requires the seat's information-state string to be the same at both. An
information state that named the deal, or another seat's role, fails it (the
test plants one).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Hashable, Sequence

import numpy as np
import pyspiel

from games.engine.registry import Redeals
from games.werewolf import rules
from games.werewolf.day.state import DayState, DealChance

__all__ = ["day_redeal", "seat_view"]

logger = logging.getLogger(__name__)


def seat_view(state: DayState, player: int) -> Hashable:
    """What ``player`` knows at ``state`` (module doc), as a hashable value."""
    known = rules.knowledge(state.root.start, player)
    events = tuple(json.dumps(e.to_json(), sort_keys=True) for e in known.events)
    said = tuple((s.speaker, s.act) for s in state.statements)
    mine = tuple(s.action for s in state.statements if s.speaker == player)
    return (player, known.role, known.partners, known.checks, events, said, mine)


def day_redeal(
    game: pyspiel.Game,
    history: Sequence[int],
    player: int,
    rng: np.random.Generator,
    num: int,
) -> Redeals:
    """Up to ``num`` day histories ``player`` cannot tell apart from ``history`` (module doc).

    Every other deal of the root chance node is tried in an order drawn from
    ``rng``: the history is replayed with it, and kept when the seat's view
    (:func:`seat_view`) is the same. A replay that fails (an action not legal
    under the other deal) is counted in ``skipped``.
    """
    # One replay: where the deal is drawn, its other outcomes, and the real state.
    pos: int | None = None
    deals: list[int] = []
    real = game.new_initial_state()
    for i, action in enumerate(history):
        if pos is None and real.is_chance_node() and isinstance(real.inner, DealChance):
            pos = i
            deals = [k for k, _ in real.chance_outcomes() if k != action]
        real.apply_action(int(action))
    if pos is None or not isinstance(real.inner, DayState):
        return Redeals((), 0)
    view = seat_view(real.inner, player)
    found: list[tuple[int, ...]] = []
    skipped = 0
    for k in rng.permutation(deals) if deals else []:
        alt = (*history[:pos], int(k), *history[pos + 1 :])
        other = game.new_initial_state()
        try:
            for action in alt:
                other.apply_action(int(action))
        except (ValueError, pyspiel.SpielError) as why:
            logger.debug("day_redeal: deal %d does not replay: %s", k, why)
            skipped += 1
            continue
        if isinstance(other.inner, DayState) and seat_view(other.inner, player) == view:
            found.append(tuple(int(a) for a in alt))
            if len(found) == num:
                break
    return Redeals(tuple(found), skipped)
