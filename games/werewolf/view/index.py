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
from games.werewolf.play.quality import quality_lines
from games.werewolf.view.page import log_page
from games.werewolf.view.timeline import log_counts, read_records
from runs.atomic import TMP_PREFIX, read_json_as
from runs.folders import folder_inside
from runs.readers import (
    INT,
    NUMBER,
    OBJECT,
    TEXT,
    Shape,
    check_fields,
    list_of,
    map_of,
    optional,
)

logger = logging.getLogger(__name__)

__all__ = ["folder_kind", "not_a_log", "write_folder_pages"]

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


#: Files of a results folder that are not game logs: what each is, and the command that
#: writes it (``None``: several do).
_RESULT_FILES: dict[str, tuple[str, str | None]] = {
    "tournament.json": ("a tournament report", "gt-llm werewolf tournament"),
    "arena.json": ("an arena report", "gt-llm werewolf arena"),
    "decisions.json": ("a day study's decision points", "gt-llm werewolf solve"),
    "summary.json": ("a results folder's summary", None),
    "manifest.json": ("a results folder's manifest", None),
}
#: Endings of the other files a results folder holds (tables, figures, pages, the cache);
#: not ``.json``: a game log may be named so (``werewolf play --log game.json``).
_RESULT_SUFFIXES = (".csv", ".png", ".html", ".sqlite")


def not_a_log(path: str | os.PathLike[str], command: str) -> ValueError | None:
    """The refusal to give when a file that is not a game log was read as one, else ``None``.

    Called after a log reader refused ``path``: a report such as
    ``tournament.json`` is valid as what it is, so the message says what it
    is, which command wrote it, and where the game logs and the viewer are,
    instead of calling it a damaged log.

    Args:
      path: The file given as a game log.
      command: The command, for the message (``"werewolf summary"``).

    Returns:
      A one-line ``ValueError``, or ``None`` when ``path`` is not a known
      results file (the reader's own message stands).
    """
    p = Path(path)
    known = _RESULT_FILES.get(p.name)
    if not p.is_file() or (known is None and not p.name.lower().endswith(_RESULT_SUFFIXES)):
        return None
    what, writer = known or (f"a {p.suffix.lstrip('.').upper()} file of a results folder", None)
    by = f" written by `{writer}`" if writer else ""
    logs = p.parent / "logs"
    example = next(iter(sorted(logs.rglob("*.jsonl"))), None) if logs.is_dir() else None
    give = f"give a game log such as {example}" if example else "give a game log (.jsonl)"
    try:
        folder_kind(p.parent)
        see = f", or see the folder with `gt-llm werewolf view {p.parent}`"
    except ValueError:
        see = ""
    return ValueError(f"{command}: {p} is {what}{by}, not a game log: {give}{see}")


#: A count of something (games, speeches): a whole number, not negative.
_COUNT = Shape(lambda v: INT.test(v) and v >= 0, "a whole number >= 0")
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


#: A CFR agent's line of ``tournament.json`` (``cfr_agents[i]``), as the index reads it.
_CFR_AGENT = {
    "agent": TEXT,
    "twin": optional(TEXT),
    # Day speeches by outcome (matched, no_group, ...): counts, summed for the line.
    "speeches": map_of(_COUNT),
    "against_twin": optional(OBJECT),
}
#: Its result against its twin; the interval is checked apart (numbers when the rate is one).
_AGAINST_TWIN = {"win_rate": optional(NUMBER), "games": optional(INT)}


def _check_cfr_agents(agents: list[Any]) -> None:
    """The CFR agents' lines the index prints (raises ``TypeError`` naming the field)."""
    for i, row in enumerate(agents):
        where = f"cfr_agents[{i}]"
        check_fields(row, _CFR_AGENT, required=("agent", "speeches"), where=where)
        twin = row.get("against_twin")
        if twin is None:
            continue
        check_fields(twin, _AGAINST_TWIN, where=f"{where}.against_twin")
        if twin.get("win_rate") is not None:
            # A rate has its Wilson interval: two numbers, printed beside it.
            check_fields(
                twin,
                {"ci95": list_of(NUMBER, length=2)},
                required=("ci95",),
                where=f"{where}.against_twin",
            )


def _check_metagame(doc: dict[str, Any]) -> None:
    """The meta-game, alpha-Rank and Nash: one entry per agent (raises ``TypeError``)."""
    check_fields(
        doc["metagame"],
        {"agents": list_of(TEXT), "payoff": list_of(list_of(NUMBER))},
        required=("agents", "payoff"),
        where="metagame",
    )
    n = len(doc["metagame"]["agents"])
    check_fields(
        doc["metagame"],
        {
            "payoff": list_of(list_of(NUMBER, length=n), length=n),
            "stderr": optional(list_of(list_of(optional(NUMBER), length=n), length=n)),
        },
        where="metagame",
    )
    check_fields(
        doc["alpha_rank"],
        {"agents": list_of(TEXT, length=n), "pi": list_of(NUMBER, length=n), "alpha": NUMBER},
        required=("agents", "pi", "alpha"),
        where="alpha_rank",
    )
    check_fields(
        doc["nash"], {"agents": list_of(TEXT)}, required=("agents", "strategy"), where="nash"
    )
    m = len(doc["nash"]["agents"])
    check_fields(doc["nash"], {"strategy": list_of(NUMBER, length=m)}, where="nash")


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
        required=("ratings", "metagame", "alpha_rank", "nash"),
    )
    check_fields(
        doc["ratings"],
        # The pairs the intervals do not separate: pairs of agent names.
        {"agents": list_of(OBJECT), "inseparable": optional(list_of(list_of(TEXT, length=2)))},
        required=("agents",),
        where="ratings",
    )
    for i, row in enumerate(doc["ratings"]["agents"]):
        check_fields(
            row,
            {k: NUMBER for k in ("rating", "low", "high", "elo")}
            | {k: INT for k in ("rank_low", "rank_high", "games")}
            | {"agent": TEXT},
            where=f"ratings.agents[{i}]",
        )
    _check_metagame(doc)
    _check_cfr_agents(doc.get("cfr_agents") or [])
    return doc


def _tournament(summary: Mapping[str, Any]) -> dict[str, Any]:
    """What the index shows of a tournament beyond the pairs: ratings, meta-game, CFR agents."""
    lines = []
    # Shapes checked by _tournament_report: speeches are counts, a rate has two bounds.
    for c in summary.get("cfr_agents") or []:
        sp = c["speeches"]
        line = (
            f"{c['agent']}: {sp.get('matched', 0)} of {sum(sp.values())} day speeches "
            "followed its CFR policy"
        )
        t = c.get("against_twin")
        if t is not None and t.get("win_rate") is not None:
            lo, hi = t["ci95"]
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
    given = out is not None
    out = Path(out) if out is not None else folder / "view" / "index.html"
    # A write killed mid-way leaves .tmp-game_0000.<...>.jsonl beside the logs: never a game.
    logs = [
        p for p in sorted((folder / "logs").rglob("*.jsonl")) if not p.name.startswith(TMP_PREFIX)
    ]
    if not logs:
        raise ValueError(f"werewolf view: {folder}/logs holds no game log (*.jsonl)")
    if given:
        out.parent.mkdir(parents=True, exist_ok=True)  # the user's choice (may be a link)
    else:
        folder_inside(folder, "view")  # never written through a link (ResultsError, one line)
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
            folder_inside(out.parent, rel.parent.as_posix())  # e.g. view/a_vs_b, never a link
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
        # Answer quality beside the parse counts, as the run printed it.
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
