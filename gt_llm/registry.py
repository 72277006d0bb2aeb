"""Backend registry: spec strings to chat models, by exact name.

A spec is ``NAME`` or ``NAME:REST``; ``NAME`` is looked up exactly in the
registry (never by substring), and ``REST`` is handed to the backend's
factory, which gives it meaning (``groq:llama-3.3-70b-versatile``,
``openai:qwen2.5-7b@http://127.0.0.1:8000/v1``).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from typing import Any

from gt_llm.chat import ChatModel
from gt_llm.errors import ConfigurationError
from gt_llm.safety import public_spec

logger = logging.getLogger(__name__)

#: A factory takes the part of the spec after ``NAME:`` (possibly empty) and options.
BackendFactory = Callable[..., ChatModel]


@dataclasses.dataclass(frozen=True)
class BackendInfo:
    """A registered backend.

    Attributes:
      name: The exact name used in spec strings.
      factory: ``factory(rest: str, **options) -> ChatModel``.
      description: One line for ``gt-llm backends``.
      example: An example spec.
      check: Returns ``None`` when the backend is *configured* here (SDK
        installed, key set), else the reason; never touches the network.
      remote: Whether calls go over the network; only remote backends take
        the call options of :func:`load_model` (``timeout``, ``retry_budget``, ...).
      probe: ``probe(rest, timeout) -> (reachable, detail)``: whether the server
        a spec names answers a short request; ``None`` for local backends.
      model_name: ``model_name(rest) -> str``: the model a spec names, without
        where it is served (``openai:m@http://host:8000/v1`` names ``m``), so
        results of the same model through another server or port compare
        equal; default ``rest`` itself.
      check_rest: ``check_rest(rest) -> str | None``: ``None`` when what the spec
        names can be used here (``local:PATH``: a GGUF model file), else why not
        in one line; no network, no key. Default: nothing to check.
      endpoint: ``endpoint(rest) -> str``: the server a spec's model is served
        from, as the call cache keys it (:attr:`gt_llm.chat.ChatModel.endpoint`,
        the same as the loaded model's); default ``""`` (in-process).
    """

    name: str
    factory: BackendFactory
    description: str
    example: str
    check: Callable[[], str | None] = lambda: None
    remote: bool = False
    probe: Callable[[str, float], tuple[bool, str]] | None = None
    model_name: Callable[[str], str] = lambda rest: rest
    check_rest: Callable[[str], str | None] = lambda rest: None
    endpoint: Callable[[str], str] = lambda rest: ""

    def usable(self, rest: str = "") -> tuple[bool, str]:
        """``(configured, reason)``: whether the backend, and what ``rest`` names, is usable here.

        What the spec names is checked first (a ``local:PATH`` that is no GGUF
        file is wrong whatever is installed), then the backend (SDK, key); no network.
        """
        reason = self.check_rest(rest) or self.check()
        return (reason is None, reason or "ready")

    def reachable(self, rest: str = "", *, timeout: float = 3.0) -> tuple[bool, str]:
        """``(reachable, detail)`` for the server the spec's ``rest`` names (local: always)."""
        if self.probe is None:
            return True, "local, no network"
        return self.probe(rest, timeout)


_REGISTRY: dict[str, BackendInfo] = {}


def register_backend(
    name: str,
    factory: BackendFactory,
    *,
    description: str,
    example: str,
    check: Callable[[], str | None] | None = None,
    remote: bool = False,
    probe: Callable[[str, float], tuple[bool, str]] | None = None,
    model_name: Callable[[str], str] | None = None,
    check_rest: Callable[[str], str | None] | None = None,
    endpoint: Callable[[str], str] | None = None,
) -> None:
    """Registers a backend under an exact name (see :class:`BackendInfo` for the fields)."""
    if not name or ":" in name:
        raise ValueError(f"register_backend: invalid backend name {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"register_backend: backend {name!r} is already registered")
    _REGISTRY[name] = BackendInfo(
        name,
        factory,
        description,
        example,
        check or (lambda: None),
        remote,
        probe,
        model_name or (lambda rest: rest),
        check_rest or (lambda rest: None),
        endpoint or (lambda rest: ""),
    )


def backend_info(name: str) -> BackendInfo:
    """The registered backend called ``name`` (exactly).

    Raises:
      ValueError: no such backend.
    """
    return _REGISTRY[parse_spec(name)[0]]


def registered_backends() -> list[BackendInfo]:
    """All registered backends, in registration order."""
    return list(_REGISTRY.values())


def parse_spec(spec: str) -> tuple[str, str]:
    """Splits ``NAME[:REST]`` and checks that NAME is registered."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("load_model: empty backend spec; use e.g. 'scripted' or 'groq'")
    name, _, rest = spec.strip().partition(":")
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(
            f"load_model: unknown backend {public_spec(name)!r} in spec {public_spec(spec)!r}; "
            f"registered backends: {known} (see `gt-llm backends`)"
        )
    return name, rest


def model_endpoint(spec: str) -> str:
    """The server a spec's model is served from, as the call cache keys it (``""`` in-process).

    ``openai:m@http://u:p@Host:1/v1/?k=K`` is ``http://host:1/v1?k=[REDACTED]``
    (:func:`gt_llm.safety.endpoint_label`); equal to the loaded model's
    :attr:`~gt_llm.chat.ChatModel.endpoint`, so a model that only reads the cache
    (no key here) finds the answers the real one stored.

    Raises:
      ValueError: unknown backend or malformed spec.
    """
    name, rest = parse_spec(spec)
    return _REGISTRY[name].endpoint(rest)


def split_spec_list(text: str, starts_item: Callable[[str], bool] | None = None) -> list[str]:
    """The items of a comma-separated list of specs; a comma in a URL's credentials stays in it.

    A comma splits the list, except where it falls inside the user and password of
    a URL (after ``://``, with an ``@`` ahead before any ``/``, ``?`` or ``#``) or
    inside its query or fragment (a query without a URL scheme too), and the text
    after it does not start an item:
    ``openai:m@http://u:pa,ss@host/v1,scripted`` is two specs, and neither a
    password nor a query value holding a comma is ever taken for an item of its
    own (and printed as one). Items are stripped; empty ones are kept (as ``""``)
    for the caller to refuse.

    Args:
      text: The flag's value.
      starts_item: Whether a piece after a comma begins an item (default: it
        begins with a registered backend name, ``NAME`` or ``NAME:...``).
    """
    starts = starts_item or _starts_backend_spec
    text = str(text)
    # Backwards, once: whether an '@' comes before any '/', '?' or '#' from each position on.
    at_first = [False] * (len(text) + 1)
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        at_first[i] = c == "@" or (c not in "/?#" and at_first[i + 1])
    items: list[list[str]] = []
    state: str | None = None  # where the current item's last URL is (see _url_state)
    begin = 0
    for end in [i for i, c in enumerate(text) if c == ","] + [len(text)]:
        piece = text[begin:end]
        inside = state == "query" or (state == "authority" and at_first[begin])
        if items and inside and not starts(piece.strip()):
            items[-1].append(piece)
        else:
            items.append([piece])
            state = None
        state = _url_state(state, piece)
        begin = end + 1
    return [",".join(item).strip() for item in items]


def _starts_backend_spec(piece: str) -> bool:
    name = piece.partition(":")[0].strip()
    return any(info.name == name for info in registered_backends())


def _url_state(state: str | None, text: str) -> str | None:
    """Where the last URL is once ``text`` follows: ``None`` (no URL), ``"authority"``
    (user info or host, no ``@`` yet), ``"host"`` (after the ``@``), ``"path"``,
    ``"query"`` (or fragment), or ``"ended"`` (a space ended it)."""
    at = text.rfind("://")
    if at >= 0:
        state, text = "authority", text[at + 3 :]
    elif state is None:
        # No URL: a query still holds values (a spec whose URL lacks its scheme).
        ask = text.rfind("?")
        if ask < 0 or any(c.isspace() for c in text[ask:]):
            return None
        return "query"
    if state == "ended":
        return state
    for c in text:
        if c.isspace():
            return "ended"
        if state != "query" and c in "?#":
            state = "query"
        elif state == "authority" and c == "@":
            state = "host"
        elif state in ("authority", "host") and c == "/":
            state = "path"
    return state


def model_identity(spec: str) -> tuple[str, str | None]:
    """``(backend, model)`` a spec names, without credentials or the server's address.

    What results folders record and compare: ``openai:m@http://u:p@host:1/v1``
    is ``("openai", "m")``, ``groq`` is ``("groq", "llama-3.3-70b-versatile")``.

    Raises:
      ValueError: unknown backend or malformed spec.
    """
    name, rest = parse_spec(spec)
    model = _REGISTRY[name].model_name(rest)
    return name, (model or None)


def check_spec(spec: str) -> None:
    """Checks a spec without a call: known backend, well formed, what it names usable.

    The key and the SDK are not checked (see :meth:`BackendInfo.usable`): a
    finished run can be re-plotted from its cache without them.

    Raises:
      ValueError: unknown backend, malformed spec (``openai:MODEL@URL``), or a
        ``rest`` the backend cannot use (``local:PATH`` that is not a GGUF file),
        in one line naming the spec's public label.
    """
    name, rest = parse_spec(spec)
    info = _REGISTRY[name]
    info.model_name(rest)  # parses the rest (openai:MODEL@URL); raises on a malformed one
    reason = info.check_rest(rest)
    if reason is not None:
        raise ValueError(f"{public_spec(spec)}: {reason}")


def _check_positive(name: str, value: float | None, what: str = "a number of seconds") -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 < value < float("inf")
    ):
        raise ValueError(f"load_model: {name} must be {what} > 0, got {value!r}")


def _check_whole(name: str, value: object) -> None:
    """Refuses an option that is given but not a whole number >= 1 (a bool is not one)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"load_model: {name} must be a whole number >= 1, got {value!r}")


def load_model(
    spec: str,
    *,
    cache: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    retry_budget: float | None = None,
    requests_per_minute: float | None = None,
    max_answer_bytes: int | None = None,
    max_concurrency: int | None = None,
    **options: Any,
) -> ChatModel:
    """Returns the chat model a spec names, wrapped in the persistent cache if asked.

    The call options (``timeout``, ``retry_budget``, ``requests_per_minute``,
    ``max_answer_bytes``, ``max_concurrency``) apply to remote backends; ``None`` keeps the
    backend's default, and local backends (``scripted``) ignore them, so a
    command can pass its flags whatever the backend. All are validated here,
    before any call and before the cache file is opened.

    Args:
      spec: ``scripted``, ``groq[:MODEL]`` or ``openai:MODEL@BASE_URL``.
      cache: Path of the SQLite call cache; ``None`` for no cache.
      timeout: Per-request timeout in seconds (default 60).
      retry_budget: Total seconds one call may take, retries and waits
        included (default 300); then the call fails with one line.
      requests_per_minute: Request-rate limit (default none).
      max_answer_bytes: Cap on one answer's UTF-8 size (default 65536); a
        larger answer is an error and is never cached.
      max_concurrency: Most calls in flight at once, across every thread
        using the model (default 8).
      **options: Other backend options (``api_key``, ``base_url``, ``retry``,
        ``jitter_seed``, ...).

    Raises:
      ValueError: unknown backend, malformed spec or a bad option value.
      gt_llm.errors.ConfigurationError: the backend cannot run here (e.g. no key),
        or the cache file is not a gt-llm cache.
    """
    name, rest = parse_spec(spec)
    info = _REGISTRY[name]
    reason = info.check_rest(rest)
    if reason is not None:
        # Before any import or load: a bad model file is named, not reported by the vendor.
        raise ConfigurationError(f"load_model: {public_spec(spec)}: {reason}")
    _check_positive("timeout", timeout)
    _check_positive("retry_budget", retry_budget)
    _check_positive("requests_per_minute", requests_per_minute, "a number")
    _check_whole("max_answer_bytes", max_answer_bytes)
    _check_whole("max_concurrency", max_concurrency)
    call_options = {
        "timeout": timeout,
        "retry_budget": retry_budget,
        "requests_per_minute": requests_per_minute,
        "max_answer_bytes": max_answer_bytes,
        "max_concurrency": max_concurrency,
    }
    if info.remote:
        options.update({k: v for k, v in call_options.items() if v is not None})
    else:
        given = sorted(k for k, v in call_options.items() if v is not None)
        if given:
            logger.debug("load_model: %s is local; ignoring %s", name, ", ".join(given))
    model = info.factory(rest, **options)
    if cache is not None:
        from gt_llm.cache import CachedModel

        try:
            model = CachedModel(model, cache)
        except BaseException:
            model.close()
            raise
    return model
