"""Executes every notebook end to end (small settings, scripted model, offline)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
STAND_IN = "stand-in, not an LLM"


def execute(name: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Runs ``notebooks/<name>`` with ``env`` set; returns the executed notebook."""
    for k, v in {**env, "MPLBACKEND": "Agg"}.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    return nb


def outputs(nb: Any) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def images_of(cell: Any) -> int:
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def text_of(cell: Any) -> str:
    """Everything a cell printed or displayed as text or Markdown."""
    parts = []
    for o in cell.get("outputs", []):
        parts.append(o.get("text", ""))
        parts.append(o.get("data", {}).get("text/markdown", ""))
    return "".join(parts)


def test_every_notebook_has_a_test() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == [
        "belief_models.ipynb",
        "fruit_trading_belief_revision.ipynb",
        "watch_a_game.ipynb",
    ]


@pytest.mark.slow  # about 40 s: run by CI's slow step
def test_fruit_trading_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    nb = execute(
        "fruit_trading_belief_revision.ipynb",
        {
            "GT_LLM_RESULTS": str(results),
            "GT_LLM_NB_INITS": "2",
            "GT_LLM_NB_ITERATIONS": "40",
            "GT_LLM_NB_MAX_MESSAGES": "3",
        },
        monkeypatch,
    )
    # With no results present the notebook ran the small experiment itself.
    summary = json.loads((results / "summary.json").read_text())
    assert summary["backend"] == "scripted" and summary["is_llm"] is False
    assert summary["settings"]["inits"] == 2
    outs = outputs(nb)
    assert not [o for o in outs if o.get("output_type") == "error"]
    images = [o for o in outs if "image/png" in o.get("data", {})]
    assert len(images) >= 3, "Figs. 6, 7 and 8 should be displayed"
    text = "".join(o.get("data", {}).get("text/markdown", "") for o in outs)
    assert "Table 1." in text and "Table 2." in text and "Table 3." in text
    assert "scripted stand-in, not an LLM" in text


@pytest.mark.slow  # about 20 s: run by CI's slow step
def test_belief_models_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fruit, arena_dir, day_dir, tour = (
        tmp_path / d for d in ("fruit", "arena", "day", "tournament")
    )
    nb = execute(
        "belief_models.ipynb",
        {
            "GT_LLM_FRUIT_RESULTS": str(fruit),
            "GT_LLM_ARENA_RESULTS": str(arena_dir),
            "GT_LLM_DAY_RESULTS": str(day_dir),
            "GT_LLM_TOURNAMENT_RESULTS": str(tour),
            "GT_LLM_NB_TOURNAMENT_GAMES": "2",
            "GT_LLM_NB_INITS": "2",
            "GT_LLM_NB_ITERATIONS": "30",
            "GT_LLM_NB_MAX_MESSAGES": "3",
            "GT_LLM_NB_ARENA_GAMES": "1",
            "GT_LLM_NB_DAYS": "2",
            "GT_LLM_NB_SPEAKERS": "1",
            "GT_LLM_NB_DAY_ITERATIONS": "20",
        },
        monkeypatch,
    )
    assert not [o for o in outputs(nb) if o.get("output_type") == "error"]
    code = [c for c in nb.cells if c.cell_type == "code"]

    def cell(snippet: str) -> Any:
        (found,) = [c for c in code if snippet in c.source]
        return found

    # With no results present the notebook ran the three small experiments at these sizes.
    f = json.loads((fruit / "summary.json").read_text())
    assert f["is_llm"] is False and f["settings"]["inits"] == 2
    assert list(f["variants"]) == ["tone", "tone+dirichlet", "tone+gratr"]
    a = json.loads((arena_dir / "arena.json").read_text())
    assert a["stand_in"] is True and a["games_per_pair"] == 1
    assert [s["pair"] for s in a["pairs"]] == [
        ["gratr", "dirichlet"],
        ["gratr", "none"],
        ["gratr", "bayes"],
        ["dirichlet", "none"],
        ["dirichlet", "bayes"],
        ["none", "bayes"],
    ]
    d = json.loads((day_dir / "summary.json").read_text())
    assert (d["settings"]["days"], d["settings"]["speakers"]) == (2, 1)
    assert list(d["models"]) == ["none", "dirichlet", "gratr"]

    # Every figure is displayed: Figs. 6-8, the arena's two, two trust graphs, the day's three.
    for snippet in ("fig6_agreements", "fig7_metrics", "fig8_ratio", "fig_win_rates("):
        assert images_of(cell(snippet)) == 1, snippet
    assert images_of(cell("fig_identification(")) == 1
    assert images_of(cell("trust_graph_moments(")) == 2
    for snippet in ("fig_curves(", "fig_side_gain(", "fig_strategies("):
        assert images_of(cell(snippet)) == 1, snippet
    graphs = sorted((arena_dir / "graphs").glob("trust_graph_seat*_step*.png"))
    assert len(graphs) == 2

    # Every table and printed result names the stand-in that produced it.
    assert STAND_IN in text_of(cell("ExperimentSettings(out="))
    tables = text_of(cell("markdown_tables"))
    assert "Table 1." in tables and STAND_IN in tables
    wins = text_of(cell("win_rate_markdown("))
    assert STAND_IN in wins and "| gratr vs none | gratr | 1 |" in wins
    assert "gratr, village observers" in text_of(cell("identification_by_round("))
    scores = text_of(cell("identification_scores_markdown("))
    assert (
        STAND_IN in scores and "Brier − bayes" in scores and "| gratr vs none | gratr |" in scores
    )
    answers = text_of(cell("report_lines("))
    q1 = [line for line in answers.splitlines() if line.startswith("Q1")]
    q2 = [line for line in answers.splitlines() if line.startswith("Q2")]
    assert len(q1) == 1 and STAND_IN in q1[0]
    assert len(q2) == 1 and STAND_IN in q2[0]
    assert d["questions"]["werewolf_gain_none_vs_gratr"]["answer"] in q2[0]
    for m in ("none", "dirichlet", "gratr"):
        assert any(
            line.strip().startswith(m) and "NashConv" in line for line in answers.splitlines()
        )

    # The figures the notebook displayed are titled with the model (redrawn from the folders).
    from games.fruit_trading import figures
    from games.werewolf.arena import loaders
    from games.werewolf.arena.report import fig_identification, fig_win_rates
    from games.werewolf.day.figures import fig_curves, fig_side_gain, fig_strategies

    report = loaders.load_arena(arena_dir)
    for fig in (
        figures.fig6_agreements(fruit),
        figures.fig7_metrics(fruit),
        figures.fig8_ratio(fruit),
        fig_win_rates(report),
        fig_identification(report),
        fig_curves(day_dir),
        fig_side_gain(day_dir),
        fig_strategies(day_dir),
    ):
        assert STAND_IN in fig._suptitle.get_text()

    # Section 5: the tournament ran on the day study's CFR policy, its figures displayed.
    t = json.loads((tour / "tournament.json").read_text())
    assert [a["name"] for a in t["agents"]] == ["gratr", "none", "dirichlet", "cfr", "rules"]
    assert t["games_per_pair"] == 2 and t["is_llm"] is False
    assert t["cfr_agents"][0]["policy_folder"] == str(day_dir)
    shown = text_of(cell("run_tournament("))
    assert STAND_IN in shown and "| cfr |" in shown and "cfr vs gratr" in shown
    assert images_of(cell("fig_response_graph.png")) == 3


def test_belief_models_notebook_refuses_an_incomplete_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbclient.exceptions import CellExecutionError

    from runs.results import prepare_results_dir

    # A run that wrote its manifest (complete: false) and stopped.
    prepare_results_dir(tmp_path / "day", {"days": 2}, backend="scripted")
    env = {f"GT_LLM_{k}_RESULTS": str(tmp_path / k.lower()) for k in ("FRUIT", "ARENA", "DAY")}
    with pytest.raises(CellExecutionError, match="is incomplete.*re-run gt-llm werewolf solve"):
        execute("belief_models.ipynb", env, monkeypatch)
    assert not (tmp_path / "fruit").exists(), "refused before running anything"


def test_watch_a_game_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import html

    nb = execute("watch_a_game.ipynb", {"GT_LLM_WATCH_DIR": str(tmp_path)}, monkeypatch)
    assert not [o for o in outputs(nb) if o.get("output_type") == "error"]
    assert (tmp_path / "game.jsonl").exists() and (tmp_path / "arena" / "arena.json").exists()
    frames = [o["data"]["text/html"] for o in outputs(nb) if "text/html" in o.get("data", {})]
    assert len(frames) == 2, "the scripted game and the arena game are displayed"
    data = []
    for frame in frames:
        assert '<iframe srcdoc="' in frame and 'sandbox="allow-scripts"' in frame
        page = html.unescape(frame.split('srcdoc="', 1)[1].split('" sandbox', 1)[0])
        assert page.startswith("<!DOCTYPE html>") and STAND_IN in page
        block = page.split('id="page-data">', 1)[1].split("</script>", 1)[0]
        data.append(json.loads(block))
    assert data[0]["seed"] == 7 and not data[0]["beliefs"]["models"]
    # the arena game's page holds each seat's opponent model at each step
    assert set(data[1]["beliefs"]["models"].values()) == {"gratr", "dirichlet"}
    assert data[1]["beliefs"]["changes"]


def committed_text(nb: Any, paths: dict[str, str] | None = None) -> list[list[str]]:
    """Per code cell, the text it printed or displayed, and a marker per image.

    ``paths`` maps a folder the notebook ran on to the default it names in the committed
    outputs; durations ("25.8 s") read as "<time>".
    """
    import re

    cells = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        parts = []
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                continue  # warnings of the machine it ran on (tqdm, matplotlib), not results
            parts.append(o.get("text", ""))
            data = o.get("data", {})
            parts.append(data.get("text/markdown", ""))
            parts.append("<image/png>" if "image/png" in data else "")
        text = [p for p in parts if p]
        for given, default in (paths or {}).items():
            text = [t.replace(given, default) for t in text]
        cells.append([re.sub(r"\b\d+(\.\d+)? s\b", "<time>", t) for t in text])
    return cells


@pytest.mark.slow
def test_the_fruit_notebook_stores_the_outputs_of_the_quickstart_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The committed outputs are those of the README's main job (the scripted stand-in at
    # the paper's size); re-running the notebook on that job's folder gives the same text.
    given = os.environ.get("GT_LLM_DEFAULT_RUN")
    if given:
        folder = Path(given)
    else:
        from games.fruit_trading.experiment import ExperimentSettings, run_experiment

        folder = tmp_path / "fruit"
        run_experiment(ExperimentSettings(out=str(folder), progress=False))
    committed = nbformat.read(NOTEBOOKS / "fruit_trading_belief_revision.ipynb", as_version=4)
    fresh = execute(
        "fruit_trading_belief_revision.ipynb", {"GT_LLM_RESULTS": str(folder)}, monkeypatch
    )
    want, got = committed_text(committed), committed_text(fresh)
    assert any(want), "the notebook stores no outputs"
    assert got == want, "re-run the notebook on the main job's folder and commit its outputs"


@pytest.mark.slow
def test_the_belief_models_notebook_stores_the_outputs_of_its_own_small_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The committed outputs are those of the notebook's own small stand-in runs (about two
    # minutes on 2 cores); a re-run in empty folders prints the same text.
    folders = {
        "FRUIT": ("fruit", "../results/fruit"),
        "ARENA": ("arena", "../results/werewolf_arena"),
        "DAY": ("day", "../results/werewolf_day"),
        "TOURNAMENT": ("tournament", "../results/werewolf_tournament"),
    }
    env = {f"GT_LLM_{k}_RESULTS": str(tmp_path / d) for k, (d, _) in folders.items()}
    paths = {str(tmp_path / d): default for d, default in folders.values()}
    committed = nbformat.read(NOTEBOOKS / "belief_models.ipynb", as_version=4)
    fresh = execute("belief_models.ipynb", env, monkeypatch)
    want, got = committed_text(committed), committed_text(fresh, paths)
    assert any(want), "the notebook stores no outputs"
    assert got == want, "re-run the notebook at its default sizes and commit its outputs"
