"""The local backend's block reuse rule and its worker pool, without a model.

The pool runs a stand-in worker (``fake_local_worker.py``) that speaks the real
protocol, so the fault probes run in the default suite: a worker killed
mid-call, Ctrl-C while calls wait, closing with calls queued, and the parent
killed with workers running. The real model's answers with the pool and
reuse on against off are checked in ``test_local.py`` (``-m real_model``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gt_llm import retry
from gt_llm.backends import local, local_env, local_pool
from gt_llm.backends.llama_blocks import reusable_prefix
from gt_llm.backends.local_pool import WorkerConfig, WorkerPool
from gt_llm.errors import BackendError, ConfigurationError

FAKE = [sys.executable, str(Path(__file__).with_name("fake_local_worker.py"))]
CONFIG = WorkerConfig("unused.gguf", 256, 1, False)


def payload(text: str, prefix: str = "") -> dict:
    return {
        "messages": [{"role": "system", "content": prefix}, {"role": "user", "content": text}],
        "seed": 0,
        "temperature": 1.0,
        "max_tokens": 8,
        "schema": None,
        "sampling": {},
    }


@pytest.fixture
def pool():
    made = WorkerPool(CONFIG, 2, command=FAKE)
    yield made
    made.close()


# --- which tokens may be reused ------------------------------------------------------


def test_reuse_stops_at_the_last_whole_block_before_the_first_difference():
    old = list(range(100))
    new = list(range(70)) + [-1] * 30
    assert reusable_prefix(old, 96, new, 32) == 64  # 70 common tokens: two whole blocks
    assert reusable_prefix(old, 40, new, 32) == 32  # only 40 tokens were evaluated in blocks
    assert reusable_prefix(old, 96, new, 16) == 64
    assert reusable_prefix(old, 0, new, 32) == 0
    assert reusable_prefix(np.array(old), 96, [5] + new[1:], 32) == 0  # differs at once


def test_the_last_prompt_token_is_always_evaluated():
    same = list(range(64))
    # The whole prompt is cached, but its last token is evaluated again for fresh logits;
    # the block holding it is evaluated whole, as a fresh call would.
    assert reusable_prefix(same, 64, same, 32) == 32
    assert reusable_prefix(same, 64, same[:33], 32) == 32
    assert reusable_prefix(same, 64, same[:32], 32) == 0
    assert reusable_prefix(same, 64, same[:1], 32) == 0


# --- the pool ------------------------------------------------------------------------


def test_a_batch_comes_back_in_order_and_uses_every_worker(pool):
    asked = [f"sleep:0.{i}" for i in range(1, 9)]
    futures = [pool.submit(payload(text), reuse=True) for text in asked]
    results = [f.result(timeout=60) for f in futures]
    assert [r["text"].split(":", 1)[1] for r in results] == asked
    pids = {r["text"].split(":", 1)[0] for r in results}
    assert len(pids) == 2, "both workers should have answered"


def test_calls_follow_their_prefix_until_that_queue_is_too_long():
    made = WorkerPool(CONFIG, 2, command=FAKE)
    a, b = made._workers
    a.recent.extend(["shared prefix, sibling A", "seat 3 says"])
    b.recent.append("other")
    assert made._choose("shared prefix, sibling B") is a  # any of its recent prompts counts
    assert made._choose("other, longer") is b
    a.queue.extend([object()] * local_pool.LOAD_SLACK)  # type: ignore[list-item]
    assert made._choose("shared prefix, sibling B") is b  # too far ahead: balance wins
    a.queue.clear()
    a.recent.clear()
    b.recent.clear()
    b.busy = True
    assert made._choose("no prefix anywhere") is a  # nothing shared: the least loaded


def test_a_worker_killed_mid_call_fails_that_call_in_one_line_and_is_started_again(pool):
    first = pool.call(payload("hello"), reuse=True)
    with pytest.raises(BackendError) as err:
        pool.call(payload("die"), reuse=True)
    message = str(err.value)
    assert "\n" not in message and "stopped during a call" in message and "exit code" in message
    assert not err.value.retryable
    again = pool.call(payload("hello again"), reuse=True)
    assert again["text"].endswith(":hello again") and first["text"].endswith(":hello")


def test_ctrl_c_cancels_calls_that_wait_and_those_not_yet_sent(pool):
    running = [pool.submit(payload("sleep:1"), reuse=True) for _ in range(2)]
    time.sleep(0.3)
    try:
        retry.cancel_calls()
        start = time.monotonic()
        with pytest.raises(retry.CallCancelled):
            pool.call(payload("queued behind the sleepers"), reuse=True)
        assert time.monotonic() - start < 1.0, "a cancelled call must not wait its turn"
    finally:
        retry._CANCELLED.clear()
    # The calls already running finish: nothing is lost.
    assert all(f.result(timeout=30)["text"].endswith(":sleep:1") for f in running)


def test_closing_stops_the_workers_and_fails_what_is_queued():
    made = WorkerPool(CONFIG, 1, command=FAKE)
    busy = made.submit(payload("sleep:0.5"), reuse=True)
    queued = made.submit(payload("never sent"), reuse=True)
    time.sleep(0.2)
    worker = made._workers[0]
    process = worker.process
    made.close()
    assert busy.result(timeout=10)["text"].endswith(":sleep:0.5")
    with pytest.raises(BackendError, match="closed"):
        queued.result(timeout=10)
    assert process is not None and process.poll() is not None
    with pytest.raises(BackendError, match="closed"):
        made.submit(payload("after close"), reuse=True)


def _exited(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # a zombie has exited; init reaps it


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see the worker exit")
def test_workers_exit_when_their_parent_is_killed(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, signal, sys
            sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
            from gt_llm.backends.local_pool import WorkerConfig, WorkerPool
            pool = WorkerPool(WorkerConfig("x", 256, 1, False), 1, command={FAKE!r})
            print(pool.call({payload("hi")!r}, reuse=True)["text"].split(":")[0], flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == -9
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 10
    while not _exited(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _exited(pid), f"worker {pid} outlived its killed parent"


# --- the backend's options -----------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        (local.WORKERS_VARIABLE, "0"),
        (local.WORKERS_VARIABLE, "two"),
        (local_env.REUSE_VARIABLE, "maybe"),
        (local.THREADS_VARIABLE, "-1"),
    ],
)
def test_bad_worker_reuse_and_thread_settings_are_refused_before_loading(
    monkeypatch, variable, value
):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError, match=variable) as err:
        local.LocalModel()
    assert "\n" not in str(err.value)


def test_usable_cores_is_at_least_one():
    assert 1 <= local.usable_cores() <= (os.cpu_count() or 1)
