"""A ``werewolf solve`` folder as a page: per day, CFR's decisions for each opponent model.

Reads ``decisions.json`` (:mod:`games.werewolf.day.exports`), ``summary.json``
and ``days.csv`` of the folder and writes one self-contained page
(:mod:`games.engine.html_page`): a table of the days (speakers, their roles,
final NashConv and CFR-Gain per listeners' model) and, for the chosen day, one
column per opponent model with every decision point — speaker, what was said
before, CFR's reach — and CFR's probabilities over tone × speech act as a
grid.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

from games.engine.html_page import asset, render_page, write_page

__all__ = ["solve_page", "write_solve_page"]

_PKG = "games.werewolf.view"


def _r(x: Any) -> float | None:
    return None if x is None else round(float(x), 4)


def solve_page(folder: str | os.PathLike[str]) -> str:
    """The page of a day-study folder.

    Raises:
      ValueError: the folder has no ``decisions.json`` (written by ``werewolf solve``
        since this page exists: re-run the same command to add it; the cache makes
        no new calls) or a broken file.
    """
    folder = Path(folder)
    path = folder / "decisions.json"
    if not path.exists():
        raise ValueError(
            f"werewolf view: {folder} has no decisions.json; re-run its `gt-llm werewolf solve "
            f"--out {folder} ...` command (the call cache answers it without new calls)"
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"werewolf view: a file of {folder} is not valid JSON ({e})") from e
    metrics: dict[str, dict[str, Any]] = {}
    if (folder / "days.csv").exists():
        with (folder / "days.csv").open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                key = f"{row.get('opponent_model')}/{row.get('game_seed')}"
                metrics[key] = {
                    k: _r(row[k]) if row.get(k) not in (None, "") else None
                    for k in ("nash_conv", "cfr_gain", "werewolf_gain", "village_gain")
                }
    days = []
    for d in doc.get("days", []):
        decisions = [
            {
                **{k: dec.get(k) for k in ("speaker", "role", "turn", "history", "acts")},
                "reach": _r(dec.get("reach")),
                "probs": [[_r(p) for p in row] for row in dec.get("probs", [])],
            }
            for dec in d.get("decisions", [])
        ]
        key = f"{d.get('opponent_model')}/{d.get('game_seed')}"
        days.append(
            {
                **{k: v for k, v in d.items() if k != "decisions"},
                "metrics": metrics.get(key, {}),
                "decisions": decisions,
            }
        )
    settings = summary.get("settings", {})
    data = {
        "kind": "werewolf-solve",
        "folder": folder.name,
        "model": doc.get("label") or summary.get("label"),
        "tones": doc.get("tones", []),
        "acts": doc.get("acts", []),
        "settings": {
            k: settings.get(k)
            for k in ("preset", "day", "speakers", "iterations", "models", "num_seeds")
        },
        "baseline": summary.get("baseline"),
        "days": days,
    }
    return render_page(
        title=f"Werewolf day study: {folder.name}",
        data=data,
        scripts=[asset(_PKG, "solve.js")],
        styles=[asset(_PKG, "view.css")],
    )


def write_solve_page(
    folder: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> Path:
    """Writes :func:`solve_page` (default ``folder/view/days.html``) and returns its path."""
    out = Path(out) if out is not None else Path(folder) / "view" / "days.html"
    return write_page(out, solve_page(folder))
