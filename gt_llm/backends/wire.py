"""The chat-completions wire format: request options, error statuses and answer bodies.

What every remote backend (:mod:`gt_llm.backends.remote`) reads and writes on
the wire, apart from sending it: which HTTP statuses are retried, whether an
error body says the request itself is invalid, the ``response_format`` of a
JSON schema and its fallbacks (:data:`SCHEMA_MODES`), the wire names of the
sampler settings, and :func:`parse_chat_completion`, the one reader of an
answer body (its text and usage, malformed bodies refused).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from gt_llm.chat import Usage
from gt_llm.errors import MalformedResponseError
from gt_llm.parsing import replace_lone_surrogates

#: HTTP statuses worth retrying: request timeout, rate limit, and server errors.
RETRYABLE_STATUSES = frozenset({408, 429})
#: Statuses whose ``Retry-After`` header is honoured.
RETRY_AFTER_STATUSES = frozenset({429, 503})


def status_is_retryable(status: int) -> bool:
    """Whether an HTTP status is transient (408, 429, or any 5xx)."""
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


# What servers say when they reject a request as invalid (FastAPI/pydantic, vLLM, OpenAI).
_INVALID_REQUEST = re.compile(
    r"validation error|input should be|invalid[_ ]request|unprocessable|"
    r"extra (?:inputs|fields) (?:are )?not permitted|unrecognized request argument|"
    r"not supported|unsupported",
    re.IGNORECASE,
)
# What a refusal of the structured-output request names.
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object", re.IGNORECASE)


def says_request_invalid(body: str) -> bool:
    """Whether an error body says the request itself is invalid (so retrying cannot help)."""
    return _INVALID_REQUEST.search(body[:8192]) is not None


def status_and_body(exc: BaseException) -> tuple[int, str] | None:
    """``(status, body text)`` of a non-2xx answer raised by a backend, or ``None``.

    Reads ``status``/``status_code`` and ``body``/``message`` (the ``openai``
    backend's ``HTTPStatusFailure`` and the Groq SDK's ``APIStatusError``).
    """
    status = getattr(exc, "status", None)
    if not isinstance(status, int):
        status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    parts = []
    for name in ("body", "message"):
        value = getattr(exc, name, None)
        if isinstance(value, str):
            parts.append(value)
        elif value is not None:
            parts.append(json.dumps(value, default=str))
    return status, " ".join(parts)


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
      MalformedResponseError: (retryable) an empty or malformed JSON body, an
        ``error`` object, no ``choices``, or a first choice without text content.

    Bytes that are not UTF-8 and escaped lone surrogates (``"\\ud800"``) in the
    text are read as U+FFFD (:func:`~gt_llm.parsing.replace_lone_surrogates`), so
    every answer returned can be cached and quoted in later prompts.
    """
    raw = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    if not raw.strip():
        raise MalformedResponseError(f"empty body from {where}")
    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise MalformedResponseError(
            f"malformed JSON body from {where} ({exc.msg} at char {exc.pos}): {one_line(raw, 200)!r}"
        ) from None
    except RecursionError:
        raise MalformedResponseError(
            f"malformed JSON body from {where} (nested too deeply to decode): "
            f"{one_line(raw, 200)!r}"
        ) from None
    except ValueError as exc:  # a number of more than 4300 digits (e.g. in usage)
        raise MalformedResponseError(
            f"malformed JSON body from {where} ({one_line(str(exc), 120)}): {one_line(raw, 200)!r}"
        ) from None
    if not isinstance(data, dict):
        raise MalformedResponseError(
            f"unexpected JSON body from {where}: not an object: {one_line(raw, 200)!r}"
        )
    if data.get("error"):
        raise MalformedResponseError(
            f"error object in response from {where}: {one_line(str(data['error']))}"
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedResponseError(
            f"response from {where} has no choices (empty or missing 'choices'): "
            f"{one_line(raw, 200)!r}"
        )
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise MalformedResponseError(
            f"response from {where} has no text in choices[0].message.content: "
            f"{one_line(json.dumps(first), 200)!r}"
        )
    usage_obj = data.get("usage")
    if not isinstance(usage_obj, dict):
        usage_obj = {}
    usage = Usage(
        prompt_tokens=_token_count(usage_obj.get("prompt_tokens"), "prompt_tokens", where),
        completion_tokens=_token_count(
            usage_obj.get("completion_tokens"), "completion_tokens", where
        ),
    )
    # An escaped lone surrogate cannot be stored or sent on: read as U+FFFD, like bad bytes.
    return replace_lone_surrogates(content), usage


#: How a structured request asks for its schema, in the order servers are tried:
#: ``response_format`` of type ``json_schema``, of type ``json_object`` with the schema
#: (llama-cpp-python's server), or the prompt alone.
SCHEMA_MODES = ("json_schema", "json_object", "prompt")

#: Wire names of each sampler setting on an OpenAI-compatible server: OpenAI's ``top_p``,
#: and the llama.cpp server's and vLLM's extensions (vLLM calls the repeat penalty
#: ``repetition_penalty``; each server ignores the other's name).
OPENAI_SAMPLING_FIELDS: dict[str, tuple[str, ...]] = {
    "top_p": ("top_p",),
    "top_k": ("top_k",),
    "min_p": ("min_p",),
    "repeat_penalty": ("repeat_penalty", "repetition_penalty"),
}
#: The settings of OpenAI's own API (what is left when a server refuses the extensions).
STANDARD_SAMPLING = ("top_p",)


def response_format(task: str, schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's ``response_format`` for a JSON schema (vLLM, llama.cpp server, OpenAI, Groq).

    ``strict`` is left off: strict mode rejects keywords the answer formats use
    (``maxLength``), and the parser validates every answer anyway.
    """
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in task)[:64] or "answer"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def json_object_format(schema: dict[str, Any]) -> dict[str, Any]:
    """``response_format`` of type ``json_object`` carrying the schema (llama-cpp-python's form)."""
    return {"type": "json_object", "schema": schema}


#: More tokens than any call has: a usage count above it is a malformed answer.
MAX_USAGE_TOKENS = 10**9


def _token_count(value: Any, name: str, where: str) -> int:
    """A usage count: absent or not a number reads as 0 (servers differ); absurd is malformed.

    Raises:
      MalformedResponseError: a count that is not finite (``1e999`` reads as
        infinity) or above :data:`MAX_USAGE_TOKENS`: the answer is not trusted,
        retried like any other malformed body, and never cached.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return 0
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return 0
    if not math.isfinite(number) or number > MAX_USAGE_TOKENS:
        raise MalformedResponseError(
            f"response from {where} reports usage {name} {one_line(str(value), 40)}, "
            f"not a token count (at most {MAX_USAGE_TOKENS})"
        )
    return max(0, int(number))
