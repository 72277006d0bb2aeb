"""The table's option ranges and checks shared by the Werewolf commands.

``play`` (:mod:`games.werewolf.cli`), ``arena`` and ``tournament``
(:mod:`games.werewolf.arena`) all read them from here, so no command module
imports another.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from games.engine.resources import WorkEstimate

if TYPE_CHECKING:
    from games.werewolf.config import Config
    from games.werewolf.estimate import Seating

__all__ = ["MAX_DEBATE_TURNS", "MAX_HISTORY", "MAX_ROUNDS", "roles_arg", "show_estimate"]

#: The table's ranges (games.werewolf.config.Config): speeches per day, rounds before a draw.
MAX_DEBATE_TURNS, MAX_ROUNDS = 50, 100
#: Most public messages a prompt shows (and the opponent models' history window, --k, --top-k).
MAX_HISTORY = 1000


def roles_arg(text: str) -> str:
    """``--roles``: role counts a table can seat, e.g. ``werewolf:2,seer:1,villager:5``.

    Checked by :meth:`games.werewolf.config.RoleSet.parse` at parse time, so its
    refusal names the flag; a role named twice is refused too (the last count
    would win silently). Returned as given: the settings record the text.
    """
    from games.werewolf.config import RoleSet

    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty; give role counts such as werewolf:2,seer:1,villager:5 "
            "(or leave --roles out for the preset's)"
        )
    named = [p.partition(":")[0].strip() for p in text.replace("/", ",").split(",") if p.strip()]
    repeated = sorted({r for r in named if named.count(r) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(
            f"role(s) named twice: {', '.join(repeated)}; give each once"
        )
    try:
        RoleSet.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def show_estimate(
    args: argparse.Namespace,
    config: Config,
    *,
    games: int,
    seatings: Sequence[tuple[Seating, int]] | None = None,
) -> WorkEstimate:
    """The work estimate line on stderr, before the first model call (not with --no-progress).

    Its call count is a bound ("at most N model calls",
    :func:`games.werewolf.estimate.max_calls_per_game`) beside a calibrated "about".

    Args:
      args: The command's options (``--preset``, ``--players``, ``--human``, ``--top-k``,
        ``--no-progress``).
      config: The games' rules.
      games: Games the command plays.
      seatings: ``(seating, games)`` per kind of table (an arena's or tournament's
        pairs, :func:`games.werewolf.estimate.pair_seatings`); default: every seat
        asks the model, but a ``--human`` seat and ``--players rules``.

    Returns:
      The estimate, for the time line once the model is known
      (:func:`games.engine.cli_options.check_local_run`).
    """
    from games.werewolf.estimate import TOP_K, Seating, estimate_games

    asks_model = getattr(args, "players", "llm") != "rules"
    if seatings is None and asks_model and getattr(args, "human", None) is not None:
        seatings = [(Seating(config.num_players - 1), games)]
    estimate = estimate_games(
        games=games,
        preset=args.preset,
        players=config.num_players,
        debate_turns=config.debate_turns,
        asks_model=asks_model,
        config=config,
        seatings=seatings,
        top_k=getattr(args, "top_k", TOP_K),
    )
    if not getattr(args, "no_progress", False):
        sys.stderr.write(estimate.describe() + "\n")
    return estimate
