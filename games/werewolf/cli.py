"""``gt-llm werewolf ...``: play, watch and replay Werewolf games from the command line.

* ``gt-llm werewolf play --preset arena --seed 7 --log game.jsonl`` plays one game with
  scripted players (the rule-based stand-in, no LLM) and prints the transcript as
  it goes;
* ``--human N`` gives seat N to a person at the terminal (the transcript then shows
  only what seat N knows);
* ``--games N --out DIR`` plays N games (seeds ``seed .. seed+N-1``), writes every
  log to ``DIR/logs/`` and ``DIR/summary.json`` (win rates with 95 % Wilson
  intervals, game lengths, time per game) and prints the summary;
* ``gt-llm werewolf replay game.jsonl`` re-applies a log and checks it reaches the
  logged final state.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["add_parser", "main"]

Writer = Callable[[str], None]


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


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
    if args.backend != "scripted":
        raise ValueError(
            f"werewolf play: --backend {args.backend} needs the LLM players, which are not "
            "part of this build yet; use --backend scripted"
        )
    if args.human is not None and not 0 <= args.human < num_players:
        raise ValueError(f"werewolf play: --human must be a seat in 0..{num_players - 1}")
    if args.games > 1:
        if args.human is not None:
            raise ValueError("werewolf play: --human plays one game; drop --games")
        if args.out is None:
            raise ValueError("werewolf play: --games N needs --out DIR for the logs and summary")
        if args.log is not None:
            raise ValueError("werewolf play: with --games N the logs go to --out DIR; drop --log")
        summary = Path(args.out) / "summary.json"
        if summary.exists() and not args.force:
            raise ValueError(f"werewolf play: {summary} exists; pass --force to overwrite")


def _players(config, human: int | None, stdin, write: Writer) -> list:
    from games.werewolf.human import HumanPlayer
    from games.werewolf.scripted import ScriptedPlayer

    players = [ScriptedPlayer() for _ in range(config.num_players)]
    if human is not None:
        players[human] = HumanPlayer(stdin.readline, write)
    return players


def _play(args: argparse.Namespace, *, stdin=None, write: Writer = _say) -> int:
    from games.werewolf import runner
    from games.werewolf.transcript import describe

    config = _config(args)
    _check_play_args(args, config.num_players)
    if args.games > 1:
        return _play_many(args, config, write)

    def show(record) -> None:
        line = describe(record, seat=args.human)
        if line is not None:
            write(line)

    players = _players(config, args.human, stdin or sys.stdin, write)
    result = runner.play_game(config, players, seed=args.seed, log=args.log, on_record=show)
    if args.log:
        write(f"log written to {args.log}")
    return 0 if result.winner else 1


def _play_many(args: argparse.Namespace, config, write: Writer) -> int:
    from tqdm.auto import tqdm

    from games.werewolf import runner

    out = Path(args.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    results = []
    start = time.perf_counter()
    for i in tqdm(range(args.games), desc="werewolf games", disable=args.no_progress):
        seed = args.seed + i
        log = out / "logs" / f"game_{seed:06d}.jsonl"
        results.append(runner.play_game(config, seed=seed, log=log))
    elapsed = time.perf_counter() - start
    summary = {
        "players": "scripted (rule-based stand-in, no LLM)",
        "config": config.as_dict(),
        "seeds": [args.seed, args.seed + args.games - 1],
        **runner.summarize(results),
        "seconds_per_game": elapsed / args.games,
    }
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2))
    os.replace(tmp, out / "summary.json")
    write(f"{args.games} games, scripted players, preset {args.preset}:")
    for team, w in summary["win_rates"].items():
        lo, hi = w["ci95"]
        write(f"  {team:10s} {w['count']:5d}  {w['rate']:.3f}  (95% CI {lo:.3f}-{hi:.3f})")
    r = summary["rounds"]
    write(f"  rounds: mean {r['mean']:.2f}, min {r['min']}, max {r['max']}")
    write(
        f"  {1000 * summary['seconds_per_game']:.1f} ms per game; summary in {out / 'summary.json'}"
    )
    return 0


def _replay(args: argparse.Namespace, *, write: Writer = _say) -> int:
    from games.werewolf import runner
    from games.werewolf.transcript import describe

    if args.transcript:
        for record in runner.read_log(args.log):
            line = describe(record)
            if line is not None:
                write(line)
    state = runner.replay(args.log)
    write(
        f"replayed {args.log}: {state.num_steps} steps, winner {state.winner}, "
        f"final state matches the log (digest {runner.state_digest(state)[:12]})"
    )
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``werewolf`` command group (``play``, ``replay``)."""
    group = subparsers.add_parser(
        "werewolf", help="Werewolf: play, watch and replay games", description=__doc__
    )
    sub = group.add_subparsers(dest="werewolf_command", metavar="COMMAND", parser_class=type(group))
    play = sub.add_parser("play", help="play one game (transcript) or a series (--games N)")
    play.add_argument("--preset", choices=("arena", "gratr"), default="arena")
    play.add_argument(
        "--roles", default=None, help="role counts, e.g. werewolf:2,seer:1,villager:5"
    )
    play.add_argument("--debate-turns", type=int, default=None, help="speeches per day")
    play.add_argument("--max-rounds", type=_positive_int, default=None, help="round limit (draw)")
    play.add_argument("--exile", choices=("majority", "plurality"), default=None)
    play.add_argument("--reveal-roles", action="store_true", help="reveal roles of the dead")
    play.add_argument("--seed", type=int, default=0, help="seed of chance and players (default 0)")
    play.add_argument("--log", default=None, help="JSONL log of the game")
    play.add_argument("--games", type=_positive_int, default=1, help="number of games")
    play.add_argument("--out", default=None, help="folder for the logs and summary of --games")
    play.add_argument("--human", type=int, default=None, help="a person plays seat N")
    play.add_argument("--backend", default="scripted", help="players' model (only 'scripted')")
    play.add_argument("--no-progress", action="store_true", help="no progress bar")
    play.add_argument("--force", action="store_true", help="overwrite an existing summary")
    play.set_defaults(func=_play)
    replay = sub.add_parser("replay", help="replay a log and check its final state")
    replay.add_argument("log", help="a JSONL game log")
    replay.add_argument("--transcript", action="store_true", help="print the transcript too")
    replay.set_defaults(func=_replay)
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m games.werewolf.cli ...`` (the same commands as ``gt-llm werewolf``)."""
    parser = argparse.ArgumentParser(prog="gt-llm")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["werewolf", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"gt-llm: error: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
