"""Executes every notebook end to end (small settings, scripted model, offline)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    monkeypatch.setenv("GT_LLM_RESULTS", str(results))
    monkeypatch.setenv("GT_LLM_NB_INITS", "2")
    monkeypatch.setenv("GT_LLM_NB_ITERATIONS", "40")
    monkeypatch.setenv("GT_LLM_NB_MAX_MESSAGES", "3")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()

    # With no results present the notebook ran the small experiment itself.
    summary = json.loads((results / "summary.json").read_text())
    assert summary["backend"] == "scripted" and summary["is_llm"] is False
    assert summary["settings"]["inits"] == 2
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3, "Figs. 6, 7 and 8 should be displayed"
    text = "".join(o.get("data", {}).get("text/markdown", "") for o in outputs)
    assert "Table 1." in text and "Table 2." in text and "Table 3." in text
    assert "scripted stand-in, not an LLM" in text
