"""Keeps numba's on-disk cache of kernels that call each other across files fresh.

numba's cache (``cache=True``) checks an entry only against the source file
its function is defined in: the index stores a hash of that one file, and
numba's documentation says so under "Cache invalidation" (changes to
functions in other files are not detected). A kernel compiled into the cache
carries the machine code of the kernels it calls, so after an edit of a
callee's file the caller, its own file unchanged, would load the old callee
from disk.

:func:`guard_cache` closes the gap for a group of modules: it hashes the
source of all of them together and keeps that hash in a stamp file beside
the dispatchers' cache; when the hash differs (a file of the group changed,
or no stamp yet) it flushes the cache of every kernel of the group, as
numba's own ``Dispatcher.recompile`` does, and writes the new stamp. Call it
after the modules define their kernels and before any kernel runs.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from runs.atomic import atomic_write_text

__all__ = ["STAMP_SUFFIX", "guard_cache", "kernel_dispatchers", "source_hash"]

logger = logging.getLogger(__name__)

#: The stamp file of a group ``name`` is ``<cache folder>/<name><STAMP_SUFFIX>``.
STAMP_SUFFIX = ".sources.sha256"


def source_hash(modules: Sequence[ModuleType]) -> str:
    """SHA-256 over the names and source bytes of ``modules`` (in name order)."""
    digest = hashlib.sha256()
    for module in sorted(modules, key=lambda m: m.__name__):
        digest.update(module.__name__.encode() + b"\0")
        digest.update(Path(inspect.getfile(module)).read_bytes() + b"\0")
    return digest.hexdigest()


def kernel_dispatchers(modules: Sequence[ModuleType]) -> list[Any]:
    """The numba dispatchers with an on-disk cache defined in ``modules`` (none without numba)."""
    try:
        from numba.core.registry import CPUDispatcher
    except ImportError:
        return []
    names = {m.__name__ for m in modules}
    found = {}
    for module in modules:
        for value in vars(module).values():
            if (
                isinstance(value, CPUDispatcher)
                and value.py_func.__module__ in names
                # numba's private per-dispatcher cache (not in its type hints)
                and getattr(value._cache, "cache_path", None) is not None  # type: ignore[attr-defined]
            ):
                found[id(value)] = value  # a kernel imported by another module counts once
    return list(found.values())


def _read_stamp(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def guard_cache(modules: Sequence[ModuleType], *, name: str) -> bool:
    """Flushes the cached kernels of ``modules`` when any of their sources changed.

    Args:
      modules: Every module whose source a kernel of the group may depend on
        (constants included), and that defines the group's kernels.
      name: The group's stamp file name (without :data:`STAMP_SUFFIX`).

    Returns:
      Whether the stamp differed (the caches were flushed, or disabled for
      this process when the cache folder cannot be written).
    """
    kernels = kernel_dispatchers(modules)
    if not kernels:
        return False  # numba missing or caching off: nothing on disk can be stale
    digest = source_hash(modules)
    stamps = sorted({Path(k._cache.cache_path) / f"{name}{STAMP_SUFFIX}" for k in kernels})
    if all(_read_stamp(s) == digest for s in stamps):
        return False
    try:
        for kernel in kernels:
            kernel._cache.flush()
    except OSError:
        # A read-only cache cannot be cleared: compile afresh instead of loading stale code.
        logger.debug("cannot flush numba's cache of %s: caching off", name, exc_info=True)
        for kernel in kernels:
            kernel._cache.disable()
        return True
    try:
        for stamp in stamps:
            atomic_write_text(stamp, digest + "\n")
    except OSError:
        # Flushed but unstamped: the next process flushes again (slower, still fresh).
        logger.debug("cannot write the stamp of %s", name, exc_info=True)
    return True
