"""Answers that cannot be stored or parsed: the shared layer (parsers, cache, body).

An answer whose JSON holds an escaped lone surrogate (``"\\ud800"``) or is
nested thousands of levels deep is a parse error (re-asked, then counted as a
fallback), from a fresh call and from an old cache alike; a lone surrogate in
a chat-completions body is read as U+FFFD, so the answer can be stored and
quoted in later prompts. The commands' probes are in
``tests/games/test_unusable_answers_in_commands.py``.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from fake_server import Canned, completion_body

import gt_llm
from gt_llm import parsing
from gt_llm.answers import AnswerFormat, text
from gt_llm.backends.remote import parse_chat_completion
from gt_llm.cache import CachedModel
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import MalformedResponseError, ParseError
from gt_llm.parsing import ParseStats, complete_parsed, parse_json_object

#: Deeper than the JSON decoder's recursion limit (about 1,000 levels).
DEEP = '{"statement": ' + "[" * 10_000 + "]" * 10_000 + "}"
ESCAPED = '{"statement": "I am the seer \\ud800"}'
STATEMENT = AnswerFormat((text("statement", 400),))


class Answering(ChatModel):
    """Answers every request with one text; counts its calls."""

    backend = "fixed"
    model = "m"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return ChatResponse(text=self.answer, backend=self.backend, model=self.model)


def request(prompt: str = "speak") -> ChatRequest:
    return gt_llm.user_request(prompt, seed=1)


# -- 5. deep nesting: a parse error, never a RecursionError -----------------------------------------


def test_a_deeply_nested_answer_is_a_parse_error_not_a_recursion_error():
    with pytest.raises(ParseError, match="nested at most"):
        parse_json_object(DEEP)
    with pytest.raises(ParseError, match="nested at most"):
        STATEMENT.read(DEEP)
    # The limit is exact, and brackets inside strings do not count.
    limit = parsing.MAX_JSON_DEPTH
    inner = "[" * (limit - 1) + "]" * (limit - 1)
    assert parse_json_object('{"a": ' + inner + ', "b": "' + "[" * 100 + '"}')["b"] == "[" * 100
    with pytest.raises(ParseError, match="nested at most"):
        parse_json_object('{"a": [' + inner + "]}")


def test_a_deeply_nested_unterminated_answer_is_refused_quickly():
    import time

    start = time.perf_counter()
    with pytest.raises(ParseError):
        parse_json_object("{" + "[" * 50 + '"\\"' * 40_000 + "}")
    assert time.perf_counter() - start < 1.0  # the depth scan is linear


# -- 4. lone surrogates: escaped in the answer's JSON, or in the body ------------------------------


def test_an_escaped_lone_surrogate_is_a_parse_error():
    for bad in (ESCAPED, '{"\\udc00": "key"}', '{"a": ["\\ud83d"]}'):
        with pytest.raises(ParseError, match="valid Unicode"):
            parse_json_object(bad)
    with pytest.raises(ParseError, match="valid Unicode"):
        STATEMENT.read(ESCAPED)
    # A whole surrogate pair is one character: valid.
    assert parse_json_object('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


def test_a_lone_surrogate_in_a_chat_completion_body_is_read_as_the_replacement_character():
    body = json.dumps(completion_body("yes \ud800 and \udfff")).encode()
    assert b"\\ud800" in body  # the server sends the escape; decoding yields the surrogate
    answer, usage = parse_chat_completion(body, where="http://127.0.0.1/v1")
    assert answer == "yes \ufffd and \ufffd" and usage == Usage(7, 3)
    answer.encode("utf-8")  # storable
    assert parsing.replace_lone_surrogates("plain") == "plain"
    assert parsing.replace_lone_surrogates("\U0001f600\ud800") == "\U0001f600\ufffd"


def test_a_body_nested_too_deeply_is_a_malformed_response():
    body = '{"choices": [{"message": {"content": "x"}}], "x": ' + "[" * 10_000 + "]" * 10_000 + "}"
    with pytest.raises(MalformedResponseError, match="nested too deeply"):
        parse_chat_completion(body.encode(), where="http://127.0.0.1/v1")


def test_the_openai_backend_caches_a_lone_surrogate_answer_as_the_replacement_character(
    fake_server, tmp_path
):
    fake_server.enqueue(Canned(body=completion_body("I vote \ud800 Player 2")))
    path = tmp_path / "cache.sqlite"
    spec = f"openai:m@{fake_server.url}/v1"
    with gt_llm.load_model(spec, cache=path) as model:
        first = model.complete(request())
    with gt_llm.load_model(spec, cache=path) as model:
        again = model.complete(request())
        # The answer can be quoted in the next prompt: its cache key is computable.
        model.complete(request(f"Player 1 said: {again.text}"))
    assert first.text == again.text == "I vote \ufffd Player 2" and again.cached
    assert fake_server.request_count == 2


# -- the cache: nothing unstorable, nothing that crashes a re-run -----------------------------------


def test_the_cache_stores_an_answer_with_a_lone_surrogate_as_the_replacement_character(tmp_path):
    inner = Answering("a\ud800b")  # a backend that does not clean its text itself
    path = tmp_path / "cache.sqlite"
    with CachedModel(inner, path) as model:
        assert model.complete(request()).text == "a\ufffdb"
    with CachedModel(Answering("never used"), path) as model:
        hit = model.complete(request())
    assert hit.cached and hit.text == "a\ufffdb"


@pytest.mark.parametrize("answer", [ESCAPED, DEEP], ids=["escaped-surrogate", "deep"])
def test_an_unusable_answer_is_a_counted_fallback_fresh_and_from_an_old_cache(tmp_path, answer):
    path = tmp_path / "cache.sqlite"
    for inner in (Answering(answer), Answering("unused")):  # the second run: from the cache
        stats = ParseStats()
        with CachedModel(inner, path) as model:
            parsed = complete_parsed(
                model, request(), STATEMENT.read, fallback=lambda r: {"statement": "..."},
                stats=stats,
            )  # fmt: skip
        assert parsed.fell_back and parsed.value == {"statement": "..."}
        assert stats.to_dict()["total_fallbacks"] == 1
    assert inner.calls == 0  # the re-run answered every attempt from the cache


def test_an_old_cache_row_that_is_not_utf8_is_read_with_replacement_characters(tmp_path):
    path = tmp_path / "cache.sqlite"
    with CachedModel(Answering("fine"), path) as model:
        model.complete(request())
    # Another program stored bytes that are not UTF-8 (a CESU-8 surrogate).
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE calls SET text = CAST(X'6F6BEDA080' AS TEXT)")
    conn.close()
    with CachedModel(Answering("unused"), path) as model:
        hit = model.complete(request())
    assert hit.cached and hit.text.startswith("ok") and "\ufffd" in hit.text
    hit.text.encode("utf-8")
