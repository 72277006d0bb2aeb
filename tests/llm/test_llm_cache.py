"""The persistent SQLite call cache: hits, resumption after a kill, concurrency."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

import gt_llm
from gt_llm.backends.scripted import SCRIPTED_MODEL_NAME, ScriptedModel
from gt_llm.cache import CachedModel, CacheStats
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import BackendError, ConfigurationError


class CountingModel(ChatModel):
    """A slow, thread-safe fake that counts its calls per request."""

    backend = "counting"
    model = "c1"

    def __init__(self, delay: float = 0.0, max_concurrency: int = 8, fail_on: str | None = None):
        self.delay = delay
        self.max_concurrency = max_concurrency
        self.fail_on = fail_on
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        prompt = request.messages[-1].content
        with self._lock:
            self.calls.append(prompt)
        time.sleep(self.delay)
        if prompt == self.fail_on:
            raise BackendError("scripted failure")
        return ChatResponse(
            text=f"{prompt}/{request.seed}", backend=self.backend, model=self.model,
            usage=Usage(10, 2), latency_s=self.delay,
        )  # fmt: skip


def reqs(n: int, prompt: str = "q") -> list[ChatRequest]:
    return [gt_llm.user_request(f"{prompt}{i}", seed=i) for i in range(n)]


def test_miss_then_hit_with_counters_and_flags(tmp_path):
    inner = CountingModel()
    path = tmp_path / "deep" / "er" / "cache.db"  # parents are created
    model = CachedModel(inner, path)
    assert (model.backend, model.model, model.spec) == ("counting", "c1", "counting:c1")
    first = model.complete(gt_llm.user_request("a", seed=1))
    second = model.complete(gt_llm.user_request("a", seed=1))
    assert (first.cached, second.cached) == (False, True)
    assert first.text == second.text == "a/1" and second.usage == Usage(10, 2)
    assert (second.backend, second.model) == ("counting", "c1")
    model.complete(gt_llm.user_request("a", seed=2))  # another seed is another call
    assert inner.calls == ["a", "a"]
    assert model.stats() == CacheStats(
        hits=1, misses=2, prompt_tokens=20, completion_tokens=4,
        saved_prompt_tokens=10, saved_completion_tokens=2,
    )  # fmt: skip
    assert model.stats().hit_rate == pytest.approx(1 / 3)
    assert len(model) == 2 and gt_llm.user_request("a", seed=2) in model
    [row, _] = model.entries()
    assert row["task"] == "free_form" and json.loads(row["request_json"])["seed"] == 1
    model.close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_key_covers_temperature_and_max_tokens(tmp_path):
    inner = CountingModel()
    model = CachedModel(inner, tmp_path / "c.db")
    model.complete(gt_llm.user_request("a", temperature=0.5))
    model.complete(gt_llm.user_request("a", temperature=0.7))
    model.complete(gt_llm.user_request("a", temperature=0.7, max_tokens=5))
    assert len(inner.calls) == 3


def test_max_concurrency_follows_inner(tmp_path):
    assert CachedModel(CountingModel(max_concurrency=3), tmp_path / "a.db").max_concurrency == 3
    assert CachedModel(ScriptedModel(), tmp_path / "b.db").max_concurrency == 1


def test_load_model_with_cache(tmp_path):
    model = gt_llm.load_model("scripted", cache=tmp_path / "s.db")
    assert isinstance(model, CachedModel) and model.spec == f"scripted:{SCRIPTED_MODEL_NAME}"
    assert model.ask("hello") == ScriptedModel().ask("hello")
    assert model.ask("hello") == ScriptedModel().ask("hello")
    assert model.stats().hits == 1


def test_unwritable_path_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigurationError, match="cache: cannot create the directory"):
        CachedModel(CountingModel(), blocker / "sub" / "cache.db")
    with pytest.raises(ConfigurationError, match="cannot open"):
        CachedModel(CountingModel(), tmp_path)  # a directory, not a database file


def test_in_flight_duplicates_make_one_backend_call(tmp_path):
    inner = CountingModel(delay=0.05, max_concurrency=16)
    model = CachedModel(inner, tmp_path / "c.db")
    distinct = reqs(5)
    batch = [distinct[i % 5] for i in range(60)]
    out = model.complete_batch(batch)
    assert [r.text for r in out] == [f"q{i % 5}/{i % 5}" for i in range(60)]
    assert sorted(inner.calls) == sorted(f"q{i}" for i in range(5))
    stats = model.stats()
    assert (stats.misses, stats.hits) == (5, 55)


def test_failures_are_not_stored_and_reach_waiters(tmp_path):
    inner = CountingModel(delay=0.05, fail_on="q1")
    model = CachedModel(inner, tmp_path / "c.db")
    batch = [reqs(3)[1]] * 4 + reqs(3)
    with pytest.raises(BackendError, match="scripted failure"):
        model.complete_batch(batch)
    # The finished calls are stored even though the batch failed; the failed one is not.
    assert len(model) == 2 and reqs(3)[1] not in model
    assert inner.calls.count("q1") <= 2  # de-duplicated while in flight


# -- across processes ------------------------------------------------------------------------

CHILD_OPENAI = r"""
import json, sys
import gt_llm
url, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
model = gt_llm.load_model(f"openai:m@{url}/v1", cache=path, max_concurrency=1, timeout=10)
out = model.complete_batch([gt_llm.user_request(f"q{i}", seed=i) for i in range(n)])
s = model.stats()
print(json.dumps({"texts": [r.text for r in out], "hits": s.hits, "misses": s.misses}))
"""


def run_child(child_env, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD_OPENAI, *args],
        env=child_env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_second_process_makes_zero_backend_calls(fake_server, child_env, tmp_path):
    path = str(tmp_path / "c.db")
    first = run_child(child_env, fake_server.url, path, "6")
    assert (first["misses"], first["hits"]) == (6, 0) and fake_server.request_count == 6
    second = run_child(child_env, fake_server.url, path, "6")
    assert fake_server.request_count == 6  # not one more request
    assert (second["misses"], second["hits"]) == (0, 6)
    assert second["texts"] == first["texts"] == [f"echo: q{i} (seed {i})" for i in range(6)]


def test_killed_run_resumes_without_repeating_finished_calls(fake_server, child_env, tmp_path):
    n = 12
    path = str(tmp_path / "c.db")
    fake_server.delay = 0.15
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD_OPENAI, fake_server.url, path, str(n)],
        env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert fake_server.wait_for_responses(4, timeout=30), "child made no progress"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    conn = sqlite3.connect(path)
    stored = {
        row[0] for row in conn.execute("SELECT json_extract(request_json, '$.seed') FROM calls")
    }
    conn.close()
    # The 4th answer may have arrived just before the kill but not yet been committed.
    assert 3 <= len(stored) <= 5

    fake_server.delay = 0.0
    before = fake_server.request_count
    rerun = run_child(child_env, fake_server.url, path, str(n))
    new_seeds = [r.body["seed"] for r in fake_server.requests[before:]]
    assert sorted(new_seeds) == sorted(set(range(n)) - stored)
    assert (rerun["hits"], rerun["misses"]) == (len(stored), n - len(stored))
    assert rerun["texts"] == [f"echo: q{i} (seed {i})" for i in range(n)]


CHILD_SCRIPTED = r"""
import random, sys
import gt_llm
path, idx = sys.argv[1], int(sys.argv[2])
shared = [gt_llm.user_request("shared", seed=i) for i in range(30)]
own = [gt_llm.user_request(f"own{idx}", seed=i) for i in range(30)]
batch = shared + own
random.Random(idx).shuffle(batch)
model = gt_llm.load_model("scripted", cache=path)
model.complete_batch(batch, max_concurrency=4)
"""


def test_concurrent_writers_do_not_corrupt(child_env, tmp_path):
    path = str(tmp_path / "shared.db")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD_SCRIPTED, path, str(i)],
            env=child_env,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i in range(4)
    ]
    # Threads of this process write to the same file at the same time.
    local = CachedModel(ScriptedModel(), path)
    local.complete_batch(
        [gt_llm.user_request("shared", seed=i) for i in range(30)], max_concurrency=4
    )
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = conn.execute("SELECT key, text FROM calls").fetchall()
    assert len(rows) == 30 + 4 * 30
    scripted = ScriptedModel()
    expected = {}
    for prompt in ["shared"] + [f"own{i}" for i in range(4)]:
        for seed in range(30):
            r = gt_llm.user_request(prompt, seed=seed)
            expected[r.cache_key(scripted.backend, scripted.model)] = scripted.complete(r).text
    assert dict(rows) == expected


def test_in_memory_cache():
    model = CachedModel(CountingModel(), ":memory:")
    model.ask("x")
    model.ask("x")
    assert model.stats().hits == 1 and len(model) == 1
