"""Labels of results: which model produced them, and whether it is an LLM at all.

Every results file names its model; the scripted backend is a deterministic
rule-based stand-in and is labelled as such, never as an LLM result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from gt_llm.chat import ChatModel
from gt_llm.routing import RoutedModel

__all__ = ["ModelLabel", "model_label"]


@dataclasses.dataclass(frozen=True)
class ModelLabel:
    """Which model produced a result.

    Attributes:
      backend: The backend name (``scripted`` for the stand-in).
      model: The model name within the backend.
      spec: ``backend:model``.
      is_llm: False for the scripted stand-in.
      label: The display label; the stand-in's says it is not an LLM.
    """

    backend: str
    model: str
    spec: str
    is_llm: bool
    label: str

    def __str__(self) -> str:
        return self.label

    def to_json(self) -> dict[str, Any]:
        """The five fields under their own names (the keys results files have always used)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelLabel:
        """The label of a results file's fields (other keys of ``data`` are ignored)."""
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})


def model_label(model: ChatModel) -> ModelLabel:
    """Backend, model, spec, whether the results come from a real LLM, and a display label.

    A :class:`~gt_llm.routing.RoutedModel` (seats on different backends) comes
    from an LLM when any of its models does; its label joins theirs.
    """
    if isinstance(model, RoutedModel):
        inner = [model_label(m) for m in model.inner_models()]
        return ModelLabel(
            backend=model.backend,
            model=model.model,
            spec=model.spec,
            is_llm=any(i.is_llm for i in inner),
            label=" + ".join(i.label for i in inner),
        )
    backend = model.backend
    return ModelLabel(
        backend=backend,
        model=model.model,
        spec=model.spec,
        is_llm=backend != "scripted",
        label=(
            f"{model.spec} (scripted stand-in, not an LLM)" if backend == "scripted" else model.spec
        ),
    )
