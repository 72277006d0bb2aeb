"""Keeping secrets out of messages and raw model output off the terminal.

* :func:`redact` removes API keys from any text before it becomes an error
  message or a log line: every key a backend was configured with (registered
  through :func:`register_secret`), any ``Bearer`` token, and anything shaped
  like an OpenAI (``sk-...``) or Groq (``gsk_...``) key. Every
  :class:`~gt_llm.errors.GtLlmError` message goes through it, so a server
  whose error body echoes the ``Authorization`` header cannot leak the key.
* :func:`terminal_safe` escapes control characters (NUL, BEL, ``ESC``
  sequences, C1 controls, Unicode bidirectional overrides such as U+202E) so
  that printing a model's answer cannot move the cursor, rewrite the screen,
  ring the bell or reorder what the reader sees.
"""

from __future__ import annotations

import re
import threading

__all__ = ["REDACTED", "redact", "register_secret", "terminal_safe"]

#: What a secret is replaced with.
REDACTED = "[REDACTED]"

# Shorter strings are too likely to be ordinary words to be replaced everywhere.
_MIN_SECRET_LEN = 6

_PATTERNS = (
    # "Bearer <token>" in any case, e.g. an echoed Authorization header.
    # (8+ characters: real tokens are long, "a bearer of news" is prose).
    (re.compile(r"(?i)\b(bearer)(\s+|%20|\\u0020)[^\s\"'\\,;)]{8,}"), rf"\1\2{REDACTED}"),
    # Provider key shapes: OpenAI-style sk-..., Groq gsk_...
    (re.compile(r"\b(?:sk|gsk)[-_][A-Za-z0-9_\-]{8,}"), REDACTED),
    # "Authorization: anything" headers echoed verbatim (basic auth, raw keys).
    (
        re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer)[^\s\"',;)]+"),
        rf"\1{REDACTED}",
    ),
)

_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def register_secret(secret: str | None) -> None:
    """Adds a configured secret (an API key) to those :func:`redact` removes everywhere."""
    if secret and len(secret) >= _MIN_SECRET_LEN:
        with _secrets_lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    """``text`` with every registered secret, bearer token and key-shaped string replaced."""
    out = str(text)
    with _secrets_lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in out:
            out = out.replace(secret, REDACTED)
    for pattern, repl in _PATTERNS:
        out = pattern.sub(repl, out)
    return out


# Bidirectional formatting characters: they reorder how the rest of a line is displayed.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ESCAPED = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "\u2028\u2029\ufeff]"  # newline and tab are kept
)


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with control and bidi characters shown as escapes (``\\x1b``, ``\\u202e``).

    Newlines and tabs are kept; carriage returns are escaped (they let a
    line overwrite itself).
    """
    return _ESCAPED.sub(_escape, text)
