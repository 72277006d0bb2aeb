"""What the remote chat-completions backends (``groq``, ``openai``) share.

A :class:`RemoteChatModel` turns one :class:`~gt_llm.chat.ChatRequest` into
one HTTP call made by a subclass's :meth:`RemoteChatModel._send`, wrapped in
the rate limiter and :func:`~gt_llm.retry.call_with_retry`, and reads the
chat-completions JSON body with :func:`parse_chat_completion`, so that both
backends fail in the same way on the same server behaviour.

Every attempt runs under a wall-clock deadline (its timeout): the HTTP
clients made by :func:`~gt_llm.backends.deadline.deadline_client` wait on
their sockets at most :data:`~gt_llm.backends.deadline.POLL_SECONDS` at a
time and check the deadline and the process-wide cancellation
(:func:`gt_llm.retry.cancel_calls`, set by Ctrl-C) in between, so a server
trickling its answer byte by byte cannot stretch an attempt past its
timeout, nor keep an interrupted run waiting.

A structured request goes out with ``response_format`` of type
``json_schema``; a server that answers it with a validation error naming the
response format (llama-cpp-python's server accepts only ``text`` and
``json_object``) gets ``json_object`` with the schema, and if it refuses that
too, the prompt alone, remembered for the rest of the run
(:attr:`RemoteChatModel.schema_mode`). Any answer whose body says the request
is invalid is not retried, whatever its status.

Every request's sampler settings (:meth:`~gt_llm.chat.ChatRequest.sampling`)
go out under the names of :attr:`RemoteChatModel.sampling_fields`: by default
``top_p`` (OpenAI's) and the extensions of llama.cpp's server and vLLM
(``top_k``, ``min_p``, ``repeat_penalty``, and vLLM's ``repetition_penalty``
with the same value; each server ignores the other's name). A server that
refuses an extension (OpenAI's own API does) gets ``top_p`` alone for the rest
of the run, with one warning. A setting a backend cannot send is listed in
:attr:`~gt_llm.chat.ChatModel.unhonoured_settings` and named in a warning at
its first call: the server then samples with its own value. ``frequency_penalty``
and ``presence_penalty`` are different penalties and are never sent in its place.
"""

from __future__ import annotations

import abc
import dataclasses
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from gt_llm import inflight

# The deadline machinery and the wire format live in their own modules; their names stay
# importable from here.
from gt_llm.backends.deadline import _CALL as _CALL
from gt_llm.backends.deadline import POLL_SECONDS as POLL_SECONDS
from gt_llm.backends.deadline import _bounded as _bounded
from gt_llm.backends.deadline import _DeadlineBackend as _DeadlineBackend
from gt_llm.backends.deadline import _DeadlineStream as _DeadlineStream
from gt_llm.backends.deadline import _until as _until
from gt_llm.backends.deadline import call_deadline as call_deadline
from gt_llm.backends.deadline import deadline_client as deadline_client
from gt_llm.backends.wire import _FORMAT_WORDS as _FORMAT_WORDS
from gt_llm.backends.wire import MAX_USAGE_TOKENS as MAX_USAGE_TOKENS
from gt_llm.backends.wire import OPENAI_SAMPLING_FIELDS as OPENAI_SAMPLING_FIELDS
from gt_llm.backends.wire import RETRY_AFTER_STATUSES as RETRY_AFTER_STATUSES
from gt_llm.backends.wire import RETRYABLE_STATUSES as RETRYABLE_STATUSES
from gt_llm.backends.wire import SCHEMA_MODES as SCHEMA_MODES
from gt_llm.backends.wire import STANDARD_SAMPLING as STANDARD_SAMPLING
from gt_llm.backends.wire import json_object_format as json_object_format
from gt_llm.backends.wire import one_line as one_line
from gt_llm.backends.wire import parse_chat_completion as parse_chat_completion
from gt_llm.backends.wire import response_format as response_format
from gt_llm.backends.wire import says_request_invalid as says_request_invalid
from gt_llm.backends.wire import status_and_body as status_and_body
from gt_llm.backends.wire import status_is_retryable as status_is_retryable
from gt_llm.chat import SAMPLING_DEFAULTS, ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import AnswerTooLargeError, BackendError, MalformedResponseError
from gt_llm.retry import (
    CallCancelled,
    RateLimiter,
    RetryPolicy,
    call_with_retry,
    cancellable_sleep,
    check_not_cancelled,
)
from gt_llm.safety import public_spec, redact

logger = logging.getLogger(__name__)

#: Default cap on one answer's size in bytes (UTF-8): larger answers are errors, never cached.
DEFAULT_MAX_ANSWER_BYTES = 64 * 1024
#: Default per-attempt timeout in seconds.
DEFAULT_TIMEOUT = 60.0


def connection_refused(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a refused TCP connection."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return True
        current = current.__cause__ or current.__context__
    return False


def probe_server(
    url: str, *, timeout: float, headers: dict[str, str] | None = None
) -> tuple[bool, str]:
    """Whether a server answers ``GET url`` within ``timeout`` seconds (any HTTP status counts).

    Returns:
      ``(reachable, detail)``, e.g. ``(True, "HTTP 200 in 0.01 s")`` or
      ``(False, "connection refused")``; the detail never holds a secret.
    """
    start = time.perf_counter()
    real, url = url, public_spec(url)  # messages name the public label only
    try:
        # The whole answer within the timeout: a trickling server cannot stretch the check.
        with deadline_client(timeout=timeout) as client, call_deadline(time.monotonic() + timeout):
            response = client.get(real, headers=headers or {})
    except httpx.TimeoutException:
        return False, f"no answer from {url} within {timeout:g} s"
    except httpx.HTTPError as exc:
        if connection_refused(exc):
            return False, f"connection refused at {url} (nothing is listening)"
        return False, redact(f"cannot reach {url}: {type(exc).__name__}: {one_line(str(exc))}")
    took = time.perf_counter() - start
    detail = f"HTTP {response.status_code} from {url} in {took:.2f} s"
    if response.status_code == 401:
        detail += " (the key was rejected)"
    return True, detail


class RemoteChatModel(ChatModel):
    """Base of HTTP chat-completions backends: limiter, retries, parsing, size cap, latency.

    Every call retries transient faults (408, 429 with or without
    ``Retry-After``, 5xx, timeouts, connection resets, empty or malformed
    bodies) with backoff until the retry budget is spent, then fails with one
    line. Each attempt's timeout is ``timeout``, shortened so that the call
    never outlives its budget; it bounds the whole attempt (connecting,
    sending, headers and body) when the subclass's HTTP client comes from
    :func:`deadline_client`. A refused connection before the server ever
    answered fails at once (nothing is listening: waiting cannot help); after
    a first answer it is retried like any transient fault (a restarting server).
    An answer whose body says the request is invalid is never retried; one
    refusing the structured-output format moves :attr:`schema_mode` on.

    Subclasses implement :meth:`_send` (one attempt, returning the raw body),
    :meth:`_classify` and :meth:`_describe`, and set :attr:`url`.

    Args:
      model: Model name sent to the server.
      timeout: Per-attempt timeout in seconds.
      retry_budget: Total seconds one call may take, retries included (overrides
        ``retry.budget``; default five minutes).
      requests_per_minute: Optional limit shared by all threads using this instance.
      max_answer_bytes: Cap on an answer's UTF-8 size; a larger one is an
        :class:`~gt_llm.errors.AnswerTooLargeError` (default 64 kB).
      retry: Retry policy (waits, attempts).
      max_concurrency: Most calls of this instance in flight at once, across every
        thread (games played side by side share it), and the default concurrency of
        :meth:`complete_batch`.
      jitter_seed: Seed of the instance's own jitter generator; ``None`` seeds it
        from OS entropy so that separate processes do not retry in lockstep.
      sleep: Sleep function used between retries and by the limiter (tests pass a fake);
        ``time.sleep`` is replaced by :func:`~gt_llm.retry.cancellable_sleep`.
    """

    #: The URL calls go to, for messages and logs.
    url: str = ""
    remote = True

    def __init__(
        self,
        model: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry_budget: float | None = None,
        requests_per_minute: float | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so a shared default is safe
        max_concurrency: int = 8,
        jitter_seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        name = type(self).__name__
        if not model:
            raise ValueError(f"{name}: model name must be non-empty")
        if not 0 < timeout < float("inf"):
            raise ValueError(f"{name}: timeout must be a number of seconds > 0, got {timeout}")
        if retry_budget is not None and not 0 < retry_budget < float("inf"):
            raise ValueError(
                f"{name}: retry_budget must be a number of seconds > 0, got {retry_budget}"
            )
        if isinstance(max_answer_bytes, bool) or int(max_answer_bytes) < 1:
            raise ValueError(f"{name}: max_answer_bytes must be >= 1, got {max_answer_bytes}")
        if max_concurrency < 1:
            raise ValueError(f"{name}: max_concurrency must be >= 1")
        self.model = model
        self.timeout = float(timeout)
        self.retry = (
            dataclasses.replace(retry, budget=float(retry_budget))
            if retry_budget is not None
            else retry
        )
        self.max_answer_bytes = int(max_answer_bytes)
        self.max_concurrency = int(max_concurrency)
        # The bound holds process-wide: a caller's threads (a series' games at a
        # time) never put more than max_concurrency calls on the server.
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        # Waits end early when the run is interrupted (a fake sleep from a test is kept).
        self._sleep = cancellable_sleep if sleep is time.sleep else sleep
        # The instance's own generator: jitter must never consume the global RNG,
        # which experiments seed for their own purposes.
        self._rng = random.Random(jitter_seed)
        self.limiter = (
            RateLimiter(requests_per_minute, sleep=self._sleep) if requests_per_minute else None
        )
        # Set once the server has answered: from then on a refused connection is a restart.
        self._reached = False
        self._schema_lock = threading.Lock()
        self._schema_mode = SCHEMA_MODES[0]
        # Set once a server refuses the sampler extensions; the warning is said once.
        self._standard_sampling_only = False
        self._warned_unhonoured = False

    @property
    def retry_budget(self) -> float:
        """Total seconds one call may take, retries and waits included."""
        return self.retry.budget

    @property
    def max_call_seconds(self) -> float:
        """An upper bound on one call's duration (its budget plus one attempt's timeout)."""
        return self.retry.budget + self.timeout

    @abc.abstractmethod
    def _send(self, request: ChatRequest, *, timeout: float) -> bytes:
        """Makes one attempt within ``timeout`` seconds and returns the raw 2xx body (or raises)."""

    @abc.abstractmethod
    def _classify(self, exc: BaseException) -> tuple[bool, float | None]:
        """``(retryable, retry_after_seconds)`` for an exception raised by :meth:`_send`."""

    @abc.abstractmethod
    def _describe(self, exc: BaseException) -> str:
        """A one-line description of an exception raised by :meth:`_send`."""

    #: Whether the server constrains decoding to a JSON schema sent as ``response_format``.
    sends_schema: bool = True
    #: Per sampler setting of a request, the body fields that carry it (none: not sent).
    sampling_fields: dict[str, tuple[str, ...]] = OPENAI_SAMPLING_FIELDS

    @property
    def unhonoured_settings(self) -> tuple[str, ...]:  # type: ignore[override]
        """The request's sampler settings this backend does not send (the server's own apply)."""
        fields = self._sampling_now()
        return tuple(name for name in SAMPLING_DEFAULTS if not fields.get(name))

    def _sampling_now(self) -> dict[str, tuple[str, ...]]:
        if self._standard_sampling_only:
            return {k: v for k, v in self.sampling_fields.items() if k in STANDARD_SAMPLING}
        return self.sampling_fields

    def _warn_unhonoured(self) -> None:
        """One warning per instance naming the settings the server applies its own values for."""
        missing = self.unhonoured_settings
        if not missing or self._warned_unhonoured:
            return
        self._warned_unhonoured = True
        logger.warning(
            "%s backend (%s): cannot send the sampler settings %s (the API has no such "
            "parameter); the server samples with its own values, so its answers may differ "
            "from the local backend's to the same request",
            self.backend,
            self.url,
            ", ".join(missing),
        )

    @property
    def schema_mode(self) -> str:
        """How structured requests ask for their schema now (one of :data:`SCHEMA_MODES`)."""
        return self._schema_mode if self.sends_schema else "prompt"

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions request body for ``request``.

        A structured request (one with a schema) adds OpenAI's
        ``response_format: {"type": "json_schema", ...}`` when the server
        supports it (:attr:`sends_schema`), or the fallback the server was
        found to accept (:attr:`schema_mode`: ``json_object`` with the schema,
        or nothing); otherwise its prompt alone asks for the JSON answer. The
        parser validates the answer either way.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages],
            "seed": request.seed,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        self._warn_unhonoured()
        for name, value in request.sampling().items():
            for wire in self._sampling_now().get(name, ()):
                body[wire] = value
        schema = request.schema_dict()
        mode = self.schema_mode
        if schema is not None and mode == "json_schema":
            body["response_format"] = response_format(request.task, schema)
        elif schema is not None and mode == "json_object":
            body["response_format"] = json_object_format(schema)
        return body

    def _refuses_format(self, request: ChatRequest, exc: BaseException) -> bool:
        """Whether ``exc`` is the server refusing the ``response_format`` a structured request sent."""
        answer = status_and_body(exc)
        return (
            answer is not None
            and request.schema is not None
            and self.schema_mode != "prompt"
            and says_request_invalid(answer[1])
            and _FORMAT_WORDS.search(answer[1][:8192]) is not None
        )

    def _fall_back(self, refused: str, exc: BaseException) -> bool:
        """Moves :attr:`schema_mode` past ``refused``; False if nothing is left to try."""
        with self._schema_lock:
            if self._schema_mode != refused:
                return True  # another thread moved on already: try its mode
            if refused == SCHEMA_MODES[-1]:
                return False
            self._schema_mode = SCHEMA_MODES[SCHEMA_MODES.index(refused) + 1]
        answer = status_and_body(exc)
        logger.warning(
            "%s backend (%s): the server refuses response_format %s (HTTP %s: %s); "
            "structured requests send %s for the rest of the run",
            self.backend,
            self.url,
            refused,
            answer[0] if answer else "?",
            redact(one_line(answer[1] if answer else str(exc), 160)),
            "json_object with the schema"
            if self._schema_mode == "json_object"
            else "the prompt alone",
        )
        return True

    def _refuses_sampling(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the server refusing a sampler extension (e.g. OpenAI's own API)."""
        if self._standard_sampling_only:
            return False
        answer = status_and_body(exc)
        extensions = [
            wire
            for name, wires in self.sampling_fields.items()
            if name not in STANDARD_SAMPLING
            for wire in wires
        ]
        return (
            answer is not None
            and says_request_invalid(answer[1])
            and any(w in answer[1][:8192] for w in extensions)
        )

    def _drop_sampling_extensions(self, exc: BaseException) -> None:
        with self._schema_lock:
            self._standard_sampling_only = True
        answer = status_and_body(exc)
        logger.warning(
            "%s backend (%s): the server refuses the sampler extensions (HTTP %s: %s); "
            "requests send top_p alone for the rest of the run",
            self.backend,
            self.url,
            answer[0] if answer else "?",
            redact(one_line(answer[1] if answer else str(exc), 160)),
        )
        self._warned_unhonoured = False
        self._warn_unhonoured()

    def _send_structured(self, request: ChatRequest, timeout: float) -> bytes:
        """:meth:`_send`, falling back (at once, within the attempt) when the format is refused."""
        # Ends: each fallback leaves the mode strictly later in SCHEMA_MODES, and the
        # sampler extensions are dropped at most once.
        while True:
            mode = self.schema_mode
            try:
                return self._send(request, timeout=timeout)
            except Exception as exc:
                if self._refuses_sampling(exc):
                    self._drop_sampling_extensions(exc)
                    continue
                if not (self._refuses_format(request, exc) and self._fall_back(mode, exc)):
                    raise

    def _too_large(self, size: int, what: str) -> AnswerTooLargeError:
        return AnswerTooLargeError(
            f"{self.backend} backend: {what} from {self.url} is {size:,} bytes, more than "
            f"max_answer_bytes={self.max_answer_bytes:,}; lower max_tokens or raise the cap "
            "(max_answer_bytes / --max-answer-bytes)"
        )

    def _attempt(self, request: ChatRequest, deadline: list[float]) -> tuple[str, Usage]:
        # The budget starts at the first attempt (after any rate-limiter wait), as in
        # call_with_retry; no attempt may outlive it.
        if not deadline:
            deadline.append(time.monotonic() + self.retry.budget)
        timeout = max(0.05, min(self.timeout, deadline[0] - time.monotonic()))
        # The whole attempt, headers and body, ends by its timeout: a trickling server
        # cannot stretch it (through clients from deadline_client).
        with call_deadline(time.monotonic() + timeout):
            body = self._send_structured(request, timeout)
        # A chat-completions body is the answer plus a little JSON: refuse a far larger one
        # before decoding it.
        if len(body) > 4 * self.max_answer_bytes + 65536:
            raise self._too_large(len(body), "a response body")
        text, usage = parse_chat_completion(body, where=self.url)
        self._reached = True
        size = len(text.encode("utf-8"))
        if size > self.max_answer_bytes:
            raise self._too_large(size, "an answer")
        return text, usage

    def _classify_any(self, exc: BaseException) -> tuple[bool, float | None]:
        if isinstance(exc, BackendError):
            return exc.retryable, None
        if connection_refused(exc) and not self._reached:
            return False, None  # nothing is listening: fail fast
        if _invalid_request(exc):
            return False, None  # the same request gets the same answer
        return self._classify(exc)

    def _describe_any(self, exc: BaseException) -> str:
        if isinstance(exc, BackendError):
            return str(exc)
        if connection_refused(exc):
            return (
                f"nothing is listening at {self.url} (connection refused); start the server "
                "or check the base URL"
            )
        described = redact(self._describe(exc))
        if _invalid_request(exc):
            described += " (the server says the request is invalid: not retried)"
        return described

    def _complete_with_retry(
        self, request: ChatRequest, deadline: list[float], label: str
    ) -> tuple[str, Usage]:
        """One call's attempts under :func:`~gt_llm.retry.call_with_retry`."""
        return call_with_retry(
            lambda: self._attempt(request, deadline),
            classify=self._classify_any,
            policy=self.retry,
            rng=self._rng,
            sleep=self._sleep,
            label=label,
            describe=self._describe_any,
            before_attempt=self.limiter.acquire if self.limiter is not None else None,
        )

    def _take_slot(self, label: str) -> None:
        """Waits for one of the ``max_concurrency`` slots; an interrupted run stops waiting."""
        while not self._slots.acquire(timeout=POLL_SECONDS):
            check_not_cancelled(label)

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers one request, retrying transient failures within the retry budget.

        Raises:
          AnswerTooLargeError: the answer exceeds ``max_answer_bytes``.
          BackendError: a non-retryable failure, or the budget spent
            (``retryable=True``); the message is one line without secrets.
        """
        label = f"{self.backend} backend ({self.url})"
        self._take_slot(label)
        start = time.perf_counter()
        deadline: list[float] = []
        try:
            # Counted in flight (gt_llm.inflight) for the whole call, retries included.
            with inflight.track():
                text, usage = self._complete_with_retry(request, deadline, label)
        except BackendError as exc:
            # A fresh error without the chained vendor exception, whose text may quote
            # the server's body (and so, from a hostile server, the key).
            raise _rebuild(exc) from None
        except Exception as exc:
            raise BackendError(f"{self.backend} backend: {self._describe_any(exc)}") from None
        finally:
            self._slots.release()
        latency = time.perf_counter() - start
        logger.debug(
            "%s: %s seed=%d -> %d+%d tokens in %.3f s",
            self.spec,
            request.task,
            request.seed,
            usage.prompt_tokens,
            usage.completion_tokens,
            latency,
        )
        return ChatResponse(
            text=text,
            backend=self.backend,
            model=self.model,
            usage=usage,
            latency_s=latency,
            cached=False,
        )


def _invalid_request(exc: BaseException) -> bool:
    """Whether ``exc`` is a 4xx/5xx answer whose body says the request is invalid."""
    answer = status_and_body(exc)
    return (
        answer is not None
        and answer[0] >= 400
        and answer[0] not in RETRYABLE_STATUSES  # 408 and 429 say "later" whatever the body
        and says_request_invalid(answer[1])
    )


def _rebuild(exc: BackendError) -> BackendError:
    """A copy of ``exc`` of the same class and message, without its chained cause."""
    if isinstance(exc, MalformedResponseError):
        return MalformedResponseError(str(exc))
    if isinstance(exc, CallCancelled):
        return CallCancelled(str(exc))
    return type(exc)(str(exc), retryable=exc.retryable)
