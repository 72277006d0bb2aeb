"""Whole games of LLM players (scripted stand-in model) on the Werewolf rules.

The games run through the package's game loop (:func:`games.werewolf.players.table.play_llm_game`).
They check that the steps produce legal actions in every phase, that the scripted
stand-in plays sensibly enough for games to end with a result, that deception
tracking runs on real statements, and that a better opponent model (through the
belief-provider hook) gives better votes.
"""

from __future__ import annotations

import pytest

import games  # noqa: F401  (registers the scripted answers)
import gt_llm
from games.werewolf import rules
from games.werewolf.deception.tracking import tracker_from_events
from games.werewolf.players.table import play_llm_game
from games.werewolf.players.view import (
    PublicStatement,
    partner_votes,
    speech_menu,
    tonight_victim,
    view_from_knowledge,
)
from games.werewolf.rules import Target
from tests.games.werewolf_helpers import dealt


class Oracle:
    """An exact opponent model for a non-werewolf: the true werewolves at 0.9."""

    def __init__(self, me, roles):
        self.me, self.roles = me, roles

    def observe(self, observation):
        pass

    def beliefs(self, phase=""):
        return {
            q: (
                {"werewolf": 0.9, "villager": 0.1}
                if r == "werewolf"
                else {"villager": 0.9, "werewolf": 0.1}
            )
            for q, r in enumerate(self.roles)
            if q != self.me
        }

    def belief_lines(self, phase=""):
        return ""


def play(preset: str, seed: int, model, *, oracle: bool = False):
    """Plays one game; returns (final state, deception tracker, statement texts, result)."""
    cfg = rules.preset(preset, max_rounds=6, debate_turns=2)
    factory = None
    if oracle:
        # The deal depends on the seed only: a first game tells the roles.
        roles = play_llm_game(cfg, model, seed=seed)[0].roles

        def factory(k):
            return None if k.role == "werewolf" else Oracle(k.player, roles)

    result, table = play_llm_game(cfg, model, seed=seed, belief_factory=factory)
    return result.final, table.tracker, table.texts, result


@pytest.fixture(scope="module")
def scripted():
    return gt_llm.load_model("scripted")


@pytest.mark.parametrize("preset", ["arena", "gratr"])
def test_scripted_llm_games_end_and_track_deception(preset, scripted):
    winners = []
    for seed in range(3):
        state, tracker, texts, result = play(preset, seed, scripted)
        assert state.winner in (rules.WEREWOLVES, rules.VILLAGERS, rules.DRAW)
        winners.append(state.winner)
        # The scripted answers always parse.
        assert result.extra["parse_stats"]["total_fallbacks"] == 0
        assert result.extra["defaulted"] == 0
        summary = tracker.summary()
        assert summary.total_statements == len(tracker.statements) > 0
        # Self-reports agree with the rules' truth exactly (the stand-in is honest).
        d = summary.self_detection
        assert d.false_positives == d.false_negatives == 0
        # Rebuilt from its log events, the tracker is the same.
        again = tracker_from_events(tracker.events(), tracker.num_players)
        assert again.summary() == summary
    # Same seed, same game.
    state2, tracker2, texts2, _ = play(preset, 2, scripted)
    assert (state2.events, tracker2, texts2) == (state.events, tracker, texts)


def test_better_beliefs_give_better_votes(scripted):
    """Villagers fed exact beliefs win more games than villagers without beliefs."""
    wins = {False: 0, True: 0}
    for oracle in (False, True):
        for seed in range(12):
            state, _, _, _ = play("arena", seed, scripted, oracle=oracle)
            wins[oracle] += state.winner == rules.VILLAGERS
    assert wins[True] > wins[False]
    assert wins[True] >= 11  # measured: 100 of 100 seeds with exact beliefs


def test_views_from_rules_knowledge_hide_what_a_player_cannot_know():
    state = dealt()
    assert state.phase == "night_wolves"
    state = rules.apply(state, 0, Target(4))
    wolf1 = rules.knowledge(state, 1)
    assert partner_votes(wolf1) == {0: 4}
    v1 = view_from_knowledge(wolf1)
    assert v1.partners == (0,) and "Night 1: Player 1 chose to attack Player 5." in v1.private_notes
    state = rules.apply(state, 1, Target(4))  # victim 4
    state = rules.apply(state, 3, Target(4))  # the doctor protects 4
    state = rules.apply(state, 2, Target(0))  # the seer checks a werewolf
    seer = view_from_knowledge(rules.knowledge(state, 2))
    assert seer.checks == {0: "werewolf"}
    # The arena's table has no witch or guard: no check can find one.
    assert seer.check_results == ("villager", "werewolf", "seer", "doctor")
    villager = view_from_knowledge(rules.knowledge(state, 5))
    assert villager.partners == () and not villager.checks and not villager.private_notes
    assert villager.announcements == ((1, "Nobody died last night."),)
    # Day: bids, then a speech whose text the runner supplies by statement id.
    for p in state.living():
        state = rules.apply(state, p, rules.Bid(10 if p == 2 else 0))
    legal = rules.legal_actions(state)
    menu = speech_menu(legal)
    assert menu["acts"] == list(rules.SPEECH_ACTS) and "any" not in menu["tones"]
    assert menu["targets"] == [0, 1, 3, 4, 5, 6, 7] and menu["roles"] == list(rules.ROLES)
    # Claims offered to a model: only the roles some player holds at this table.
    in_play = speech_menu(legal, in_play=state.config.roles_in_play)["roles"]
    assert in_play == ["villager", "werewolf", "seer", "doctor"]
    act = rules.SpeechAct("share_check", "assertive", target=0, result="werewolf")
    state = rules.apply(state, 2, act)
    v5 = view_from_knowledge(rules.knowledge(state, 5), texts={0: "P1 is a wolf!"})
    assert v5.statements == (PublicStatement(0, 1, 2, act, "P1 is a wolf!"),)
    plain = view_from_knowledge(rules.knowledge(state, 5))
    assert plain.statements[0].text == "I checked Player 1 last night: werewolf."


def test_witch_sees_tonight_victim():
    state = dealt("gratr", ("werewolf",) * 3 + ("witch", "guard", "seer", "villager", "villager"))
    for w in (0, 1, 2):
        state = rules.apply(state, w, Target(6))
    state = rules.apply(state, 4, Target(3))  # guard
    state = rules.apply(state, 5, Target(0))  # seer
    assert state.phase == "night_witch_save"
    k = rules.knowledge(state, 3)
    assert tonight_victim(k) == 6
    assert tonight_victim(rules.knowledge(state, 7)) is None
