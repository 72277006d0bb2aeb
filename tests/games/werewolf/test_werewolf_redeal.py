"""Werewolf's re-deal hook and the ``indistinguishable`` check it feeds.

A re-deal (:mod:`games.werewolf.redeal`) keeps what a seat knows and draws the rest
again; the check then requires the seat's strings to be the same. A planted leak
(the number of living werewolves added to a seat's strings) must fail the check
on each Werewolf conformance game string, and a hook that changes the seat's own
role must be caught.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers every game)
from games.engine.conformance import ConformanceError, check_indistinguishable
from games.engine.conformance.checks import _play
from games.engine.registry import GameSpec, Redeals, get_game_spec
from games.werewolf.game import WerewolfState, private_info
from games.werewolf.redeal import redeal

SPEC = get_game_spec("werewolf")
GAME_STRINGS = SPEC.conformance.game_strings
ARENA = "python_werewolf(preset=arena,debate_turns=1,max_rounds=3)"
GRATR = "python_werewolf(preset=gratr,debate_turns=1,max_rounds=3)"


def _state_at(game: pyspiel.Game, history: Sequence[int]) -> WerewolfState:
    state = game.new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


def _node(game: pyspiel.Game, seed: int, phase: str, round_: int = 1) -> WerewolfState:
    """The first node of a random game (``seed``) in ``phase`` of round ``round_``."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        s = state.rules_state
        if s.phase == phase and s.round == round_:
            return state
        _play(state, rng)
    raise AssertionError(f"seed {seed} never reaches {phase} of round {round_}")


def test_werewolf_declares_the_hook_and_the_three_game_strings():
    assert SPEC.conformance.redeal is redeal
    assert len(GAME_STRINGS) == 3 and ARENA in GAME_STRINGS and GRATR in GAME_STRINGS


@pytest.mark.parametrize("game_string", [ARENA, GRATR])
def test_a_redeal_keeps_what_the_seat_knows_and_changes_a_hidden_role(game_string):
    game = pyspiel.load_game(game_string)
    state = _node(game, seed=1, phase="day_vote")  # after a night, a seer check and a debate
    real = state.rules_state
    history = state.history()
    rng = np.random.default_rng(0)
    for seat in range(game.num_players()):
        out = redeal(game, history, seat, rng, 6)
        assert out.histories, f"P{seat}: no re-deal ({out.skipped} skipped)"
        changed = False
        for alt in out.histories:
            other = _state_at(game, alt)
            s = other.rules_state
            assert s.roles[seat] == real.roles[seat]  # its own role
            assert private_info(other, seat) == private_info(state, seat)  # what it saw alone
            if real.roles[seat] == "werewolf":  # its partners
                assert s.holders("werewolf") == real.holders("werewolf")
            if real.roles[seat] == "seer":  # its checks
                assert s.checks == real.checks
            assert s.alive == real.alive and s.phase == real.phase  # the public outcome
            changed |= s.roles != real.roles
        assert changed, f"P{seat} ({real.roles[seat]}): no hidden role changed"


def test_a_redeal_mid_deal_keeps_the_seats_role_and_redraws_the_others():
    game = pyspiel.load_game(ARENA)
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    for _ in range(5):
        _play(state, rng)
    history = state.history()
    out = redeal(game, history, 2, rng, 10)
    assert out.histories and all(len(alt) == 5 for alt in out.histories)
    assert all(alt[2] == history[2] for alt in out.histories)
    assert any(alt != tuple(history) for alt in out.histories)


def test_every_returned_history_replays_and_failed_attempts_are_counted():
    game = pyspiel.load_game(GRATR)  # the witch and the guard: some deals cannot fit
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    returned = skipped = 0
    while not state.is_terminal():
        for seat in range(game.num_players()):
            out = redeal(game, state.history(), seat, rng, 2)
            for alt in out.histories:
                _state_at(game, alt)  # raises if a move is illegal
            returned += len(out.histories)
            skipped += out.skipped
        _play(state, rng)
    assert returned > 100 and skipped > 0


def test_at_the_end_every_role_is_shown_so_no_role_is_redealt():
    game = pyspiel.load_game(ARENA)
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while not state.is_terminal():
        _play(state, rng)
    for alt in redeal(game, state.history(), 0, rng, 4).histories:
        assert _state_at(game, alt).rules_state.roles == state.rules_state.roles


@pytest.mark.parametrize("leaky", ["observation_string", "information_state_string"])
@pytest.mark.parametrize("game_string", GAME_STRINGS)
def test_a_planted_leak_of_the_living_werewolves_fails_the_check(monkeypatch, game_string, leaky):
    honest = getattr(WerewolfState, leaky)

    def with_leak(self, player=None):
        wolves = len(self.rules_state.living_with("werewolf"))
        return f"{honest(self, player)} wolves_alive={wolves}"

    monkeypatch.setattr(WerewolfState, leaky, with_leak)
    with pytest.raises(ConformanceError) as err:
        check_indistinguishable(SPEC, game_string)
    message = str(err.value)
    assert message.startswith(f"werewolf [indistinguishable]: {game_string}: player ")
    assert f"by its {leaky}:" in message and "wolves_alive=" in message
    assert " at depth " in message and "build it from" in message


def test_the_planted_leak_is_found_after_the_deal_too(monkeypatch):
    # Not only while the roles are dealt: in GRATR a night's dead may be a poisoned
    # werewolf, so the living werewolves are hidden after it (the first game shows it).
    honest = WerewolfState.observation_string
    monkeypatch.setattr(
        WerewolfState,
        "observation_string",
        lambda self, player=None: (
            f"{honest(self, player)} wolves_alive={len(self.rules_state.living_with('werewolf'))}"
        ),
    )

    def after_the_deal(game, history, player, rng, num):
        return (
            Redeals()
            if len(history) < game.num_players()
            else redeal(game, history, player, rng, num)
        )

    spec = dataclasses.replace(
        SPEC, conformance=dataclasses.replace(SPEC.conformance, redeal=after_the_deal)
    )
    with pytest.raises(ConformanceError, match=r"by its observation_string:.*wolves_alive="):
        check_indistinguishable(spec, GRATR)


def test_without_the_leak_the_same_strings_pass():
    check_indistinguishable(SPEC, GAME_STRINGS[-1])


def _own_role_swapped(
    game: pyspiel.Game,
    history: Sequence[int],
    player: int,
    rng: np.random.Generator,
    num: int,
) -> Redeals:
    """A wrong hook: the seat's dealt role swapped with another seat's."""
    dealt = list(history[: game.num_players()])
    if player >= len(dealt):
        return Redeals()
    other = next((q for q, role in enumerate(dealt) if role != dealt[player]), None)
    if other is None:
        return Redeals()
    alt = list(history)
    alt[player], alt[other] = alt[other], alt[player]
    try:
        _state_at(game, alt)
    except ValueError:
        return Redeals(skipped=1)
    return Redeals((tuple(alt),))


def test_a_hook_that_changes_the_seats_own_role_is_caught():
    spec: GameSpec = dataclasses.replace(
        SPEC, conformance=dataclasses.replace(SPEC.conformance, redeal=_own_role_swapped)
    )
    with pytest.raises(ConformanceError, match=r"changed the player's own private information"):
        check_indistinguishable(spec, ARENA)
