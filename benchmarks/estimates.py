"""How close the commands' memory estimates are to the measured peak.

Runs each configuration as a real ``gt-llm`` command in a child process
(scripted stand-in, a fresh folder and cache), reads the child's peak
resident memory (``ru_maxrss``) and prints it beside the estimate the command
itself makes before its first call (``games/fruit_trading/estimate.py``,
``games/werewolf/estimate.py``), with the ratio estimate / measured. The
target (issue 18) is a ratio within [0.5, 2].

Usage::

    python benchmarks/estimates.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from games.engine.resources import format_bytes  # noqa: E402
from games.fruit_trading.estimate import estimate_work  # noqa: E402
from games.werewolf.estimate import games_bytes, solve_bytes  # noqa: E402

FRUIT_VARIANTS = 2  # the default tone,tone+belief


#: (label, argv after gt-llm, estimate in bytes)
def _configs(quick: bool) -> list[tuple[str, list[str], int]]:
    def fruit(inits: int, iterations: int, max_messages: int, seeds: int = 2):
        est = estimate_work(
            inits=inits, iterations=iterations, variants=FRUIT_VARIANTS,
            max_messages=max_messages, num_seeds=seeds,
        ).memory_bytes  # fmt: skip
        argv = ["fruit-trading", "run", "--inits", str(inits), "--iterations", str(iterations),
                "--max-messages", str(max_messages), "--no-generalisation", "--no-whole-game"]  # fmt: skip
        return (f"fruit inits={inits} it={iterations} M={max_messages}", argv, est)

    configs = [
        fruit(4, 500, 4),
        fruit(4, 500, 6) if not quick else fruit(2, 500, 5),
        fruit(1, 300_000 if not quick else 50_000, 4),
        ("werewolf play --games 20", ["werewolf", "play", "--games", "20"], games_bytes(20)),
        ("werewolf play --games 200", ["werewolf", "play", "--games", "200"], games_bytes(200)),
        (
            "werewolf solve --days 4 --iterations 2000",
            ["werewolf", "solve", "--days", "4", "--iterations", "2000"],
            solve_bytes(4 * 3, 2000),
        ),
    ]
    return configs


def _peak_of_child(argv: list[str], out: Path) -> tuple[int, float]:
    code = (
        "import resource, sys\n"
        "from gt_llm.cli import main\n"
        f"rc = main({[*argv, '--no-progress', '--out', str(out)]!r})\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-q", "-c", code], env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.strip().splitlines()[-1:]}")
    kib = int(proc.stdout.strip().splitlines()[-1])  # Linux: ru_maxrss in KiB
    return kib * 1024, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller configurations")
    parser.add_argument("--only", default="", help="run only configurations whose label has this")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; scripted stand-in (rules-v2), not an LLM")
    print(f"{'configuration':44s} {'estimate':>10s} {'measured':>10s} {'est/meas':>8s} {'s':>6s}")
    outside = 0
    for label, argv, est in _configs(args.quick):
        if args.only not in label:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            peak, took = _peak_of_child(argv, Path(tmp) / "out")
        ratio = est / peak
        outside += not 0.5 <= ratio <= 2.0
        print(f"{label:44s} {format_bytes(est):>10s} {format_bytes(peak):>10s} "
              f"{ratio:8.2f} {took:6.1f}")  # fmt: skip
    print(f"{outside} configuration(s) outside [0.5, 2]")
    _ = resource  # the children measure themselves


if __name__ == "__main__":
    main()
