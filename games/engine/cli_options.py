"""Command-line options every game's ``gt-llm <game> ...`` commands share.

Defined once here and added to each game's parsers with
:func:`add_common_options`; :func:`load_model_from_args` turns them into a
chat model (``load_model(spec, cache=..., timeout=..., requests_per_minute=...)``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from gt_llm.chat import ChatModel
from gt_llm.cli import positive_float, positive_int
from gt_llm.registry import load_model, parse_spec

__all__ = [
    "COMMON_OPTIONS",
    "add_common_options",
    "check_backend",
    "load_model_from_args",
    "model_options",
]

#: The destinations of the shared options (the names on the argparse namespace).
COMMON_OPTIONS = (
    "backend",
    "cache",
    "concurrency",
    "rpm",
    "timeout",
    "seed",
    "out",
    "no_progress",
    "force",
)


def add_common_options(
    parser: argparse.ArgumentParser,
    *,
    out: str,
    seed_help: str = "master seed (default 0)",
    cache_help: str = "SQLite call cache (default OUT/llm_cache.sqlite)",
) -> None:
    """Adds ``--backend --cache --concurrency --rpm --timeout --seed --out --no-progress --force``.

    Args:
      parser: The command's parser.
      out: Default output folder.
      seed_help: Help of ``--seed`` (what the seed seeds in this game).
      cache_help: Help of ``--cache``.
    """
    parser.add_argument(
        "--backend",
        default="scripted",
        help="model spec (default scripted; e.g. groq:llama-3.3-70b-versatile)",
    )
    parser.add_argument("--out", default=out, help=f"output folder (default {out})")
    parser.add_argument("--cache", default=None, help=cache_help)
    parser.add_argument("--seed", type=int, default=0, help=seed_help)
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=None,
        help="concurrent LLM calls (default: backend's)",
    )
    parser.add_argument(
        "--rpm",
        type=positive_float,
        default=None,
        help="requests-per-minute limit of a remote backend (default: none)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=None,
        help="per-call timeout of a remote backend, seconds (default: the backend's)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite results already in --out (a command may refuse without it)",
    )


def check_backend(args: argparse.Namespace) -> None:
    """Fails fast, before any work, on an unknown backend spec (ValueError)."""
    parse_spec(args.backend)


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """Backend options the user gave (the scripted backend accepts none)."""
    options: dict[str, Any] = {}
    if getattr(args, "timeout", None) is not None:
        options["timeout"] = args.timeout
    if getattr(args, "rpm", None) is not None:
        options["requests_per_minute"] = args.rpm
    return options


def load_model_from_args(args: argparse.Namespace) -> ChatModel:
    """The model the shared options name, through the cache (``--cache`` or OUT/llm_cache.sqlite)."""
    cache = args.cache or os.path.join(args.out, "llm_cache.sqlite")
    return load_model(args.backend, cache=cache, **model_options(args))
