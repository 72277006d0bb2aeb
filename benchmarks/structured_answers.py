"""Structured against free-text answers of a real model: parse and fallback rates per task.

Takes the same requests in both modes — real game states recorded from games
played by the scripted stand-in (fruit trading with beliefs; a Werewolf game
of the ``gratr`` preset with GRATR and Dirichlet seats, so every task of both
prompt books and GRATR's two extraction tasks occur) — and asks a model each
of them with ``--structured on`` (JSON under the task's schema) and ``off``
(free text), through the same parsers, re-asks and fallbacks as the games
(:func:`gt_llm.parsing.complete_parsed`, two re-asks). Prints, per task and
mode: requests, answers parsed at the first attempt, re-asks, fallbacks and
seconds, then the totals, calls per second and the ratio of the two modes'
fallback rates, and writes them as JSON (``--out``).

Usage::

    python benchmarks/structured_answers.py --backend local --per-task 2 --out results/structured.json
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402, F401  (registers the scripted answers)
from games.engine.calls import run_sync  # noqa: E402
from games.engine.results import model_label  # noqa: E402
from games.fruit_trading import dialogue  # noqa: E402
from games.fruit_trading import parsing as fruit_parsing  # noqa: E402
from games.werewolf import rules  # noqa: E402
from games.werewolf.arena.matches import play_arena_game  # noqa: E402
from games.werewolf.players import parsing as ww_parsing  # noqa: E402
from gt_llm.backends.scripted import ScriptedModel  # noqa: E402
from gt_llm.chat import ChatModel, ChatRequest  # noqa: E402
from gt_llm.opponents import extraction  # noqa: E402
from gt_llm.parsing import ParsePolicy, ParseStats, complete_parsed  # noqa: E402
from gt_llm.recording import RecordingModel  # noqa: E402
from gt_llm.registry import load_model  # noqa: E402
from runs.atomic import atomic_write_json  # noqa: E402


def recorded_requests(structured: bool) -> list[ChatRequest]:
    """Every request of a few scripted fruit dialogues and one scripted Werewolf game, in order."""
    rec = RecordingModel(ScriptedModel())
    for init in range(4):
        cfg = dialogue.Config(max_messages=4, beliefs=True, structured=structured)
        state = dialogue.initial_state(cfg.scenario(init), cfg)
        for k, tone in enumerate(("calm", "submissive", "assertive", "calm")):
            if state.is_terminal():
                break
            state = run_sync(dialogue.step(state, tone, k % 2), rec)
    play_arena_game(
        rules.preset("gratr"),
        rec,
        wolf_model="gratr",
        leader_model="dirichlet",
        seed=0,
        structured=structured,
    )
    return rec.requests


def parser_of(request: ChatRequest) -> Callable[[str], Any]:
    """The parser the games use for ``request`` (structured or free text)."""
    if request.task.startswith("fruit_trading."):
        return fruit_parsing.parser_for(request)
    if request.task.startswith("werewolf."):
        return ww_parsing.parser_for(request)
    f = request.fields
    structured = request.schema is not None
    if request.task == "opponents.identity":
        if structured:
            return lambda t: extraction.read_identity_judgments(request, t)
        return lambda t: extraction.parse_identity_judgments(
            t, players=list(f["players"]), identities=list(f["options"])
        )
    if request.task == "opponents.intent":
        if structured:
            return lambda t: extraction.read_intents(request, t)
        return lambda t: extraction.parse_intents(t, players=list(f["players"]))
    raise ValueError(f"no parser for {request.task}")


def sample(requests: list[ChatRequest], per_task: int) -> dict[str, list[int]]:
    """Indices of the first ``per_task`` requests of each task (distinct prompts)."""
    picked: dict[str, list[int]] = collections.defaultdict(list)
    seen: set[str] = set()
    for i, r in enumerate(requests):
        key = r.cache_key("x", "y")
        if key in seen or len(picked[r.task]) >= per_task:
            continue
        seen.add(key)
        picked[r.task].append(i)
    return dict(picked)


def run_mode(model: ChatModel, requests: list[ChatRequest]) -> dict[str, Any]:
    stats = ParseStats()
    first: collections.Counter[str] = collections.Counter()
    seconds: collections.Counter[str] = collections.Counter()
    calls = 0
    for r in requests:
        start = time.perf_counter()
        parsed = complete_parsed(
            model, r, parser_of(r), fallback=lambda _r: None, policy=ParsePolicy(), stats=stats
        )
        seconds[r.task] += time.perf_counter() - start
        calls += parsed.attempts
        first[r.task] += int(parsed.attempts == 1 and not parsed.fell_back)
    s = stats.to_dict()
    tasks = sorted({r.task for r in requests})
    per_task = {
        t: {
            "requests": sum(1 for r in requests if r.task == t),
            "first_try": first[t],
            "reasks": s["reasks"].get(t, 0),
            "fallbacks": s["fallbacks"].get(t, 0),
            "seconds": round(seconds[t], 1),
        }
        for t in tasks
    }
    total_s = sum(seconds.values())
    return {
        "tasks": per_task,
        "requests": len(requests),
        "calls": calls,
        "fallbacks": s["total_fallbacks"],
        "seconds": round(total_s, 1),
        "calls_per_second": round(calls / total_s, 3) if total_s else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", help="model spec (default local)")
    parser.add_argument("--per-task", type=int, default=2, help="requests per task (default 2)")
    parser.add_argument("--cache", default=None, help="SQLite call cache (default: none)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    parser.add_argument("--modes", default="on,off", help="modes to run, in order (on,off)")
    args = parser.parse_args()
    model = load_model(args.backend, cache=args.cache)
    label = model_label(model)
    on, off = recorded_requests(True), recorded_requests(False)
    picks = sample(on, args.per_task)
    out: dict[str, Any] = {"model": label.to_json(), "per_task": args.per_task, "modes": {}}
    for mode in args.modes.split(","):
        pool = on if mode == "on" else off
        chosen = [pool[i] for t in sorted(picks) for i in picks[t]]
        sys.stdout.write(f"{label.label}: {len(chosen)} requests, structured {mode} ...\n")
        sys.stdout.flush()
        result = run_mode(model, chosen)
        out["modes"][mode] = result
        for t, row in result["tasks"].items():
            sys.stdout.write(
                f"  {mode:3s} {t:34s} requests {row['requests']}  first try {row['first_try']}  "
                f"re-asks {row['reasks']}  fallbacks {row['fallbacks']}  {row['seconds']:.0f} s\n"
            )
        sys.stdout.write(
            f"  {mode:3s} total: {result['requests']} requests, {result['calls']} calls, "
            f"{result['fallbacks']} fallbacks, {result['seconds']:.0f} s, "
            f"{result['calls_per_second']} calls/s\n"
        )
        sys.stdout.flush()
        if args.out:
            atomic_write_json(args.out, out)
    if {"on", "off"} <= set(out["modes"]):
        a, b = out["modes"]["on"], out["modes"]["off"]
        sys.stdout.write(
            f"fallback rate: structured on {a['fallbacks'] / a['requests']:.3f}, "
            f"off {b['fallbacks'] / b['requests']:.3f}\n"
        )
    model.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
