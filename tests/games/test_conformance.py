"""Every game passes the conformance runner (:mod:`games.engine.conformance`).

One line per game; the runner runs every check on each and fails (never
skips) a game that lacks what a check needs.
"""

from __future__ import annotations

import pytest

import games  # noqa: F401  (registers every game)
from games.engine.conformance import conformance_cases
from games.engine.registry import registered_game_specs

GAMES = [
    "fruit-trading",
    "werewolf",
    "werewolf-day",
    "ultimatum",
]


def test_every_registered_game_is_listed():
    # Fails on a registered game missing here, and on a listed game that did not load.
    assert sorted(GAMES) == sorted(s.name for s in registered_game_specs())


@pytest.mark.parametrize(
    "case",
    conformance_cases(s for s in registered_game_specs() if s.name in GAMES),
    ids=lambda c: c.id,
)
def test_conformance(case):
    case.run()
