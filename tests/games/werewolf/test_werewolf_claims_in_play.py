"""Claims of roles nobody holds at the table are not offered to a model.

A claim of a role absent from the preset (a doctor at the gratr table) is a lie
every player can see, and the opponent models' structured extraction has no
such role among its identities, so reading it fell back. The speech-act menu
and its schema list only the roles in play (and, when a check reveals roles,
only results some player can have); the rules themselves still allow any claim.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import gt_llm
from games.werewolf import rules
from games.werewolf.arena.matches import play_arena_game
from games.werewolf.config import Config
from games.werewolf.players import llm as players
from games.werewolf.players import parsing
from games.werewolf.rules import Bid, Save, Skip, Target
from gt_llm.errors import ParseError
from tests.games.werewolf_helpers import dealt

GRATR_SEATS = ("werewolf", "werewolf", "werewolf", "seer", "witch", "guard", "villager", "villager")


def _speech_request(preset: str) -> tuple[rules.GameState, object]:
    """The first speech-act request of day 1, the seer speaking (structured)."""
    if preset == "gratr":
        state = dealt(preset, GRATR_SEATS)
        moves = [(0, Target(6)), (1, Target(6)), (2, Target(6)), (5, Target(7)), (3, Target(0))]
        moves += [(4, Save()), (4, Skip())]
        seer = 3
    else:
        state = dealt(preset)
        moves = [(0, Target(4)), (1, Target(4)), (3, Target(5)), (2, Target(6))]
        seer = 2
    for p, a in moves:
        state = rules.apply(state, p, a)
    for p in state.queue:
        state = rules.apply(state, p, Bid(10 if p == seer else 0))
    assert state.phase == "day_speak" and state.speaker == seer
    step = players.decide(
        rules.knowledge(state, seer),
        rules.legal_actions(state),
        seed=1,
        rng=np.random.default_rng(0),
        structured=True,
    )
    return state, step.send(None).request


@pytest.mark.parametrize(
    ("preset", "roles", "results"),
    [
        ("gratr", ["villager", "werewolf", "seer", "witch", "guard"], ["werewolf", "not_werewolf"]),
        (
            "arena",
            ["villager", "werewolf", "seer", "doctor"],
            ["villager", "werewolf", "seer", "doctor"],
        ),
    ],
)
def test_the_menu_and_schema_offer_only_the_roles_in_play(preset, roles, results):
    state, request = _speech_request(preset)
    assert list(state.config.roles_in_play) == roles
    assert list(request.fields["roles"]) == roles and list(request.fields["results"]) == results
    text = request.messages[-1].content
    assert f"Roles you may claim: {', '.join(roles)}." in text
    claim = next(v for v in request.schema["anyOf"] if v["properties"]["act"]["enum"] == ("claim",))
    assert list(claim["properties"]["role"]["enum"]) == roles
    # The rules still allow every claim (a human seat sees them all).
    legal = {a.role for a in rules.legal_actions(state) if a.kind == "claim"}
    assert legal == set(rules.ROLES)


@pytest.mark.parametrize("structured", [False, True])
def test_a_claim_of_a_role_nobody_holds_is_not_an_offered_answer(structured):
    _, request = _speech_request("gratr")
    if not structured:
        request = players.prompts.SPEECH_ACT.render(request.fields, seed=request.seed)
    parse = parsing.parser_for(request)
    ok = parse(json.dumps({"act": "claim", "tone": "calm", "role": "witch", "reason": "x"}))
    assert ok.role == "witch"
    with pytest.raises(ParseError):
        parse(json.dumps({"act": "claim", "tone": "calm", "role": "doctor", "reason": "x"}))


def _claims_and_fallbacks(tmp_path, name: str) -> tuple[list[str], dict[str, int]]:
    """A gratr arena game of the stand-in (GRATR werewolves, plain villagers), seed 4."""
    log = tmp_path / f"{name}.jsonl"
    play_arena_game(
        rules.preset("gratr"),
        gt_llm.load_model("scripted"),
        wolf_model="gratr",
        leader_model="none",
        seed=4,
        log=log,
    )
    records = [json.loads(line) for line in log.read_text().splitlines()]
    claims = [
        r["act"]["role"]
        for r in records
        if r["type"] == "event" and r["kind"] == "speech" and r["act"]["kind"] == "claim"
    ]
    result = next(r for r in records if r["type"] == "result")
    return claims, result["parse_stats"]["fallbacks"]


def test_a_doctor_claim_at_the_gratr_table_no_longer_makes_the_extraction_fall_back(
    tmp_path, monkeypatch
):
    claims, fallbacks = _claims_and_fallbacks(tmp_path, "now")
    assert set(claims) <= set(rules.preset("gratr").roles_in_play)
    assert fallbacks == {}
    # The same game with every role offered: a werewolf claims the doctor, and the
    # opponent models' structured identity reading of that claim falls back.
    monkeypatch.setattr(Config, "roles_in_play", property(lambda self: rules.ROLES))
    claims, fallbacks = _claims_and_fallbacks(tmp_path, "every_role")
    assert "doctor" in claims and fallbacks.get("opponents.identity", 0) > 0
