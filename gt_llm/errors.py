"""Exceptions of the LLM layer.

Every message is passed through :func:`gt_llm.safety.redact` when the
exception is made, so that no configured key, bearer token or key-shaped
string can reach a terminal, a log or a traceback through gt-llm's errors.
"""

from __future__ import annotations

from typing import Any

from gt_llm.safety import redact


class GtLlmError(Exception):
    """Base class of gt-llm's own errors (messages are redacted)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigurationError(GtLlmError):
    """A backend cannot run as configured (missing key, bad URL, missing SDK)."""


class BackendError(GtLlmError):
    """A backend call failed for good (after retries, or not retryable).

    Attributes:
      retryable: Whether the last failure was of a retryable kind.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class MalformedResponseError(BackendError):
    """A 2xx answer whose body is not a usable chat completion (retried as transient).

    Malformed, empty or truncated bodies and bodies without text come from
    overloaded or restarting servers and proxies far more often than from a
    persistent fault, so they are retried under the call's retry budget.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class AnswerTooLargeError(BackendError):
    """An answer is larger than the configured cap (never retried, never cached)."""


class ParseError(GtLlmError, ValueError):
    """An LLM answer did not have the expected form.

    Attributes:
      raw: The raw text that failed to parse.
      expected: What the parser expected, in words.
    """

    def __init__(self, expected: str, raw: str) -> None:
        preview = raw if len(raw) <= 200 else raw[:200] + "..."
        super().__init__(f"expected {expected}, got {preview!r}")
        self.raw = raw
        self.expected = expected
