"""How close the commands' memory estimates are to the measured peak.

Runs each configuration as a real ``gt-llm`` command in a child process
(scripted stand-in, a fresh folder and cache), reads the child's peak
resident memory (``ru_maxrss``) and prints it beside the estimate the command
itself makes before its first call (``games/fruit_trading/estimate.py``,
``games/werewolf/estimate.py``), with the ratio estimate / measured; and the
same for model requests (the estimate's calls against the requests the
command's summary.json reports, cache hits included). The target
is every ratio within [0.5, 2].

Usage::

    python benchmarks/estimates.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from games.engine.resources import WorkEstimate, format_bytes  # noqa: E402
from games.fruit_trading.estimate import estimate_work  # noqa: E402
from games.werewolf.estimate import estimate_games, estimate_solve  # noqa: E402

FRUIT_VARIANTS = 2  # the default tone,tone+belief
ARENA_DAY1_LIVING = 7  # 8 players, one killed the first night


def _requests(summary: dict) -> int:
    """Model requests a command reports (cache hits included), from its summary.json."""
    if "model_calls" in summary:  # werewolf play --games
        return int(summary["model_calls"]["total"])
    calls = summary["llm_calls"]  # fruit-trading run, werewolf solve
    return int(calls["hits"]) + int(calls["misses"])


#: (label, argv after gt-llm, the command's own estimate)
def _configs(quick: bool) -> list[tuple[str, list[str], WorkEstimate]]:
    def fruit(inits: int, iterations: int, max_messages: int, seeds: int = 2, label: str = ""):
        est = estimate_work(
            inits=inits, iterations=iterations, variants=FRUIT_VARIANTS,
            max_messages=max_messages, num_seeds=seeds,
        )  # fmt: skip
        argv = ["fruit-trading", "run", "--inits", str(inits), "--iterations", str(iterations),
                "--max-messages", str(max_messages), "--no-generalisation", "--no-whole-game"]  # fmt: skip
        return (label or f"fruit inits={inits} it={iterations:,} M={max_messages}", argv, est)

    def play(games: int, preset: str = "arena"):
        est = estimate_games(games=games, preset=preset, players=8, debate_turns=3)
        argv = ["werewolf", "play", "--games", str(games), "--preset", preset]
        return (f"werewolf play --games {games} --preset {preset}", argv, est)

    default_fruit = estimate_work(inits=30, iterations=1000, variants=FRUIT_VARIANTS,
                                  max_messages=4, num_seeds=2, whole_game=True)  # fmt: skip
    solve = estimate_solve(days=4, models=("none", "dirichlet", "gratr"), actions=16, seeds=1,
                           speakers=2, living=ARENA_DAY1_LIVING, iterations=2000)  # fmt: skip
    configs = [
        fruit(4, 500, 4),
        fruit(4, 500, 6) if not quick else fruit(2, 500, 5),
        fruit(1, 300_000 if not quick else 50_000, 4),
        fruit(1, 3_000_000 if not quick else 300_000, 2),
        ("fruit-trading run (defaults, paper size)", ["fruit-trading", "run"], default_fruit),
        play(20),
        play(200),
        play(20, "gratr"),
        (
            "werewolf solve --days 4 --iterations 2000",
            ["werewolf", "solve", "--days", "4", "--iterations", "2000"],
            solve,
        ),  # fmt: skip
    ]
    if quick:
        configs = [c for c in configs if "defaults" not in c[0] and "200 " not in c[0] + " "]
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
    print(f"{'configuration':44s} {'estimate':>10s} {'measured':>10s} {'est/meas':>8s} "
          f"{'calls est':>10s} {'measured':>10s} {'est/meas':>8s} {'s':>6s}")  # fmt: skip
    outside = 0
    for label, argv, est in _configs(args.quick):
        if args.only not in label:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            peak, took = _peak_of_child(argv, Path(tmp) / "out")
            summary = json.loads((Path(tmp) / "out" / "summary.json").read_text())
        calls = _requests(summary)
        ratio = est.memory_bytes / peak
        calls_ratio = est.model_calls / calls if calls else float("nan")
        outside += not 0.5 <= ratio <= 2.0
        outside += bool(calls) and not 0.5 <= calls_ratio <= 2.0
        print(f"{label:44s} {format_bytes(est.memory_bytes):>10s} {format_bytes(peak):>10s} "
              f"{ratio:8.2f} {est.model_calls:>10,} {calls:>10,} {calls_ratio:8.2f} "
              f"{took:6.1f}", flush=True)  # fmt: skip
    print(f"{outside} ratio(s) outside [0.5, 2]; load average now {os.getloadavg()[0]:.1f}")
    _ = resource  # the children measure themselves


if __name__ == "__main__":
    main()
