"""``werewolf view`` on a tournament folder whose ``tournament.json`` has a damaged field.

The index prints the CFR agents' lines (speeches followed, the result against
their twin with its interval) and draws the pairs the ratings cannot separate.
A field of the wrong shape there is refused in one line naming
``tournament.json`` and the field, never a traceback and never a blank page
with exit status 0. The folder is written by hand (what a tournament writes,
trimmed to what the index reads), so no tournament is played.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import run_cli

AGENTS = ["gratr", "x", "none"]

#: A tournament report as ``werewolf tournament`` writes it, with the fields the index reads.
REPORT: dict[str, Any] = {
    "label": "scripted:rules-v2 (scripted stand-in, not an LLM)",
    "games": 6,
    "games_per_pair": 2,
    "preset": "gratr",
    "pairs": [],
    "ratings": {
        "agents": [
            {
                "agent": a,
                "rating": 1500.0 + 10 * i,
                "low": 1400.0,
                "high": 1600.0,
                "elo": 1500.0,
                "rank_low": 1,
                "rank_high": 3,
                "games": 4,
            }
            for i, a in enumerate(AGENTS)
        ],
        "inseparable": [["x", "none"]],
    },
    "metagame": {
        "agents": AGENTS,
        "payoff": [[0.5, 0.75, 0.5], [0.25, 0.5, 0.5], [0.5, 0.5, 0.5]],
        "stderr": [[None, 0.25, 0.0], [0.25, None, 0.0], [0.0, 0.0, None]],
    },
    "alpha_rank": {"agents": AGENTS, "pi": [0.5, 0.25, 0.25], "alpha": 10.0},
    "nash": {"agents": AGENTS, "strategy": [1.0, 0.0, 0.0]},
    "cfr_agents": [
        {
            "agent": "x",
            "policy_folder": "D",
            "speeches": {"matched": 5, "no_slot": 1},
            "matched_share": 5 / 6,
            "twin": "gratr",
            "against_twin": {
                "games": 2,
                "draws": 1,
                "win_rate": 0.25,
                "ci95": [0.0125, 0.7125],
            },
        }
    ],
}


def _twin(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["cfr_agents"][0]["against_twin"]


#: name -> (damage, the field the one-line refusal names)
DAMAGES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "ci95 nulls": (lambda d: _twin(d).update(ci95=[None, None]), "cfr_agents[0].against_twin.ci95"),
    "ci95 a number": (lambda d: _twin(d).update(ci95=5), "cfr_agents[0].against_twin.ci95"),
    "ci95 one bound": (lambda d: _twin(d).update(ci95=[0.1]), "cfr_agents[0].against_twin.ci95"),
    "speeches a list": (
        lambda d: d["cfr_agents"][0].update(speeches=[5, 1]),
        "cfr_agents[0].speeches",
    ),
    "speeches a word": (
        lambda d: d["cfr_agents"][0].update(speeches={"matched": "three"}),
        "cfr_agents[0].speeches",
    ),
    "inseparable a string": (
        lambda d: d["ratings"].update(inseparable="zz"),
        "ratings.inseparable",
    ),
    "payoff a row short": (
        lambda d: d["metagame"]["payoff"][1].pop(),
        "metagame.payoff",
    ),
}


def _folder(root: Path, doc: dict[str, Any]) -> Path:
    out = root / "T"
    (out / "logs" / "gratr_vs_x").mkdir(parents=True)
    # Not a valid log: left out of the index with a warning (the report is what is read).
    (out / "logs" / "gratr_vs_x" / "game_0000.jsonl").write_text("", encoding="utf-8")
    (out / "tournament.json").write_text(json.dumps(doc), encoding="utf-8")
    return out


def test_the_undamaged_report_gives_the_cfr_lines(tmp_path):
    out = _folder(tmp_path, REPORT)
    proc = run_cli(["werewolf", "view", str(out), "--no-games"])
    assert proc.returncode == 0, proc.stderr
    page = (out / "view" / "index.html").read_text(encoding="utf-8")
    assert "5 of 6 day speeches followed its CFR policy" in page
    assert "against gratr it won 0.250 [0.013, 0.713] of 2 games" in page


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_field_is_refused_in_one_line_naming_it(name, tmp_path):
    damage, field = DAMAGES[name]
    doc = copy.deepcopy(REPORT)
    damage(doc)
    out = _folder(tmp_path, doc)
    proc = run_cli(["werewolf", "view", str(out), "--no-games"])
    lines = proc.stderr.strip().splitlines()
    errors = [x for x in lines if x.startswith("gt-llm: error:")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "tournament.json" in errors[0] and f"'{field}'" in errors[0], errors[0]
    assert f"gt-llm werewolf tournament --out {out}" in errors[0]
    assert not (out / "view" / "index.html").exists()


def test_a_rate_of_none_needs_no_interval(tmp_path):
    doc = copy.deepcopy(REPORT)
    _twin(doc).update(win_rate=None, ci95=[None, None])  # no decided game against the twin
    out = _folder(tmp_path, doc)
    proc = run_cli(["werewolf", "view", str(out), "--no-games"])
    assert proc.returncode == 0, proc.stderr
    assert "5 of 6 day speeches" in (out / "view" / "index.html").read_text(encoding="utf-8")
