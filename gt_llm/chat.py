"""The chat interface every backend implements.

A call to a language model is described by a typed :class:`ChatRequest`: the
task it serves (``"fruit_trading.message"``), the typed fields the prompt was
rendered from, the rendered chat messages, and the sampling parameters
(``seed``, ``temperature``, ``max_tokens``). Real backends read the messages;
the scripted backend reads the task and fields. Both return a
:class:`ChatResponse` whose text goes through the same parsers.

Every call is meant to be a pure function of (backend, model, messages, seed,
temperature, max_tokens); :mod:`gt_llm.cache` relies on that.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType
from typing import Any

logger = logging.getLogger(__name__)

ROLES = ("system", "user", "assistant")


@dataclasses.dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Message: role must be one of {ROLES}, got {self.role!r}")

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


def _freeze(value: Any) -> Any:
    """Returns a JSON-round-trippable, immutable copy of ``value``."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(
        f"ChatRequest: field values must be JSON-like (str, int, float, bool, None, "
        f"lists, mappings); got {type(value).__name__}"
    )


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclasses.dataclass(frozen=True)
class ChatRequest:
    """A typed request to a chat model.

    Attributes:
      task: Name of the task, e.g. ``"fruit_trading.message"`` or ``"free_form"``.
      fields: The typed fields the messages were rendered from (JSON-like).
      messages: The rendered chat messages.
      seed: Sampling seed; part of the request's identity.
      temperature: Sampling temperature.
      max_tokens: Upper bound on generated tokens.
      schema: JSON schema of a structured answer (see :mod:`gt_llm.answers`), or
        ``None`` for free text. Backends that can constrain decoding use it;
        it is part of the request's identity.
    """

    task: str
    fields: Mapping[str, Any]
    messages: tuple[Message, ...]
    seed: int = 0
    temperature: float = 1.0
    max_tokens: int = 512
    schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _freeze(dict(self.fields)))
        if self.schema is not None:
            object.__setattr__(self, "schema", _freeze(dict(self.schema)))
        object.__setattr__(self, "messages", tuple(self.messages))
        if not self.messages:
            raise ValueError("ChatRequest: at least one message is required")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"ChatRequest: seed must be an int, got {self.seed!r}")
        if self.temperature < 0:
            raise ValueError(f"ChatRequest: temperature must be >= 0, got {self.temperature}")
        if self.max_tokens <= 0:
            raise ValueError(f"ChatRequest: max_tokens must be > 0, got {self.max_tokens}")

    def fields_dict(self) -> dict[str, Any]:
        """The fields as plain (mutable) Python containers."""
        return _thaw(self.fields)

    def schema_dict(self) -> dict[str, Any] | None:
        """The answer schema as plain (mutable) Python containers, or ``None``."""
        return None if self.schema is None else _thaw(self.schema)

    def with_seed(self, seed: int) -> ChatRequest:
        return dataclasses.replace(
            self, seed=seed, fields=self.fields_dict(), schema=self.schema_dict()
        )

    def cache_key(self, backend: str, model: str) -> str:
        """Hash of (backend, model, messages, seed, temperature, max_tokens[, schema]).

        The schema enters only when there is one, so the keys of free-text
        requests are those of earlier versions (their cached answers stay valid).
        """
        identity: dict[str, Any] = {
            "backend": backend,
            "model": model,
            "messages": [m.to_dict() for m in self.messages],
            "seed": self.seed,
            "temperature": float(self.temperature),
            "max_tokens": self.max_tokens,
        }
        if self.schema is not None:
            identity["schema"] = self.schema_dict()
        payload = json.dumps(
            identity,
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class Usage:
    """Token usage of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclasses.dataclass(frozen=True)
class ChatResponse:
    """A model's answer to one :class:`ChatRequest`."""

    text: str
    backend: str
    model: str
    usage: Usage = Usage()
    latency_s: float = 0.0
    cached: bool = False


def user_request(
    prompt: str,
    *,
    seed: int = 0,
    temperature: float = 1.0,
    max_tokens: int = 512,
    system: str | None = None,
) -> ChatRequest:
    """A ``free_form`` request with one user message (and an optional system one)."""
    messages = ([Message("system", system)] if system else []) + [Message("user", prompt)]
    return ChatRequest(
        task="free_form",
        fields={"prompt": prompt, "system": system or ""},
        messages=tuple(messages),
        seed=seed,
        temperature=temperature,
        max_tokens=max_tokens,
    )


class ChatModel(abc.ABC):
    """A chat model: one call, or a bounded-concurrency batch of calls.

    Subclasses implement :meth:`complete`. They must be safe to call from
    several threads at once, since :meth:`complete_batch` does.
    """

    #: Registered backend name, e.g. ``"groq"``.
    backend: str = ""
    #: Model name within the backend, e.g. ``"llama-3.3-70b-versatile"``.
    model: str = ""
    #: Default number of concurrent requests in :meth:`complete_batch`.
    max_concurrency: int = 8
    #: Whether calls go over the network (and cost time or money): the cache then
    #: coordinates identical in-flight calls across processes.
    remote: bool = False

    @property
    def spec(self) -> str:
        """The spec string that :func:`gt_llm.load_model` accepts for this model."""
        return f"{self.backend}:{self.model}" if self.model else self.backend

    @abc.abstractmethod
    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers one request."""

    def complete_batch(
        self,
        requests: Sequence[ChatRequest],
        *,
        max_concurrency: int | None = None,
        on_done: Callable[[ChatResponse], None] | None = None,
    ) -> list[ChatResponse]:
        """Answers many requests with at most ``max_concurrency`` in flight.

        Results are in the order of ``requests``. The first exception raised by
        any call is re-raised after the calls already running have finished, so
        that completed calls (and their cache entries) are never lost.

        Args:
          requests: The requests.
          max_concurrency: Bound on concurrent calls (default: the model's own).
          on_done: Called with every response as it completes (e.g. a progress bar).
        """
        requests = list(requests)
        workers = max(1, int(max_concurrency or self.max_concurrency))
        if workers == 1 or len(requests) <= 1:
            out = []
            for r in requests:
                out.append(self.complete(r))
                if on_done is not None:
                    on_done(out[-1])
            return out

        def run(r: ChatRequest) -> ChatResponse:
            resp = self.complete(r)
            if on_done is not None:
                on_done(resp)
            return resp

        with ThreadPoolExecutor(max_workers=min(workers, len(requests))) as pool:
            futures = [pool.submit(run, r) for r in requests]
            # Wait for all, so that no finished call is abandoned mid-flight.
            errors = [f.exception() for f in futures]
        for err in errors:
            if err is not None:
                raise err
        return [f.result() for f in futures]

    def ask(
        self, prompt: str, *, seed: int = 0, temperature: float = 1.0, max_tokens: int = 512
    ) -> str:
        """Sends one free-form prompt and returns the answer text."""
        return self.complete(
            user_request(prompt, seed=seed, temperature=temperature, max_tokens=max_tokens)
        ).text

    def close(self) -> None:  # noqa: B027 - optional hook
        """Releases resources (connections, files)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"
