"""Typed parsers and the re-ask / fallback policy."""

from __future__ import annotations

import threading

import pytest

import gt_llm
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.errors import ParseError
from gt_llm.parsing import (
    ParsePolicy,
    ParseStats,
    complete_parsed,
    complete_parsed_batch,
    parse_choice,
    parse_json_object,
    parse_number,
    parse_yes_no,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Yes.", True), ("no", False), ("Agreement reached!", True), ("No agreement yet", False),
     ("I think yes, not no", True), ("no, yes", False), ("Agreed", True)],
)  # fmt: skip
def test_parse_yes_no(text, expected):
    assert parse_yes_no(text) is expected


@pytest.mark.parametrize("text", ["maybe", "", "perhaps later"])
def test_parse_yes_no_rejects(text):
    with pytest.raises(ParseError) as err:
        parse_yes_no(text)
    assert err.value.raw == text


@pytest.mark.parametrize(
    ("text", "label", "expected"),
    [("I bid 7", None, 7.0), ("-3.5 points", None, -3.5), ("\u22122", None, -2.0),
     ("bid: 3 ... final bid: 9", "bid", 9.0), ("Score = 4.25", "score", 4.25)],
)  # fmt: skip
def test_parse_number(text, label, expected):
    assert parse_number(text, label=label) == expected


def test_parse_number_rejects():
    with pytest.raises(ParseError) as err:
        parse_number("no digits here")
    assert err.value.raw == "no digits here"
    with pytest.raises(ParseError, match="after 'bid:'"):
        parse_number("I say 5", label="bid")


def test_parse_choice():
    opts = ["apples", "bananas", "cherries"]
    assert parse_choice("I want an apple", opts) == "apples"
    assert parse_choice("BANANAS please", opts) == "bananas"
    for bad in ["nothing", "apples and bananas"]:
        with pytest.raises(ParseError) as err:
            parse_choice(bad, opts)
        assert err.value.raw == bad


def test_parse_json_object():
    assert parse_json_object('```json\n{"a": 1, "b": [2]}\n```', keys=["a"]) == {"a": 1, "b": [2]}
    for bad in ["no json", "{not: json}", "[1, 2]", '{"b": 1}']:
        with pytest.raises(ParseError) as err:
            parse_json_object(bad, keys=["a"])
        assert err.value.raw == bad


class SeedAnswers(ChatModel):
    """Answers from a {seed: text} table; records the seeds asked."""

    backend = "fake"
    model = "seeds"

    def __init__(self, table: dict[int, str]):
        self.table = table
        self.seeds: list[int] = []
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            self.seeds.append(request.seed)
        return ChatResponse(self.table.get(request.seed, "gibberish"), self.backend, self.model)


def test_complete_parsed_batch_reasks_then_falls_back():
    policy = ParsePolicy(max_reasks=2, seed_stride=100)
    # seed 0 parses at once; seed 1 parses on the first re-ask (101); seed 2 never does.
    model = SeedAnswers({0: "yes", 1: "hmm", 101: "no", 2: "?", 102: "?", 202: "?"})
    stats = ParseStats()
    requests = [gt_llm.user_request("q", seed=s) for s in range(3)]
    out = complete_parsed_batch(
        model, requests, parse_yes_no, fallback=lambda r: False, policy=policy, stats=stats
    )
    assert [p.value for p in out] == [True, False, False]
    assert [p.attempts for p in out] == [1, 2, 3]
    assert [p.fell_back for p in out] == [False, False, True]
    assert out[2].response.text == "?"
    assert sorted(model.seeds) == [0, 1, 2, 101, 102, 202]  # re-ask seeds are deterministic
    d = stats.to_dict()
    assert d["parsed"] == {"free_form": 2}
    assert d["reasks"] == {"free_form": 3}
    assert d["fallbacks"] == {"free_form": 1} and d["total_fallbacks"] == 1


def test_complete_parsed_batch_takes_a_parser_and_fallback_per_request():
    policy = ParsePolicy(max_reasks=1, seed_stride=100)
    # request 0 wants a number, request 1 a yes/no; both fail at first, one re-ask each.
    model = SeedAnswers({0: "no idea", 100: "7", 1: "perhaps", 101: "still unsure"})
    requests = [gt_llm.user_request("q", seed=s) for s in range(2)]
    out = complete_parsed_batch(
        model,
        requests,
        [parse_number, parse_yes_no],
        fallback=[lambda r: -1.0, lambda r: True],
        policy=policy,
    )
    assert [p.value for p in out] == [7.0, True]
    assert [p.fell_back for p in out] == [False, True]
    assert sorted(model.seeds) == [0, 1, 100, 101]
    with pytest.raises(ValueError, match="complete_parsed_batch: parser has 1 entries for 2"):
        complete_parsed_batch(model, requests, [parse_number], fallback=lambda r: 0.0)


def test_complete_parsed_single():
    model = SeedAnswers({5: "42"})
    parsed = complete_parsed(
        model, gt_llm.user_request("q", seed=5), parse_number, fallback=lambda r: 0.0
    )
    assert parsed.value == 42.0 and not parsed.fell_back


def test_parse_stats_pool_over_games_and_give_per_task_fallback_rates():
    a = {"parsed": {"vote": 3, "bid": 1}, "reasks": {"bid": 2}, "fallbacks": {"bid": 1}}
    b = {"parsed": {"vote": 1}, "reasks": {}, "fallbacks": {"vote": 1, "bid": 2}}
    pooled = ParseStats.pooled([a, b])
    d = pooled.to_dict()
    assert d["parsed"] == {"vote": 4, "bid": 1} and d["reasks"] == {"bid": 2}
    assert d["fallbacks"] == {"bid": 3, "vote": 1} and d["total_fallbacks"] == 4
    # decisions: vote 4 parsed + 1 fallback; bid 1 parsed + 3 fallbacks (re-asks are attempts)
    assert pooled.fallback_rates() == {"bid": 0.75, "vote": 0.2}
    assert ParseStats().fallback_rates() == {}
