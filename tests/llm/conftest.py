"""Fixtures of the LLM-layer tests: the fake server, fast retries, a clean environment."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Make the helper module importable by name from the tests in this folder.
sys.path.insert(0, str(Path(__file__).parent))

from fake_server import FakeChatServer  # noqa: E402

from gt_llm.retry import RetryPolicy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_server() -> Iterator[FakeChatServer]:
    """A started fake chat-completions server, stopped at teardown."""
    with FakeChatServer() as server:
        yield server


@pytest.fixture
def fast_retry() -> RetryPolicy:
    """Three attempts with millisecond waits."""
    return RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=1.0, jitter=0.25)


@pytest.fixture(autouse=True)
def _clean_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests set these explicitly when they need them; a developer's shell must not leak in.
    for name in ("GROQ_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    # Local fake servers must never be reached through a proxy.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def child_env() -> dict[str, str]:
    """The environment for a child Python: this checkout importable, no key leaking in."""
    env = dict(os.environ)
    env.pop("GROQ_API_KEY", None)
    env.pop("GROQ_BASE_URL", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env
