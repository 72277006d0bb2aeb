"""The OpenSpiel adapter python_werewolf: random_sim_test, MCTS, information states."""

from __future__ import annotations

import re

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import mcts

import games  # noqa: F401  (registers python_werewolf)
from games.werewolf import rules
from games.werewolf.game import config_from_params


@pytest.mark.parametrize("preset", ["arena", "gratr"])
def test_random_sim_test(preset):
    game = pyspiel.load_game(f"python_werewolf(preset={preset},debate_turns=1,max_rounds=4)")
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_game_info_and_params():
    game = pyspiel.load_game("python_werewolf(preset=arena)")
    assert game.num_players() == 8
    assert game.num_distinct_actions() == rules.num_distinct_actions(8) == 337
    assert game.max_chance_outcomes() == 8
    small = pyspiel.load_game("python_werewolf(roles=werewolf:1/seer:1/villager:3)")
    assert small.num_players() == 5
    cfg = config_from_params({"preset": "gratr", "exile": "plurality", "debate_turns": 2})
    assert (cfg.exile, cfg.debate_turns, cfg.seer_reveals) == ("plurality", 2, "team")
    with pytest.raises(ValueError, match="preset"):
        config_from_params({"preset": "chess"})
    with pytest.raises(ValueError, match="RoleSet"):
        config_from_params({"roles": "werewolf:3,villager:3"})


def _random_play(game, seed, until=None):
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal() and not (until and until(state)):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_information_state_hides_what_the_player_does_not_know():
    game = pyspiel.load_game("python_werewolf(preset=arena,debate_turns=1)")
    state = _random_play(game, 3, until=lambda s: s.rules_state.phase == "day_vote")
    roles = state.rules_state.roles
    for p in range(8):
        info = state.information_state_string(p)
        shown = [line for line in info.splitlines() if " role " in line]
        assert shown == [f"r1 role player={p} role={roles[p]}"]
        if roles[p] != "werewolf":
            assert "wolf_vote" not in info and "partners" not in info
        else:
            assert "wolf_vote" in info
        assert bool(re.search(r"^r\d+ check ", info, re.M)) == (roles[p] == "seer")
        obs = state.observation_string(p)
        assert f"role={roles[p]}" in obs
    # Same public history but different private roles -> different info states.
    assert len({state.information_state_string(p) for p in range(8)}) == 8


def test_returns_by_team_and_action_strings():
    game = pyspiel.load_game("python_werewolf(preset=gratr)")
    for seed in range(5):
        state = _random_play(game, seed)
        roles = state.rules_state.roles
        ret = state.returns()
        if state.rules_state.winner == rules.DRAW:
            assert ret == [0.0] * 8
        else:
            assert {ret[p] for p in range(8) if roles[p] == "werewolf"} == {
                1.0 if state.rules_state.winner == rules.WEREWOLVES else -1.0
            }
    state = game.new_initial_state()
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "deal werewolf"
    speech = rules.encode_action(8, rules.SpeechAct("accuse", "calm", target=3))
    assert state.action_to_string(0, speech) == "[calm] accuses P3 of being a werewolf"


def test_mcts_bot_plays_a_game():
    game = pyspiel.load_game("python_werewolf(preset=arena,debate_turns=1,max_rounds=2)")
    rs = np.random.RandomState(0)
    bot = mcts.MCTSBot(game, 2.0, 10, mcts.RandomRolloutEvaluator(1, rs), random_state=rs)
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert moves > 0 and state.rules_state.winner in (rules.WEREWOLVES, rules.VILLAGERS, rules.DRAW)


def test_private_information_stays_hidden():
    from games.werewolf.game import private_info

    game = pyspiel.load_game("python_werewolf(preset=gratr,debate_turns=1,max_rounds=3)")
    checked = 0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                secrets = [set(private_info(state, p)) for p in range(8)]
                for q in range(8):
                    info = state.information_state_string(q)
                    assert secrets[q] <= set(info.splitlines())
                    for p in range(8):
                        for secret in secrets[p] - secrets[q] if p != q else ():
                            assert secret not in info, (p, q, secret)
                            checked += 1
                outcomes = state.legal_actions()
                state.apply_action(int(rng.choice(outcomes)))
            else:
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
    assert checked > 1000
