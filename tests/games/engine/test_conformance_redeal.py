"""The ``indistinguishable`` conformance check: views at re-dealt histories, on Kuhn poker.

Kuhn poker deals one card to each player; a player's re-deal keeps its own card and
gives the other player another one. The check must pass with that hook, and fail
with a hook that changes the player's own card, returns nothing or returns a
history that does not replay; a game without a hook is skipped, saying why.
"""

from __future__ import annotations

import unittest
from collections.abc import Sequence

import numpy as np
import pyspiel
import pytest

from games.engine.conformance import (
    CHECKS,
    ConformanceCase,
    ConformanceError,
    ConformanceSkipped,
    check_indistinguishable,
    conformance_cases,
    redeal_differences,
)
from games.engine.registry import ConformanceParams, GameSpec, RedealHook, Redeals

KUHN = "kuhn_poker"


def _kuhn_redeal(change: str) -> RedealHook:
    """A Kuhn re-deal that draws again the card of ``change``: ``"other"`` or ``"own"``."""

    def hook(
        game: pyspiel.Game,
        history: Sequence[int],
        player: int,
        rng: np.random.Generator,
        num: int,
    ) -> Redeals:
        dealt = list(history[:2])
        seats = [s for s in range(len(dealt)) if (s == player) == (change == "own")]
        alts = tuple(
            (*history[:seat], card, *history[seat + 1 :])
            for seat in seats
            for card in range(3)
            if card not in dealt
        )
        return Redeals(alts[:num])

    return hook


def _spec(redeal: RedealHook | None, **params: int) -> GameSpec:
    return GameSpec(
        name="kuhn-test",
        short_name=KUHN,
        help="Kuhn poker (test)",
        add_parser=lambda subparsers: None,
        conformance=ConformanceParams(game_strings=(KUHN,), redeal=redeal, **params),
    )


def test_the_check_is_in_the_table_and_a_case_of_every_game_with_a_hook():
    assert CHECKS["indistinguishable"] is check_indistinguishable
    cases = [
        c
        for c in conformance_cases([_spec(_kuhn_redeal("other"))])
        if c.check == "indistinguishable"
    ]
    assert [c.game_string for c in cases] == [KUHN]
    # A game without a hook has no such case (nothing is skipped).
    assert not [c for c in conformance_cases([_spec(None)]) if c.check == "indistinguishable"]


def test_a_true_redeal_passes_and_compares_every_node():
    check_indistinguishable(_spec(_kuhn_redeal("other"), redeal_games=3), KUHN)
    game = pyspiel.load_game(KUHN)
    stats, diff = redeal_differences(game, _kuhn_redeal("other"), num_games=3, per_node=2)
    assert diff is None and stats.skipped == 0
    assert stats.compared > stats.nodes  # both players, at every node from the first card on


def test_a_redeal_of_the_players_own_card_is_caught():
    with pytest.raises(ConformanceError) as err:
        check_indistinguishable(_spec(_kuhn_redeal("own")), KUHN)
    message = str(err.value)
    assert message.startswith("kuhn-test [indistinguishable]: kuhn_poker: player ")
    assert " at depth " in message and "ConformanceParams.redeal" in message
    assert "observation_string" in message or "information_state_string" in message


def test_a_hook_that_never_redeals_fails():
    def nothing(game, history, player, rng, num):
        return Redeals(skipped=1)

    with pytest.raises(ConformanceError, match=r"returned no alternative history.*skipped"):
        check_indistinguishable(_spec(nothing), KUHN)


def test_a_history_that_does_not_replay_is_the_hooks_fault():
    def illegal(game, history, player, rng, num):
        return Redeals(((1, 1),))  # one card dealt twice

    with pytest.raises(ConformanceError, match=r"does not replay .*must return legal histories"):
        check_indistinguishable(_spec(illegal), KUHN)


def test_a_game_without_a_hook_is_skipped_and_says_so():
    case = ConformanceCase(_spec(None), "indistinguishable", KUHN)
    with pytest.raises(ConformanceSkipped, match="kuhn-test declares no re-deal hook"):
        case.run()
    assert issubclass(ConformanceSkipped, unittest.SkipTest)  # pytest reports it as skipped


def test_the_budget_is_at_least_one_game_and_one_redeal():
    with pytest.raises(ValueError, match="redeal_games and redeals_per_node"):
        ConformanceParams(game_strings=(KUHN,), redeal_games=0)
