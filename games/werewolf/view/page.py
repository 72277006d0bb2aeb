"""Werewolf pages: one game, a results folder's index, a day study (``werewolf solve``).

``gt-llm werewolf view LOG --out game.html`` writes :func:`game_page`;
``gt-llm werewolf view DIR`` writes a series or arena folder's index and every
game's page beside it (:mod:`games.werewolf.view.index`), or a solve folder's
decision points (:mod:`games.werewolf.view.solve`). Every page is one
self-contained file from :mod:`games.engine.html_page`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from games.engine.html_page import asset, iframe, render_page, write_page
from games.werewolf.view.timeline import game_data, read_records

__all__ = ["display_game", "game_page", "log_page", "write_game_page"]

_PKG = "games.werewolf.view"

#: What building a page from a checked log can still raise on a damaged one (a value
#: the field checks let through, NaN, nesting too deep for the page's JSON).
_DAMAGED = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError)


def game_page(records: Sequence[Mapping[str, Any]], *, back: str | None = None) -> str:
    """The HTML page of one game from its log records.

    Args:
      records: The log (:func:`~games.werewolf.view.timeline.read_records`).
      back: A relative link to the index page the game belongs to, if any.
    """
    data = game_data(records)
    data["back"] = back
    return render_page(
        title=f"Werewolf game, seed {data['seed']}",
        data=data,
        scripts=[asset(_PKG, "game.js")],
        styles=[asset(_PKG, "view.css")],
    )


def log_page(
    log: str | os.PathLike[str],
    records: Sequence[Mapping[str, Any]] | None = None,
    *,
    back: str | None = None,
) -> str:
    """The page of a game log, read through the checked reader (or its ``records``).

    Raises:
      games.werewolf.play.log.LogError: one line naming the log and what is wrong.
    """
    from games.werewolf.play.log import LogError

    if records is None:
        records = read_records(log)
    try:
        return game_page(records, back=back)
    except _DAMAGED as exc:
        raise LogError(
            f"{log}: cannot be shown ({type(exc).__name__}: {exc}); the log is damaged: "
            "re-run the game or delete the log"
        ) from None


def write_game_page(
    log: str | os.PathLike[str], out: str | os.PathLike[str], *, back: str | None = None
) -> Path:
    """Reads a game log and writes its page to ``out`` (atomically)."""
    return write_page(out, log_page(log, back=back))


def display_game(
    log: str | os.PathLike[str] | Sequence[Mapping[str, Any]], *, height: int = 760
) -> Any:
    """One game's page for a notebook: an ``IPython.display.HTML`` holding it in an iframe.

    Args:
      log: A game log's path, or its records.
      height: The frame's height in pixels.
    """
    from IPython.display import HTML

    records = read_records(log) if isinstance(log, (str, os.PathLike)) else log
    # In a <div>: IPython warns about HTML that starts with an iframe.
    return HTML(f"<div>{iframe(game_page(records), height=height)}</div>")
