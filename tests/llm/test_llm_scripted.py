"""The scripted model: deterministic across processes, varied across seeds."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gt_llm
from gt_llm.backends.scripted import ScriptedModel, register_scripted_task, scripted_tasks

PROMPTS = ["hi", "What should I offer for three apples?", "", "Is the seer lying?"]

CHILD = r"""
import json
import gt_llm
from gt_llm.backends.scripted import ScriptedModel
m = ScriptedModel()
prompts = json.loads(input())
print(json.dumps([m.ask(p, seed=s) for p in prompts for s in range(10)]))
"""


def answers() -> list[str]:
    m = ScriptedModel()
    return [m.ask(p, seed=s) for p in PROMPTS for s in range(10)]


def test_deterministic_across_processes(child_env):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(PROMPTS), env=child_env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == answers()


def test_same_request_same_answer():
    assert answers() == answers()


def test_different_seeds_give_different_answers():
    m = ScriptedModel()
    for prompt in PROMPTS:
        distinct = {m.ask(prompt, seed=s) for s in range(20)}
        assert len(distinct) > 5, prompt


def test_answers_are_labelled_as_not_an_llm():
    m = ScriptedModel()
    resp = m.complete(gt_llm.user_request("hi"))
    assert resp.model == "rules-v1" and resp.backend == "scripted"
    assert "scripted" in resp.text.lower()
    assert resp.usage.completion_tokens > 0


def test_unknown_task_and_bad_model_are_clear():
    req = gt_llm.ChatRequest(
        task="no.such.task", fields={}, messages=(gt_llm.Message("user", "x"),)
    )
    with pytest.raises(ValueError, match="no scripted answer for task 'no.such.task'"):
        ScriptedModel().complete(req)
    with pytest.raises(ValueError, match="one model"):
        gt_llm.load_model("scripted:gpt-9")


def test_registered_task_reads_fields_not_text():
    register_scripted_task("test_llm.echo_n", lambda fields, rng: f"n={fields['n']}")
    assert "test_llm.echo_n" in scripted_tasks()
    req = gt_llm.ChatRequest(
        task="test_llm.echo_n", fields={"n": 3}, messages=(gt_llm.Message("user", "ignored"),)
    )
    assert ScriptedModel().complete(req).text == "n=3"
