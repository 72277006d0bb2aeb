"""The ``groq`` backend: Groq cloud through the official ``groq`` SDK.

The SDK's own retries are switched off (``max_retries=0``) so that every
backend retries the same way, through :mod:`gt_llm.retry`. The key comes from
``api_key`` or ``GROQ_API_KEY``; the server from ``base_url`` or, when that is
``None``, from ``GROQ_BASE_URL`` (read by the SDK itself), else
``https://api.groq.com``. The SDK posts to ``{base_url}/openai/v1/chat/completions``.

Of a request's sampler settings Groq's API takes ``top_p`` only: it has no
repeat penalty, ``top_k`` or ``min_p`` (its ``frequency_penalty`` is another
penalty and is not sent in their place), so those are the model's
:attr:`~gt_llm.chat.ChatModel.unhonoured_settings`, named in a warning at the
first call.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from gt_llm.backends.deadline import deadline_client
from gt_llm.backends.remote import (
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_TIMEOUT,
    RETRY_AFTER_STATUSES,
    RemoteChatModel,
    one_line,
    status_is_retryable,
)
from gt_llm.chat import ChatRequest
from gt_llm.errors import ConfigurationError
from gt_llm.retry import RetryPolicy, parse_retry_after
from gt_llm.safety import endpoint_label, public_spec, register_secret

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "llama-3.3-70b-versatile"
KEY_VARIABLE = "GROQ_API_KEY"


DEFAULT_BASE_URL = "https://api.groq.com"

#: Groq models whose API accepts ``response_format`` of type ``json_schema`` (Groq's
#: structured-outputs list; exact names). For the others a structured request is sent
#: with its prompt alone, which asks for the JSON answer.
JSON_SCHEMA_MODELS = frozenset(
    {
        "openai/gpt-oss-20b",
        "openai/gpt-oss-120b",
        "moonshotai/kimi-k2-instruct",
        "moonshotai/kimi-k2-instruct-0905",
        "meta-llama/llama-4-maverick-17b-128e-instruct",
        "meta-llama/llama-4-scout-17b-16e-instruct",
    }
)


def default_base_url() -> str:
    """The server the SDK uses when no ``base_url`` is given: ``$GROQ_BASE_URL`` or Groq's."""
    return (os.environ.get("GROQ_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


class GroqModel(RemoteChatModel):
    """A Groq-hosted chat model.

    Args:
      model: Groq model id (default ``llama-3.3-70b-versatile``).
      api_key: API key; default ``$GROQ_API_KEY``.
      base_url: Server root; default ``$GROQ_BASE_URL`` or ``https://api.groq.com``.
      timeout: Per-attempt timeout in seconds (default 60).
      retry_budget: Total seconds one call may take, retries included (default 300).
      requests_per_minute: Optional request-rate limit for this instance.
      max_answer_bytes: Cap on one answer's UTF-8 size (default 64 kB); larger is an error.
      retry: Retry policy for 429, 5xx, timeouts and connection errors.
      max_concurrency: Default concurrency of ``complete_batch``.
      jitter_seed: Seed of the instance's jitter generator (``None``: OS entropy).
      sleep: Sleep function (tests pass a fast one).

    Raises:
      ConfigurationError: no API key, or the ``groq`` package is missing.
    """

    backend = "groq"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry_budget: float | None = None,
        requests_per_minute: float | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, so a shared default is safe
        max_concurrency: int = 8,
        jitter_seed: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(
            model or DEFAULT_MODEL,
            timeout=timeout,
            retry_budget=retry_budget,
            requests_per_minute=requests_per_minute,
            max_answer_bytes=max_answer_bytes,
            retry=retry,
            max_concurrency=max_concurrency,
            jitter_seed=jitter_seed,
            sleep=sleep,
        )
        try:
            import groq
        except ImportError:
            raise ConfigurationError(
                "groq backend: the 'groq' package is not installed (pip install groq)"
            ) from None
        self._groq = groq
        key = api_key if api_key is not None else os.environ.get(KEY_VARIABLE)
        register_secret(key)
        if not key:
            raise ConfigurationError(
                f"groq backend: {KEY_VARIABLE} is not set; export {KEY_VARIABLE}=... "
                "(keys at https://console.groq.com/keys) or use the offline 'scripted' backend"
            )
        # base_url=None lets the SDK apply GROQ_BASE_URL and its default itself.
        self._client = groq.Groq(
            api_key=key,
            base_url=base_url,
            max_retries=0,
            timeout=self.timeout,
            # The SDK's own client, with each attempt's deadline on the whole answer.
            http_client=deadline_client(timeout=self.timeout, follow_redirects=True),
        )
        self.base_url = public_spec(str(self._client.base_url).rstrip("/"))
        # The cache's name of the server, from what the spec's endpoint is made of.
        self.endpoint = endpoint_label(base_url if base_url is not None else default_base_url())
        self.url = f"{self.base_url}/openai/v1/chat/completions"
        self.sends_schema = self.model in JSON_SCHEMA_MODELS

    #: Groq's API takes ``top_p`` of the sampler settings (the SDK refuses unknown arguments).
    sampling_fields = {"top_p": ("top_p",)}

    def _send(self, request: ChatRequest, *, timeout: float) -> bytes:
        payload = self.payload(request)
        # The raw response, so that both backends read bodies with the same parser
        # (the typed one silently accepts some malformed bodies).
        raw = self._client.chat.completions.with_raw_response.create(**payload, timeout=timeout)
        return raw.http_response.content

    def _classify(self, exc: BaseException) -> tuple[bool, float | None]:
        groq = self._groq
        if isinstance(exc, groq.APIStatusError):
            status = exc.status_code
            if not status_is_retryable(status):
                return False, None
            retry_after = (
                parse_retry_after(exc.response.headers) if status in RETRY_AFTER_STATUSES else None
            )
            return True, retry_after
        # APITimeoutError is a subclass of APIConnectionError.
        if isinstance(exc, groq.APIConnectionError):
            return True, None
        return False, None

    def _describe(self, exc: BaseException) -> str:
        groq = self._groq
        if isinstance(exc, groq.APIStatusError):
            status = exc.status_code
            detail = one_line(_error_message(exc))
            if status == 401:
                return (
                    f"HTTP 401 unauthorized from {self.url}: the API key was rejected; "
                    f"check {KEY_VARIABLE} ({detail})"
                )
            if status == 404:
                return (
                    f"HTTP 404 from {self.url}: unknown model {self.model!r} or wrong "
                    f"base URL ({detail})"
                )
            return f"HTTP {status} from {self.url}: {detail}"
        if isinstance(exc, groq.APITimeoutError):
            return f"timed out after {self.timeout:g} s waiting for {self.url}"
        if isinstance(exc, groq.APIConnectionError):
            cause = exc.__cause__
            why = f"{type(cause).__name__}: {one_line(str(cause))}" if cause else exc.message
            return f"cannot reach {self.url}: {why}"
        return f"{type(exc).__name__} calling {self.url}: {one_line(str(exc))}"

    def close(self) -> None:
        """Closes the SDK's HTTP client."""
        self._client.close()


def _error_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and "message" in err:
            return str(err["message"])
        return str(err)
    return str(getattr(exc, "message", exc))
