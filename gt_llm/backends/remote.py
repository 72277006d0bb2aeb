"""What the remote chat-completions backends (``groq``, ``openai``) share.

A :class:`RemoteChatModel` turns one :class:`~gt_llm.chat.ChatRequest` into
one HTTP call made by a subclass's :meth:`RemoteChatModel._send`, wrapped in
the rate limiter and :func:`~gt_llm.retry.call_with_retry`, and reads the
chat-completions JSON body with :func:`parse_chat_completion`, so that both
backends fail in the same way on the same server behaviour.
"""

from __future__ import annotations

import abc
import json
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import BackendError
from gt_llm.retry import RateLimiter, RetryPolicy, call_with_retry

logger = logging.getLogger(__name__)

#: HTTP statuses worth retrying: request timeout, rate limit, and server errors.
RETRYABLE_STATUSES = frozenset({408, 429})
#: Statuses whose ``Retry-After`` header is honoured.
RETRY_AFTER_STATUSES = frozenset({429, 503})


def status_is_retryable(status: int) -> bool:
    """Whether an HTTP status is transient (408, 429, or any 5xx)."""
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def one_line(text: str, limit: int = 300) -> str:
    """Collapses whitespace and truncates, so that error messages stay on one line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def parse_chat_completion(body: bytes | str, *, where: str) -> tuple[str, Usage]:
    """Reads the answer text and token usage from a chat-completions JSON body.

    Args:
      body: The raw response body.
      where: The URL it came from, for messages.

    Raises:
      BackendError: (not retryable) malformed JSON, an ``error`` object, no
        ``choices``, or a first choice without text content.
    """
    raw = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BackendError(
            f"malformed JSON body from {where} ({exc.msg} at char {exc.pos}): {one_line(raw, 200)!r}"
        ) from None
    if not isinstance(data, dict):
        raise BackendError(
            f"unexpected JSON body from {where}: not an object: {one_line(raw, 200)!r}"
        )
    if data.get("error"):
        raise BackendError(f"error object in response from {where}: {one_line(str(data['error']))}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BackendError(
            f"response from {where} has no choices (empty or missing 'choices'): "
            f"{one_line(raw, 200)!r}"
        )
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise BackendError(
            f"response from {where} has no text in choices[0].message.content: "
            f"{one_line(json.dumps(first), 200)!r}"
        )
    usage_obj = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    usage = Usage(
        prompt_tokens=_as_int(usage_obj.get("prompt_tokens")),
        completion_tokens=_as_int(usage_obj.get("completion_tokens")),
    )
    return content, usage


def _as_int(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


class RemoteChatModel(ChatModel):
    """Base of HTTP chat-completions backends: limiter, retries, parsing, latency.

    Subclasses implement :meth:`_send` (one attempt, returning the raw body),
    :meth:`_classify` and :meth:`_describe`, and set :attr:`url`.

    Args:
      model: Model name sent to the server.
      timeout: Per-attempt timeout in seconds.
      requests_per_minute: Optional limit shared by all threads using this instance.
      retry: Retry policy.
      max_concurrency: Default concurrency of :meth:`complete_batch`.
      jitter_seed: Seed of the instance's own jitter generator; ``None`` seeds it
        from OS entropy so that separate processes do not retry in lockstep.
      sleep: Sleep function used between retries and by the limiter (tests pass a fake).
    """

    #: The URL calls go to, for messages and logs.
    url: str = ""

    def __init__(
        self,
        model: str,
        *,
        timeout: float = 60.0,
        requests_per_minute: float | None = None,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so a shared default is safe
        max_concurrency: int = 8,
        jitter_seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise ValueError(f"{type(self).__name__}: model name must be non-empty")
        if timeout <= 0:
            raise ValueError(f"{type(self).__name__}: timeout must be > 0, got {timeout}")
        if max_concurrency < 1:
            raise ValueError(f"{type(self).__name__}: max_concurrency must be >= 1")
        self.model = model
        self.timeout = float(timeout)
        self.retry = retry
        self.max_concurrency = int(max_concurrency)
        self._sleep = sleep
        # The instance's own generator: jitter must never consume the global RNG,
        # which experiments seed for their own purposes.
        self._rng = random.Random(jitter_seed)
        self.limiter = (
            RateLimiter(requests_per_minute, sleep=sleep) if requests_per_minute else None
        )

    @abc.abstractmethod
    def _send(self, request: ChatRequest) -> bytes:
        """Makes one attempt and returns the raw 2xx response body (or raises)."""

    @abc.abstractmethod
    def _classify(self, exc: BaseException) -> tuple[bool, float | None]:
        """``(retryable, retry_after_seconds)`` for an exception raised by :meth:`_send`."""

    @abc.abstractmethod
    def _describe(self, exc: BaseException) -> str:
        """A one-line description of an exception raised by :meth:`_send`."""

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions request body for ``request``."""
        return {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages],
            "seed": request.seed,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers one request, retrying transient failures.

        Raises:
          BackendError: a non-retryable failure, or retries exhausted
            (``retryable=True``).
        """
        start = time.perf_counter()
        label = f"{self.backend} backend ({self.url})"
        try:
            body = call_with_retry(
                lambda: self._send(request),
                classify=self._classify,
                policy=self.retry,
                rng=self._rng,
                sleep=self._sleep,
                label=label,
                describe=self._describe,
                before_attempt=self.limiter.acquire if self.limiter is not None else None,
            )
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError(f"{self.backend} backend: {self._describe(exc)}") from exc
        try:
            text, usage = parse_chat_completion(body, where=self.url)
        except BackendError as exc:
            raise BackendError(f"{self.backend} backend: {exc}") from None
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
