"""Werewolf parsers: good and bad answers, validated against the request's options."""

from __future__ import annotations

import dataclasses

import pytest

from games.werewolf.players import llm as players
from games.werewolf.players import parsing
from games.werewolf.players.parsing import PeerReport, SelfReport, WitchChoice
from games.werewolf.players.view import PlayerView, PublicStatement
from games.werewolf.rules import SPEECH_ACTS, SpeechAct
from gt_llm.errors import ParseError

VIEW = PlayerView(
    player=0,
    role="werewolf",
    num_players=8,
    alive=(0, 1, 2, 3, 5, 6),  # players 4 and 7 are dead
    partners=(3,),
    check_results=("werewolf", "not_werewolf"),
)


def request_of(step, send=None):
    call = step.send(None)
    if send is not None:
        call = step.send(send)
    return call.request


def parse(request, text):
    return parsing.parser_for(request)(text)


VOTE = request_of(players.vote(VIEW, [1, 2, 3, 5, 6], seed=0))
KILL = request_of(players.night_kill(VIEW, [1, 2, 5, 6], seed=0))
BID = request_of(players.bid(VIEW, seed=0))
SPEECH = request_of(
    players.speak(
        VIEW, acts=SPEECH_ACTS, tones=["calm", "assertive"], targets=[1, 2, 3, 5, 6],
        roles=["villager", "seer"], seed=0,
    )
)  # fmt: skip
WITCH_VIEW = dataclasses.replace(VIEW, player=1, role="witch", partners=())
WITCH = request_of(
    players.night_witch(WITCH_VIEW, [1, 2, 5], victim=2, can_save=True, can_poison=True, seed=0)
)
WITCH_USED = request_of(
    players.night_witch(
        WITCH_VIEW, [1, 2, 5], victim=None, can_save=False, can_poison=False, seed=0
    )
)
STMT = PublicStatement(0, 1, 5, SpeechAct("nothing", "calm"), "Hello.")
_analysis = players.analyse_statement({5: VIEW, 0: VIEW}, STMT, seed=0).send(None)
SELF, PEER = _analysis[0].request, _analysis[1].request


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"vote": 2, "reason": "x"}', 1),
        ('```json\n{"vote": 6}\n```', 5),
        ('Sure! Here is my answer:\n{"vote": "Player 3"} Hope it helps.', 2),
        ('{"vote": "4"}', 3),
        ('{"vote": 2.0}', 1),
    ],
)
def test_vote_good_forms(text, expected):
    assert parse(VOTE, text) == expected


@pytest.mark.parametrize(
    "text, why",
    [
        ('{"vote": 9}', "unknown player"),
        ('{"vote": 5}', "dead player"),
        ('{"vote": 1}', "self"),
        ('{"target": 2}', "missing key"),
        ('{"vote": true}', "bool"),
        ('{"vote": "the baker"}', "not a number"),
        ("I vote for Player 2", "no JSON"),
        ('{"vote": 2', "broken JSON"),
    ],
)
def test_vote_bad_forms_raise_with_raw_text(text, why):
    with pytest.raises(ParseError) as err:
        parse(VOTE, text)
    assert err.value.raw == text, why


def test_kill_rejects_partner_and_dead():
    assert parse(KILL, '{"target": 2}') == 1
    for text in ('{"target": 4}', '{"target": 5}', '{"target": 8}', '{"target": 0}'):
        with pytest.raises(ParseError):
            parse(KILL, text)


@pytest.mark.parametrize(
    "text, expected", [('{"bid": 0}', 0), ('{"bid": "10"}', 10), ('{"bid": 7.0}', 7)]
)
def test_bid_good(text, expected):
    assert parse(BID, text) == expected


@pytest.mark.parametrize(
    "text", ['{"bid": 11}', '{"bid": -1}', '{"bid": 3.5}', '{"bid": "high"}', "{}"]
)
def test_bid_out_of_range_or_missing(text):
    with pytest.raises(ParseError):
        parse(BID, text)


def test_speech_act_good_forms():
    assert parse(SPEECH, '{"act": "accuse", "tone": "calm", "target": 3}') == SpeechAct(
        "accuse", "calm", target=2
    )
    assert parse(SPEECH, '{"act": "claim", "tone": "Assertive", "role": "seer"}') == SpeechAct(
        "claim", "assertive", role="seer"
    )
    assert parse(
        SPEECH, '{"act": "share check", "tone": "calm", "target": 2, "result": "not werewolf"}'
    ) == SpeechAct("share_check", "calm", target=1, result="not_werewolf")
    # Keys an act does not need are ignored.
    assert parse(SPEECH, '{"act": "nothing", "tone": "calm", "target": 99}') == SpeechAct(
        "nothing", "calm"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"act": "accuse", "tone": "calm"}',  # no target
        '{"act": "accuse", "tone": "calm", "target": 5}',  # dead target
        '{"act": "accuse", "tone": "submissive", "target": 2}',  # tone not offered
        '{"act": "lie", "tone": "calm"}',  # unknown act
        '{"act": "claim", "tone": "calm", "role": "doctor"}',  # role not offered
        '{"act": "share_check", "tone": "calm", "target": 2, "result": "seer"}',  # bad result
        '{"tone": "calm"}',  # missing key
    ],
)
def test_speech_act_bad_forms(text):
    with pytest.raises(ParseError):
        parse(SPEECH, text)


def test_witch():
    assert parse(WITCH, '{"save": true, "poison": null}') == WitchChoice(True, None)
    assert parse(WITCH, '{"save": "no", "poison": 2}') == WitchChoice(False, 1)
    assert parse(WITCH_USED, '{"save": false, "poison": "none"}') == WitchChoice(False, None)
    for req, text in [
        (WITCH_USED, '{"save": true, "poison": null}'),  # nothing to save
        (WITCH_USED, '{"save": false, "poison": 2}'),  # poison used
        (WITCH, '{"save": true, "poison": 3}'),  # saving and poisoning the victim
        (WITCH, '{"save": false, "poison": 4}'),  # partner not offered
        (WITCH, '{"save": false}'),  # missing key
    ]:
        with pytest.raises(ParseError):
            parse(req, text)


def test_self_and_peer_analysis():
    assert parse(SELF, '{"deceptive": true, "type": "fabrication", "confidence": 0.9}') == (
        SelfReport(True, "fabrication", 0.9)
    )
    assert parse(SELF, '{"deceptive": false, "type": "none", "confidence": 1}') == SelfReport(
        False, "none", 1.0
    )
    for text in [
        '{"deceptive": true, "type": "none", "confidence": 0.9}',  # inconsistent
        '{"deceptive": false, "type": "lying", "confidence": 0.9}',  # unknown type
        '{"deceptive": false, "type": "none", "confidence": 7}',  # out of range
        '{"deceptive": false, "type": "none"}',  # missing key
    ]:
        with pytest.raises(ParseError):
            parse(SELF, text)
    text = '{"label": "Deceptive", "confidence": 0.7, "suspicion": 0.9, "reasoning": "r"}'
    assert parse(PEER, text) == PeerReport(True, 0.7, 0.9, "r")
    for text in [
        '{"label": "maybe", "confidence": 0.7, "suspicion": 0.9, "reasoning": "r"}',
        '{"label": "truthful", "confidence": 0.7, "suspicion": 1.5, "reasoning": "r"}',
        '{"label": "truthful", "confidence": 0.7, "suspicion": 0.2}',
    ]:
        with pytest.raises(ParseError):
            parse(PEER, text)


def test_fallbacks_are_documented_values():
    scratch = request_of(
        players.update_scratchpad(VIEW.with_scratchpad("old notes"), "day 1", seed=0)
    )
    stmt_req = request_of(
        players.speak(VIEW, acts=["accuse"], tones=["calm"], targets=[1], roles=[], seed=0),
        SpeechAct("accuse", "calm", target=1),
    )
    assert parsing.fallback_for(VOTE) is None
    assert parsing.fallback_for(KILL) is None
    assert parsing.fallback_for(BID) == 0
    assert parsing.fallback_for(SPEECH) == SpeechAct("nothing", "calm")
    assert parsing.fallback_for(WITCH) == WitchChoice(False, None)
    assert parsing.fallback_for(scratch) == "old notes"
    assert parsing.fallback_for(stmt_req) == "I think Player 2 is a werewolf."
    assert parsing.fallback_for(SELF) is None
    assert parsing.fallback_for(PEER) is None
    assert set(parsing.FALLBACKS) == set(parsing.PARSERS)
