"""The chat interface every backend implements.

A call to a language model is described by a typed :class:`ChatRequest`: the
task it serves (``"fruit_trading.message"``), the typed fields the prompt was
rendered from, the rendered chat messages, and the sampling parameters
(``seed``, ``temperature``, ``max_tokens`` and the sampler settings
``repeat_penalty``, ``top_p``, ``top_k``, ``min_p``). Real backends read the messages;
the scripted backend reads the task and fields. Both return a
:class:`ChatResponse` whose text goes through the same parsers.

Every call is meant to be a pure function of (backend, model, endpoint, messages,
seed, temperature, max_tokens, sampler settings); :mod:`gt_llm.cache` relies on that.
The endpoint is the server a remote model is served from (:attr:`ChatModel.endpoint`,
its public label): one model name served by two servers is two models.
The sampler settings are explicit so that every backend samples alike: the
in-process llama.cpp model and a llama.cpp server otherwise differ (their
library defaults repeat penalties of 1.0 and 1.1). A backend whose API cannot
apply one of them says so (:attr:`ChatModel.unhonoured_settings`, logged once).
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

#: Sampler settings every request carries (the defaults of a llama.cpp server, so that a
#: server and the in-process model answer a request alike): names and defaults.
SAMPLING_DEFAULTS: Mapping[str, float | int] = MappingProxyType(
    {"repeat_penalty": 1.1, "top_p": 0.95, "top_k": 40, "min_p": 0.05}
)


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
      repeat_penalty: Penalty on tokens already in the context (1.0: none; llama.cpp's
        ``repeat_penalty``). Stops runaway answers (``1.1.1.1...``) of small models.
      top_p: Nucleus sampling: the smallest set of tokens with this total probability.
      top_k: Sample among the ``top_k`` most likely tokens (0: all).
      min_p: Drop tokens less likely than ``min_p`` times the most likely one.
    """

    task: str
    fields: Mapping[str, Any]
    messages: tuple[Message, ...]
    seed: int = 0
    temperature: float = 1.0
    max_tokens: int = 512
    schema: Mapping[str, Any] | None = None
    repeat_penalty: float = float(SAMPLING_DEFAULTS["repeat_penalty"])
    top_p: float = float(SAMPLING_DEFAULTS["top_p"])
    top_k: int = int(SAMPLING_DEFAULTS["top_k"])
    min_p: float = float(SAMPLING_DEFAULTS["min_p"])

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
        if not self.repeat_penalty > 0:
            raise ValueError(f"ChatRequest: repeat_penalty must be > 0, got {self.repeat_penalty}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"ChatRequest: top_p must be in (0, 1], got {self.top_p}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0:
            raise ValueError(f"ChatRequest: top_k must be an int >= 0, got {self.top_k!r}")
        if not 0 <= self.min_p < 1:
            raise ValueError(f"ChatRequest: min_p must be in [0, 1), got {self.min_p}")

    def fields_dict(self) -> dict[str, Any]:
        """The fields as plain (mutable) Python containers."""
        return _thaw(self.fields)

    def schema_dict(self) -> dict[str, Any] | None:
        """The answer schema as plain (mutable) Python containers, or ``None``."""
        return None if self.schema is None else _thaw(self.schema)

    def sampling(self) -> dict[str, float | int]:
        """The sampler settings (:data:`SAMPLING_DEFAULTS`' names) of this request."""
        return {name: getattr(self, name) for name in SAMPLING_DEFAULTS}

    def with_seed(self, seed: int) -> ChatRequest:
        return dataclasses.replace(
            self, seed=seed, fields=self.fields_dict(), schema=self.schema_dict()
        )

    def cache_key(self, backend: str, model: str, endpoint: str = "") -> str:
        """Hash of (backend, model[, endpoint], messages, seed, temperature, max_tokens,
        sampler[, schema]).

        The endpoint (:attr:`ChatModel.endpoint`: the public label of the server a
        remote model is served from) and the schema enter only when there is one, so
        the keys of in-process backends (``scripted``, ``local``) are those they
        always were. The sampler settings (:meth:`sampling`) always enter: no
        default equals what every backend did before they were explicit (1.0
        in-process, 1.1 on a llama.cpp server, the API's own elsewhere), so answers
        cached before them are not reused.

        Args:
          backend: The registered backend name.
          model: The model name within the backend.
          endpoint: Where the model is served (no credentials); ``""`` in-process.
        """
        identity: dict[str, Any] = {
            "backend": backend,
            "model": model,
            "messages": [m.to_dict() for m in self.messages],
            "seed": self.seed,
            "temperature": float(self.temperature),
            "max_tokens": self.max_tokens,
            "sampling": {k: float(v) for k, v in self.sampling().items()},
        }
        if endpoint:
            identity["endpoint"] = endpoint
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
    #: The server the model is served from, as the cache keys it: the public label of
    #: its base URL (:func:`gt_llm.safety.endpoint_label`: no user, password or query
    #: value); ``""`` for in-process models, whose keys it then leaves as they were.
    endpoint: str = ""
    #: Default number of concurrent requests in :meth:`complete_batch`.
    max_concurrency: int = 8
    #: Whether calls go over the network (and cost time or money): the cache then
    #: coordinates identical in-flight calls across processes.
    remote: bool = False
    #: Sampler settings of a request (:data:`SAMPLING_DEFAULTS`) this backend cannot apply
    #: (its API has no such parameter); the model then samples with its own.
    unhonoured_settings: tuple[str, ...] = ()

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

    def cache_key(self, request: ChatRequest) -> str:
        """``request``'s cache key under this model (its backend, model name and endpoint)."""
        return request.cache_key(self.backend, self.model, self.endpoint)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Releases resources (connections, files)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"
