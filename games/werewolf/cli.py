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
  through the cache an interrupted series resumes without paying twice (the
  games themselves are played by :mod:`games.werewolf.series`);
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from games.engine.cli_options import Writer, say
from games.werewolf.options import (
    MAX_DEBATE_TURNS,
    MAX_HISTORY,
    MAX_ROUNDS,
    roles_arg,
    show_estimate,
)
from games.werewolf.series import (
    PLAY_NON_RESULT_OPTIONS,
    detection_line,
    format_score,
    one_game,
    play_series,
    series_settings,
)

__all__ = [
    "MAX_DEBATE_TURNS",
    "MAX_HISTORY",
    "MAX_ROUNDS",
    "PLAY_NON_RESULT_OPTIONS",
    "add_parser",
    "main",
    "roles_arg",
    "show_estimate",
]


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
    if args.seat_backends is not None and args.team_backends is not None:
        raise ValueError(
            "werewolf play: give --seat-backends (one per seat) or --team-backends, not both"
        )
    if args.seat_backends is not None:
        seat_specs(args, num_players)
    if args.team_backends is not None:
        team_specs(args)
    if args.games > 1:
        from games.werewolf.estimate import check_games

        check_games(args.games)  # the size, before any call: one line naming --games
        if args.human is not None:
            raise ValueError("werewolf play: --human plays one game; drop --games")
        if args.log is not None:
            raise ValueError("werewolf play: with --games N the logs go to --out DIR; drop --log")
        from games.engine.cli_options import check_out

        check_out(args)


def _seats(config, human: int | None, stdin, write: Writer, rules_players: bool) -> list:
    """Per seat a Player, or None for an LLM seat."""
    from games.werewolf.players.human import HumanPlayer
    from games.werewolf.players.rule_based import RuleBasedPlayer

    n = config.num_players
    seats: list = [RuleBasedPlayer() for _ in range(n)] if rules_players else [None] * n
    if human is not None:
        seats[human] = HumanPlayer(stdin.readline, write)
    return seats


def seat_specs(args: argparse.Namespace, num_players: int) -> tuple[str, ...]:
    """``--seat-backends``: one backend spec per seat, each checked (no call made).

    Raises:
      ValueError: a count other than the seats, a bad spec, or rule players.
    """
    from gt_llm.registry import check_spec, split_spec_list

    # A comma in a URL's password or query stays in its spec (never shown as one).
    specs = tuple(split_spec_list(str(args.seat_backends)))
    empty = [i for i, s in enumerate(specs) if not s]
    if empty:
        raise ValueError(
            f"werewolf play: --seat-backends entry {empty[0] + 1} of {len(specs)} (seat "
            f"{empty[0]}) is empty; give {num_players} backend specs, one per seat, "
            "separated by single commas"
        )
    if len(specs) != num_players:
        raise ValueError(
            f"werewolf play: --seat-backends needs {num_players} backend specs, one per seat "
            f"(seat 0 first), comma-separated; got {len(specs)}"
        )
    if args.players == "rules":
        raise ValueError("werewolf play: --players rules asks no model; drop --seat-backends")
    for i, spec in enumerate(specs):
        try:
            check_spec(spec)
        except ValueError as exc:
            raise ValueError(f"werewolf play: --seat-backends seat {i}: {exc}") from None
    return specs


def team_specs(args: argparse.Namespace) -> dict[str, str]:
    """``--team-backends werewolves=A,villagers=B``: each team's backend spec, checked.

    Raises:
      ValueError: not exactly the two teams, a bad spec, or rule players.
    """
    from games.werewolf.rules import VILLAGERS, WEREWOLVES
    from gt_llm.registry import check_spec, split_spec_list
    from gt_llm.safety import public_spec

    teams = (WEREWOLVES, VILLAGERS)
    specs: dict[str, str] = {}
    # A comma in a URL's password or query stays in its spec (never shown as one).
    items = split_spec_list(
        str(args.team_backends), lambda piece: piece.partition("=")[0].strip() in teams
    )
    for item in items:
        team, eq, spec = item.strip().partition("=")
        if not eq or team.strip() not in teams or not spec.strip():
            raise ValueError(
                f"werewolf play: --team-backends takes {WEREWOLVES}=SPEC,{VILLAGERS}=SPEC; "
                f"got {public_spec(item.strip())!r}"
            )
        if team.strip() in specs:
            raise ValueError(
                f"werewolf play: --team-backends names {team.strip()} twice; give each team "
                f"once: {WEREWOLVES}=SPEC,{VILLAGERS}=SPEC"
            )
        try:
            check_spec(spec.strip())
        except ValueError as exc:
            raise ValueError(f"werewolf play: --team-backends {team.strip()}: {exc}") from None
        specs[team.strip()] = spec.strip()
    if set(specs) != {WEREWOLVES, VILLAGERS}:
        raise ValueError(
            f"werewolf play: --team-backends needs both teams, {WEREWOLVES}= and {VILLAGERS}="
        )
    if args.players == "rules":
        raise ValueError("werewolf play: --players rules asks no model; drop --team-backends")
    return specs


def _seat_model(args: argparse.Namespace, num_players: int, load) -> Any:
    """``--backend``'s model, or one per distinct spec of ``--seat-backends`` / ``--team-backends``.

    ``load(spec)`` loads one spec (behind the cache); the requests of seat i go
    to seat i's backend (:func:`games.werewolf.agents.seat_of_request`), or to
    its team's (:func:`games.werewolf.agents.team_of_request`, from the role each
    request carries: no knowledge of the deal needed).
    """
    if args.seat_backends is None and args.team_backends is None:
        return load(args.backend)
    from games.werewolf.agents import seat_of_request, team_of_request
    from gt_llm.routing import RoutedModel

    if args.seat_backends is not None:
        specs = seat_specs(args, num_players)
        route = lambda request: specs[seat_of_request(request)]  # noqa: E731
        wanted: Sequence[str] = specs
    else:
        teams = team_specs(args)
        route = lambda request: teams[team_of_request(request)]  # noqa: E731
        wanted = list(teams.values())
    models: dict[str, Any] = {}
    try:
        for spec in dict.fromkeys(wanted):
            models[spec] = load(spec)
    except BaseException:
        for m in models.values():
            m.close()
        raise
    # Keyed by backend spec: a failed call's error names its backend already.
    return RoutedModel(models, route, owns=True, name_keys=False)


def _attach_caches(args: argparse.Namespace, model: Any) -> Any:
    """``model`` behind the cache; a routed model's every backend behind it."""
    from games.engine.cli_options import attach_cache, attach_caches
    from gt_llm.routing import RoutedModel

    if isinstance(model, RoutedModel):
        attach_caches(args, model.models)
        return model
    return attach_cache(args, model)


def _cache_path(args: argparse.Namespace) -> str:
    if args.cache:
        return args.cache
    if args.games == 1 and args.log:
        return str(Path(args.log).resolve().parent / "llm_cache.sqlite")
    return str(Path(args.out) / "llm_cache.sqlite")


def _model(args: argparse.Namespace, num_players: int):
    from games.engine.cli_options import model_options
    from gt_llm.registry import load_model

    return _seat_model(
        args,
        num_players,
        lambda spec: load_model(spec, cache=_cache_path(args), **model_options(args)),
    )


def _play(args: argparse.Namespace, *, stdin=None, write: Writer = say) -> int:
    from games.werewolf.play.transcript import describe

    config = _config(args)
    _check_play_args(args, config.num_players)
    estimate = show_estimate(args, config, games=args.games)
    if args.games > 1:
        from games.engine.cli_options import (
            check_local_run,
            prepare_models,
            results_folder,
        )
        from games.werewolf.estimate import CALL_SHAPE

        # Backend, key and cache checked first; then the folder (refused in one line if it
        # holds another series; --force clears only the files its manifest lists).
        prepared: dict[str, Any] = {}

        def prepare(spec: str) -> Any:
            prepared[spec] = prepare_models(args, [spec])[spec]
            return prepared[spec]

        model = None if args.players == "rules" else _seat_model(args, config.num_players, prepare)
        for m in prepared.values():
            check_local_run(args, m, estimate, CALL_SHAPE)
        try:
            first = next(iter(prepared.values()), None)
            # Game logs go to logs/: a link or a file there is refused before anything is written.
            settings = series_settings(args, config)
            with results_folder(args, settings, first, folders=("logs",)) as run:
                if model is not None:
                    model = _attach_caches(args, model)
                return play_series(args, config, model, write, run)
        finally:
            if model is not None:
                model.close()
    model = None if args.players == "rules" else _model(args, config.num_players)
    try:

        def show(record) -> None:
            line = describe(record, seat=args.human)
            if line is not None:
                write(line)

        seats = _seats(config, args.human, stdin or sys.stdin, write, args.players == "rules")
        result, _ = one_game(
            args, config, args.seed, model, log=args.log, on_record=show, seats=seats
        )
    finally:
        if model is not None:
            model.close()
    if result.extra and "model_calls" in result.extra:
        from games.werewolf.play.quality import quality_lines, series_quality

        fb = result.extra["parse_stats"]["total_fallbacks"]
        write(f"{result.extra['model_calls']} model calls, {fb} fallback(s)")
        # The game's answer quality, as its log's result record holds it.
        quality = series_quality(result.extra["parse_stats"], [result.extra.get("quality", {})])
        for line in quality_lines(quality):
            write(line)
    if args.log:
        write(f"log written to {args.log}")
    return 0 if result.winner else 1


def _summary(args: argparse.Namespace, *, write: Writer = say) -> int:
    from games.werewolf.deception.summary import pooled_summary
    from games.werewolf.deception.tracking import tracker_from_events
    from games.werewolf.play import runner
    from games.werewolf.rules import Config
    from games.werewolf.view.index import not_a_log

    summaries = []
    for path in args.logs:
        try:
            records = runner.read_log(path)  # FILE:LINE for a damaged line
        except ValueError:
            # A report (tournament.json ...) is not a damaged log: say what it is instead.
            other = not_a_log(path, "werewolf summary")
            if other is None:
                raise
            raise other from None
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
    write(detection_line(d))
    write("  player  statements  self-reported  peer flags/analyses  peer-detected  avg suspicion")
    for p in s.players:
        write(
            f"  P{p.player:<6d}{p.statements:11d}{p.self_reported:15d}"
            f"{p.peer_flags:11d}/{p.peer_analyses:<9d}{p.peer_detected:14d}"
            f"  {format_score(p.average_suspicion)}"
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
    from games.werewolf.view.index import not_a_log

    # Checked first (shape, legality, a result record): a damaged or unfinished log is
    # refused in one line with FILE:LINE, before anything of it is printed.
    try:
        state = runner.replay(args.log)
    except ValueError:
        other = not_a_log(args.log, "werewolf replay")  # a report, not a damaged log
        if other is None:
            raise
        raise other from None
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
    """Adds the ``werewolf`` command group (``play``, ``summary``, ``replay``, ``solve``,
    ``arena``, ``tournament``, ``graph``, ``view``)."""
    from games.engine.cli_options import add_common_options
    from games.werewolf.config import MAX_PLAYERS
    from games.werewolf.side_by_side import add_jobs_option
    from gt_llm.argtypes import MAX_SIZE, bounded_int, non_empty

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
        "--roles",
        type=roles_arg,
        default=None,
        help="role counts, e.g. werewolf:2,seer:1,villager:5",
    )
    play.add_argument(
        "--debate-turns",
        type=bounded_int(0, MAX_DEBATE_TURNS),
        default=None,
        help=f"speeches per day (0 to {MAX_DEBATE_TURNS})",
    )
    play.add_argument(
        "--max-rounds",
        type=bounded_int(1, MAX_ROUNDS),
        default=None,
        help=f"round limit, then a draw (1 to {MAX_ROUNDS})",
    )
    play.add_argument("--exile", choices=("majority", "plurality"), default=None)
    play.add_argument("--reveal-roles", action="store_true", help="reveal roles of the dead")
    play.add_argument("--log", type=non_empty, default=None, help="JSONL log of the game")
    play.add_argument(
        "--games",
        type=bounded_int(1, MAX_SIZE),
        default=1,
        help="number of games (refused when they cannot fit in memory)",
    )
    play.add_argument(
        "--human",
        type=bounded_int(0, MAX_PLAYERS - 1),
        default=None,
        help="a person plays seat N (from 0)",
    )
    play.add_argument(
        "--players",
        choices=("llm", "rules"),
        default="llm",
        help="llm: LLM players on --backend (default); rules: the rule players, no prompts",
    )
    play.add_argument(
        "--history",
        type=bounded_int(1, MAX_HISTORY),
        default=15,
        help=f"public messages each prompt shows (default 15, at most {MAX_HISTORY})",
    )
    play.add_argument(
        "--log-prompts",
        action="store_true",
        help="log every call's messages (default: its cache key and raw answer)",
    )
    add_jobs_option(play)
    play.add_argument(
        "--seat-backends",
        type=non_empty,
        default=None,
        help="one backend spec per seat, comma-separated (seat 0 first): each seat's calls go "
        "to its own backend, cached apart (default: every seat on --backend)",
    )
    play.add_argument(
        "--team-backends",
        type=non_empty,
        default=None,
        help="werewolves=SPEC,villagers=SPEC: every werewolf's calls to one backend, every "
        "village seat's to the other, cached apart (as werewolf_arena's villagers' model "
        "against a werewolves' model)",
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
    from games.werewolf.arena.tournament import add_tournament_parser
    from games.werewolf.day.command import add_solve_parser
    from games.werewolf.view.command import add_view_parser

    add_solve_parser(sub)  # the day as a CFR tree
    add_arena_parser(sub)  # opponent models against each other
    add_tournament_parser(sub)  # agents round-robin, ratings and meta-game
    add_graph_parser(sub)  # a seat's GRATR trust graph from an arena log
    add_view_parser(sub)  # logs and results folders as HTML pages
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m games.werewolf.cli ...``: the same as ``gt-llm werewolf ...``."""
    from gt_llm.cli import main as gt_llm_main

    return gt_llm_main(["werewolf", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
