"""What a run will need, checked before it starts: memory, and the solver's compile step.

A command estimates its memory from its settings and calls
:func:`require_memory` before the first model call, so that a run that
cannot fit is refused in one line instead of ending, after paid calls, in a
``MemoryError`` traceback (or growing silently until the machine swaps).
:func:`solver_kernels_cached` tells whether the solver's compiled kernels are
in numba's on-disk cache, so a command can say "compiling ..." during the
silent compile of a first run.
"""

from __future__ import annotations

import dataclasses
import logging
import os

__all__ = [
    "CURVE_VALUES",
    "ITERATION_ARRAYS",
    "CallShape",
    "WorkEstimate",
    "available_memory_bytes",
    "curves_bytes",
    "format_bytes",
    "format_count",
    "require_memory",
    "solver_kernels_cached",
]

logger = logging.getLogger(__name__)

#: float64 values a curves object holds per tree and iteration (3 metrics + 2 x 2 per player).
CURVE_VALUES = 7
#: Per-iteration values per curves object besides the per-tree ones (schedule, means,
#: stds, counts, ratios, and the CSV rows written from them).
ITERATION_ARRAYS = 64


@dataclasses.dataclass(frozen=True)
class WorkEstimate:
    """What a run will do, at most, estimated from its settings before the first call.

    Attributes:
      trees: Units of work (subgame or day trees; games when ``unit`` says so).
      nodes_per_tree: Largest possible tree (0: the unit is not a tree).
      nodes: Nodes of all trees, at most.
      model_calls: Model requests the run makes beyond the cache, about (the
        time estimate's count).
      node_iterations: CFR work, nodes x iterations, at most (0: no CFR).
      memory_bytes: Peak memory, about.
      unit: What ``trees`` counts, for the screen.
      max_model_calls: Model requests beyond the cache, at most, counting each
        request once (a re-asked unusable answer adds one, at most
        ``ParsePolicy.max_reasks`` per request); None where the game computes
        no bound.
    """

    trees: int
    nodes_per_tree: int
    nodes: int
    model_calls: int
    node_iterations: int
    memory_bytes: int
    unit: str = "trees"
    max_model_calls: int | None = None

    def describe(self) -> str:
        """One line for the screen."""
        size = f"{self.trees:,} {self.unit}"
        if self.nodes_per_tree:
            size += f" of at most {self.nodes_per_tree:,} nodes"
        cfr = (
            f"{_compact(self.node_iterations)} node-iterations of CFR, "
            if self.node_iterations
            else ""
        )
        if self.max_model_calls is not None:
            from gt_llm.parsing import ParsePolicy

            reasks = ParsePolicy().max_reasks
            calls = (
                f"at most {self.max_model_calls:,} model calls (about {self.model_calls:,}; "
                f"a re-asked answer adds one, at most {reasks} per request; "
                "cached ones are free)"
            )
        else:
            calls = f"about {self.model_calls:,} model calls (cached ones are free)"
        return f"estimate: {size}, {calls}, {cfr}about {format_bytes(self.memory_bytes)} of memory"


@dataclasses.dataclass(frozen=True)
class CallShape:
    """A game's typical model call, for time estimates on a local model.

    Measured on the bundled SmolLM2-135M-Instruct with ``benchmarks/local_model.py``
    (the game's requests, scripted-built, answered with reuse and two workers).

    Attributes:
      prompt_tokens: Prompt tokens per call.
      completion_tokens: Generated tokens per call.
      reused_share: Share of prompt tokens taken from a worker's previous call.
    """

    prompt_tokens: float
    completion_tokens: float
    reused_share: float


def format_duration(seconds: float) -> str:
    """``'45 s'``, ``'12 min'`` or ``'3.4 h'``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _compact(n: int) -> str:
    # '1.2e+09' for any whole number, without converting a huge one to float.
    digits = len(str(abs(n)))
    if digits <= 15:
        return f"{n:.2g}"
    return f"about 10^{digits - 1}"


def available_memory_bytes() -> int | None:
    """Memory a new allocation can use without swapping, in bytes (``None`` if unknown).

    Linux's ``MemAvailable`` (free plus reclaimable caches) when readable,
    else free physical pages (``os.sysconf``), which undercounts caches.
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``; beyond a thousand PiB, ``'1000+ PiB'``.

    Whole numbers of any size are accepted (a flag such as ``--iterations 1e400``
    makes an estimate no float can hold; it is never converted to one).
    """
    if isinstance(n, int) and abs(n) >= 1000 * 1024**5:
        return "1000+ PiB"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def curves_bytes(trees: int, iterations: int, *, groups: int = 1) -> int:
    """Memory of the convergence curves of ``trees`` trees over ``iterations`` iterations.

    Every iteration is recorded (:func:`solvers.cfr_curves`); ``groups`` is the
    number of curves objects (one per variant or opponent model) sharing them.
    """
    return trees * iterations * CURVE_VALUES * 8 + groups * iterations * ITERATION_ARRAYS * 8


def format_count(n: int) -> str:
    """``1234`` -> ``'1,234'``; a whole number too long to read -> ``'about 10^N'``.

    Never converts to float, so a flag such as ``--iterations 1e400`` written out
    in digits is shown, not overflowed.
    """
    digits = len(str(abs(n)))
    return f"{n:,}" if digits <= 15 else f"about 10^{digits - 1}"


def require_memory(need: int, *, what: str, fix: str, available: int | None = None) -> None:
    """Refuses, in one line, a run whose estimated memory exceeds what is available.

    Args:
      need: Estimated bytes.
      what: What needs it, e.g. ``"--iterations 1000000 x --inits 30"``.
      fix: The fix, e.g. ``"lower --iterations"``.
      available: Bytes available (default :func:`available_memory_bytes`);
        when unknown, nothing is refused.

    Raises:
      ValueError: ``need`` exceeds ``available``.
    """
    if available is None:
        available = available_memory_bytes()
    if available is not None and need > available:
        raise ValueError(
            f"{what} needs about {format_bytes(need)} of memory, more than the "
            f"{format_bytes(available)} available: {fix}"
        )


def solver_kernels_cached() -> bool | None:
    """Whether numba's on-disk cache holds the solver kernels (``None``: cannot tell).

    A cold cache means the first solve of this process compiles the kernels
    (about half a minute on 2 cores). Warm means some kernel has an entry
    matching the current source: a run compiles only the kernels it uses, and
    an edit of any kernel file invalidates all of them at once (importing the
    kernels runs their cache guard). Reads numba's cache index through its
    internal API, so any surprise there answers ``None`` rather than failing.
    """
    try:
        from solvers import _kernels
        from solvers._kernels._cache_guard import kernel_dispatchers

        dispatchers = kernel_dispatchers(_kernels.MODULES)
        if not dispatchers:
            return None
        # An index is empty when missing or when its source stamp no longer matches the file.
        return any(d._cache._cache_file._load_index() for d in dispatchers)
    except Exception:  # noqa: BLE001 - numba internals differ between versions: "cannot tell"
        logger.debug("cannot read numba's cache index", exc_info=True)
        return None
