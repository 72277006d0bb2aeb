"""Helpers shared by the Werewolf tests (one copy instead of one per test file)."""

from __future__ import annotations

from collections.abc import Sequence

from games.werewolf import rules

#: The arena deal used by most tests, in seat order.
ARENA_SEATS = ("werewolf", "werewolf", "seer", "doctor") + ("villager",) * 4


def dealt(
    config: rules.Config | str = "arena", seats: Sequence[str] = ARENA_SEATS
) -> rules.GameState:
    """The state right after the chance node dealt ``seats`` (a preset name or a config)."""
    state = rules.initial_state(rules.preset(config) if isinstance(config, str) else config)
    for r in seats:
        state = rules.apply(state, rules.CHANCE, rules.ROLES.index(r))
    return state
