"""Werewolf rules on scripted scenarios (pure rules, no pyspiel)."""

from __future__ import annotations

import dataclasses

import pytest

from games.werewolf import rules
from games.werewolf.rules import (
    CHANCE,
    DRAW,
    ROLES,
    VILLAGERS,
    WEREWOLVES,
    Bid,
    RoleSet,
    Save,
    Skip,
    SpeechAct,
    Target,
)
from tests.games.werewolf_helpers import ARENA_SEATS as ARENA
from tests.games.werewolf_helpers import dealt

GRATR = ("werewolf", "werewolf", "werewolf", "witch", "guard", "seer", "villager", "villager")


def play(s: rules.GameState, *moves) -> rules.GameState:
    for player, action in moves:
        s = rules.apply(s, player, action)
    return s


def last(s: rules.GameState, kind: str) -> rules.Event:
    return [e for e in s.events if e.kind == kind][-1]


def next_living(s, p):
    return next(q % 8 for q in range(p + 1, p + 8) if s.alive[q % 8])


def votes_for(s, target_of):
    return [(p, Target(target_of(p))) for p in s.living()]


def arena(**kw) -> rules.GameState:
    return dealt(rules.preset("arena", debate_turns=0, **kw), ARENA)


def gratr(**kw) -> rules.GameState:
    return dealt(rules.preset("gratr", debate_turns=0, **kw), GRATR)


def test_presets_and_deal():
    a, g = rules.preset("arena"), rules.preset("gratr")
    assert a.num_players == g.num_players == 8
    assert a.roles.as_dict() == dict(villager=4, werewolf=2, seer=1, doctor=1, witch=0, guard=0)
    assert g.roles.as_dict() == dict(villager=2, werewolf=3, seer=1, doctor=0, witch=1, guard=1)
    s = rules.initial_state(a)
    assert rules.current_player(s) == CHANCE
    probs = dict(rules.chance_outcomes(s))
    assert probs[ROLES.index("villager")] == pytest.approx(4 / 8)
    s = arena()
    assert s.phase == "night_wolves" and rules.current_player(s) == 0
    assert {t.player for t in rules.legal_actions(s)} == set(range(2, 8))


@pytest.mark.parametrize(
    "spec",
    [
        dict(werewolf=0, villager=5),
        dict(werewolf=4, villager=4),
        dict(werewolf=2, villager=2, seer=2),
        dict(werewolf=1, villager=-1),
    ],
)
def test_inconsistent_role_sets_rejected(spec):
    with pytest.raises(ValueError, match="RoleSet"):
        RoleSet(**{**dict(werewolf=0, villager=0, seer=0, doctor=0), **spec})


def test_bad_options_rejected():
    with pytest.raises(ValueError, match="preset"):
        rules.preset("nope")
    with pytest.raises(ValueError, match="exile"):
        rules.preset("arena", exile="unanimous")
    with pytest.raises(ValueError, match="RoleSet.parse"):
        RoleSet.parse("werewolf:2,dragon:1")
    assert RoleSet.parse("werewolf:1,seer:1,villager:3").num_players == 5


def test_doctor_saves_the_target():
    s = play(arena(), (0, Target(4)), (1, Target(4)))
    assert s.phase == "night_doctor" and rules.current_player(s) == 3
    s = play(s, (3, Target(4)), (2, Target(0)))
    assert last(s, "deaths").data["players"] == [] and all(s.alive)
    assert rules.knowledge(s, 2).checks == ((0, "werewolf"),)  # arena: exact role
    assert s.phase == "day_vote"


def test_unprotected_target_dies_and_ties_go_to_chance():
    s = play(arena(), (0, Target(4)), (1, Target(5)))
    assert rules.current_player(s) == CHANCE and s.phase == "night_tie"
    assert rules.chance_outcomes(s) == [(4, 0.5), (5, 0.5)]
    s = rules.apply(s, CHANCE, 5)
    s = play(s, (3, Target(3)), (2, Target(4)))
    assert last(s, "deaths").data["players"] == [5] and not s.alive[5]
    assert rules.knowledge(s, 2).checks == ((4, "villager"),)


def test_guard_may_not_protect_the_same_player_twice_in_a_row():
    s = play(gratr(), (0, Target(6)), (1, Target(6)), (2, Target(6)), (4, Target(7)))
    s = play(s, (5, Target(0)), (3, Skip()), (3, Skip()))
    assert rules.knowledge(s, 5).checks == ((0, "werewolf"),)  # gratr: team only
    assert last(s, "deaths").data["players"] == [6]
    # Day: votes scatter, nobody exiled; night 2.
    s = play(s, *votes_for(s, lambda p: next_living(s, p)))
    assert last(s, "exile").data["player"] is None
    s = play(s, (0, Target(3)), (1, Target(3)), (2, Target(3)))
    assert rules.current_player(s) == 4
    assert Target(7) not in rules.legal_actions(s)
    with pytest.raises(ValueError, match="not legal"):
        rules.apply(s, 4, Target(7))
    s = rules.apply(s, 4, Target(3))  # another player is fine
    assert s.phase == "night_seer"


def test_witch_poison_and_save_same_night_then_no_potions():
    s = play(gratr(), (0, Target(6)), (1, Target(6)), (2, Target(6)), (4, Target(4)))
    s = rules.apply(s, 5, Target(1))
    assert rules.current_player(s) == 3 and s.phase == "night_witch_save"
    assert last(s, "witch_victim").visible_to == (3,)  # the witch learns the victim
    s = play(s, (3, Save()), (3, Target(0)))
    assert last(s, "deaths").data["players"] == [0]
    assert s.alive[6] and not s.alive[0]
    s = play(s, *[(p, Target(7 if p != 7 else 6)) for p in s.living()])  # exile 7
    assert last(s, "exile").data["player"] == 7
    s = play(s, (1, Target(6)), (2, Target(6)), (4, Target(3)), (5, Target(2)))
    # Both potions used: the night resolves without asking the witch.
    assert s.phase == "day_vote" and not s.alive[6]
    assert not any(e.kind.startswith("witch") and e.round == 2 for e in s.events)


def test_witch_uses_each_potion_once_across_nights():
    s = play(gratr(), (0, Target(6)), (1, Target(6)), (2, Target(6)), (4, Target(6)))
    s = play(s, (5, Target(1)), (3, Save()), (3, Skip()))
    assert s.alive[6] and not s.save_left and s.poison_left
    s = play(s, *votes_for(s, lambda p: next_living(s, p)))
    s = play(s, (0, Target(7)), (1, Target(7)), (2, Target(7)), (4, Target(5)), (5, Target(2)))
    assert s.phase == "night_witch_poison"  # no save step any more
    assert rules.legal_actions(s)[0] == Skip()
    s = rules.apply(s, 3, Target(2))
    assert last(s, "deaths").data["players"] == [2, 7]


def test_protection_does_not_stop_poison():
    s = play(gratr(), (0, Target(6)), (1, Target(6)), (2, Target(6)), (4, Target(7)))
    s = play(s, (5, Target(1)), (3, Skip()), (3, Target(7)))
    assert last(s, "deaths").data["players"] == [6, 7]


@pytest.mark.parametrize("exile,expected", [("majority", None), ("plurality", 4)])
def test_strict_majority_vs_plurality(exile, expected):
    s = play(arena(exile=exile), (0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(5)))
    # 3 votes for P4 out of 8 living, the rest scattered.
    plan = {0: 4, 1: 4, 2: 4, 3: 5, 4: 6, 5: 7, 6: 0, 7: 1}
    s = play(s, *votes_for(s, plan.get))
    assert last(s, "exile").data["player"] == expected
    assert last(s, "votes").data["votes"]["0"] == 4


def test_majority_exiles_and_tie_exiles_nobody():
    s = play(arena(exile="plurality"), (0, Target(4)), (1, Target(4)), (3, Target(4)))
    s = rules.apply(s, 2, Target(5))
    plan = {0: 4, 1: 4, 2: 4, 3: 5, 4: 5, 5: 6, 6: 5, 7: 6}  # 4 and 5 tied at 3
    s = play(s, *votes_for(s, plan.get))
    assert last(s, "exile").data["player"] is None
    s = play(arena(), (0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(5)))
    s = play(s, *votes_for(s, lambda p: 0 if p != 0 else 1))  # 7 of 8 vote P0
    assert last(s, "exile").data["player"] == 0 and not s.alive[0]


def test_parity_win_for_werewolves():
    cfg = rules.preset("arena", debate_turns=0)
    s = dealt(cfg, ARENA)
    # Night 1: P4 dies; day: P5 exiled (6 -> 5 villagers side, 2 wolves).
    s = play(s, (0, Target(4)), (1, Target(4)), (3, Target(3)), (2, Target(6)))
    s = play(s, *votes_for(s, lambda p: 5 if p != 5 else 6))
    s = play(s, (0, Target(6)), (1, Target(6)), (3, Target(3)), (2, Target(7)))
    s = play(s, *votes_for(s, lambda p: 7 if p != 7 else 2))
    # 2 wolves vs seer + doctor: werewolves win at the exile.
    assert s.is_terminal() and s.winner == WEREWOLVES
    assert rules.current_player(s) == rules.TERMINAL
    assert rules.returns(s) == [1.0, 1.0] + [-1.0] * 6


def test_villagers_win_when_no_werewolf_lives():
    cfg = rules.preset("arena", debate_turns=0)
    s = dealt(cfg, ARENA)
    s = play(s, (0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(0)))
    s = play(s, *votes_for(s, lambda p: 0 if p != 0 else 1))
    s = play(s, (1, Target(4)), (3, Target(4)), (2, Target(1)))
    s = play(s, *votes_for(s, lambda p: 1 if p != 1 else 2))
    assert s.winner == VILLAGERS and rules.returns(s)[0] == -1.0 and rules.returns(s)[7] == 1.0


def test_draw_at_round_limit():
    s = dealt(rules.preset("arena", debate_turns=0, max_rounds=1), ARENA)
    s = play(s, (0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(5)))
    s = play(s, *votes_for(s, lambda p: (p + 1) % 8))
    assert s.is_terminal() and s.winner == DRAW and rules.returns(s) == [0.0] * 8
    assert last(s, "game_over").data["winner"] == DRAW


def test_bidding_debate_and_speech():
    s = dealt(rules.preset("arena", debate_turns=2), ARENA)
    s = play(s, (0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(0)))
    assert s.phase == "day_bid" and s.queue == tuple(range(8))
    assert rules.legal_actions(s) == [Bid(b) for b in range(11)]
    s = play(s, *[(p, Bid(9 if p in (2, 6) else 3)) for p in range(8)])
    assert s.phase == "day_bid_tie" and rules.chance_outcomes(s) == [(2, 0.5), (6, 0.5)]
    # Secret bids: P5 sees its own bid and, after the turn, everyone's.
    assert [e.data["amount"] for e in rules.knowledge(s, 5).events if e.kind == "my_bid"] == [3]
    s = rules.apply(s, CHANCE, 2)
    assert rules.current_player(s) == 2
    act = SpeechAct("share_check", "assertive", target=0, result="werewolf")
    s = rules.apply(s, 2, act)
    assert last(s, "speech").data["act"]["target"] == 0
    s = play(s, *[(p, Bid(10 if p == 0 else 0)) for p in range(8)])
    s = rules.apply(s, 0, SpeechAct("claim", "calm", role="seer"))
    assert s.phase == "day_vote"


def test_knowledge_hides_roles():
    s = arena()
    k4 = rules.knowledge(s, 4)
    assert k4.role == "villager" and k4.partners == () and k4.checks == ()
    assert all(e.data.get("player") in (4, None) for e in k4.events if e.kind == "role")
    assert rules.knowledge(s, 0).partners == (1,)
    assert rules.knowledge(s, 1).partners == (0,)
    s = play(s, (0, Target(4)))
    assert not any(e.kind == "wolf_vote" for e in rules.knowledge(s, 4).events)
    assert any(e.kind == "wolf_vote" for e in rules.knowledge(s, 1).events)


def test_is_deceptive_in_truth():
    s = play(arena(), (0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(0)))
    lie = rules.is_deceptive_in_truth
    t = "calm"
    assert lie(s, 0, SpeechAct("claim", t, role="seer"))
    assert not lie(s, 2, SpeechAct("claim", t, role="seer"))
    assert lie(s, 0, SpeechAct("accuse", t, target=5))  # wolf knows 5 is no wolf
    assert not lie(s, 0, SpeechAct("accuse", t, target=1))
    assert lie(s, 0, SpeechAct("defend", t, target=1))  # defends its partner
    assert not lie(s, 4, SpeechAct("accuse", t, target=5))  # a villager may be wrong
    assert not lie(s, 2, SpeechAct("share_check", t, target=0, result="werewolf"))
    assert lie(s, 2, SpeechAct("share_check", t, target=0, result="villager"))
    assert lie(s, 2, SpeechAct("share_check", t, target=5, result="villager"))  # unchecked
    assert lie(s, 0, SpeechAct("share_check", t, target=5, result="werewolf"))
    assert lie(s, 2, SpeechAct("defend", t, target=0))  # seer knows 0 is a wolf
    assert not any(lie(s, p, SpeechAct("nothing", t)) for p in range(8))


def test_action_encoding_round_trips():
    for n in (5, 8):
        ids = range(rules.num_distinct_actions(n))
        actions = [rules.decode_action(n, a) for a in ids]
        assert [rules.encode_action(n, a) for a in actions] == list(ids)
        assert len(set(actions)) == len(actions)
        assert [rules.action_from_json(rules.action_to_json(a)) for a in actions] == actions
    assert rules.num_distinct_actions(8) == 337
    with pytest.raises(ValueError):
        rules.decode_action(8, 337)


def test_apply_rejects_wrong_player_and_speech_validation():
    s = arena()
    with pytest.raises(ValueError, match="turn"):
        rules.apply(s, 1, Target(4))
    with pytest.raises(ValueError, match="SpeechAct"):
        SpeechAct("accuse", "calm")
    with pytest.raises(ValueError, match="tone"):
        SpeechAct("nothing", "angry")
    assert dataclasses.replace(s, phase="over").is_terminal()
