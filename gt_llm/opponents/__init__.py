"""Opponent models behind one interface, chosen by name.

``make_opponent_model("dirichlet", hypotheses=...)``; the GRATR trust graph
registers as ``"gratr"`` when it lands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gt_llm.opponents.base import Belief, Evidence, OpponentModel
from gt_llm.opponents.dirichlet import DirichletBelief

_MODELS: dict[str, Callable[..., OpponentModel]] = {"dirichlet": DirichletBelief}


def register_opponent_model(name: str, factory: Callable[..., OpponentModel]) -> None:
    """Registers an opponent model under an exact name."""
    if name in _MODELS:
        raise ValueError(f"register_opponent_model: {name!r} is already registered")
    _MODELS[name] = factory


def opponent_models() -> list[str]:
    return sorted(_MODELS)


def make_opponent_model(name: str, **kwargs: Any) -> OpponentModel:
    """Builds the opponent model registered as ``name``.

    Raises:
      ValueError: unknown name.
    """
    if name not in _MODELS:
        raise ValueError(
            f"make_opponent_model: unknown opponent model {name!r}; known: {opponent_models()}"
        )
    return _MODELS[name](**kwargs)


__all__ = [
    "Belief",
    "DirichletBelief",
    "Evidence",
    "OpponentModel",
    "make_opponent_model",
    "opponent_models",
    "register_opponent_model",
]
