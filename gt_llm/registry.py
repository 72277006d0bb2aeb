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
      check: Returns ``None`` when the backend is usable here, else the reason.
    """

    name: str
    factory: BackendFactory
    description: str
    example: str
    check: Callable[[], str | None] = lambda: None

    def usable(self) -> tuple[bool, str]:
        reason = self.check()
        return (reason is None, reason or "ready")


_REGISTRY: dict[str, BackendInfo] = {}


def register_backend(
    name: str,
    factory: BackendFactory,
    *,
    description: str,
    example: str,
    check: Callable[[], str | None] | None = None,
) -> None:
    """Registers a backend under an exact name."""
    if not name or ":" in name:
        raise ValueError(f"register_backend: invalid backend name {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"register_backend: backend {name!r} is already registered")
    _REGISTRY[name] = BackendInfo(name, factory, description, example, check or (lambda: None))


def registered_backends() -> list[BackendInfo]:
    """All registered backends, in registration order."""
    _ensure_builtin()
    return list(_REGISTRY.values())


def parse_spec(spec: str) -> tuple[str, str]:
    """Splits ``NAME[:REST]`` and checks that NAME is registered."""
    _ensure_builtin()
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("load_model: empty backend spec; use e.g. 'scripted' or 'groq'")
    name, _, rest = spec.strip().partition(":")
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(
            f"load_model: unknown backend {name!r} in spec {spec!r}; registered backends: "
            f"{known} (see `gt-llm backends`)"
        )
    return name, rest


def load_model(
    spec: str, *, cache: str | os.PathLike[str] | None = None, **options: Any
) -> ChatModel:
    """Returns the chat model a spec names, wrapped in the persistent cache if asked.

    Args:
      spec: ``scripted``, ``groq[:MODEL]`` or ``openai:MODEL@BASE_URL``.
      cache: Path of the SQLite call cache; ``None`` for no cache.
      **options: Backend options (e.g. ``requests_per_minute``, ``timeout``).

    Raises:
      ValueError: unknown backend or malformed spec.
      gt_llm.errors.ConfigurationError: the backend cannot run here (e.g. no key).
    """
    name, rest = parse_spec(spec)
    model = _REGISTRY[name].factory(rest, **options)
    if cache is not None:
        from gt_llm.cache import CachedModel

        model = CachedModel(model, cache)
    return model


def _ensure_builtin() -> None:
    # Imported here, not at module import, so that the registry has no cycle.
    import gt_llm.backends  # noqa: F401
