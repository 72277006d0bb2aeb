"""The index page of a Werewolf results folder (a series, an arena or a tournament), and its
games' pages.

``gt-llm werewolf view DIR`` on a folder of ``werewolf play --games N --out DIR``
(``summary.json``, ``logs/*.jsonl``) or of ``werewolf arena`` (``arena.json``,
``logs/<A>_vs_<B>/game_*.jsonl``) writes ``DIR/view/index.html`` — the win
rates with their 95 % intervals and one row per game (winner, length, model
calls, fallbacks, a link); for a ``werewolf tournament`` folder (``tournament.json``)
also the agents' ratings with their intervals, the meta-game, its α-Rank
distribution and Nash equilibrium, and the CFR agents' lines — and every game's
page beside it under
``DIR/view/`` (same relative paths as the logs).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from games.engine.html_page import asset, href, render_page, write_page
from games.engine.quality import quality_lines
from games.werewolf.view.page import log_page
from games.werewolf.view.timeline import log_counts, read_records
from runs.atomic import read_json_as
from runs.readers import INT, NUMBER, OBJECT, TEXT, check_fields, list_of, map_of, optional

logger = logging.getLogger(__name__)

__all__ = ["folder_kind", "write_folder_pages"]

_PKG = "games.werewolf.view"


def folder_kind(folder: str | os.PathLike[str]) -> str:
    """``"tournament"``, ``"arena"``, ``"series"`` or ``"solve"`` from a results folder's files.

    Raises:
      ValueError: none of them (names what each kind holds).
    """
    folder = Path(folder)
    if (folder / "tournament.json").exists():
        return "tournament"
    if (folder / "arena.json").exists():
        return "arena"
    if (folder / "summary.json").exists() and (folder / "days.csv").exists():
        return "solve"
    if (folder / "summary.json").exists() and (folder / "logs").is_dir():
        return "series"
    raise ValueError(
        f"werewolf view: {folder} is not a Werewolf results folder (a series has summary.json "
        "and logs/, an arena arena.json, a tournament tournament.json, a day study "
        "summary.json and days.csv); give one of "
        "those or a game log (.jsonl)"
    )


#: A win rate as the series summary and the arena report write it.
_RATE = {
    "rate": optional(NUMBER),
    "ci95": list_of(optional(NUMBER), length=2),
    "count": optional(INT),
    "wins": optional(INT),
    "games": optional(INT),
}
#: The fields of a summary the index shows, besides the win rates.
_SHOWN = {
    "players": optional(TEXT),
    "note": optional(TEXT),
    "label": optional(TEXT),
    "config": OBJECT,
    "games": INT,
    "games_per_pair": INT,
    "models": list_of(TEXT),
    "preset": optional(TEXT),
}


def _series_summary(doc: Any) -> dict[str, Any]:
    """A series' ``summary.json``, checked where the index reads it (raises ``TypeError``)."""
    check_fields(doc, {**_SHOWN, "win_rates": map_of(OBJECT)})
    for side, rate in (doc.get("win_rates") or {}).items():
        check_fields(rate, _RATE, where=f"win_rates.{side}")
    return doc


def _arena_report(doc: Any) -> dict[str, Any]:
    """An arena's ``arena.json``, checked where the index reads it (raises ``TypeError``)."""
    check_fields(doc, {**_SHOWN, "pairs": list_of(OBJECT)})
    for i, pair in enumerate(doc.get("pairs") or []):
        check_fields(pair, {"pair": list_of(TEXT), "models": map_of(OBJECT)}, where=f"pairs[{i}]")
        for model, rates in (pair.get("models") or {}).items():
            where = f"pairs[{i}].models.{model}"
            check_fields(rates, {k: optional(OBJECT) for k in ("TWR", "WWR", "LWR")}, where=where)
            for k in ("TWR", "WWR", "LWR"):
                if rates.get(k):
                    check_fields(rates[k], _RATE, where=f"{where}.{k}")
    return doc


def _tournament_report(doc: Any) -> dict[str, Any]:
    """A tournament's ``tournament.json``, checked where the index reads it (``TypeError``)."""
    _arena_report(doc)
    check_fields(
        doc,
        {
            "ratings": OBJECT,
            "metagame": OBJECT,
            "alpha_rank": OBJECT,
            "nash": OBJECT,
            "cfr_agents": list_of(OBJECT),
        },
    )
    check_fields(doc["ratings"], {"agents": list_of(OBJECT)}, where="ratings")
    for i, row in enumerate(doc["ratings"]["agents"]):
        check_fields(
            row,
            {k: NUMBER for k in ("rating", "low", "high", "elo")}
            | {k: INT for k in ("rank_low", "rank_high", "games")}
            | {"agent": TEXT},
            where=f"ratings.agents[{i}]",
        )
    check_fields(
        doc["metagame"],
        {"agents": list_of(TEXT), "payoff": list_of(list_of(NUMBER))},
        where="metagame",
    )
    for key, field in (("alpha_rank", "pi"), ("nash", "strategy")):
        check_fields(doc[key], {"agents": list_of(TEXT), field: list_of(NUMBER)}, where=key)
    check_fields(doc["alpha_rank"], {"alpha": NUMBER}, where="alpha_rank")
    return doc


def _tournament(summary: Mapping[str, Any]) -> dict[str, Any]:
    """What the index shows of a tournament beyond the pairs: ratings, meta-game, CFR agents."""
    lines = []
    for c in summary.get("cfr_agents") or []:
        sp = c.get("speeches") or {}
        line = (
            f"{c.get('agent')}: {sp.get('matched', 0)} of {sum(sp.values())} day speeches "
            "followed its CFR policy"
        )
        t = c.get("against_twin")
        if isinstance(t, Mapping) and t.get("win_rate") is not None:
            lo, hi = (t.get("ci95") or [None, None])[:2]
            line += (
                f"; against {c.get('twin')} it won {t['win_rate']:.3f} "
                f"[{lo:.3f}, {hi:.3f}] of {t.get('games')} games"
            )
        lines.append(line)
    return {
        "ratings": summary["ratings"]["agents"],
        "inseparable": summary["ratings"].get("inseparable") or [],
        "metagame": {k: summary["metagame"].get(k) for k in ("agents", "payoff", "stderr")},
        "alpha_rank": {k: summary["alpha_rank"].get(k) for k in ("agents", "pi", "alpha")},
        "nash": {k: summary["nash"].get(k) for k in ("agents", "strategy")},
        "cfr": lines,
    }


#: Per folder kind: its report file, the check, what it is, and the command that writes it.
_REPORTS: dict[str, tuple[str, Callable[[Any], dict[str, Any]], str, str]] = {
    "arena": ("arena.json", _arena_report, "an arena report", "werewolf arena"),
    "tournament": (
        "tournament.json",
        _tournament_report,
        "a tournament report",
        "werewolf tournament",
    ),
    "series": ("summary.json", _series_summary, "a series summary", "werewolf play --games N"),
}


def _read_summary(folder: Path, kind: str) -> dict[str, Any]:
    """The folder's report (``arena.json``, ``tournament.json`` or ``summary.json``), checked.

    Raises:
      runs.atomic.ResultsError: one line naming the file, what is wrong and the fix.
    """
    name, check, what, command = _REPORTS[kind]
    return read_json_as(folder / name, check, what=what, rerun=f"gt-llm {command} --out {folder}")


def _row(records: list[dict[str, Any]], link: str, log: str) -> dict[str, Any]:
    header = records[0]
    result = next((r for r in records if r.get("type") == "result"), None)
    arena = next((r for r in records if r.get("type") == "arena"), None)
    row: dict[str, Any] = {"log": log, "link": link, "seed": header.get("seed")}
    if result is None:
        row["winner"] = None  # unfinished game
    else:
        stats = result.get("parse_stats") or {}
        row.update(
            winner=result.get("winner"),
            rounds=result.get("rounds"),
            steps=result.get("steps"),
            calls=result.get("model_calls"),
            fallbacks=stats.get("total_fallbacks"),
            defaulted=result.get("defaulted"),
        )
    row.update(log_counts(records))
    if arena is not None:
        row["wolf_model"] = arena.get("wolf_model")
        row["village_model"] = arena.get("leader_model")
        w = row.get("winner")
        row["winning_model"] = (
            arena.get("wolf_model")
            if w == "werewolves"
            else arena.get("leader_model")
            if w == "villagers"
            else None
        )
    return row


def _rates(kind: str, summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Win-rate rows ``{what, rate, lo, hi, wins, games}`` of a series or an arena."""
    rows = []
    if kind == "series":
        total = summary.get("games")
        for side, r in (summary.get("win_rates") or {}).items():
            lo, hi = (r.get("ci95") or [None, None])[:2]
            rows.append(
                {
                    "what": side,
                    "rate": r.get("rate"),
                    "lo": lo,
                    "hi": hi,
                    "wins": r.get("count"),
                    "games": total,
                }
            )
        return rows
    for pair in summary.get("pairs") or []:
        name = " vs ".join(pair.get("pair") or [])
        for model, m in (pair.get("models") or {}).items():
            for k, what in (("TWR", "total"), ("WWR", "as werewolves"), ("LWR", "as village")):
                r = m.get(k)
                if not r:
                    continue
                lo, hi = (r.get("ci95") or [None, None])[:2]
                rows.append(
                    {
                        "what": f"{name}: {model} {what} ({k})",
                        "rate": r.get("rate"),
                        "lo": lo,
                        "hi": hi,
                        "wins": r.get("wins"),
                        "games": r.get("games"),
                    }
                )
    return rows


def _quality(kind: str, summary: Mapping[str, Any]) -> list[str]:
    """The answer-quality lines of a series, or of an arena's pairs and all its games."""
    lines: list[str] = []
    arena = kind in ("arena", "tournament")
    pairs = (summary.get("pairs") or []) if arena else []
    for pair in pairs:
        if isinstance(pair, Mapping) and isinstance(pair.get("quality"), Mapping):
            lines.append(" vs ".join(pair.get("pair") or []) + ":")
            lines.extend(quality_lines(pair["quality"]))
    if isinstance(summary.get("quality"), Mapping) and (not arena or len(pairs) != 1):
        if arena:
            lines.append("all pairs:")
        lines.extend(quality_lines(summary["quality"], indent="  " if arena else ""))
    return lines


def write_folder_pages(
    folder: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    games: bool = True,
    on_page: Callable[[Path], None] | None = None,
) -> Path:
    """Writes a series or arena folder's index page and (``games``) every game's page.

    Args:
      folder: The results folder.
      out: The index page (default ``folder/view/index.html``); game pages go
        beside it, at the logs' paths relative to ``folder/logs``.
      games: Also write each game's page (else the rows link to nothing).
      on_page: Called with each game page's path after it is written (progress).

    Returns:
      The index page's path.

    Raises:
      ValueError: not such a folder, or it holds no game log; its ``summary.json``
        or ``arena.json`` is damaged (:class:`runs.atomic.ResultsError`, naming the
        file). A damaged game log is left out with a warning and named on the index.
    """
    folder = Path(folder)
    kind = folder_kind(folder)
    if kind == "solve":
        raise ValueError("write_folder_pages: a day-study folder; use write_solve_page")
    summary = _read_summary(folder, kind)
    out = Path(out) if out is not None else folder / "view" / "index.html"
    logs = sorted((folder / "logs").rglob("*.jsonl"))
    if not logs:
        raise ValueError(f"werewolf view: {folder}/logs holds no game log (*.jsonl)")
    rows = []
    skipped = []
    for log in logs:
        rel = log.relative_to(folder / "logs")
        page = out.parent / rel.with_suffix(".html")
        try:
            # A damaged log is left out of the index (and named in it), not fatal.
            records = read_records(log)
            html = log_page(log, records, back=href(out, page.parent)) if games else None
        except ValueError as e:
            logger.warning("%s", e)
            skipped.append({"log": rel.as_posix(), "reason": str(e)})
            continue
        if html is not None:
            write_page(page, html)
            if on_page is not None:
                on_page(page)
        rows.append(_row(records, href(page, out.parent) if games else "", rel.as_posix()))
    data = {
        "kind": "werewolf-index",
        "folder_kind": kind,
        "folder": folder.name,
        "model": summary.get("players") or summary.get("note") or summary.get("label"),
        "config": summary.get("config"),
        "rates": _rates(kind, summary),
        "summary": {
            k: summary.get(k)
            for k in (
                "games",
                "rounds",
                "steps",
                "fallbacks",
                "defaulted_actions",
                "models",
                "games_per_pair",
                "preset",
            )
            if k in summary
        },
        "rows": rows,
        "skipped": skipped,
        # Answer quality beside the parse counts (issue 27), as the run printed it.
        "quality": _quality(kind, summary),
    }
    if kind == "tournament":
        data["tournament"] = _tournament(summary)
    return write_page(
        out,
        render_page(
            title=f"Werewolf {kind}: {folder.name}",
            data=data,
            scripts=[asset(_PKG, "index.js")],
            styles=[asset(_PKG, "view.css")],
        ),
    )
