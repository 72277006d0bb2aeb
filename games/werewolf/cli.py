"""``gt-llm werewolf ...``: play, watch and replay Werewolf games from the command line.

* ``gt-llm werewolf play --preset arena --backend scripted --seed 7 --log game.jsonl``
  plays one game with LLM players on ``--backend`` (``scripted`` is the rule-based
  stand-in answering the prompts, not an LLM; ``groq:MODEL`` or ``openai:MODEL@URL``
  a real model) through the call cache (``--cache``, default next to the log or
  ``OUT/llm_cache.sqlite``), and prints the transcript as it goes, statements in
  words with their tone; ``--players rules`` plays the rule players (no prompts);
* ``--human N`` gives seat N to a person at the terminal (the transcript then shows
  only what seat N knows);
* ``--games N [--out DIR]`` plays N games (seeds ``seed .. seed+N-1``) with a
  progress bar into a results folder (``DIR/manifest.json`` first with
  ``complete: false`` and last with ``complete: true``; a folder holding another
  series is refused unless ``--force``, which clears its results and logs but
  never the cache), writes every log to ``DIR/logs/``, ``DIR/summary.json`` (win rates
  with 95 % Wilson intervals, game lengths, model calls, the pooled deception
  summary) and ``DIR/games.csv``, and prints the summary. Games run one after the
  other on the scripted backend (CPU-bound: threads would not help) and in a thread
  pool of ``--jobs`` games on a remote backend (its calls wait on the network);
  through the cache an interrupted series resumes without paying twice;
* ``gt-llm werewolf summary game.jsonl [...]`` prints the deception summary of one
  log (several logs: pooled);
* ``gt-llm werewolf replay game.jsonl`` re-applies a log and checks it reaches the
  logged final state;
* ``gt-llm werewolf view game.jsonl --out game.html`` (or a results folder) writes
  self-contained HTML pages (:mod:`games.werewolf.view`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from games.engine.cli_options import Writer, say

__all__ = ["add_parser", "main", "show_estimate"]


def _config(args: argparse.Namespace):
    from games.werewolf import rules

    overrides = {}
    if args.debate_turns is not None:
        overrides["debate_turns"] = args.debate_turns
    if args.max_rounds is not None:
        overrides["max_rounds"] = args.max_rounds
    if args.exile is not None:
        overrides["exile"] = args.exile
    if args.roles:
        overrides["roles"] = rules.RoleSet.parse(args.roles)
    if args.reveal_roles:
        overrides["reveal_roles"] = True
    return rules.preset(args.preset, **overrides)


def _check_play_args(args: argparse.Namespace, num_players: int) -> None:
    """Every option checked before the first move (one-line errors naming the flag)."""
    from games.engine.cli_options import check_backend

    check_backend(args)  # an unknown spec fails here, with the registry's message
    if args.players == "rules" and args.backend != "scripted":
        raise ValueError(
            f"werewolf play: --players rules asks no model; drop --backend {args.backend} "
            "or use --players llm"
        )
    if args.history is not None and args.history < 1:
        raise ValueError("werewolf play: --history must be >= 1 (public messages per prompt)")
    if args.jobs is not None and args.jobs < 1:
        raise ValueError("werewolf play: --jobs must be >= 1")
    if args.human is not None and not 0 <= args.human < num_players:
        raise ValueError(f"werewolf play: --human must be a seat in 0..{num_players - 1}")
    if args.log is not None and (Path(args.log).is_dir() or str(args.log).endswith(("/", "\\"))):
        raise ValueError(
            f"werewolf play: --log {args.log} is a folder; pass a file such as --log game.jsonl"
        )
    if args.games > 1:
        from games.werewolf.estimate import check_games

        check_games(args.games)  # the size, before any call: one line naming --games
        if args.human is not None:
            raise ValueError("werewolf play: --human plays one game; drop --games")
        if args.log is not None:
            raise ValueError("werewolf play: with --games N the logs go to --out DIR; drop --log")
        from games.engine.cli_options import check_out

        check_out(args)


def show_estimate(args: argparse.Namespace, config, *, games: int) -> None:
    """The work estimate line on stderr, before the first model call (not with --no-progress)."""
    from games.werewolf.estimate import estimate_games

    estimate = estimate_games(
        games=games,
        preset=args.preset,
        players=config.num_players,
        debate_turns=config.debate_turns,
        asks_model=getattr(args, "players", "llm") != "rules",
    )
    if not getattr(args, "no_progress", False):
        sys.stderr.write(estimate.describe() + "\n")


def _seats(config, human: int | None, stdin, write: Writer, rules_players: bool) -> list:
    """Per seat a Player, or None for an LLM seat."""
    from games.werewolf.players.human import HumanPlayer
    from games.werewolf.players.rule_based import RuleBasedPlayer

    n = config.num_players
    seats: list = [RuleBasedPlayer() for _ in range(n)] if rules_players else [None] * n
    if human is not None:
        seats[human] = HumanPlayer(stdin.readline, write)
    return seats


#: ``werewolf play`` options that do not change a series' results (beyond the shared ones).
PLAY_NON_RESULT_OPTIONS = ("log", "human", "werewolf_command")


def _series_settings(args: argparse.Namespace, config) -> dict:
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


def _cache_path(args: argparse.Namespace) -> str:
    if args.cache:
        return args.cache
    if args.games == 1 and args.log:
        return str(Path(args.log).resolve().parent / "llm_cache.sqlite")
    return str(Path(args.out) / "llm_cache.sqlite")


def _model(args: argparse.Namespace):
    from games.engine.cli_options import model_options
    from gt_llm.registry import load_model

    return load_model(args.backend, cache=_cache_path(args), **model_options(args))


def _one_game(args, config, seed: int, model, *, log, on_record=None, seats=None):
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


def _play(args: argparse.Namespace, *, stdin=None, write: Writer = say) -> int:
    from games.werewolf.play.transcript import describe

    config = _config(args)
    _check_play_args(args, config.num_players)
    show_estimate(args, config, games=args.games)
    if args.games > 1:
        from games.engine.cli_options import attach_cache, prepare_model, results_folder

        # Backend, key and cache checked first; then the folder (refused in one line if it
        # holds another series; --force clears only the files its manifest lists).
        model = None if args.players == "rules" else prepare_model(args)
        try:
            with results_folder(args, _series_settings(args, config), model) as run:
                if model is not None:
                    model = attach_cache(args, model)
                return _play_many(args, config, model, write, run)
        finally:
            if model is not None:
                model.close()
    model = None if args.players == "rules" else _model(args)
    try:

        def show(record) -> None:
            line = describe(record, seat=args.human)
            if line is not None:
                write(line)

        seats = _seats(config, args.human, stdin or sys.stdin, write, args.players == "rules")
        result, _ = _one_game(
            args, config, args.seed, model, log=args.log, on_record=show, seats=seats
        )
    finally:
        if model is not None:
            model.close()
    if result.extra and "model_calls" in result.extra:
        fb = result.extra["parse_stats"]["total_fallbacks"]
        write(f"{result.extra['model_calls']} model calls, {fb} fallback(s)")
    if args.log:
        write(f"log written to {args.log}")
    return 0 if result.winner else 1


def _play_many(args: argparse.Namespace, config, model, write: Writer, run) -> int:
    from tqdm.auto import tqdm

    from games.engine.results import model_label
    from games.werewolf.deception.summary import pooled_summary
    from games.werewolf.play import runner
    from gt_llm.parsing import ParseStats
    from runs.atomic import finite_or_none

    out = run.path
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    seeds = [args.seed + i for i in range(args.games)]
    # Games at a time only help when calls wait on a server; an in-process model
    # (scripted, local) answers one call at a time anyway.
    remote = model is not None and model.remote
    jobs = min(args.jobs or 4, args.games) if remote else 1
    start = time.perf_counter()
    hits0 = _cache_stats(model)

    def game(seed: int):
        name = f"logs/game_{seed:06d}.jsonl"
        # Listed as ours before it exists (and its partial name), so --force clears them.
        log = run.record(name)
        run.record(runner.partial_path(name).as_posix())
        return _one_game(args, config, seed, model, log=log)

    with tqdm(total=args.games, desc="werewolf games", disable=args.no_progress) as bar:
        if jobs == 1:
            played = []
            for s in seeds:
                played.append(game(s))
                bar.update(1)
        else:
            played = _run_all(game, seeds, jobs, on_done=lambda: bar.update(1))
    elapsed = time.perf_counter() - start
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
    write(f"{args.games} games, players: {label}, preset {args.preset}:")
    for team, w in summary["win_rates"].items():
        lo, hi = w["ci95"]
        write(f"  {team:10s} {w['count']:5d}  {w['rate']:.3f}  (95% CI {lo:.3f}-{hi:.3f})")
    r = summary["rounds"]
    write(f"  rounds: mean {r['mean']:.2f}, min {r['min']}, max {r['max']}")
    if model is not None:
        mc = summary["model_calls"]
        write(
            f"  model calls: {mc['mean_per_game']:.1f} per game, {mc['new_backend_calls']} new "
            f"backend call(s), {mc['cache_hits']} from the cache"
        )
        write(_detection_line(summary["deception"]))
        write(_parse_line(summary["parse"]))
    write(
        f"  {1000 * summary['seconds_per_game']:.1f} ms per game; summary in {out / 'summary.json'}"
    )
    return 0


def _run_all(game, seeds: list[int], jobs: int, *, on_done) -> list:
    """Plays ``game(seed)`` for every seed, ``jobs`` at a time; stops at the first failure.

    A failed game (the server gone, the key refused, a full disk, a budget
    spent) cancels every game still queued, lets the running ones end (each
    within its retry budget) and raises the first failure, so a series says
    what went wrong within the retry budget plus one game, not after every
    queued game has waited out its own.
    """
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(game, s) for s in seeds]
        for f in futures:
            f.add_done_callback(lambda _f: on_done())
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f in done and not f.cancelled() and f.exception()]
        if failed:
            for f in futures:
                f.cancel()
            raise failed[0].exception()  # type: ignore[misc]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _cache_stats(model) -> tuple[int, int]:
    stats = getattr(model, "stats", None)
    if stats is None:
        return (0, 0)
    s = stats()
    return (s.hits, s.misses)


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _parse_line(p: dict) -> str:
    """Decisions, re-asks and fallbacks of a series, with the tasks that fell back."""
    decisions = sum(p["parsed"].values()) + p["total_fallbacks"]
    worst = ", ".join(
        f"{task} {p['fallbacks'][task]}" for task in sorted(p["fallbacks"]) if p["fallbacks"][task]
    )
    return (
        f"  answers: {decisions} decisions, {sum(p['reasks'].values())} re-asks, "
        f"{p['total_fallbacks']} fallback(s)" + (f" ({worst})" if worst else "")
    )


def _detection_line(d: dict) -> str:
    p, s = d["peer_detection"], d["self_detection"]
    return (
        f"  deception: {d['total_statements']} statements; peer precision {_fmt(p['precision'])} "
        f"recall {_fmt(p['recall'])}; self precision {_fmt(s['precision'])} "
        f"recall {_fmt(s['recall'])}"
    )


def _summary(args: argparse.Namespace, *, write: Writer = say) -> int:
    from games.werewolf.deception.summary import pooled_summary
    from games.werewolf.deception.tracking import tracker_from_events
    from games.werewolf.play import runner
    from games.werewolf.rules import Config

    summaries = []
    for path in args.logs:
        records = runner.read_log(path)  # FILE:LINE for a damaged line
        if not records or records[0].get("type") != "header":
            raise ValueError(f"werewolf summary: {path}:1: does not start with a header record")
        try:
            # Checked (shape, at most MAX_PLAYERS seats) before anything is sized by it.
            n = Config.from_dict(records[0].get("config")).num_players
        except ValueError as exc:
            raise ValueError(f"werewolf summary: {path}:1: bad header config ({exc})") from None
        try:
            summaries.append(tracker_from_events(records, n).summary())
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise ValueError(
                f"werewolf summary: {path}: a record of the wrong shape "
                f"({type(exc).__name__}: {exc}); the log is damaged"
            ) from None
    s = summaries[0] if len(summaries) == 1 else pooled_summary(summaries)
    d = s.to_dict()
    label = args.logs[0] if len(args.logs) == 1 else f"{len(args.logs)} logs (pooled)"
    write(f"Deception summary of {label}:")
    write(_detection_line(d))
    write("  player  statements  self-reported  peer flags/analyses  peer-detected  avg suspicion")
    for p in s.players:
        write(
            f"  P{p.player:<6d}{p.statements:11d}{p.self_reported:15d}"
            f"{p.peer_flags:11d}/{p.peer_analyses:<9d}{p.peer_detected:14d}"
            f"  {_fmt(p.average_suspicion)}"
        )
    if s.score_matrix is not None:
        write("  deception scores (row: observer, column: speaker):")
        write("        " + "".join(f"P{j:<6d}" for j in range(len(s.score_matrix))))
        for i, row in enumerate(s.score_matrix):
            cells = "".join(" -     " if v is None else f"{v:<7.2f}" for v in row)
            write(f"  P{i:<4d}{cells}")
    return 0


def _replay(args: argparse.Namespace, *, write: Writer = say) -> int:
    from games.werewolf.play import runner
    from games.werewolf.play.transcript import describe

    # Checked first (shape, legality, a result record): a damaged or unfinished log is
    # refused in one line with FILE:LINE, before anything of it is printed.
    state = runner.replay(args.log)
    if args.transcript:
        for record in runner.read_log(args.log):
            line = describe(record)
            if line is not None:
                write(line)
    write(
        f"replayed {args.log}: {state.num_steps} steps, winner {state.winner}, "
        f"final state matches the log (digest {runner.state_digest(state)[:12]})"
    )
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``werewolf`` command group (``play``, ``summary``, ``replay``, ``arena``, ``graph``)."""
    from games.engine.cli_options import add_common_options
    from gt_llm.argtypes import non_negative_int, positive_int

    group = subparsers.add_parser(
        "werewolf",
        help="Werewolf: play, watch and replay games",
        description="Werewolf: play, watch and replay games; solve a day as a CFR tree; "
        "pit opponent models against each other in the arena.",
    )
    sub = group.add_subparsers(dest="werewolf_command", metavar="COMMAND", parser_class=type(group))
    play = sub.add_parser("play", help="play one game (transcript) or a series (--games N)")
    play.add_argument("--preset", choices=("arena", "gratr"), default="arena")
    play.add_argument(
        "--roles", default=None, help="role counts, e.g. werewolf:2,seer:1,villager:5"
    )
    play.add_argument(
        "--debate-turns", type=non_negative_int, default=None, help="speeches per day"
    )
    play.add_argument("--max-rounds", type=positive_int, default=None, help="round limit (draw)")
    play.add_argument("--exile", choices=("majority", "plurality"), default=None)
    play.add_argument("--reveal-roles", action="store_true", help="reveal roles of the dead")
    play.add_argument("--log", default=None, help="JSONL log of the game")
    play.add_argument("--games", type=positive_int, default=1, help="number of games")
    play.add_argument("--human", type=non_negative_int, default=None, help="a person plays seat N")
    play.add_argument(
        "--players",
        choices=("llm", "rules"),
        default="llm",
        help="llm: LLM players on --backend (default); rules: the rule players, no prompts",
    )
    play.add_argument(
        "--history",
        type=positive_int,
        default=15,
        help="public messages each prompt shows (default 15)",
    )
    play.add_argument(
        "--log-prompts",
        action="store_true",
        help="log every call's messages (default: its cache key and raw answer)",
    )
    play.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        help="games at a time with --games on a remote backend (threads; default 4); "
        "the scripted backend plays them one after the other",
    )
    add_common_options(
        play,
        out="results/werewolf",
        seed_help="seed of chance and of every player (game i of --games uses seed+i; default 0)",
    )
    play.set_defaults(func=_play)
    replay = sub.add_parser("replay", help="replay a log and check its final state")
    replay.add_argument("log", help="a JSONL game log")
    replay.add_argument("--transcript", action="store_true", help="print the transcript too")
    replay.set_defaults(func=_replay)
    summary = sub.add_parser("summary", help="deception summary of one or more logs")
    summary.add_argument("logs", nargs="+", help="JSONL game logs (several: pooled)")
    summary.set_defaults(func=_summary)
    # Imported here like the rest of the game, so that `gt-llm --help` stays fast.
    from games.werewolf.arena.graph import add_graph_parser
    from games.werewolf.arena.runner import add_arena_parser
    from games.werewolf.day.command import add_solve_parser
    from games.werewolf.view.command import add_view_parser

    add_solve_parser(sub)  # the day as a CFR tree (issue 12)
    add_arena_parser(sub)  # opponent models against each other (issue 11)
    add_graph_parser(sub)  # a seat's GRATR trust graph from an arena log
    add_view_parser(sub)  # logs and results folders as HTML pages (issue 20)
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m games.werewolf.cli ...``: the same as ``gt-llm werewolf ...``."""
    from gt_llm.cli import main as gt_llm_main

    return gt_llm_main(["werewolf", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
