"""Keeping secrets out of messages and raw model output off the terminal.

* :func:`redact` removes API keys from any text before it becomes an error
  message or a log line: every key a backend was configured with (registered
  through :func:`register_secret`), any ``Bearer`` token, and anything shaped
  like an OpenAI (``sk-...``) or Groq (``gsk_...``) key, the user and password
  of any URL (``http://user:password@host``), ``Basic`` credentials and the
  values of secret-named query parameters (``?api_key=...``). Every
  :class:`~gt_llm.errors.GtLlmError` message goes through it, so a server
  whose error body echoes the ``Authorization`` header cannot leak the key.
* :func:`public_spec` is the one function that turns a backend spec (or any
  text holding URLs) into its public label: user and password removed, query
  values replaced; it registers what it removed, so that echoes of them (the
  base64 of ``user:password`` in a ``Basic`` header included) are redacted too.
  The full spec lives only in memory, in the backend that sends requests.
  Query values outside a full URL (``127.0.0.1:8000/v1?k=VALUE``, a spec with
  its scheme mistyped) are replaced too.
* :func:`endpoint_label` is the server a remote model is served from, as the
  call cache keys it: the URL's public label, the same whatever was registered
  before (no user, no password, no query value, lower-case scheme and host).
* :class:`RedactingFilter` applies :func:`redact` to every log record (message,
  arguments and traceback), so ``-v`` lines and ``-vv`` tracebacks hold no secret.
* :func:`terminal_safe` escapes control characters (NUL, BEL, ``ESC``
  sequences, C1 controls, Unicode bidirectional overrides such as U+202E) so
  that printing a model's answer cannot move the cursor, rewrite the screen,
  ring the bell or reorder what the reader sees.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
import urllib.parse

__all__ = [
    "REDACTED",
    "RedactingFilter",
    "endpoint_label",
    "public_spec",
    "redact",
    "register_secret",
    "terminal_safe",
]

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
    # "Basic <base64 of user:password>", e.g. a 401 body echoing the Authorization header.
    (re.compile(r"(?i)\b(basic)(\s+|%20|\\u0020)[A-Za-z0-9+/=_\-]{6,}"), rf"\1\2{REDACTED}"),
    # "Authorization: anything" headers echoed verbatim (raw keys).
    (
        re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer|basic)[^\s\"',;)]+"),
        rf"\1{REDACTED}",
    ),
    # The user info of a URL (scheme://user:password@host): removed, the host kept.
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#\"'<>]*@"), r"\1"),
    # Values of secret-named query parameters (?api_key=..., &token=..., &sig=...).
    (
        re.compile(
            r"(?i)([?&](?:[a-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|auth|sig|"
            r"signature|credential)[a-z0-9_\-]*)=)[^&#\s\"'<>]+"
        ),
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


def _register_url_secrets(url: urllib.parse.SplitResult) -> None:
    # Everything public_spec removes, in each form it can come back in.
    user = url.username or ""
    password = url.password or ""
    if user or password:
        pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
        raw_pair = f"{user}:{password}"
        for secret in {password, urllib.parse.unquote(password), pair, raw_pair}:
            register_secret(secret)
        for form in {pair, raw_pair}:
            register_secret(base64.b64encode(form.encode("utf-8")).decode("ascii"))
    for _, value in urllib.parse.parse_qsl(url.query, keep_blank_values=False):
        register_secret(value)
        register_secret(urllib.parse.quote(value, safe=""))


_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s\"'<>]+")


def _public_url_text(url: urllib.parse.SplitResult) -> str:
    """``url`` without user, password and fragment, its query values replaced."""
    netloc = url.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"  # an IPv6 literal
    if url.port is not None:
        netloc += f":{url.port}"
    query = "&".join(
        f"{name}={REDACTED}" if value else name
        for name, value in urllib.parse.parse_qsl(url.query, keep_blank_values=True)
    )
    return urllib.parse.urlunsplit((url.scheme, netloc, url.path, query, ""))


def _public_url(match: re.Match[str]) -> str:
    text = match.group(0)
    try:
        url = urllib.parse.urlsplit(text)
        _ = url.port  # raises on a malformed port: fall back to redact() below
    except ValueError:
        return redact(text)
    _register_url_secrets(url)
    return _public_url_text(url)


# A query outside a full URL (no scheme, or a mistyped one): every value is replaced, up
# to the next parameter, space, quote or ';' (a comma is kept in it, as in a full URL's).
_BARE_QUERY = re.compile(r"([?&][A-Za-z0-9_.~%+\-]+=)([^&#\s;\"'<>]+)")


def _public_bare_query(match: re.Match[str]) -> str:
    value = match.group(2)
    if value == REDACTED:
        return match.group(0)
    register_secret(value)
    return f"{match.group(1)}{REDACTED}"


def public_spec(spec: str) -> str:
    """The public label of a backend spec: every URL's user, password and query values removed.

    ``openai:m@http://alice:SECRET@127.0.0.1:8000/v1?key=K`` becomes
    ``openai:m@http://127.0.0.1:8000/v1?key=[REDACTED]``. This is what every
    file, table, manifest, log line and message names the backend by; what was
    removed is registered with :func:`register_secret` (password, ``user:password``
    and its base64, query values), so that a server echoing it is redacted too.
    A query outside a full URL (``openai:m@127.0.0.1:8000/v1?k=V``: no scheme) has
    its values replaced as well. Other text is returned unchanged (apart from
    :func:`redact`).
    """
    return redact(_BARE_QUERY.sub(_public_bare_query, _URL.sub(_public_url, str(spec))))


def endpoint_label(url: str) -> str:
    """The server ``url`` names, as the call cache keys it: its public label, deterministically.

    ``HTTP://alice:PW@Example.COM:8000/v1/?key=K`` is
    ``http://example.com:8000/v1?key=[REDACTED]``: no user, no password, no query
    value, no fragment, scheme and host in lower case, no trailing ``/``; key-shaped
    strings (``sk-...``) are removed too. Unlike :func:`public_spec`, the result does
    not depend on the secrets registered so far, so the same URL is the same endpoint
    in every process. Text that is not a URL is reduced the same way as far as it goes.
    """
    text = str(url).strip()
    try:
        parts = urllib.parse.urlsplit(text)
        _ = parts.port  # raises on a malformed port
    except ValueError:
        label = _BARE_QUERY.sub(rf"\1{REDACTED}", text.partition("#")[0])
    else:
        parts = parts._replace(scheme=parts.scheme.lower(), path=parts.path.rstrip("/"))
        label = _public_url_text(parts)
    for pattern, repl in _PATTERNS:
        label = pattern.sub(repl, label)
    return label


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


class RedactingFilter(logging.Filter):
    """A logging filter that passes every record through :func:`redact`.

    The message is formatted with its arguments first, and a traceback
    (``exc_info``) is formatted and redacted into ``exc_text``, so that neither
    a ``-v`` line nor a ``-vv`` traceback can carry a secret. Install it on the
    handlers (the ``gt-llm`` command does).
    """

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the format: kept raw
            message = f"{record.msg} {record.args}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info:
            record.exc_text = redact(self._formatter.formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


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
