"""The noise checks on one thread against several: the same numbers, in less wall time?

Runs the main job's fruit-trading study on the scripted stand-in (``tone``
variant only, no whole-game or generalisation study; ``--inits`` trees, 1000
CFR iterations, 999 label permutations and 200 bootstrap replicates per tree,
as the main job) in this process, once with ``processes=1`` and once with
``--threads`` threads (the noise checks spread trees over threads like the
CFR solves: the compiled kernels release the GIL). Each run has a fresh
results folder; the scripted stand-in's calls are cheap, so the tree building
barely counts. It prints each run's seconds per phase (tree building, CFR,
noise checks) and CPU time, the ratios, and whether the two summaries' noise
checks are identical (they must be: each tree's random streams come from its
index).

Usage::

    python benchmarks/noise_checks.py [--inits 30] [--threads 2]

Run it on an otherwise idle machine: the ratios compare wall times.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.fruit_trading.experiment import ExperimentSettings, run_experiment  # noqa: E402


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def one_run(out: Path, inits: int, processes: int) -> tuple[dict[str, Any], float, float]:
    """The study on ``processes`` threads: its summary, wall seconds and CPU seconds."""
    settings = ExperimentSettings(
        inits=inits,
        out=str(out),
        progress=False,
        variants=("tone",),
        generalisation=False,
        whole_game=False,
        processes=processes,
    )
    cpu0, wall0 = _cpu(), time.perf_counter()
    result = run_experiment(settings)
    return result.summary, time.perf_counter() - wall0, _cpu() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inits", type=int, default=30, help="trees (the main job's: 30)")
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count() or 2, help="threads of the second run"
    )
    args = parser.parse_args()
    if not 1 <= args.inits <= 1000 or not 2 <= args.threads <= 256:
        parser.error("--inits must be 1 to 1000 and --threads 2 to 256")
    print(
        f"model: scripted stand-in (not an LLM); {args.inits} trees; load average at start: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Loads the compiled kernels (and compiles them on a first run) outside the timings.
        one_run(Path(tmp) / "warm-up", 1, 1)
        for threads in (1, args.threads):
            runs[threads] = one_run(Path(tmp) / str(threads), args.inits, threads)
    print(f"{'threads':>7} {'wall s':>8} {'CPU s':>8} {'trees s':>8} {'CFR s':>8} {'noise s':>8}")
    for threads, (summary, wall, cpu) in runs.items():
        t = summary["timings"]
        print(
            f"{threads:7d} {wall:8.1f} {cpu:8.1f} {t['build_tone_s']:8.1f} "
            f"{t['solve_tone_s']:8.1f} {t['noise_tone_s']:8.1f}"
        )
    (one, wall1, _), (many, wall_n, _) = runs[1], runs[args.threads]
    for key, name in (("noise_tone_s", "noise checks"), ("solve_tone_s", "CFR")):
        ratio = one["timings"][key] / many["timings"][key]
        print(f"{name}, {args.threads} threads vs 1: {ratio:.2f}x faster")
    print(f"whole run, {args.threads} threads vs 1: {wall1 / wall_n:.2f}x faster")
    same = one["variants"]["tone"]["noise"] == many["variants"]["tone"]["noise"]
    print(f"noise checks identical: {'yes' if same else 'NO'}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not same:
        sys.exit("the noise checks differ between one thread and several")


if __name__ == "__main__":
    main()
