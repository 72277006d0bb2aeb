"""Playing Werewolf games from ``gt-llm werewolf play``'s options: one game, or a series.

:func:`one_game` plays one game with the players the options name (LLM
players on the backend, or the rule players). :func:`play_series` plays
``--games N`` games (seeds ``seed .. seed+N-1``) into a results folder: every
log in ``logs/`` (listed in the manifest before it exists, so ``--force``
clears it), ``summary.json`` (win rates with 95 % Wilson intervals, game
lengths, model calls, the pooled deception summary) and ``games.csv``, and
prints the summary. Games run one after the other on an in-process backend
(CPU-bound: threads would not help) and several at a time in threads on a
remote one, its calls in flight bounded by ``--concurrency``
(:mod:`games.werewolf.side_by_side`); a series stops at its first failed game.

Heavy modules (the runner, the LLM table, tqdm) are imported when a game is
played, so that ``gt-llm --help`` stays fast.
"""

from __future__ import annotations

import argparse
import time

from games.engine.cli_options import Writer
from games.werewolf.side_by_side import games_at_once, run_all

__all__ = [
    "PLAY_NON_RESULT_OPTIONS",
    "detection_line",
    "format_score",
    "one_game",
    "parse_line",
    "play_series",
    "series_settings",
]

#: ``werewolf play`` options that do not change a series' results (beyond the shared ones).
PLAY_NON_RESULT_OPTIONS = ("log", "human", "werewolf_command")


def series_settings(args: argparse.Namespace, config) -> dict:
    """What determines a series' results (the results folder's manifest compares them).

    Every parsed option but the declared non-result ones
    (:data:`games.engine.cli_options.NON_RESULT_OPTIONS`,
    :data:`PLAY_NON_RESULT_OPTIONS`), and the rules config they make.
    """
    from games.engine.cli_options import result_settings

    return {
        **result_settings(args, also_ignore=PLAY_NON_RESULT_OPTIONS),
        "config": config.as_dict(),
    }


def one_game(args, config, seed: int, model, *, log, on_record=None, seats=None):
    """Plays one game with the players the options name; returns (GameResult, summary|None)."""
    from games.werewolf.play import runner
    from games.werewolf.players.table import play_llm_game

    if args.players == "rules":
        result = runner.play_game(config, seats, seed=seed, log=log, on_record=on_record)
        return result, None
    result, table = play_llm_game(
        config,
        model,
        seed=seed,
        log=log,
        on_record=on_record,
        seats=seats,
        history_limit=args.history,
        max_concurrency=args.concurrency,
        log_prompts=args.log_prompts,
        structured=args.structured == "on",
    )
    return result, table.tracker.summary()


def play_series(args: argparse.Namespace, config, model, write: Writer, run) -> int:
    """Plays ``args.games`` games into the results folder ``run``; writes and prints the summary.

    Args:
      args: The parsed ``werewolf play`` options.
      config: The rules config they make.
      model: The chat model (through the cache), or None for the rule players.
      write: Where the summary lines go.
      run: The opened results folder (:func:`games.engine.cli_options.results_folder`).
    """
    from runs.folders import folder_inside

    folder_inside(run.path, "logs")  # never through a link; a file there refused in one line
    seeds = [args.seed + i for i in range(args.games)]
    jobs = games_at_once(model, args.games, args.jobs)
    start = time.perf_counter()
    hits0 = _cache_stats(model)
    played = _play_games(args, config, model, run, seeds, jobs)
    elapsed = time.perf_counter() - start
    summary = _series_summary(args, config, model, played, seeds, jobs, elapsed, hits0)
    _write_series_files(run, summary, seeds, [r for r, _ in played])
    _print_summary(args, summary, model is not None, write, run.path)
    return 0


def _play_games(args, config, model, run, seeds: list[int], jobs: int) -> list:
    """(GameResult, deception summary|None) per seed, each game logged in ``run``'s ``logs/``."""
    from tqdm.auto import tqdm

    from games.werewolf.play import runner

    def game(seed: int):
        name = f"logs/game_{seed:06d}.jsonl"
        # Listed as ours before it exists (and its partial name), so --force clears them;
        # its folder made inside the results folder, never through a link.
        log = run.place(name)
        run.record(runner.partial_path(name).as_posix())
        return one_game(args, config, seed, model, log=log)

    with tqdm(total=args.games, desc="werewolf games", disable=args.no_progress) as bar:
        return run_all(game, seeds, jobs, on_done=lambda: bar.update(1))


def _series_summary(
    args, config, model, played: list, seeds: list[int], jobs: int, elapsed: float, hits0
) -> dict:
    """The series' ``summary.json``: win rates, lengths, speed, and for LLM players their calls."""
    from games.engine.results import model_label
    from games.werewolf.deception.summary import pooled_summary
    from games.werewolf.play import runner
    from games.werewolf.play.quality import series_quality
    from gt_llm.parsing import ParseStats

    results = [r for r, _ in played]
    label = "rule players (no LLM, no prompts)" if model is None else model_label(model).label
    summary: dict = {
        "players": label,
        "config": config.as_dict(),
        "seeds": [seeds[0], seeds[-1]],
        "parallel": f"{jobs} game(s) at a time" + (" (threads)" if jobs > 1 else ""),
        **runner.summarize(results),
        "seconds_per_game": elapsed / args.games,
    }
    if model is not None:
        calls = [r.extra["model_calls"] for r in results]
        hits1 = _cache_stats(model)
        summary["model_calls"] = {
            "total": sum(calls),
            "mean_per_game": sum(calls) / len(calls),
            "new_backend_calls": hits1[1] - hits0[1],
            "cache_hits": hits1[0] - hits0[0],
        }
        pooled = ParseStats.pooled([r.extra["parse_stats"] for r in results])
        summary["fallbacks"] = pooled.to_dict()["total_fallbacks"]
        summary["parse"] = {**pooled.to_dict(), "fallback_rate": pooled.fallback_rates()}
        summary["defaulted_actions"] = sum(r.extra["defaulted"] for r in results)
        summary["deception"] = pooled_summary([d for _, d in played]).to_dict()
        summary["quality"] = series_quality(
            summary["parse"], [r.extra.get("quality", {}) for r in results]
        )
    return summary


def _write_series_files(run, summary: dict, seeds: list[int], results: list) -> None:
    """``summary.json`` and ``games.csv`` (one row per game) in the results folder."""
    from runs.atomic import finite_or_none

    run.write_json("summary.json", finite_or_none(summary))
    run.write_csv(
        "games.csv",
        [
            {
                "seed": s,
                "winner": r.winner,
                "rounds": r.rounds,
                "steps": r.steps,
                "model_calls": (r.extra or {}).get("model_calls", 0),
            }
            for s, r in zip(seeds, results, strict=True)
        ],
        ("seed", "winner", "rounds", "steps", "model_calls"),
    )


def _print_summary(args, summary: dict, llm: bool, write: Writer, out) -> None:
    """The summary's lines: win rates, rounds, and for LLM players calls, deception, answers
    and their quality (:mod:`games.werewolf.play.quality`)."""
    from games.werewolf.play.quality import quality_lines

    write(f"{args.games} games, players: {summary['players']}, preset {args.preset}:")
    for team, w in summary["win_rates"].items():
        lo, hi = w["ci95"]
        write(f"  {team:10s} {w['count']:5d}  {w['rate']:.3f}  (95% CI {lo:.3f}-{hi:.3f})")
    r = summary["rounds"]
    write(f"  rounds: mean {r['mean']:.2f}, min {r['min']}, max {r['max']}")
    if llm:
        mc = summary["model_calls"]
        write(
            f"  model calls: {mc['mean_per_game']:.1f} per game, {mc['new_backend_calls']} new "
            f"backend call(s), {mc['cache_hits']} from the cache"
        )
        write(detection_line(summary["deception"]))
        write(parse_line(summary["parse"]))
        for line in quality_lines(summary["quality"]):
            write(line)
    write(
        f"  {1000 * summary['seconds_per_game']:.1f} ms per game; summary in {out / 'summary.json'}"
    )


def _cache_stats(model) -> tuple[int, int]:
    from gt_llm.cache import combined_stats

    s = combined_stats(model) if model is not None else None  # a routed model: every backend
    return (0, 0) if s is None else (s.hits, s.misses)


def format_score(x) -> str:
    """A score to three decimals, ``n/a`` for None."""
    return "n/a" if x is None else f"{x:.3f}"


def parse_line(p: dict) -> str:
    """Decisions, re-asks and fallbacks of a series, with the tasks that fell back."""
    decisions = sum(p["parsed"].values()) + p["total_fallbacks"]
    worst = ", ".join(
        f"{task} {p['fallbacks'][task]}" for task in sorted(p["fallbacks"]) if p["fallbacks"][task]
    )
    return (
        f"  answers: {decisions} decisions, {sum(p['reasks'].values())} re-asks, "
        f"{p['total_fallbacks']} fallback(s)" + (f" ({worst})" if worst else "")
    )


def detection_line(d: dict) -> str:
    """The deception summary's detection line (statements; peer and self precision, recall)."""
    p, s = d["peer_detection"], d["self_detection"]
    return (
        f"  deception: {d['total_statements']} statements; "
        f"peer precision {format_score(p['precision'])} recall {format_score(p['recall'])}; "
        f"self precision {format_score(s['precision'])} recall {format_score(s['recall'])}"
    )
