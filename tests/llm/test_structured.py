"""Structured answers: one answer format gives the schema and the validator.

Checks that what a format's schema allows is what its reader accepts (with an
independent JSON-schema validator), that the schema is part of a request's
identity, that every task of the fruit-trading and opponent prompt books
declares a format, that the scripted stand-in's answers to structured requests
validate against their schemas, and that the remote backends send the schema.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import jsonschema
import pytest

import games  # noqa: F401 - registers the scripted tasks
from games.engine.calls import run_sync
from games.fruit_trading import dialogue
from games.fruit_trading import prompts as fruit_prompts
from gt_llm.answers import AnswerFormat, boolean, choice, integer, items, nested, number, text
from gt_llm.backends.remote import response_format
from gt_llm.backends.scripted import ScriptedModel
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Message
from gt_llm.errors import ParseError
from gt_llm.opponents import OPPONENT_PROMPTS, SpeechAct
from gt_llm.opponents.extraction import (
    identity_request,
    intent_request,
    read_identity_judgments,
    read_intents,
    read_relevance,
    rerank_request,
)

FORMAT = AnswerFormat(
    (
        choice("fruit", ("apples", "bananas")),
        integer("count", range(3)),
        number("confidence", 0, 1),
        boolean("save", (False,)),
        text("reason", 20, required=False),
        nested("basket", [integer("apples", range(2))]),
        items("records", [choice("player", ("Ann", "Bob"))], max_items=2),
    )
)
GOOD = {
    "fruit": "apples",
    "count": 2,
    "confidence": 0.5,
    "save": False,
    "basket": {"apples": 1},
    "records": [{"player": "Bob"}],
}


def test_reader_accepts_what_the_schema_allows():
    jsonschema.Draft202012Validator.check_schema(FORMAT.schema())
    jsonschema.validate(GOOD, FORMAT.schema())
    assert FORMAT.read("Sure: " + json.dumps(GOOD)) == {**GOOD, "confidence": 0.5}


@pytest.mark.parametrize(
    "change",
    [
        {"fruit": "pears"},
        {"count": 3},
        {"count": True},
        {"confidence": 1.5},
        {"save": True},
        {"reason": "x" * 21},
        {"basket": {"apples": 2}},
        {"records": [{"player": "Cy"}]},
        {"records": [{"player": "Ann"}] * 3},
    ],
)
def test_reader_and_schema_reject_the_same_illegal_values(change):
    bad = {**GOOD, **change}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, FORMAT.schema())
    with pytest.raises(ParseError):
        FORMAT.read(json.dumps(bad))


def test_missing_required_key_is_a_parse_error():
    bad = dict(GOOD)
    del bad["count"]
    with pytest.raises(ParseError, match="count"):
        FORMAT.read(json.dumps(bad))


def test_discriminated_union_needs_the_keys_of_its_branch():
    fmt = AnswerFormat(
        (choice("act", ("accuse", "nothing")),),
        discriminator="act",
        variants={"accuse": (integer("target", (1, 2)),)},
    )
    schema = fmt.schema()
    jsonschema.validate({"act": "accuse", "target": 2}, schema)
    jsonschema.validate({"act": "nothing"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"act": "accuse"}, schema)
    assert fmt.read('{"act": "accuse", "target": 1}') == {"act": "accuse", "target": 1}
    with pytest.raises(ParseError):
        fmt.read('{"act": "accuse"}')


def _request(schema=None) -> ChatRequest:
    return ChatRequest("t", {}, (Message("user", "hi"),), seed=1, schema=schema)


def test_schema_is_part_of_the_cache_key_and_absent_schema_keeps_old_keys():
    plain, one, other = (
        _request(),
        _request({"type": "object"}),
        _request({"type": "object", "required": []}),
    )
    assert len({r.cache_key("b", "m") for r in (plain, one, other)}) == 3
    # The key of a free-text request is the hash of the fields it always had.
    assert plain.cache_key("b", "m") == ChatRequest(
        "t", {}, (Message("user", "hi"),), seed=1
    ).cache_key("b", "m")
    assert one.with_seed(5).schema_dict() == {"type": "object"}


def test_structured_render_carries_schema_answer_line_and_enough_tokens():
    fields = {"player": 0, "observer": "Ann", "opponent": "Bob", "dialogue": "(none)", "turns": []}
    free = fruit_prompts.GUESS_FRUIT.render(fields)
    structured = fruit_prompts.GUESS_FRUIT.render(fields, structured=True)
    assert free.schema is None
    assert structured.schema_dict() == fruit_prompts.GUESS_ANSWER.schema()
    assert structured.messages[-1].content.startswith(free.messages[-1].content)
    assert '"fruit"' in structured.messages[-1].content
    assert structured.max_tokens >= fruit_prompts.GUESS_ANSWER.token_budget() > free.max_tokens


@pytest.mark.parametrize("book", [fruit_prompts.BOOK, OPPONENT_PROMPTS], ids=["fruit", "opponents"])
def test_every_task_declares_an_answer_format(book):
    for template in book:
        assert template.answer is not None, template.task


class _Recorder(ChatModel):
    backend, model = "scripted", "rules-v2"

    def __init__(self) -> None:
        self.inner = ScriptedModel()
        self.seen: list[tuple[ChatRequest, ChatResponse]] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = self.inner.complete(request)
        self.seen.append((request, response))
        return response


def _play(structured: bool, init: int, tones, beliefs: bool):
    cfg = dialogue.Config(max_messages=4, beliefs=beliefs, structured=structured)
    state = dialogue.initial_state(cfg.scenario(init), cfg)
    model = _Recorder()
    for k, tone in enumerate(tones):
        if state.is_terminal():
            break
        state = run_sync(dialogue.step(state, tone, k % 2), model)
    return state, model


@pytest.mark.slow  # about 4 s; CI runs it in its slow step
def test_scripted_fruit_answers_validate_and_match_the_free_text_results():
    tasks = set()
    for init, tones, beliefs in itertools.product(
        range(6), itertools.product(("assertive", "submissive", "any"), repeat=2), (False, True)
    ):
        played = ("calm", *tones, "calm")
        on, model = _play(True, init, played, beliefs)
        off, _ = _play(False, init, played, beliefs)
        assert on.returns() == off.returns()
        assert [t.text for t in on.turns] == [t.text for t in off.turns]
        assert on.guesses == off.guesses
        for request, response in model.seen:
            tasks.add(request.task)
            jsonschema.validate(json.loads(response.text), request.schema_dict())
    assert tasks == {t.task for t in fruit_prompts.BOOK}


def _extraction_requests(structured: bool):
    players = ["P1", "P2", "P3", "P4"]
    acts = [
        SpeechAct("claim", "P2", role="seer"),
        SpeechAct("accuse", "P2", target="P3"),
        SpeechAct("defend", "P2", target="P1"),
        SpeechAct("share_check", "P2", target="P1", role="werewolf"),
        SpeechAct("reveal", "", target="P4", role="werewolf"),
        SpeechAct("nothing", "P2"),
    ]
    for act, self_role in itertools.product(acts, ("seer", "villager")):
        common = dict(
            players=players,
            self_id="P1",
            self_role=self_role,
            unique=["seer"],
            impostor="werewolf",
            statement="I have something to say.",
            act=act,
            structured=structured,
        )
        yield identity_request(identities=["werewolf", "seer", "villager"], **common)
        yield intent_request(**common)
    yield rerank_request(
        goal="vote",
        focus=["P3"],
        speaker="P2",
        target="P3",
        step=1,
        message="x",
        structured=structured,
    )


def test_scripted_opponent_answers_validate_and_read_as_the_free_text_records():
    from gt_llm.opponents.extraction import parse_identity_judgments, parse_intents, parse_relevance

    model = ScriptedModel()
    readers = {
        "opponents.identity": read_identity_judgments,
        "opponents.intent": read_intents,
        "opponents.rerank": read_relevance,
    }
    free_readers = {
        "opponents.identity": lambda r, t: parse_identity_judgments(
            t, players=list(r.fields["players"]), identities=list(r.fields["options"])
        ),
        "opponents.intent": lambda r, t: parse_intents(t, players=list(r.fields["players"])),
        "opponents.rerank": lambda r, t: parse_relevance(t),
    }
    for on, off in zip(_extraction_requests(True), _extraction_requests(False), strict=True):
        answer = model.complete(on).text
        jsonschema.validate(json.loads(answer), on.schema_dict())
        assert readers[on.task](on, answer) == free_readers[off.task](off, model.complete(off).text)


def test_openai_payload_sends_the_schema_and_groq_only_for_schema_models(monkeypatch):
    from gt_llm.backends.groq_backend import JSON_SCHEMA_MODELS, GroqModel
    from gt_llm.backends.openai_compat import OpenAICompatModel

    req = fruit_prompts.GUESS_FRUIT.render(
        {"player": 0, "observer": "Ann", "opponent": "Bob", "dialogue": "", "turns": []},
        structured=True,
    )
    openai = OpenAICompatModel("m", "http://127.0.0.1:9/v1")
    body = openai.payload(req)
    assert body["response_format"] == response_format(req.task, req.schema_dict())
    assert body["response_format"]["json_schema"]["schema"] == req.schema_dict()
    free = dataclasses.replace(req, fields=req.fields_dict(), schema=None)
    assert "response_format" not in openai.payload(free)
    monkeypatch.setenv("GROQ_API_KEY", "test-key")
    assert "response_format" not in GroqModel("llama-3.3-70b-versatile").payload(req)
    assert "response_format" in GroqModel(sorted(JSON_SCHEMA_MODELS)[0]).payload(req)


def test_every_werewolf_task_declares_an_answer_format():
    from games.werewolf.players import prompts as ww_prompts

    for template in ww_prompts.BOOK:
        assert template.answer is not None, template.task


@pytest.mark.parametrize("preset", ["arena", "gratr"])
def test_scripted_werewolf_answers_validate_and_play_the_same_game(preset):
    from games.werewolf import rules
    from games.werewolf.arena.matches import play_arena_game
    from games.werewolf.players import prompts as ww_prompts

    played = {}
    for structured in (True, False):
        model = _Recorder()
        game, deception = play_arena_game(
            rules.preset(preset),
            model,
            wolf_model="gratr",
            leader_model="dirichlet",
            seed=3,
            structured=structured,
        )
        played[structured] = (game, deception.to_dict(), model)
    assert played[True][:2] == played[False][:2]
    tasks = set()
    for request, response in played[True][2].seen:
        tasks.add(request.task)
        assert request.schema is not None
        jsonschema.validate(json.loads(response.text), request.schema_dict())
    # Every Werewolf task of the preset's roles, and GRATR's two extraction tasks.
    expected = {t.task for t in ww_prompts.BOOK} | {"opponents.identity", "opponents.intent"}
    if preset == "arena":
        expected -= {ww_prompts.NIGHT_WITCH.task}
    assert tasks == expected
