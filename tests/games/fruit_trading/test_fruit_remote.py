"""The experiment command against a remote backend, offline.

``gt-llm fruit-trading run --backend groq:...`` goes through the real groq SDK
to the fake chat-completions server of the LLM-layer tests (started here on
127.0.0.1). Its answers echo the prompt, so many of them cannot be parsed:
that exercises re-asking and counted fallbacks on the path a real model takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))

from fake_server import FakeChatServer  # noqa: E402

from tests.cli_runner import run_cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def _run(out: Path, server: FakeChatServer, *extra: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GROQ_API_KEY": "test-key",
        "GROQ_BASE_URL": server.url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    cmd = [
        "fruit-trading",
        "run",
        "--backend",
        "groq:llama-3.3-70b-versatile",
        "--inits",
        "1",
        "--iterations",
        "5",
        "--max-messages",
        "2",
        "--num-seeds",
        "1",
        "--variants",
        "tone",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]
    return run_cli(cmd, env=env, cwd=ROOT)


def test_groq_backend_runs_the_experiment_and_resumes_from_the_cache(tmp_path: Path) -> None:
    out = tmp_path / "fruit-groq"
    with FakeChatServer() as server:
        first = _run(out, server, "--rpm", "600000")
        assert first.returncode == 0, first.stderr
        calls = server.request_count

        summary = json.loads((out / "summary.json").read_text())
        assert summary["backend"] == "groq"
        assert summary["model"] == "llama-3.3-70b-versatile"
        assert summary["is_llm"] is True
        assert summary["settings"]["requests_per_minute"] == 600000
        assert "not an LLM" not in summary["label"]
        # Every request the server saw is one cache miss, and only misses reach it.
        assert summary["llm_calls"]["misses"] == calls > 0
        assert all(r.path == "/openai/v1/chat/completions" for r in server.requests)
        assert {r.body["model"] for r in server.requests} == {"llama-3.3-70b-versatile"}
        # Echoed prompts are not valid answers: they are re-asked, then fall back, and counted.
        assert summary["fallbacks_total"] > 0
        assert summary["fallbacks_total"] == sum(
            v["parse"]["total_fallbacks"] for v in summary["variants"].values()
        )
        assert "llama-3.3-70b-versatile" in (out / "tables.md").read_text()

        # A second run of the same command is answered from the cache alone.
        second = _run(out, server)
        assert second.returncode == 0, second.stderr
        assert server.request_count == calls
        again = json.loads((out / "summary.json").read_text())
        assert again["llm_calls"]["misses"] == 0
        assert again["variants"]["tone"]["final"] == summary["variants"]["tone"]["final"]


@pytest.mark.parametrize("flag", ["--rpm=0", "--rpm=-5", "--rpm=abc"])
def test_bad_rate_limit_is_a_one_line_error(tmp_path: Path, flag: str) -> None:
    with FakeChatServer() as server:
        result = _run(tmp_path / "x", server, flag)
        assert server.request_count == 0
    assert result.returncode == 2
    assert "--rpm" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
