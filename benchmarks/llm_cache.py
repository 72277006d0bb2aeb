"""Throughput of the SQLite call cache against the bare scripted model.

Measures, in one process, calls per second of:

* the bare scripted model (no cache);
* the cached scripted model on misses (every call computes and commits a row);
* the cached scripted model on hits (every call is one indexed SELECT);
* hits through ``complete_batch`` with 8 threads sharing one cache.

and prints them as a table with ratios against the bare scripted model.

Usage::

    python benchmarks/llm_cache.py [--n 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gt_llm
from gt_llm.backends.scripted import ScriptedModel
from gt_llm.cache import CachedModel


def _best_rate(n: int, repeats: int, run: Callable[[], None]) -> float:
    """The best of ``repeats`` runs of ``run`` (which makes ``n`` calls), in calls/s."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return n / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="calls per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (best kept)")
    args = parser.parse_args()
    n, repeats = args.n, args.repeats

    requests = [gt_llm.user_request(f"benchmark prompt {i}", seed=i) for i in range(n)]
    bare = ScriptedModel()

    def run_bare() -> None:
        for r in requests:
            bare.complete(r)

    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**9))

        def run_miss() -> None:
            # A fresh file each run, so every call is a miss that commits a row.
            with CachedModel(ScriptedModel(), Path(tmp) / f"miss{next(counter)}.db") as model:
                for r in requests:
                    model.complete(r)

        hit_model = CachedModel(ScriptedModel(), Path(tmp) / "hits.db")
        for r in requests:
            hit_model.complete(r)

        def run_hit() -> None:
            for r in requests:
                hit_model.complete(r)

        def run_hit_batch() -> None:
            hit_model.complete_batch(requests, max_concurrency=8)

        rates = [
            ("scripted, bare", _best_rate(n, repeats, run_bare)),
            ("cache misses -> scripted", _best_rate(n, repeats, run_miss)),
            ("cache hits", _best_rate(n, repeats, run_hit)),
            ("cache hits, batch of 8 threads", _best_rate(n, repeats, run_hit_batch)),
        ]
        hit_model.close()

    base = rates[0][1]
    width = max(len(name) for name, _ in rates)
    print(f"calls per second, {n} distinct free_form requests, best of {repeats}")
    print(f"{'path':<{width}}  {'calls/s':>10}  {'vs bare':>8}")
    for name, rate in rates:
        print(f"{name:<{width}}  {rate:>10,.0f}  {rate / base:>7.2f}x")


if __name__ == "__main__":
    main()
