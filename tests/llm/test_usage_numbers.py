"""Absurd usage numbers from a server are a malformed answer.

A server answering ``"usage": {"prompt_tokens": 1e999}`` stopped the run with
``OverflowError`` (``int(inf)``); a 5,001-digit count stopped it with
Python's integer-digits ``ValueError``. Both are now a malformed answer:
retried like any other, never cached, and the run goes on when the next
answer is good.
"""

from __future__ import annotations

import json

import pytest
from fake_server import Canned, completion_body

from gt_llm.backends.remote import MAX_USAGE_TOKENS, parse_chat_completion
from gt_llm.errors import MalformedResponseError
from tests.cli_runner import run_cli


def _body(prompt_tokens: str) -> str:
    good = json.dumps(completion_body("Offer: 3"))
    # Spliced in as raw JSON text: json.dumps cannot write 1e999 or a 5,001-digit number.
    return good.replace('"prompt_tokens": 7', f'"prompt_tokens": {prompt_tokens}')


ABSURD = ["1e999", "-1e999", "1e300", "1" + "0" * 5000, str(MAX_USAGE_TOKENS + 1)]


@pytest.mark.parametrize("value", ABSURD, ids=lambda v: v if len(v) < 20 else f"{len(v)}-digits")
def test_absurd_usage_is_a_malformed_answer(value):
    with pytest.raises(MalformedResponseError, match="http://h/v1"):
        parse_chat_completion(_body(value), where="http://h/v1")


@pytest.mark.parametrize(
    ("value", "expected"), [("12", 12), ('"12"', 12), ("null", 0), ('"many"', 0), ("-3", 0)]
)
def test_ordinary_usage_values_still_read(value, expected):
    _, usage = parse_chat_completion(_body(value), where="x")
    assert usage.prompt_tokens == expected


@pytest.mark.parametrize("value", ["1e999", "1" + "0" * 5000], ids=["inf", "5001-digits"])
def test_ask_retries_past_an_absurd_usage(fake_server, value):
    fake_server.enqueue(Canned(body=_body(value)))
    proc = run_cli(["ask", "--backend", f"openai:m@{fake_server.url}/v1", "hello"])
    assert proc.returncode == 0, proc.stderr
    assert "echo: hello" in proc.stdout and "Traceback" not in proc.stderr
    assert fake_server.request_count == 2  # the absurd answer, then a good one


def test_a_game_command_retries_past_an_absurd_usage(fake_server, tmp_path):
    fake_server.enqueue(Canned(body=_body("1e999")))
    out = tmp_path / "u"
    proc = run_cli(["ultimatum", "solve", "--backend", f"openai:m@{fake_server.url}/v1",
                    "--iterations", "5", "--no-progress", "--out", str(out)])  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "OverflowError" not in proc.stderr
    assert json.loads((out / "manifest.json").read_text())["complete"] is True


def test_only_absurd_answers_fail_in_one_line(fake_server):
    fake_server.enqueue(*[Canned(body=_body("1e999")) for _ in range(3)])
    proc = run_cli(["ask", "--backend", f"openai:m@{fake_server.url}/v1", "--max-attempts",
                    "2", "hello"])  # fmt: skip
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "prompt_tokens" in lines[0] and "Traceback" not in proc.stderr
