"""Labels of results: which model produced them, and whether it is an LLM at all.

Every results file names its model; the scripted backend is a deterministic
rule-based stand-in and is labelled as such, never as an LLM result.
"""

from __future__ import annotations

from typing import Any

from gt_llm.chat import ChatModel

__all__ = ["model_label"]


def model_label(model: ChatModel) -> dict[str, Any]:
    """Backend, model, spec, whether the results come from a real LLM, and a display label."""
    backend = model.backend
    return {
        "backend": backend,
        "model": model.model,
        "spec": model.spec,
        "is_llm": backend != "scripted",
        "label": (
            f"{model.spec} (scripted stand-in, not an LLM)" if backend == "scripted" else model.spec
        ),
    }
