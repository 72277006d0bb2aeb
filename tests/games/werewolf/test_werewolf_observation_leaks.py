"""Observations tell a seat only what it may know (paired histories)."""

from __future__ import annotations

import pyspiel
import pytest

import games  # noqa: F401  (registers every game)
from games.engine.conformance import CHECKS, observation_differences
from games.werewolf import rules
from games.werewolf.game import WerewolfState


@pytest.mark.slow  # about 10 s per preset; CI runs it in its slow step
@pytest.mark.parametrize("preset", sorted(rules.PRESETS))
def test_no_observation_differences_in_150_random_games(preset):
    game = pyspiel.load_game(f"python_werewolf(preset={preset})")
    bad, compared = observation_differences(game, 150)
    assert compared > 10_000  # many information states were paired
    assert bad == 0


def test_the_check_finds_the_phase_leak(monkeypatch):
    # The observation this test was written against: every seat saw the night step's name.
    def leaky(self, player=None):
        player = self.current_player() if player is None else player
        k = rules.knowledge(self.rules_state, player)
        return f"P{player} role={k.role} round={k.round} phase={k.phase}"

    monkeypatch.setattr(WerewolfState, "observation_string", leaky)
    game = pyspiel.load_game("python_werewolf(preset=arena)")
    bad, _ = observation_differences(game, 5)
    assert bad > 0


def test_the_check_is_one_of_the_engine_checks():
    assert "observations" in CHECKS
