"""Reading an arena folder: the command's options for scripts, its report, its game logs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from games.werewolf.arena.results import ArenaReport
from games.werewolf.arena.runner import add_arena_parser
from games.werewolf.play import runner

__all__ = [
    "game_logs",
    "load_arena",
    "parse_arena_args",
]


# --------------------------------------------------------------------------- reading results


def parse_arena_args(argv: Sequence[str]) -> argparse.Namespace:
    """The ``arena`` command's options from an argument list (for scripts and notebooks).

    Example: ``run_arena(parse_arena_args(["--games", "2", "--out", "results/a"]))``.
    """
    parser = argparse.ArgumentParser(prog="gt-llm werewolf")
    add_arena_parser(parser.add_subparsers())
    return parser.parse_args(["arena", *argv])


def load_arena(out: str | Path) -> ArenaReport:
    """The report (``arena.json``, written last but the CSV and figure) of an arena folder.

    Raises:
      runs.atomic.ResultsError: the file is missing, not valid JSON, or lacks a
        field of the report (names the fix).
    """
    from runs.atomic import read_json_as

    return read_json_as(
        Path(out) / "arena.json",
        ArenaReport.from_json,
        what="an arena report",
        rerun="gt-llm werewolf arena",
    )


def game_logs(
    out: str | Path, *, model: str | None = None, longest_first: bool = False
) -> list[Path]:
    """The game logs of an arena folder, pair by pair; only pairs with ``model`` if given.

    ``longest_first``: order by rounds played, most first (ties in folder order),
    e.g. to show a trust graph that had time to grow.
    """
    logs = sorted((Path(out) / "logs").glob("*_vs_*/game_*.jsonl"))
    logs = [p for p in logs if model is None or model in p.parent.name.split("_vs_")]
    if longest_first:
        # The arena record (the log's last line) holds the rounds played.
        rounds = {p: int((runner.read_log(p) or [{}])[-1].get("rounds", 0)) for p in logs}
        logs.sort(key=lambda p: -rounds[p])
    return logs
