"""Calls kept in flight on a latency-bound server: the frontier against level by level.

Starts the loopback chat-completions server of the LLM-layer tests
(``tests/llm/fake_server.py``: it answers every request after a fixed
latency, many at a time; its answers echo the prompt, so they are re-asked and
fall back as a weak model's would) and runs the fruit study of issue 42 in this
process twice, each with a fresh call cache: with the trees built level by
level (:func:`games.engine.tree.scheduler` ``levels``, the old path) and with
calls kept in flight (``frontier``, the default on a remote backend). For each
it prints the requests the server saw, the wall time, the calls in flight on
average (requests x latency / wall time, over the whole command and over the
tree building alone) and at peak, and whether the two summaries agree
(timings, the in-flight numbers and the output folder set aside).

With ``--werewolf-games N`` it then runs ``werewolf arena`` (the ``arena``
preset, ``gratr`` against ``none``, N games) one game at a time (``--jobs 1``)
and with the games side by side (the default on a remote backend), and prints
the same numbers and whether the two ``arena.json`` agree.

Run from the repository root::

    python benchmarks/inflight.py                     # 0.5 s latency, the issue's command
    python benchmarks/inflight.py --latency 0.05 --inits 5
    python benchmarks/inflight.py --werewolf-games 8 --skip-fruit
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

logger = logging.getLogger("benchmarks.inflight")


def _run(scheduler_name: str, server: Any, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from games.engine.tree import scheduler
    from gt_llm.cli import main

    out = work / f"out_{scheduler_name}"
    cmd = [
        "-q",
        "fruit-trading",
        "run",
        "--backend",
        f"openai:m@{server.url}/v1",
        "--inits",
        str(args.inits),
        "--max-messages",
        str(args.max_messages),
        "--variants",
        "tone",
        "--no-whole-game",
        "--concurrency",
        str(args.concurrency),
        "--out",
        str(out),
        "--cache",
        str(work / f"cache_{scheduler_name}.sqlite"),
        "--no-progress",
    ]
    before = server.request_count
    server.max_active = 0
    t0 = time.perf_counter()
    with scheduler(scheduler_name):
        status = main(cmd)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{scheduler_name}: the command failed with status {status}")
    summary = json.loads((out / "summary.json").read_text())
    requests = server.request_count - before
    build = summary["timings"]["build_tone_s"]
    return {
        "scheduler": scheduler_name,
        "requests": requests,
        "wall_s": wall,
        "mean_in_flight": requests * args.latency / wall,
        "peak_in_flight": server.max_active,
        "build_s": build,
        "summary": summary,
    }


def _arena(jobs: str | None, server: Any, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from gt_llm.cli import main

    name = f"arena_jobs_{jobs or 'default'}"
    out = work / name
    cmd = ["-q", "werewolf", "arena", "--preset", "arena", "--models", "gratr,none"]
    cmd += ["--games", str(args.werewolf_games), "--backend", f"openai:m@{server.url}/v1"]
    cmd += ["--concurrency", str(args.concurrency), "--out", str(out), "--no-progress"]
    cmd += ["--jobs", jobs] if jobs else []
    before = server.request_count
    server.max_active = 0
    t0 = time.perf_counter()
    if main(cmd) != 0:
        raise SystemExit(f"{name}: the command failed")
    wall = time.perf_counter() - t0
    requests = server.request_count - before
    report = json.loads((out / "arena.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    return {
        "jobs": jobs or "default",
        "requests": requests,
        "wall_s": wall,
        "mean_in_flight": requests * args.latency / wall,
        "peak_in_flight": server.max_active,
        "own": manifest.get("calls_in_flight", {}),
        "report": {k: v for k, v in report.items() if k not in ("seconds", "llm_calls")},
    }


def _werewolf(server: Any, work: Path, args: argparse.Namespace) -> None:
    rows = [_arena(jobs, server, work, args) for jobs in ("1", None)]
    print(
        f"werewolf arena, arena preset, gratr vs none, {args.werewolf_games} games, concurrency "
        f"{args.concurrency}, loopback latency {args.latency} s"
    )
    for r in rows:
        print(
            f"  jobs {r['jobs']:8s} {r['requests']:6d} requests in {r['wall_s']:7.1f} s: "
            f"{r['mean_in_flight']:5.1f} in flight on average (peak {r['peak_in_flight']}); "
            f"the run's own count: mean {r['own'].get('mean')}, peak {r['own'].get('peak')}"
        )
    print(
        f"  wall, one game at a time / side by side: {rows[0]['wall_s'] / rows[1]['wall_s']:.2f}x"
    )
    same = rows[0]["report"] == rows[1]["report"]
    print(f"  arena.json identical (wall time and cache counts aside): {same}")
    if not same:
        print(f"  they differ at: {', '.join(_differences(rows[0]['report'], rows[1]['report']))}")


def _comparable(summary: dict[str, Any]) -> dict[str, Any]:
    s = {k: v for k, v in summary.items() if k not in ("timings", "calls_in_flight")}
    s["settings"] = {k: v for k, v in s["settings"].items() if k not in ("out", "cache")}
    return s


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """The paths (``key.key[i]``) where two JSON values differ, at most 20."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b)):
            out += _differences(a.get(k), b.get(k), f"{where}.{k}" if where else str(k))
        return out[:20]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, f"{where}[{i}]")
        ][:20]
    return [] if a == b else [where or "(top)"]


def main() -> None:
    from fake_server import FakeChatServer

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, default=0.5, help="seconds per answer (0.5)")
    p.add_argument("--inits", type=int, default=30)
    p.add_argument("--max-messages", type=int, default=4)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--werewolf-games", type=int, default=0, help="arena games (0: none)")
    p.add_argument("--skip-fruit", action="store_true", help="only the Werewolf arena")
    args = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeChatServer(delay=args.latency) as server:
        if args.werewolf_games:
            _werewolf(server, Path(tmp), args)
        if args.skip_fruit:
            return
        for name in ("levels", "frontier"):
            rows.append(_run(name, server, Path(tmp), args))
    print(
        f"fruit study, {args.inits} inits, {args.max_messages} messages, concurrency "
        f"{args.concurrency}, loopback latency {args.latency} s"
    )
    for r in rows:
        seen = r["summary"].get("calls_in_flight", {})
        print(
            f"  {r['scheduler']:9s} {r['requests']:6d} requests in {r['wall_s']:7.1f} s: "
            f"{r['mean_in_flight']:5.1f} in flight on average (peak {r['peak_in_flight']}); "
            f"the run's own count: mean {seen.get('mean')}, peak {seen.get('peak')}; "
            f"tree building {r['build_s']:.1f} s"
        )
    compared = [_comparable(r["summary"]) for r in rows]
    same = compared[0] == compared[1]
    print(f"  summaries identical (timings and in-flight numbers aside): {same}")
    if not same:
        print(f"  they differ at: {', '.join(_differences(*compared))}")


if __name__ == "__main__":
    main()
