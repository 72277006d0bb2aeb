"""Exceptions of the LLM layer."""

from __future__ import annotations


class GtLlmError(Exception):
    """Base class of gt-llm's own errors."""


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
