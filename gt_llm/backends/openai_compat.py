"""The ``openai`` backend: any OpenAI-compatible chat-completions server.

Spec: ``openai:MODEL@BASE_URL``, e.g. ``openai:qwen2.5-7b@http://127.0.0.1:8000/v1``
(vLLM, the llama.cpp server, Ollama's ``/v1``). Calls are plain ``httpx``
POSTs to ``{BASE_URL}/chat/completions``, retried through :mod:`gt_llm.retry`
exactly like the ``groq`` backend. A key is sent as a bearer token when given
(``api_key`` option or ``OPENAI_API_KEY``); local servers usually need none.

Credentials in the URL (``http://user:password@host/v1``) are sent as HTTP
Basic authentication and secret query values as given, but only the public
label (:func:`gt_llm.safety.public_spec`: no user, no password, query values
replaced) ever appears in :attr:`OpenAICompatModel.spec`, :attr:`url`,
messages and logs.

The model name and the server (:attr:`OpenAICompatModel.endpoint`, the public
label of the base URL: scheme, host, port and path, never a user, password or
query value) identify the model in the cache: two servers answering under one
model name never share a cached answer.
"""

from __future__ import annotations

import logging
import os
import re
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import httpx

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
from gt_llm.retry import RetryPolicy, parse_retry_after
from gt_llm.safety import endpoint_label, public_spec, register_secret

logger = logging.getLogger(__name__)

KEY_VARIABLE = "OPENAI_API_KEY"
SPEC_FORM = "openai:MODEL@BASE_URL (e.g. openai:qwen2.5-7b@http://127.0.0.1:8000/v1)"

# The model is everything before the '@' that starts the URL, so model names with
# ':' (Ollama's 'llama3:8b') and URLs with user info both parse.
_SPEC = re.compile(r"^(?P<model>[^@\s]+)@(?P<url>https?://\S+)$")


def parse_spec_rest(rest: str) -> tuple[str, str]:
    """``(model, base_url)`` from the part of a spec after ``openai:``.

    Raises:
      ValueError: ``rest`` is not of the form ``MODEL@BASE_URL``.
    """
    match = _SPEC.match((rest or "").strip())
    if match is None:
        raise ValueError(
            f"openai backend: bad spec {public_spec('openai:' + str(rest))!r}; expected {SPEC_FORM}"
        )
    return match["model"], match["url"]


class HTTPStatusFailure(Exception):
    """A non-2xx answer from the server (internal to the backend's retry loop)."""

    def __init__(self, status: int, headers: httpx.Headers, body: str) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers
        self.body = body


class OpenAICompatModel(RemoteChatModel):
    """A model served by an OpenAI-compatible chat-completions server.

    Args:
      model: Model name the server knows.
      base_url: Server root including the API prefix, e.g. ``http://127.0.0.1:8000/v1``.
      api_key: Bearer token; default ``$OPENAI_API_KEY``; none is sent if unset.
      timeout: Per-attempt timeout in seconds (default 60).
      retry_budget: Total seconds one call may take, retries included (default 300).
      requests_per_minute: Optional request-rate limit for this instance.
      max_answer_bytes: Cap on one answer's UTF-8 size (default 64 kB); larger is an error.
      retry: Retry policy for 408/429, 5xx, timeouts and connection errors.
      max_concurrency: Default concurrency of ``complete_batch``.
      jitter_seed: Seed of the instance's jitter generator (``None``: OS entropy).
      sleep: Sleep function (tests pass a fast one).
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
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
            model,
            timeout=timeout,
            retry_budget=retry_budget,
            requests_per_minute=requests_per_minute,
            max_answer_bytes=max_answer_bytes,
            retry=retry,
            max_concurrency=max_concurrency,
            jitter_seed=jitter_seed,
            sleep=sleep,
        )
        if not re.match(r"^https?://\S+$", base_url or ""):
            raise ValueError(
                f"openai backend: base URL must start with http:// or https://, got {base_url!r}; "
                f"expected {SPEC_FORM}"
            )
        # The full URL (user, password, query) stays in this object only; every name
        # shown anywhere is the public label.
        parts = urllib.parse.urlsplit(base_url)
        path = parts.path.rstrip("/")
        host = parts.netloc.rpartition("@")[2]
        self._post_url = urllib.parse.urlunsplit(
            (parts.scheme, host, f"{path}/chat/completions", parts.query, "")
        )
        self.base_url = public_spec(
            urllib.parse.urlunsplit((parts.scheme, host, path, parts.query, ""))
        )
        self.url = public_spec(self._post_url)
        # The cache's name of the server: the same in every process (not public_spec,
        # whose output depends on the secrets registered so far).
        self.endpoint = endpoint_label(base_url)
        auth = None
        if parts.username is not None or parts.password is not None:
            auth = httpx.BasicAuth(
                urllib.parse.unquote(parts.username or ""),
                urllib.parse.unquote(parts.password or ""),
            )
            public_spec(base_url)  # registers the credentials for redaction
        key = api_key if api_key is not None else os.environ.get(KEY_VARIABLE)
        register_secret(key)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._has_key = bool(key) or auth is not None
        self._client = deadline_client(timeout=self.timeout, headers=headers, auth=auth)

    @classmethod
    def from_spec_rest(cls, rest: str, **options: Any) -> OpenAICompatModel:
        """Builds a model from the part of the spec after ``openai:``.

        Args:
          rest: ``MODEL@BASE_URL``.
          **options: Keyword arguments of the constructor.

        Raises:
          ValueError: ``rest`` is not of the form ``MODEL@BASE_URL``.
        """
        model, base_url = parse_spec_rest(rest)
        return cls(model, base_url, **options)

    @property
    def spec(self) -> str:
        """``openai:MODEL@BASE_URL``, the public label (no credentials, no query values)."""
        return f"{self.backend}:{self.model}@{self.base_url}"

    def _send(self, request: ChatRequest, *, timeout: float) -> bytes:
        response = self._client.post(self._post_url, json=self.payload(request), timeout=timeout)
        if not 200 <= response.status_code < 300:
            raise HTTPStatusFailure(response.status_code, response.headers, response.text)
        return response.content

    def _classify(self, exc: BaseException) -> tuple[bool, float | None]:
        if isinstance(exc, HTTPStatusFailure):
            if not status_is_retryable(exc.status):
                return False, None
            retry_after = (
                parse_retry_after(exc.headers) if exc.status in RETRY_AFTER_STATUSES else None
            )
            return True, retry_after
        # Timeouts, refused connections, resets, protocol errors: all transient.
        if isinstance(exc, httpx.TransportError):
            return True, None
        return False, None

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, HTTPStatusFailure):
            detail = one_line(exc.body, 200)
            if exc.status == 401:
                hint = (
                    f"the key was rejected; check {KEY_VARIABLE} or the api_key option"
                    if self._has_key
                    else f"the server needs a key; set {KEY_VARIABLE} or pass api_key"
                )
                return f"HTTP 401 unauthorized from {self.url}: {hint} ({detail})"
            if exc.status == 404:
                return (
                    f"HTTP 404 from {self.url}: unknown model {self.model!r} or wrong base URL "
                    f"(it usually ends in /v1) ({detail})"
                )
            return f"HTTP {exc.status} from {self.url}: {detail}"
        if isinstance(exc, httpx.TimeoutException):
            return f"timed out after {self.timeout:g} s waiting for {self.url}"
        if isinstance(exc, httpx.TransportError):
            return f"cannot reach {self.url}: {type(exc).__name__}: {one_line(str(exc))}"
        return f"{type(exc).__name__} calling {self.url}: {one_line(str(exc))}"

    def close(self) -> None:
        """Closes the HTTP client."""
        self._client.close()
