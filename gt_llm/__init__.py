"""gt-llm: LLM agents inside real game theory.

The LLM layer: typed chat requests, backends chosen by spec string, a
persistent call cache, typed parsers, and opponent models.
"""

from __future__ import annotations

# First of all, before any heavy import: Ctrl-C during the start-up of the gt-llm program
# exits 130 with one line (gt_llm/startup.py). Imported by anything else, SIGINT is left alone.
from gt_llm import startup as _startup  # noqa: F401

# isort: split
# Imported for its side effect: the built-in backends register themselves with gt_llm.registry.
import gt_llm.backends  # noqa: F401
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Message, Usage, user_request
from gt_llm.errors import (
    AnswerTooLargeError,
    BackendError,
    ConfigurationError,
    GtLlmError,
    MalformedResponseError,
    ParseError,
)
from gt_llm.prompts import PromptBook, PromptTemplate
from gt_llm.registry import load_model, parse_spec, register_backend, registered_backends
from gt_llm.safety import redact, terminal_safe

__version__ = "0.1.0"

__all__ = [
    "AnswerTooLargeError",
    "BackendError",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "ConfigurationError",
    "GtLlmError",
    "MalformedResponseError",
    "Message",
    "ParseError",
    "PromptBook",
    "PromptTemplate",
    "Usage",
    "__version__",
    "load_model",
    "parse_spec",
    "redact",
    "register_backend",
    "registered_backends",
    "terminal_safe",
    "user_request",
]
