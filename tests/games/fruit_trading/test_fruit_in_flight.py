"""Fruit trading against a latency-bound server: calls kept in flight, results unchanged.

The fake chat-completions server of the LLM-layer tests answers each request
after a fixed delay, many at a time (its answers echo the prompt, so most are
re-asked and fall back: the re-ask path is exercised too). The trees built
with calls kept in flight (:mod:`games.engine.frontier`) must be those of the
level-by-level build and of one call at a time, with far more calls in flight
than level by level; the command's summary must not depend on
``--concurrency``, and it says how many calls were in flight.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))

from fake_server import FakeChatServer  # noqa: E402

from games.engine.tree import build_subgames, scheduler  # noqa: E402
from games.fruit_trading.dialogue import Config, DialogueLogic  # noqa: E402
from games.fruit_trading.tree import root_steps  # noqa: E402
from gt_llm import inflight  # noqa: E402
from gt_llm.backends.openai_compat import OpenAICompatModel  # noqa: E402
from gt_llm.parsing import ParseStats  # noqa: E402
from solvers.efg import to_efg  # noqa: E402
from tests.cli_runner import run_cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
LATENCY = 0.05


def _trees(server: FakeChatServer, name: str, concurrency: int) -> tuple[Any, Any, Any]:
    cfg = Config(max_messages=2)
    model = OpenAICompatModel("m", f"{server.url}/v1", max_concurrency=concurrency)
    stats = ParseStats()
    try:
        with scheduler(name), inflight.measure() as span:
            subgames = build_subgames(
                DialogueLogic(cfg),
                root_steps(range(5), cfg),
                model,
                stats=stats,
                max_concurrency=concurrency,
                progress=False,
            )
    finally:
        model.close()
    shape = [(to_efg(sg.tree), sg.states()) for sg in subgames]
    return shape, stats.to_dict(), span.result()


def test_fruit_trees_keep_calls_in_flight_and_equal_the_level_by_level_build():
    with FakeChatServer(delay=LATENCY) as server:
        levels, level_stats, level_seen = _trees(server, "levels", 32)
        frontier, stats, seen = _trees(server, "frontier", 32)
        server.delay = 0.0  # the same answers without the wait: one call at a time
        one, one_stats, _ = _trees(server, "frontier", 1)
    assert frontier == levels == one
    assert stats == level_stats == one_stats
    assert seen.calls == level_seen.calls > 150
    assert seen.peak <= 32
    # Each level waits for its slowest call; the frontier keeps the server busier. (These
    # trees are small and every echoed answer is asked three times in a row, so the
    # longest chain of calls bounds both: the gain grows with the trees, see
    # benchmarks/inflight.py.)
    # Wall time is left to the benchmark: on a loaded machine it measures the load.
    assert seen.mean > 1.3 * level_seen.mean, (seen, level_seen)


def _run(out: Path, server: FakeChatServer, concurrency: int) -> Any:
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    cmd = [
        "fruit-trading",
        "run",
        "--backend",
        f"openai:m@{server.url}/v1",
        "--inits",
        "1",
        "--iterations",
        "20",
        "--max-messages",
        "2",
        "--variants",
        "tone",
        "--no-whole-game",
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
        "--no-progress",
    ]
    return run_cli(cmd, env=env, cwd=ROOT)


def _comparable(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text())
    for key in ("timings", "calls_in_flight"):
        summary.pop(key, None)
    # The folder and the bound itself differ, nothing else.
    summary["settings"] = {
        k: v for k, v in summary["settings"].items() if k not in ("out", "max_concurrency")
    }
    return summary


@pytest.mark.slow  # about a minute: two whole runs, the judge check's 768 calls each
def test_fruit_run_summary_does_not_depend_on_concurrency_and_reports_calls_in_flight(
    tmp_path: Path,
):
    with FakeChatServer(delay=LATENCY) as server:
        wide = _run(tmp_path / "wide", server, 64)
        calls = server.request_count
        server.delay = 0.0  # the same answers without the wait: one call at a time
        narrow = _run(tmp_path / "narrow", server, 1)
    assert wide.returncode == 0, wide.stderr
    assert narrow.returncode == 0, narrow.stderr
    summary = json.loads((tmp_path / "wide" / "summary.json").read_text())
    seen = summary["calls_in_flight"]
    assert seen["calls"] == calls > 0
    assert 1 <= seen["peak"] <= 64 and seen["mean"] > 0
    assert "calls in flight: mean" in wide.stdout
    manifest = json.loads((tmp_path / "wide" / "manifest.json").read_text())
    assert manifest["calls_in_flight"]["calls"] == seen["calls"]
    assert "calls in flight: mean" in wide.stderr
    assert _comparable(tmp_path / "wide") == _comparable(tmp_path / "narrow")


def _judge(server: FakeChatServer, name: str) -> tuple[Any, Any, Any]:
    import dataclasses

    from games.fruit_trading.judge_check import run_judge_check
    from games.fruit_trading.judge_set import load_judge_set

    # A quarter of the shipped set: each dialogue is its own step, so 16 show the schedule.
    full = load_judge_set()
    judge_set = dataclasses.replace(full, dialogues=full.dialogues[:16])
    model = OpenAICompatModel("m", f"{server.url}/v1", max_concurrency=32)
    try:
        with scheduler(name), inflight.measure() as span:
            out, results = run_judge_check(
                model, structured=True, max_concurrency=32, judge_set=judge_set
            )
    finally:
        model.close()
    out.pop("seconds", None)
    return out, [repr(r) for r in results], span.result()


def test_the_judge_check_keeps_calls_in_flight_with_the_level_by_level_results():
    with FakeChatServer(delay=LATENCY) as server:
        level_out, level_results, level_seen = _judge(server, "levels")
        out, results, seen = _judge(server, "frontier")
    # Echoed answers: every judge request is re-asked and falls back, the same way on both.
    assert out == level_out and results == level_results
    assert out["parse"] == level_out["parse"] and seen.calls == level_seen.calls > 0
    assert seen.peak <= 32
    assert seen.mean > 1.3 * level_seen.mean, (seen, level_seen)
