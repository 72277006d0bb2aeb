"""The worker threads of :func:`solvers.curves.cfr_curves`, kept between calls.

The kernels release the GIL (numba ``nogil``), so threads run trees in
parallel without pickling them. :func:`run_spread` runs the calling thread
as one of the workers, next to ``workers - 1`` kept threads (started once,
reused); every worker takes the next task from a shared iterator, and the
results come back to the calling thread. Small work stays in the calling
thread (:data:`MIN_POOL_WORK`, :data:`MIN_TREE_WORK`).

Why not one future per tree: a future costs a fixed overhead per tree (the
caller woken for every completion, three threads taking turns at the GIL),
which on short runs outweighs the parallel work and makes them slower than
one thread; with the calling thread working and tasks taken from one
iterator that overhead is gone.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from solvers.game_tree import GameTree

__all__ = [
    "MIN_POOL_WORK",
    "MIN_TREE_WORK",
    "largest_first",
    "resolve_processes",
    "run_spread",
    "shutdown_pool",
    "worker_pool",
]

MIN_POOL_WORK = 50_000
"""Node-iterations (sum over trees of the nodes walked, ``tree.collapsed.num_nodes``,
times iterations) below which ``processes=None`` solves in the calling thread:
on less work, waking a thread costs more than the work it takes over, so
threads are slower than one. Set from measurement (``benchmarks/solvers.py``,
section 3)."""

MIN_TREE_WORK = 3_000
"""Node-iterations per tree (on average) below which ``processes=None`` solves in
the calling thread, whatever the total: a tree's Python part (allocations,
two kernel calls) holds the GIL, so on trees that small the threads mostly
take turns and are slower than one: the GIL-held part dominates. Set from
measurement (``benchmarks/solvers.py``, section 3)."""

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
    """Workers for :func:`~solvers.curves.cfr_curves`: ``processes`` checked, or chosen from the work.

    Args:
        processes: The caller's choice (``None``: decide from the work).
        n_jobs: Deprecated alias of ``processes``.
        work: Node-iterations of the call (nodes walked times iterations, summed over trees).
        num_trees: Trees in the call.
    """
    if n_jobs is not None:
        if processes is not None:
            raise ValueError(
                "cfr_curves: pass processes= only (n_jobs= is its deprecated alias), not both"
            )
        processes = n_jobs
    if processes is None:
        if work < MIN_POOL_WORK or work < MIN_TREE_WORK * num_trees:
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


def largest_first(trees: Sequence[GameTree], indices: Iterable[int]) -> list[int]:
    """``indices`` ordered by their tree's size (nodes walked), largest first."""
    return sorted(indices, key=lambda i: -trees[i].collapsed.num_nodes)


def run_spread(
    tasks: Iterable[int],
    fn: Callable[[int], Any],
    workers: int,
    done: Callable[[int, Any], None],
) -> None:
    """Runs ``fn(task)`` for every task on the calling thread and ``workers - 1`` kept threads.

    Tasks are taken in the given order from one shared iterator (put the
    largest first, :func:`largest_first`, so that no worker is left with a big
    one at the end). With ``workers`` 1 every task runs on the calling thread,
    in order, and no thread is woken.
    ``done(task, result)`` is called in the calling thread, in completion
    order. The first exception raised by ``fn`` (in any thread) is re-raised
    here once the calling thread has seen it; the other workers then take no
    new task.

    Args:
        tasks: Task ids, in the order to start them.
        fn: The work of one task; called from several threads at once.
        workers: Threads in all, the calling thread included (>= 1).
        done: Receives each task's result in the calling thread.
    """
    if workers <= 1:
        for one in tasks:
            done(one, fn(one))
        return
    pending = iter(tasks)
    lock = threading.Lock()
    stop = threading.Event()
    results: queue.SimpleQueue = queue.SimpleQueue()

    def take() -> int | None:
        if stop.is_set():
            return None
        with lock:
            return next(pending, None)

    def helper() -> None:
        while (task := take()) is not None:
            try:
                results.put((task, fn(task), None))
            except BaseException as exc:  # handed to the calling thread, which raises it
                stop.set()
                results.put((task, None, exc))
                return

    def hand_over_ready() -> None:
        """``done`` for every result already back, without waiting for more."""
        while True:
            try:
                task, result, exc = results.get_nowait()
            except queue.Empty:
                return
            if exc is not None:
                raise exc
            done(task, result)

    pool = worker_pool(workers - 1)
    try:
        helpers = [pool.submit(helper) for _ in range(workers - 1)]
    except (RuntimeError, concurrent.futures.BrokenExecutor):
        shutdown_pool()  # start afresh next time
        raise
    try:
        while (task := take()) is not None:
            done(task, fn(task))
            hand_over_ready()
        for future in helpers:  # the helpers' last tasks
            future.result()
        hand_over_ready()
    finally:
        stop.set()  # after an exception here, the helpers take no new task
