"""The scripted model: a deterministic, rule-based stand-in for an LLM.

It answers from a request's *task and typed fields*, never by reading prompt
text, and returns natural-language text that goes through the same parsers
as a real model's. Randomness comes from a generator seeded by a hash of
(task, fields, seed), so the same request gives the same answer on every
machine and in every process, and different seeds can give different
answers. Games register one handler per task with
:func:`register_scripted_task`.

Its output is never an LLM result; results it produces are labelled with the
model name ``scripted:rules-v1``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage

#: ``handler(fields, rng) -> text``.
ScriptedHandler = Callable[[Mapping[str, Any], np.random.Generator], str]

_HANDLERS: dict[str, ScriptedHandler] = {}

SCRIPTED_MODEL_NAME = "rules-v1"


def register_scripted_task(task: str, handler: ScriptedHandler) -> None:
    """Registers the scripted answer for ``task`` (re-registering replaces it)."""
    _HANDLERS[task] = handler


def scripted_tasks() -> list[str]:
    """Tasks the scripted model can answer (after the games are imported)."""
    return sorted(_HANDLERS)


def request_rng(request: ChatRequest) -> np.random.Generator:
    """A generator seeded by a stable hash of (task, fields, seed)."""
    payload = json.dumps(
        [request.task, request.fields_dict(), request.seed],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    digest = hashlib.sha256(payload.encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split()))


class ScriptedModel(ChatModel):
    """Deterministic rule-based model answering registered tasks."""

    backend = "scripted"

    def __init__(self, model: str = "") -> None:
        if model not in ("", SCRIPTED_MODEL_NAME):
            raise ValueError(
                f"load_model: the scripted backend has one model, {SCRIPTED_MODEL_NAME!r}; "
                f"got {model!r}"
            )
        self.model = SCRIPTED_MODEL_NAME
        # No I/O: concurrency buys nothing, and 1 keeps batches simple and ordered.
        self.max_concurrency = 1

    def complete(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        handler = _HANDLERS.get(request.task)
        if handler is None:
            raise ValueError(
                f"ScriptedModel.complete: no scripted answer for task {request.task!r}; "
                "import the game module that defines it (e.g. `import games`) "
                f"or register one with register_scripted_task. Known: {scripted_tasks()}"
            )
        text = handler(request.fields, request_rng(request))
        prompt_tokens = sum(_approx_tokens(m.content) for m in request.messages)
        return ChatResponse(
            text=text,
            backend=self.backend,
            model=self.model,
            usage=Usage(prompt_tokens, _approx_tokens(text)),
            latency_s=time.perf_counter() - start,
            cached=False,
        )


_OPENERS = (
    "Here is my answer.",
    "Happy to help.",
    "Sure.",
    "Let me answer briefly.",
    "Good question.",
    "Thanks for asking.",
    "Alright.",
    "Let me think about that.",
)
_MIDDLES = (
    "You sent a prompt of {words} word(s).",
    "Your prompt has {words} word(s); the word {word!r} stands out.",
    "I read {words} word(s), starting with {first!r}.",
    "On {word!r}: my confidence is {confidence}%.",
    "My short take on {word!r} is {verdict}.",
    "Of your {words} word(s), I would focus on {word!r}.",
)
_VERDICTS = ("yes", "no", "maybe", "it depends", "probably", "unlikely")
_CLOSERS = (
    "This reply comes from gt-llm's scripted stand-in model, not from an LLM.",
    "(Scripted offline model: deterministic, rule-based, not a language model.)",
)


def _free_form(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    # Every choice comes from the request's own generator, so the answer is a pure
    # function of (prompt, seed) yet varies from seed to seed like a sampled LLM.
    prompt = str(fields.get("prompt", "")).strip()
    tokens = prompt.split() or ["(empty)"]
    opener = _OPENERS[int(rng.integers(len(_OPENERS)))]
    middle = _MIDDLES[int(rng.integers(len(_MIDDLES)))].format(
        words=len(prompt.split()),
        word=tokens[int(rng.integers(len(tokens)))],
        first=tokens[0],
        confidence=int(rng.integers(50, 100)),
        verdict=_VERDICTS[int(rng.integers(len(_VERDICTS)))],
    )
    closer = _CLOSERS[int(rng.integers(len(_CLOSERS)))]
    return f"{opener} {middle} {closer}"


register_scripted_task("free_form", _free_form)
