"""The scripted model: deterministic across processes, varied across seeds."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gt_llm
from gt_llm.backends.scripted import (
    ScriptedModel,
    register_scripted_task,
    request_rng,
    scripted_tasks,
)

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
    assert resp.model == "rules-v2" and resp.backend == "scripted"
    assert "scripted" in resp.text.lower()
    assert resp.usage.completion_tokens > 0


def test_unknown_task_and_bad_model_are_clear():
    req = gt_llm.ChatRequest(
        task="no.such.task", fields={}, messages=(gt_llm.Message("user", "x"),)
    )
    with pytest.raises(ValueError, match="no scripted answer for task 'no.such.task'"):
        ScriptedModel().complete(req)
    from gt_llm.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="rules-v2/NAME for a variant"):
        gt_llm.load_model("scripted:gpt-9")
    with pytest.raises(ConfigurationError, match="NAME of a-z, 0-9 and -"):
        gt_llm.load_model("scripted:rules-v2/Bad Name")


def test_a_variant_is_the_same_rules_with_its_own_noise():
    from games.fruit_trading import scripted as _  # noqa: F401  (registers the fruit tasks)
    from gt_llm.backends.scripted import request_rng

    base, b = gt_llm.load_model("scripted"), gt_llm.load_model("scripted:rules-v2/b")
    assert (base.spec, b.spec) == ("scripted:rules-v2", "scripted:rules-v2/b")
    req = gt_llm.ChatRequest(
        task="free_form", fields={"prompt": "a b c d e f"}, messages=(gt_llm.Message("user", "x"),)
    )
    # The default's stream is unchanged by variants (old caches and references stay valid).
    assert base.complete(req).text == gt_llm.load_model("scripted:rules-v2").complete(req).text
    assert request_rng(req).integers(1 << 30) != request_rng(req, "b").integers(1 << 30)
    answers = {s: {b.complete(req.__class__(**{**req.__dict__, "seed": s})).text} for s in range(8)}
    others = {
        s: {base.complete(req.__class__(**{**req.__dict__, "seed": s})).text} for s in range(8)
    }
    assert answers != others
    assert b.complete(req).text == gt_llm.load_model("scripted:rules-v2/b").complete(req).text


def test_registered_task_reads_fields_not_text():
    register_scripted_task("test_llm.echo_n", lambda fields, rng: f"n={fields['n']}")
    assert "test_llm.echo_n" in scripted_tasks()
    req = gt_llm.ChatRequest(
        task="test_llm.echo_n", fields={"n": 3}, messages=(gt_llm.Message("user", "ignored"),)
    )
    assert ScriptedModel().complete(req).text == "n=3"


def _request(task: str, **fields) -> gt_llm.ChatRequest:
    return gt_llm.ChatRequest(task=task, fields=fields, messages=(gt_llm.Message("user", "x"),))


def _draw(fields, rng) -> str:
    return f"{fields['n']}:{rng.integers(10**9)}"


def test_unread_fields_neither_reach_the_handler_nor_seed_the_generator():
    seen = {}

    def handler(fields, rng):
        seen["fields"] = dict(fields)
        return _draw(fields, rng)

    register_scripted_task("test_llm.reads_n", handler, reads=("n",))
    m = ScriptedModel()
    a = m.complete(_request("test_llm.reads_n", n=1, note="first")).text
    assert seen["fields"] == {"n": 1}
    # Changing a field the handler does not read leaves the answer identical...
    assert m.complete(_request("test_llm.reads_n", n=1, note="second")).text == a
    # ...while a read field, or the seed, changes the draw.
    assert m.complete(_request("test_llm.reads_n", n=2, note="first")).text != a
    other_seed = _request("test_llm.reads_n", n=1, note="first").with_seed(5)
    assert m.complete(other_seed).text != a


def test_a_read_field_left_out_of_seeded_by_acts_only_through_the_rules():
    def handler(fields, rng):
        return f"{rng.integers(10**9)}+{fields['bonus']}"

    register_scripted_task("test_llm.bonus", handler, reads=("n", "bonus"), seeded_by=("n",))
    m = ScriptedModel()
    a = m.complete(_request("test_llm.bonus", n=1, bonus=0)).text
    b = m.complete(_request("test_llm.bonus", n=1, bonus=7)).text
    # Same draw, different rule output.
    assert a.split("+")[0] == b.split("+")[0] and a != b
    r1 = request_rng(_request("test_llm.bonus", n=1, bonus=0)).integers(10**9)
    r2 = request_rng(_request("test_llm.bonus", n=1, bonus=7)).integers(10**9)
    assert r1 == r2


def test_registration_errors_are_clear():
    with pytest.raises(ValueError, match="seeded_by names fields that are not read"):
        register_scripted_task("test_llm.bad", _draw, reads=("n",), seeded_by=("m",))
    with pytest.raises(TypeError, match=r"write reads=\('n',\)"):
        register_scripted_task("test_llm.bad", _draw, reads="n")
    register_scripted_task("test_llm.needs_k", _draw, reads=("n", "k"))
    with pytest.raises(ValueError, match=r"reads fields \['k'\] that the request lacks"):
        ScriptedModel().complete(_request("test_llm.needs_k", n=1))
