"""Opt-in live check against Groq: ``pytest -m live`` with GROQ_API_KEY set."""

from __future__ import annotations

import os

import pytest

import gt_llm
from gt_llm.retry import RetryPolicy

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("GROQ_API_KEY"), reason="GROQ_API_KEY is not set"),
]


def test_groq_answers_a_short_question():
    model = gt_llm.load_model("groq", retry=RetryPolicy(max_attempts=3), timeout=30)
    resp = model.complete(
        gt_llm.user_request(
            "What is 2 + 3? Answer with the number only.", seed=0, temperature=0.0, max_tokens=8
        )
    )
    assert "5" in resp.text
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert resp.latency_s > 0
