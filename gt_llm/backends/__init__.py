"""Built-in backends: ``scripted``, ``local``, ``groq`` and ``openai``.

Vendor SDKs are imported lazily, inside the factories, so that importing
gt_llm never needs them.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from gt_llm.backends.scripted import ScriptedModel
from gt_llm.chat import ChatModel
from gt_llm.registry import register_backend

DEFAULT_GROQ_MODEL = "llama-3.3-70b-versatile"


def _scripted(rest: str, **options: Any) -> ChatModel:
    if options:
        raise ValueError(
            f"load_model: the scripted backend takes no options, got {sorted(options)}"
        )
    return ScriptedModel(rest)


def _local(rest: str, **options: Any) -> ChatModel:
    from gt_llm.backends.local import LocalModel

    return LocalModel(rest or None, **options)


def _local_description() -> str:
    from gt_llm.backends.local import BUNDLED_MODEL, bundled_model_path

    path = bundled_model_path()
    where = path if path is not None else "model file not installed"
    return (
        f"{BUNDLED_MODEL} in-process via llama.cpp, offline ({where}); local:PATH.gguf for others"
    )


def _local_check() -> str | None:
    from gt_llm.backends.local import check_installed

    return check_installed()


def _local_check_rest(rest: str) -> str | None:
    from gt_llm.backends.local import check_rest

    return check_rest(rest)


def _groq(rest: str, **options: Any) -> ChatModel:
    from gt_llm.backends.groq_backend import GroqModel

    return GroqModel(rest or DEFAULT_GROQ_MODEL, **options)


def _openai(rest: str, **options: Any) -> ChatModel:
    from gt_llm.backends.openai_compat import OpenAICompatModel

    return OpenAICompatModel.from_spec_rest(rest, **options)


def _openai_probe(rest: str, timeout: float) -> tuple[bool, str]:
    from gt_llm.backends.openai_compat import KEY_VARIABLE, parse_spec_rest
    from gt_llm.backends.remote import probe_server

    if not rest:
        return False, "give a spec to check a server: gt-llm backends --check openai:MODEL@URL"
    _, base_url = parse_spec_rest(rest)
    key = os.environ.get(KEY_VARIABLE)
    headers = {"Authorization": f"Bearer {key}"} if key else None
    return probe_server(f"{base_url.rstrip('/')}/models", timeout=timeout, headers=headers)


def _groq_probe(rest: str, timeout: float) -> tuple[bool, str]:
    from gt_llm.backends.groq_backend import KEY_VARIABLE, default_base_url
    from gt_llm.backends.remote import probe_server

    key = os.environ.get(KEY_VARIABLE)
    headers = {"Authorization": f"Bearer {key}"} if key else None
    return probe_server(f"{default_base_url()}/openai/v1/models", timeout=timeout, headers=headers)


def _openai_model_name(rest: str) -> str:
    from gt_llm.backends.openai_compat import parse_spec_rest

    return parse_spec_rest(rest)[0]


def _openai_endpoint(rest: str) -> str:
    from gt_llm.backends.openai_compat import parse_spec_rest
    from gt_llm.safety import endpoint_label

    return endpoint_label(parse_spec_rest(rest)[1])


def _groq_endpoint(rest: str) -> str:
    from gt_llm.backends.groq_backend import default_base_url
    from gt_llm.safety import endpoint_label

    return endpoint_label(default_base_url())


def _groq_check() -> str | None:
    if importlib.util.find_spec("groq") is None:
        return "the 'groq' package is not installed (pip install groq)"
    if not os.environ.get("GROQ_API_KEY"):
        return "GROQ_API_KEY is not set"
    return None


def _scripted_check_rest(rest: str) -> str | None:
    from gt_llm.backends.scripted import scripted_variant

    try:
        scripted_variant(rest)
    except ValueError as exc:
        return str(exc).removeprefix("load_model: ")
    return None


register_backend(
    "scripted",
    _scripted,
    description="deterministic rule-based stand-in, offline (not an LLM); "
    "scripted:rules-v2/NAME is a variant with its own noise",
    example="scripted",
    check_rest=_scripted_check_rest,
)
register_backend(
    "local",
    _local,
    description=_local_description(),
    example="local",
    check=_local_check,
    check_rest=_local_check_rest,
)
register_backend(
    "groq",
    _groq,
    description=f"Groq cloud through the official SDK (default model {DEFAULT_GROQ_MODEL})",
    example=f"groq:{DEFAULT_GROQ_MODEL}",
    check=_groq_check,
    remote=True,
    probe=_groq_probe,
    model_name=lambda rest: rest or DEFAULT_GROQ_MODEL,
    endpoint=_groq_endpoint,
)
register_backend(
    "openai",
    _openai,
    description="any chat-completions server: vLLM, llama.cpp server, Ollama",
    example="openai:MODEL@http://127.0.0.1:8000/v1",
    remote=True,
    probe=_openai_probe,
    model_name=_openai_model_name,
    endpoint=_openai_endpoint,
)
