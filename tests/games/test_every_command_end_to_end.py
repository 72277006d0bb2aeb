"""Every command of every registered game runs end to end; its lines carry the answer quality.

Every registered game's commands run once (``GameSpec.commands``: a new game is
covered without an edit here; ``test_commands.py`` checks that every command
has a run). Each must exit 0 and leave a complete results folder; then,
generically, every ``quality`` block of a results file (``summary.json``,
``arena.json``) must be printed as the run's end lines, and every ``parse``
block's copied/parsed counts too; then, per command, the block is where its
readers look for it (the arena per pair and in total, a solve's summary, the
series) and the pages show it (the arena index, the fruit page).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import games  # noqa: F401  (registers every game)
from games.engine.quality import answer_quality, quality_lines
from games.engine.registry import registered_game_specs
from games.werewolf.play.quality import CONTRADICTIONS, listed_report, series_quality
from games.werewolf.play.quality import quality_lines as werewolf_quality_lines
from gt_llm.cli import main

SPECS = {s.name: s for s in registered_game_specs()}


def _run(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = main(argv)
    return code, buf.getvalue()


def _blocks(doc: Any, key: str) -> Iterator[Mapping[str, Any]]:
    """Every mapping held under ``key`` anywhere in ``doc``."""
    if isinstance(doc, Mapping):
        for k, v in doc.items():
            if k == key and isinstance(v, Mapping):
                yield v
            else:
                yield from _blocks(v, key)
    elif isinstance(doc, list):
        for v in doc:
            yield from _blocks(v, key)


def _page_data(path: Path) -> dict[str, Any]:
    page = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="page-data">(.*?)</script>', page, re.S).group(1))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[list[str], str, list[Path]]]:
    """Every command of every game, run once: ``{" ".join(argv): (argv, output, written)}``.

    ``written``: the results files (``summary.json``, ``arena.json``) the command wrote.
    """
    tmp = tmp_path_factory.mktemp("quality")
    out: dict[str, tuple[list[str], str]] = {}
    for spec in SPECS.values():
        for argv in spec.commands:
            args = [a.replace("{tmp}", str(tmp)) for a in argv]
            before = {p: p.stat().st_mtime_ns for p in tmp.rglob("*.json")}
            code, output = _run(args)
            assert code == 0, f"`gt-llm {' '.join(args)}` exited {code}:\n{output[-3000:]}"
            written = [
                p
                for p in _result_files(args)
                if before.get(p) != p.stat().st_mtime_ns  # this command wrote it
            ]
            out[" ".join(argv)] = (args, output, written)
    out["__tmp__"] = ([str(tmp)], "", [])
    return out


def test_every_command_runs_end_to_end_and_completes_its_folder(runs):
    # Each run exited 0 (the fixture asserts it); a folder it wrote is marked complete.
    folders = 0
    for name, (args, _output, _written) in runs.items():
        if name == "__tmp__" or "--out" not in args:
            continue
        manifest = Path(args[args.index("--out") + 1]) / "manifest.json"
        if manifest.is_file():
            assert json.loads(manifest.read_text())["complete"] is True, args
            folders += 1
    assert folders >= len([s for s in SPECS.values() if s.commands])


def _tmp(runs) -> Path:
    return Path(runs["__tmp__"][0][0])


def _result_files(argv: list[str]) -> list[Path]:
    if "--out" not in argv:
        return []
    folder = Path(argv[argv.index("--out") + 1])
    return [p for p in (folder / "summary.json", folder / "arena.json") if p.is_file()]


def _first_line(quality: Mapping[str, Any]) -> str:
    return quality_lines(quality, indent="")[0]


def test_every_results_file_prints_its_quality_and_parse_counts(runs):
    checked = 0
    for name, (_argv, output, written) in runs.items():
        for path in written:
            doc = json.loads(path.read_text())
            # Werewolf's lines add where the chosen players stood in the offered lists.
            printer = werewolf_quality_lines if name.startswith("werewolf") else quality_lines
            for quality in _blocks(doc, "quality"):
                for line in printer(quality, indent=""):
                    assert line in output, f"{name}: {path.name}'s line {line!r} not printed"
                checked += 1
            for parse in _blocks(doc, "parse"):
                line = _first_line(answer_quality(parse))
                assert line in output, f"{name}: {path.name}'s parse counts not printed: {line!r}"
                checked += 1
    assert checked >= 6  # fruit (2 variants), series, day solve (2 models), arena, ultimatum


def test_fruit_run_summary_and_page(runs):
    ((argv, output, _),) = [v for k, v in runs.items() if k.startswith("fruit-trading run")]
    summary = json.loads(_result_files(argv)[0].read_text())
    for variant, v in summary["variants"].items():
        q = v["quality"]
        assert q["answers"] == sum(v["parse"]["parsed"].values()) > 0, variant
        assert {"agreements_per_message", "not_exchange_verdicts", "degeneracy"} <= set(q)
        assert q["largest_share"]["opening_message"]["total"] >= 1
    page = _tmp(runs) / "fruit" / "view" / "tone_gratr_init0.html"
    data = _page_data(page)
    assert data["quality"] == quality_lines(summary["variants"]["tone+gratr"]["quality"], indent="")
    assert data["quality"][0].startswith("answer quality: ")


def test_ultimatum_solve_summary_and_lines(runs):
    ((argv, output, _),) = [v for k, v in runs.items() if k.startswith("ultimatum solve")]
    summary = json.loads(_result_files(argv)[0].read_text())
    assert summary["quality"] == answer_quality(summary["parse"])
    assert summary["quality"]["answers"] == sum(summary["parse"]["parsed"].values()) > 0
    assert f"  {_first_line(summary['quality'])}" in output.splitlines()


def test_werewolf_day_solve_prints_each_models_quality(runs):
    ((argv, output, _),) = [v for k, v in runs.items() if k.startswith("werewolf solve")]
    summary = json.loads(_result_files(argv)[0].read_text())
    lines = output.splitlines()
    assert set(summary["models"]) == {"none", "gratr"}
    for model, m in summary["models"].items():
        q = answer_quality(m["parse"])
        # The summary carries it beside the parse counts, with where the votes' choices stood.
        listed = {"votes": listed_report(m["listed_votes"])}
        assert m["quality"] == {**q, "listed": listed}, model
        assert q["answers"] > 0 and listed["votes"] is not None, model
        head = next(i for i, s in enumerate(lines) if s.startswith(f"  {model:10s} NashConv"))
        assert _first_line(q) in lines[head + 1], (model, lines[head : head + 2])


def test_werewolf_series_and_single_game(runs, tmp_path):
    ((argv, output, _),) = [v for k, v in runs.items() if "--games 2" in k and "play" in k]
    summary = json.loads(_result_files(argv)[0].read_text())
    assert summary["quality"]["answers"] == sum(summary["parse"]["parsed"].values()) > 0
    # The single game (no --games): its end lines carry its log's counts.
    ((argv, output, _),) = [
        v for k, v in runs.items() if k.startswith("werewolf play") and "--games" not in k
    ]
    log = Path(argv[argv.index("--log") + 1])
    result = next(r for r in map(json.loads, log.read_text().splitlines()) if r["type"] == "result")
    quality = series_quality(result["parse_stats"], [result["quality"]])
    assert quality["answers"] > 0
    lines = output.splitlines()
    for line in werewolf_quality_lines(quality):
        assert line in lines, (line, lines[-6:])
    calls = next(i for i, s in enumerate(lines) if s.endswith("fallback(s)"))
    assert lines[calls + 1] == werewolf_quality_lines(quality)[0]


def test_werewolf_arena_quality_per_pair_in_total_and_on_the_index(runs):
    ((argv, output, _),) = [v for k, v in runs.items() if k.startswith("werewolf arena")]
    report = json.loads(_result_files(argv)[0].read_text())
    (pair,) = report["pairs"]
    q = pair["quality"]
    assert q["answers"] > 0 and q["largest_share"]["votes"] is not None
    assert set(q["contradictions"]) == set(CONTRADICTIONS)
    assert q["listed"]["all"]["choices"] > 0  # where the chosen players stood in the lists
    # In total: one pair, so the same games and the same counts.
    assert report["quality"] == q
    # Pooled from the games' own logs: the report is their sum.
    folder = Path(argv[argv.index("--out") + 1])
    results = [
        next(r for r in map(json.loads, p.read_text().splitlines()) if r["type"] == "result")
        for p in sorted((folder / "logs").rglob("*.jsonl"))
    ]
    assert len(results) == 2
    parsed = sum(sum(r["parse_stats"]["parsed"].values()) for r in results)
    votes = sum(sum(r["quality"]["votes"].values()) for r in results)
    assert q["answers"] == parsed and q["largest_share"]["votes"]["total"] == votes
    for line in werewolf_quality_lines(q):
        assert line in output.splitlines()
    index = _page_data(folder / "view" / "index.html")
    assert index["quality"] == ["gratr vs none:", *werewolf_quality_lines(q)]


def test_an_arena_of_three_models_reports_every_pair_and_the_total(tmp_path):
    out = tmp_path / "arena3"
    code, output = _run(
        [
            *("werewolf", "arena", "--models", "gratr,none,dirichlet", "--games", "1"),
            *("--max-rounds", "1", "--debate-turns", "1", "--no-progress", "--out", str(out)),
        ]
    )
    assert code == 0, output[-3000:]
    report = json.loads((out / "arena.json").read_text())
    assert len(report["pairs"]) == 3
    answers = [p["quality"]["answers"] for p in report["pairs"]]
    assert all(a > 0 for a in answers)
    assert report["quality"]["answers"] == sum(answers)
    lines = output.splitlines()
    total = lines.index("all 3 pairs:")
    assert lines[total + 1] == "  " + _first_line(report["quality"])
