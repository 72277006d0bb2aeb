"""Werewolf answer quality: votes against certain knowledge, and where choices stood in lists."""

from __future__ import annotations

import pytest

from games.werewolf import rules
from games.werewolf.play.quality import (
    QualityTally,
    known_teammates,
    listed_report,
    quality_lines,
    series_quality,
)
from games.werewolf.rules import Bid, Save, Skip, Target
from tests.games.werewolf_helpers import dealt

GRATR_SEATS = ("werewolf", "werewolf", "werewolf", "seer", "witch", "guard", "villager", "villager")


def _play(state: rules.GameState, moves) -> rules.GameState:
    """``state`` after ``moves``: ``(player, action)`` in turn order."""
    for player, action in moves:
        state = rules.apply(state, player, action)
    return state


def _vote(state: rules.GameState, votes: dict[int, int]) -> rules.GameState:
    assert state.phase == "day_vote"
    return _play(state, [(p, Target(votes[p])) for p in state.queue])


def _tally(state: rules.GameState) -> dict[str, int]:
    t = QualityTally()
    for e in state.events:
        t.observe({"type": "event", **e.to_json()})
    return t.counts()["contradictions"]


def _events(state: rules.GameState, player: int) -> list[dict]:
    return [e.to_json() for e in rules.knowledge(state, player).events]


def test_a_seer_voting_out_a_player_it_cleared_contradicts_its_check():
    # Arena: wolves 0 and 1, seer 2, doctor 3, villagers 4-7; straight to the vote.
    state = dealt(rules.preset("arena", debate_turns=0))
    state = _play(state, [(0, Target(4)), (1, Target(4)), (3, Target(5)), (2, Target(6))])
    assert rules.knowledge(state, 2).checks == ((6, "villager"),)
    assert known_teammates(_events(state, 2), 2) == {2: "self", 6: "check"}
    assert known_teammates(_events(state, 0), 0) == {0: "self", 1: "partner"}
    assert known_teammates(_events(state, 5), 5) == {5: "self"}
    # The seer votes its cleared villager, wolf 0 its partner; the others are no contradiction.
    state = _vote(state, {0: 1, 1: 2, 2: 6, 3: 0, 5: 0, 6: 0, 7: 0})
    c = _tally(state)
    assert c["seer_votes_cleared"] == 1 and c["wolf_votes_partner"] == 1
    assert c["self_vote"] == c["witch_votes_attacked"] == 0


def test_a_seer_voting_out_the_werewolf_it_found_is_no_contradiction():
    state = dealt(rules.preset("arena", debate_turns=0))
    state = _play(state, [(0, Target(4)), (1, Target(4)), (3, Target(5)), (2, Target(0))])
    assert known_teammates(_events(state, 2), 2) == {2: "self"}
    state = _vote(state, {0: 5, 1: 5, 2: 0, 3: 0, 5: 0, 6: 0, 7: 0})
    assert sum(_tally(state).values()) == 0


def test_a_witch_voting_out_the_player_the_werewolves_attacked_contradicts_what_she_saw():
    # Gratr: wolves 0-2, seer 3, witch 4, guard 5, villagers 6-7. The wolves attack 6,
    # the witch is told and saves 6: the werewolves never attack one of their own.
    state = dealt(rules.preset("gratr", debate_turns=0), GRATR_SEATS)
    state = _play(
        state,
        [(0, Target(6)), (1, Target(6)), (2, Target(6)), (5, Target(7)), (3, Target(0))],
    )
    state = _play(state, [(4, Save()), (4, Skip())])
    assert known_teammates(_events(state, 4), 4) == {4: "self", 6: "attacked"}
    assert known_teammates(_events(state, 3), 3) == {3: "self"}  # checked a werewolf
    # Nobody told anyone else who was attacked: the guard's vote for 6 is none of this.
    state = _vote(state, {0: 7, 1: 7, 2: 7, 3: 0, 4: 6, 5: 6, 6: 0, 7: 0})
    c = _tally(state)
    assert c["witch_votes_attacked"] == 1 and sum(c.values()) == 1


def test_a_vote_of_the_next_day_still_counts_an_earlier_check():
    state = dealt(rules.preset("arena", debate_turns=1))
    state = _play(state, [(0, Target(4)), (1, Target(4)), (3, Target(4)), (2, Target(7))])
    state = _play(state, [(p, Bid(10 if p == 2 else 0)) for p in state.queue])
    state = _play(state, [(2, rules.SpeechAct("accuse", "calm", target=7))])  # accuses cleared
    state = _vote(state, {0: 5, 1: 5, 2: 5, 3: 5, 4: 5, 5: 6, 6: 5, 7: 5})  # 5 is exiled
    state = _play(state, [(0, Target(6)), (1, Target(6)), (3, Target(3)), (2, Target(1))])
    state = _play(state, [(p, Bid(10 if p == 2 else 0)) for p in state.queue])
    state = _play(state, [(2, rules.SpeechAct("nothing", "calm"))])
    state = _vote(state, {0: 7, 1: 7, 2: 7, 3: 1, 4: 1, 7: 1})  # the seer votes out cleared 7
    c = _tally(state)
    assert c["seer_accuses_cleared"] == 1 and c["seer_votes_cleared"] == 1
    assert sum(c.values()) == 2


def test_listed_report_and_uniform_expectation():
    # Four choices from lists of 4 and four of 2: first 3 times, second 3 times.
    report = listed_report({"4:1": 2, "4:2": 1, "4:4": 1, "2:1": 1, "2:2": 2, "1:1": 1})
    assert report is not None
    assert (report["choices"], report["first"], report["second"]) == (8, 4, 3)
    assert report["first_share"] == pytest.approx(0.5)
    assert report["uniform_first"] == pytest.approx((4 * 0.25 + 3 * 0.5 + 1.0) / 8)
    assert report["uniform_second"] == pytest.approx((4 * 0.25 + 3 * 0.5) / 8)  # one of 1
    assert listed_report({}) is None


def test_offered_records_count_where_the_chosen_player_stood():
    t = QualityTally()
    for phase, players, choice in (
        ("night_wolves", [5, 2, 7], 5),
        ("night_seer", [3, 0], 0),
        ("day_vote", [6, 4, 1, 0], 1),
        ("day_vote", [6, 4, 1, 0], 9),  # not listed: not counted
    ):
        t.observe(
            {"type": "offered", "seat": 1, "phase": phase, "players": players, "choice": choice}
        )
    c = t.counts()
    assert c["listed_night_targets"] == {"3:1": 1, "2:2": 1} and c["listed_votes"] == {"4:3": 1}
    q = series_quality({"parsed": {}}, [c, c])
    assert q["listed"]["night_targets"]["first"] == 2 and q["listed"]["votes"]["first"] == 0
    assert q["listed"]["all"]["choices"] == 6
    line = quality_lines(q)[-1]
    assert line.startswith("  choices listed first / second: night targets 2 / 2 of 4 (50 % / 50 %")
    # A game logged before the lists were shuffled has no such counts: no line, no shares.
    old = series_quality({"parsed": {}}, [{"votes": {"1": 2}}])
    assert old["listed"] == {"night_targets": None, "votes": None, "all": None}
    assert not any("listed" in x for x in quality_lines(old))
