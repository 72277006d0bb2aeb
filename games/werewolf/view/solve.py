"""A ``werewolf solve`` folder as a page: per day, CFR's decisions for each opponent model.

Reads ``decisions.json`` (:mod:`games.werewolf.day.exports`), ``summary.json``
and ``days.csv`` of the folder and writes one self-contained page
(:mod:`games.engine.html_page`): a table of the days (speakers, how often a
werewolf is among them over the day's deals, final NashConv and CFR-Gain per listeners' model) and, for the chosen day, one
column per opponent model with every decision point — speaker, what was said
before, CFR's reach — and CFR's probabilities over tone × speech act as a
grid.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

from games.engine.html_page import asset, render_page, write_page
from runs.atomic import ResultsError, read_json_as
from runs.readers import (
    BOOL,
    INT,
    LIST,
    NUMBER,
    OBJECT,
    TEXT,
    check_fields,
    list_of,
    map_of,
    optional,
    read_text,
)

__all__ = ["solve_page", "write_solve_page"]

_PKG = "games.werewolf.view"


def _r(x: Any) -> float | None:
    return None if x is None else round(float(x), 4)


#: A day of ``decisions.json`` (:mod:`games.werewolf.day.exports`): what the page reads.
_DAY = {
    "opponent_model": TEXT,
    "game_seed": INT,
    "day": INT,
    "alive": list_of(INT),
    "speakers": list_of(INT),
    "deals": OBJECT,
    "werewolf_speaker_share": NUMBER,
    "decisions": list_of(OBJECT),
}
_DEALS = {"kept": INT, "consistent": INT, "enumerated": BOOL, "roles": list_of(list_of(TEXT))}
_HISTORY = {"speaker": INT, "tone": TEXT, "act": TEXT, "text": optional(TEXT)}
_METRICS = ("nash_conv", "cfr_gain", "werewolf_gain", "village_gain", "cfr_gain_p_value")


def _decisions(doc: Any) -> dict[str, Any]:
    """``decisions.json`` checked where the page reads it (raises ``TypeError``).

    Every day and decision point needs the fields the page draws; ``probs`` is
    one row per tone of one entry per act (``null``: not legal there).
    """
    check_fields(
        doc,
        {"tones": list_of(TEXT), "acts": list_of(TEXT), "label": optional(TEXT), "days": LIST},
        required=("tones", "acts", "days"),
    )
    if not doc["days"]:
        raise TypeError("'days' is empty (no day was solved)")
    probs = list_of(list_of(optional(NUMBER), length=len(doc["acts"])), length=len(doc["tones"]))
    decision = {
        "deal": INT,
        "speaker": INT,
        "role": TEXT,
        "turn": INT,
        "reach": optional(NUMBER),
        "history": list_of(OBJECT),
        "acts": map_of(TEXT),
        "probs": probs,
    }
    for i, day in enumerate(doc["days"]):
        check_fields(day, _DAY, required=tuple(_DAY), where=f"days[{i}]")
        check_fields(day["deals"], _DEALS, required=tuple(_DEALS), where=f"days[{i}].deals")
        for j, dec in enumerate(day["decisions"]):
            where = f"days[{i}].decisions[{j}]"
            check_fields(dec, decision, required=tuple(decision), where=where)
            for k, said in enumerate(dec["history"]):
                check_fields(
                    said,
                    _HISTORY,
                    required=("speaker", "tone", "act"),
                    where=f"{where}.history[{k}]",
                )
    return doc


def _solve_summary(doc: Any) -> dict[str, Any]:
    """A day study's ``summary.json``, checked where the page reads it (raises ``TypeError``)."""
    check_fields(doc, {"settings": OBJECT, "baseline": optional(TEXT), "label": optional(TEXT)})
    return doc


def _metrics(folder: Path, rerun: str) -> dict[str, dict[str, Any]]:
    """Final NashConv and gains per ``opponent_model/game_seed`` from ``days.csv`` (if any).

    Raises:
      ResultsError: the file is not UTF-8, not a CSV table, or holds a metric that
        is not a number (names the file, the line and the fix).
    """
    path = folder / "days.csv"
    if not path.exists():
        return {}
    metrics: dict[str, dict[str, Any]] = {}
    text = read_text(path, rerun=rerun, what="a table")
    try:
        for n, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), 2):
            key = f"{row.get('opponent_model')}/{row.get('game_seed')}"
            try:
                metrics[key] = {k: _r(row[k]) if row.get(k) else None for k in _METRICS}
            except ValueError:
                bad = next(k for k in _METRICS if row.get(k) and not _is_number(row[k]))
                raise ResultsError(
                    f"{path}:{n}: {bad} {str(row[bad])[:40]!r} is not a number: re-run {rerun}"
                ) from None
    except csv.Error as exc:
        raise ResultsError(f"{path}: not a CSV table ({exc}): re-run {rerun}") from None
    return metrics


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def solve_page(folder: str | os.PathLike[str]) -> str:
    """The page of a day-study folder.

    Raises:
      ValueError: the folder has no ``decisions.json`` (written by ``werewolf solve``
        since this page exists: re-run the same command to add it; the cache makes
        no new calls) or a broken file (one line naming the file, what is wrong and
        the fix).
    """
    folder = Path(folder)
    path = folder / "decisions.json"
    rerun = f"its `gt-llm werewolf solve --out {folder} ...` command (the call cache answers it)"
    if not path.exists():
        raise ValueError(
            f"werewolf view: {folder} has no decisions.json; re-run its `gt-llm werewolf solve "
            f"--out {folder} ...` command (the call cache answers it without new calls)"
        )
    doc = read_json_as(path, _decisions, what="a day study's decision points", rerun=rerun)
    summary = read_json_as(
        folder / "summary.json", _solve_summary, what="a day study's summary", rerun=rerun
    )
    metrics = _metrics(folder, rerun)
    days = []
    for d in doc["days"]:
        decisions = [
            {
                **{k: dec.get(k) for k in ("deal", "speaker", "role", "turn", "history", "acts")},
                "reach": _r(dec.get("reach")),
                "probs": [[_r(p) for p in row] for row in dec["probs"]],
            }
            for dec in d["decisions"]
        ]
        key = f"{d.get('opponent_model')}/{d.get('game_seed')}"
        days.append(
            {
                **{k: v for k, v in d.items() if k != "decisions"},
                "metrics": metrics.get(key, {}),
                "decisions": decisions,
            }
        )
    settings = summary.get("settings") or {}
    data = {
        "kind": "werewolf-solve",
        "folder": folder.name,
        "model": doc.get("label") or summary.get("label"),
        "tones": doc["tones"],
        "acts": doc["acts"],
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
