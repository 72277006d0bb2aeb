"""Fixtures and helpers of the fruit-trading tests: scripted models and wrappers."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import games  # noqa: F401  (registers python_fruit_trading and the scripted answers)
import gt_llm
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]


class RecordingModel(ChatModel):
    """Passes calls on to ``inner`` and records every request (thread-safe).

    ``answer(request)`` may return a text that replaces the inner model's answer.
    """

    def __init__(
        self,
        inner: ChatModel,
        answer: Callable[[ChatRequest], str | None] | None = None,
        *,
        concurrency: int = 4,
    ) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.max_concurrency = concurrency
        self.answer = answer
        self.requests: list[ChatRequest] = []
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            self.requests.append(request)
        resp = self.inner.complete(request)
        if self.answer is not None:
            text = self.answer(request)
            if text is not None:
                return ChatResponse(text=text, backend=resp.backend, model=resp.model)
        return resp

    def keys(self) -> list[str]:
        return [r.cache_key(self.backend, self.model) for r in self.requests]


@pytest.fixture(scope="session")
def scripted() -> ChatModel:
    """The scripted stand-in model (fruit-trading tasks registered)."""
    return gt_llm.load_model("scripted")


@pytest.fixture
def child_env() -> dict[str, str]:
    """Environment of a child Python: this checkout importable, no API key."""
    env = dict(os.environ)
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


@pytest.fixture
def recording_model() -> type[RecordingModel]:
    """The :class:`RecordingModel` class (conftest modules are not importable by name)."""
    return RecordingModel


@pytest.fixture
def gt_llm_cli(child_env) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs ``gt-llm ARGS`` in this process as a child would see it: ``(args, cwd, *, env=None)``.

    (``tests/cli_runner.py``; the real entry point is checked in ``tests/llm/test_llm_cli.py``.)
    """

    def run(args, cwd, *, env=None):
        return run_cli(args, env=env or child_env, cwd=cwd)

    return run
