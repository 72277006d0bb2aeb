"""The ``local`` backend's environment variables: threads, workers and prefix reuse.

Read by :class:`gt_llm.backends.local.LocalModel` and checked, with the same
functions, before anything is created (:func:`check_environment`, which the
backend's spec check calls). Every count is bounded and written in ASCII digits,
and the refusal is one line naming the variable and the fix.
"""

from __future__ import annotations

import os

from gt_llm.backends.local_pool import MAX_WORKERS
from gt_llm.errors import ConfigurationError

__all__ = [
    "MAX_THREADS",
    "REUSE_VARIABLE",
    "THREADS_VARIABLE",
    "WORKERS_VARIABLE",
    "check_environment",
    "positive_from_env",
    "reuse_from_env",
    "usable_cores",
]

#: Environment variable that sets the number of threads per worker (default 1).
THREADS_VARIABLE = "GT_LLM_LOCAL_THREADS"
#: Environment variable that sets the number of worker processes (default: the usable cores;
#: at most :data:`~gt_llm.backends.local_pool.MAX_WORKERS`).
WORKERS_VARIABLE = "GT_LLM_LOCAL_WORKERS"
#: Most threads per worker (llama.cpp's own limit is 512; a worker uses one core per thread).
MAX_THREADS = 256
#: Environment variable that switches prefix reuse off (``off``) or on (``on``, the default).
REUSE_VARIABLE = "GT_LLM_LOCAL_REUSE"


def positive_from_env(variable: str, example: str, *, most: int) -> int | None:
    """A whole number from 1 to ``most`` from the environment, ``None`` when unset.

    Only ASCII digits are read (``int()`` also takes other scripts' digits, and
    ``str.isdigit`` superscripts such as ``²``), and the length is checked before
    the number is made, so nothing is sized by a value that is refused.

    Raises:
      ConfigurationError: one line naming the variable, its value and the fix.
    """
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return None
    shown = repr(raw) if len(raw) <= 40 else f"{raw[:20]!r}... ({len(raw)} characters)"
    fix = f"unset it or set e.g. {variable}={example}"
    if not (raw.isascii() and raw.isdigit()):
        raise ConfigurationError(
            f"local backend: {variable}={shown} is not a whole number written in the digits "
            f"0-9; {fix}"
        )
    if len(raw.lstrip("0")) > len(str(most)) or not 1 <= int(raw) <= most:
        raise ConfigurationError(
            f"local backend: {variable}={shown} is not between 1 and {most}; {fix}"
        )
    return int(raw)


def reuse_from_env() -> bool:
    raw = os.environ.get(REUSE_VARIABLE, "").strip().lower()
    if raw not in ("", "on", "off"):
        raise ConfigurationError(
            f"local backend: {REUSE_VARIABLE}={raw!r} is not 'on' or 'off'; unset it or set "
            f"{REUSE_VARIABLE}=off to evaluate every prompt whole"
        )
    return raw != "off"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_environment() -> str | None:
    """What is wrong with the backend's environment variables (counts, reuse), or ``None``.

    The same checks :class:`LocalModel` makes, so that ``gt-llm backends local``
    and every ``--backend local...`` name a bad ``GT_LLM_LOCAL_WORKERS`` before
    anything is created.
    """
    try:
        positive_from_env(THREADS_VARIABLE, "1", most=MAX_THREADS)
        positive_from_env(WORKERS_VARIABLE, "2", most=MAX_WORKERS)
        reuse_from_env()
    except ConfigurationError as exc:
        return str(exc).removeprefix("local backend: ")
    return None
