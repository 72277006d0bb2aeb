"""Werewolf games side by side on a remote backend: calls bounded by --concurrency, results unchanged.

The fake chat-completions server answers every request after a fixed delay,
many at a time, echoing the prompt (nothing parses, every decision falls back
deterministically), and counts the requests it holds at once.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))

from fake_server import FakeChatServer  # noqa: E402

import gt_llm  # noqa: E402
from games.werewolf.side_by_side import MIN_REMOTE_GAMES, games_at_once, run_all  # noqa: E402
from gt_llm.backends.openai_compat import OpenAICompatModel  # noqa: E402
from gt_llm.cli import main as cli  # noqa: E402

ARENA = "werewolf:1/seer:1/villager:2"


def test_a_remote_model_keeps_at_most_its_concurrency_in_flight_across_threads():
    with FakeChatServer(delay=0.1) as server:
        model = OpenAICompatModel("m", f"{server.url}/v1", max_concurrency=3)
        try:

            def batch(k: int) -> None:
                requests = [gt_llm.user_request(f"thread {k} call {i}") for i in range(6)]
                model.complete_batch(requests, max_concurrency=6)

            threads = [threading.Thread(target=batch, args=(k,)) for k in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            model.close()
    assert server.request_count == 12
    # Two batches of 6 asked side by side, each allowed 6: the model's bound of 3 holds.
    assert server.max_active == 3


def test_games_at_once_plays_in_process_models_one_game_at_a_time():
    scripted = gt_llm.load_model("scripted")
    assert games_at_once(scripted, 10, jobs=8) == 1
    assert games_at_once(None, 10) == 1
    remote = OpenAICompatModel("m", "http://127.0.0.1:9/v1", max_concurrency=16)
    try:
        assert games_at_once(remote, 40) == 16  # enough games to fill the calls in flight
        assert games_at_once(remote, 5) == 5  # never more games than there are
        assert games_at_once(remote, 40, jobs=2) == 2
    finally:
        remote.close()
    small = OpenAICompatModel("m", "http://127.0.0.1:9/v1", max_concurrency=1)
    try:
        assert games_at_once(small, 40) == MIN_REMOTE_GAMES
    finally:
        small.close()


def test_run_all_returns_results_in_order_and_raises_the_first_failure():
    assert run_all(lambda x: x * x, [3, 1, 2], 3, on_done=lambda: None) == [9, 1, 4]
    seen: list[int] = []
    assert run_all(lambda x: x + 1, [1, 2], 1, on_done=lambda: seen.append(1)) == [2, 3]
    assert seen == [1, 1]

    def fail(x: int) -> int:
        if x == 2:
            raise RuntimeError("game 2 failed")
        return x

    with pytest.raises(RuntimeError, match="game 2 failed"):
        run_all(fail, [1, 2, 3], 2, on_done=lambda: None)


def _arena(server: FakeChatServer, out: Path, *extra: str) -> dict:
    args = ["werewolf", "arena", "--roles", ARENA, "--debate-turns", "1", "--max-rounds", "1"]
    args += ["--models", "none,gratr", "--games", "4", "--out", str(out), "--no-progress"]
    args += ["--backend", f"openai:fake@{server.url}/v1", "--concurrency", "6", *extra]
    assert cli(args) == 0
    return json.loads((out / "arena.json").read_text())


def _same_parts(report: dict) -> dict:
    """The report without its wall time (and the cache's hit counts, which depend on order)."""
    return {k: v for k, v in report.items() if k not in {"seconds", "llm_calls"}}


def test_arena_games_side_by_side_give_the_one_at_a_time_results(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeChatServer(delay=0.02) as server:  # each run has its own cache: all asked
        alone = _arena(server, tmp_path / "alone", "--jobs", "1")
        alone_peak, server.max_active = server.max_active, 0
        together = _arena(server, tmp_path / "together")
        peak = server.max_active
    assert _same_parts(together) == _same_parts(alone)
    # One game at a time asks its seats' calls together (a few); four games ask more.
    assert peak > alone_peak
    assert peak <= 6  # --concurrency bounds the calls of every game together
    for name in ("alone", "together"):
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        assert manifest["calls_in_flight"]["peak"] <= 6
    new = [
        json.loads((tmp_path / n / "arena.json").read_text())["llm_calls"]["new"]
        for n in ("alone", "together")
    ]
    assert new[0] == new[1] > 0
