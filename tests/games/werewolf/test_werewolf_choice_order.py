"""Players to choose from are listed in an order seeded by the request, and read back by content.

A small model favours the first players a prompt lists; every request that
lists players to choose from lists them in an order of its own, a pure
function of the rest of the request (:mod:`games.werewolf.players.order`).
"""

from __future__ import annotations

import json
import logging

import pytest

import gt_llm
from games.werewolf import rules
from games.werewolf.players import llm as players
from games.werewolf.players import order, parsing, prompts
from games.werewolf.players.table import play_llm_game
from games.werewolf.players.view import PlayerView
from games.werewolf.rules import SPEECH_ACTS, TONES
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse

ALL = tuple(range(8))
OTHERS = [0, 2, 3, 4, 5, 6, 7]


def view(round_: int = 1, **kw) -> PlayerView:
    base = dict(
        player=1,
        role="seer",
        num_players=8,
        alive=ALL,
        round=round_,
        check_results=("werewolf", "not_werewolf"),
    )
    base.update(kw)
    return PlayerView(**base)


def request_of(step) -> ChatRequest:
    return step.send(None).request


def vote_request(seed: int = 1, round_: int = 1, structured: bool = True) -> ChatRequest:
    return request_of(players.vote(view(round_, structured=structured), OTHERS, seed=seed))


def schema_enum(request: ChatRequest, key: str) -> list[int]:
    return list(request.schema["properties"][key]["enum"])


def test_the_same_request_lists_its_choices_in_the_same_order():
    a, b = vote_request(), vote_request()
    assert a.fields["options"] == b.fields["options"]
    assert a.messages == b.messages and a.schema == b.schema
    # The options are the legal ones, each once, whatever the order.
    assert sorted(a.fields["options"]) == OTHERS


def test_requests_that_differ_list_their_choices_in_orders_of_their_own():
    by_seed = {tuple(vote_request(seed=s).fields["options"]) for s in range(8)}
    by_round = {tuple(vote_request(round_=r).fields["options"]) for r in range(1, 9)}
    assert len(by_seed) >= 6 and len(by_round) >= 6  # 7! orders: repeats are rare


def test_the_text_and_the_schema_list_the_choices_in_the_request_order():
    seer = view(structured=True)
    wolf = view(role="werewolf", partners=(0,), structured=True)
    doctor = view(role="doctor", structured=True)
    witch = view(role="witch", structured=True)
    cases = {
        "Valid targets: ": (players.night_kill(wolf, [2, 3, 4, 5, 6, 7], seed=3), "target"),
        "Valid choices: ": (players.night_protect(doctor, list(ALL), seed=3), "target"),
        "Valid votes: ": (players.vote(seer, OTHERS, seed=3), "vote"),
        "Players you may poison: ": (
            players.night_witch(witch, OTHERS, victim=4, can_save=True, can_poison=True, seed=3),
            "poison",
        ),
    }
    for label, (step, key) in cases.items():
        request = request_of(step)
        listed = request.fields["options"]
        text = request.messages[-1].content
        assert f"{label}{prompts.players_text(listed)}." in text, label
        enum = [n for n in schema_enum(request, key) if n is not None]
        assert enum == [p + 1 for p in listed], label
    check = request_of(players.night_check(seer, OTHERS, seed=3))
    assert f"Valid choices: {prompts.players_text(check.fields['options'])}." in (
        check.messages[-1].content
    )


def test_speech_act_targets_follow_the_request_order():
    step = players.speak(
        view(structured=True),
        acts=SPEECH_ACTS,
        tones=TONES[:3],
        targets=OTHERS,
        roles=["villager", "seer"],
        seed=5,
    )
    request = request_of(step)
    targets = request.fields["targets"]
    assert sorted(targets) == OTHERS
    assert f"Targets: {prompts.players_text(targets)}." in request.messages[-1].content
    enums = [
        list(v["properties"]["target"]["enum"])
        for v in request.schema["anyOf"]
        if "target" in v["properties"]
    ]
    assert enums and all(e == [p + 1 for p in targets] for e in enums)


@pytest.mark.parametrize("structured", [False, True])
def test_an_answer_maps_back_to_its_player_whatever_the_order(structured):
    for seed in range(12):
        request = vote_request(seed=seed, structured=structured)
        parse = parsing.parser_for(request)
        for p in OTHERS:
            assert parse(json.dumps({"vote": p + 1, "reason": "x"})) == p
        with pytest.raises(gt_llm.errors.ParseError):
            parse(json.dumps({"vote": 2, "reason": "x"}))  # the seer itself: not listed


def test_offer_order_depends_on_the_set_not_the_callers_order():
    fields = {"player": 1, "history": "(nothing yet)"}
    a = order.offer_order([5, 2, 7, 0], task="t", fields=fields, seed=9)
    b = order.offer_order([0, 2, 5, 7], task="t", fields=fields, seed=9)
    assert a == b and sorted(a) == [0, 2, 5, 7]
    assert order.offer_order([3], task="t", fields=fields, seed=9) == [3]
    assert order.listed_position(a, a[1]) == 2 and order.listed_position(a, 4) is None


class _Recording(ChatModel):
    """The scripted model, keeping every request it answers."""

    def __init__(self) -> None:
        self.inner = gt_llm.load_model("scripted")
        self.backend, self.model = self.inner.backend, self.inner.model
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return self.inner.complete(request)


def _choices(request: ChatRequest) -> list[int]:
    key = "targets" if request.task == prompts.SPEECH_ACT.task else "options"
    return list(request.fields[key])


def _reordered(request: ChatRequest) -> ChatRequest:
    """The same request with its choices listed in reverse."""
    fields = dict(request.fields)
    template = prompts.BOOK[request.task]
    if request.task == prompts.SPEECH_ACT.task:
        fields["targets"] = list(reversed(fields["targets"]))
        fields["options_text"] = prompts.speech_options_text(
            fields["acts"], fields["tones"], fields["targets"], fields["roles"], fields["results"]
        )
    else:
        fields["options"] = list(reversed(fields["options"]))
        fields["options_text"] = prompts.players_text(fields["options"])
    return template.render(fields, seed=request.seed, structured=request.schema is not None)


def test_the_stand_in_answers_the_same_whatever_the_order():
    model = _Recording()
    play_llm_game(rules.preset("gratr"), model, seed=2)
    choosing = {
        prompts.NIGHT_KILL.task,
        prompts.NIGHT_PROTECT.task,
        prompts.NIGHT_CHECK.task,
        prompts.NIGHT_WITCH.task,
        prompts.SPEECH_ACT.task,
        prompts.VOTE.task,
    }
    asked = [r for r in model.requests if r.task in choosing]
    assert {r.task for r in asked} == choosing
    scripted = gt_llm.load_model("scripted")
    for request in asked:
        other = _reordered(request)
        assert other.messages != request.messages or len(_choices(request)) < 2
        answer = parsing.parser_for(request)(scripted.complete(request).text)
        again = parsing.parser_for(other)(scripted.complete(other).text)
        assert answer == again, request.task


@pytest.mark.parametrize("preset", ["arena", "gratr"])
def test_stand_in_games_are_the_same_with_the_choices_listed_in_seat_order(preset, monkeypatch):
    model = gt_llm.load_model("scripted")
    shuffled, _ = play_llm_game(rules.preset(preset), model, seed=3)
    monkeypatch.setattr(players, "offer_order", lambda choices, **kw: sorted(choices))
    ascending, _ = play_llm_game(rules.preset(preset), model, seed=3)
    assert shuffled.digest == ascending.digest and shuffled.winner == ascending.winner


def test_offered_records_name_the_listed_players_and_the_action_taken():
    records: list[dict] = []
    logging.disable(logging.WARNING)
    try:
        play_llm_game(
            rules.preset("arena"), gt_llm.load_model("scripted"), seed=1, on_record=records.append
        )
    finally:
        logging.disable(logging.NOTSET)
    offered = [r for r in records if r["type"] == "offered"]
    actions = [r for r in records if r["type"] == "action" and r["action"]["type"] == "Target"]
    assert len(offered) == len(actions) > 0  # every night target and vote, none defaulted
    for rec in offered:
        assert rec["choice"] in rec["players"] and len(set(rec["players"])) == len(rec["players"])
        taken = next(
            a
            for a in actions
            if a["player"] == rec["seat"]
            and a["phase"] == rec["phase"]
            and records.index(a) > records.index(rec)
        )
        assert taken["action"]["player"] == rec["choice"]
    result = next(r for r in records if r["type"] == "result")
    listed = sum(result["quality"]["listed_night_targets"].values()) + sum(
        result["quality"]["listed_votes"].values()
    )
    assert listed == len(offered)
