"""The worker threads of :func:`solvers.curves.cfr_curves`, kept between calls.

The kernels release the GIL (numba ``nogil``), so threads run trees in
parallel without pickling them; the pool is started once and reused, and
small work stays in the calling thread (:data:`MIN_POOL_WORK`).
"""

from __future__ import annotations

import concurrent.futures
import os
import threading

import numpy as np

__all__ = ["MIN_POOL_WORK", "resolve_processes", "shutdown_pool", "worker_pool"]

MIN_POOL_WORK = 2_000_000
"""Node-iterations (sum over trees of the nodes walked, ``tree.collapsed.num_nodes``,
times iterations) below which ``processes=None`` solves in the calling thread. ``benchmarks/solvers.py``
(section 3) times one against two workers on growing work: on the shared
2-core machine two workers were still slower at 3.5e5 node-iterations (a few
milliseconds of work, where waking the threads and waiting for the slower
one cost as much as they save) and faster at 2.6e7; 2e6 node-iterations is
about 20 ms of work at 1e8 node-iterations/s."""

_POOL: concurrent.futures.ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def worker_pool(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    """The kept pool of ``workers`` threads (created on first use)."""
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE != workers:
            if _POOL is not None:
                _POOL.shutdown()
            _POOL = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="cfr_curves"
            )
            _POOL_SIZE = workers
        return _POOL


def shutdown_pool() -> None:
    """Stops the worker threads that :func:`cfr_curves` keeps between calls.

    Optional: the workers also stop when the interpreter exits.
    """
    global _POOL, _POOL_SIZE
    if _POOL is not None:
        _POOL.shutdown()
    _POOL, _POOL_SIZE = None, 0


def resolve_processes(processes: int | None, n_jobs: int | None, work: int, num_trees: int) -> int:
    """Workers for :func:`~solvers.curves.cfr_curves`: ``processes`` checked, or chosen from ``work``."""
    if n_jobs is not None:
        if processes is not None:
            raise ValueError(
                "cfr_curves: pass processes= only (n_jobs= is its deprecated alias), not both"
            )
        processes = n_jobs
    if processes is None:
        if work < MIN_POOL_WORK:
            return 1
        processes = os.cpu_count() or 1
    elif (
        isinstance(processes, bool) or not isinstance(processes, (int, np.integer)) or processes < 1
    ):
        raise ValueError(
            f"cfr_curves: processes={processes!r}; pass a positive int (1 = this process) or None "
            "(all cores when the work is large enough)"
        )
    return max(1, int(processes))
