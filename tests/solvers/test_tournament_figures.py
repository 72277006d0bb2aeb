"""The tournament figures draw any meta-game: all draws, even splits, one-sided, one pair.

A response graph whose nodes all lie on one horizontal line (two agents, and no pair
with a strict winner, so no arrow) used to autoscale its height to ~10⁻⁷ and place the
labels millions of pixels away: FreeType refused them ("raster overflow") and the
tournament stopped before writing its last figure.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from solvers.metagame import alpha_rank, empirical_metagame
from solvers.outcomes import Outcome
from solvers.ratings import rate
from solvers.tournament_figures import fig_metagame, fig_ratings, fig_response_graph
from tests.cli_runner import run_cli

#: Planted meta-games: name -> (agents, outcomes).
PLANTED: dict[str, tuple[list[str], list[Outcome]]] = {
    "one pair, all draws": (["none", "rules"], [("none", "rules", 0.5)] * 2),
    "one pair, split 1-1": (["none", "rules"], [("none", "rules", 1.0), ("none", "rules", 0.0)]),
    "one pair, one game": (["none", "rules"], [("none", "rules", 0.5)]),
    "one pair, one-sided": (["none", "rules"], [("none", "rules", 1.0)] * 2),
    "three agents, all draws": (
        ["a", "b", "c"],
        [(x, y, 0.5) for x, y in (("a", "b"), ("a", "c"), ("b", "c"))],
    ),
    "four agents, all split evenly": (
        ["a", "b", "c", "d"],
        [
            (x, y, s)
            for x, y in (("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d"))
            for s in (1.0, 0.0)
        ],
    ),
    "three agents, one-sided": (
        ["a", "b", "c"],
        [("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 1.0)],
    ),
    "four agents, mixed": (
        ["a", "b", "c", "d"],
        [
            ("a", "b", 1.0),
            ("a", "c", 0.5),
            ("b", "c", 0.5),
            ("a", "d", 0.0),
            ("b", "d", 0.5),
            ("c", "d", 1.0),
        ],
    ),
}


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text)]


@pytest.mark.parametrize("name", list(PLANTED))
def test_every_figure_draws_the_planted_metagame(name: str) -> None:
    agents, outcomes = PLANTED[name]
    metagame = empirical_metagame(agents, outcomes)
    alpharank = alpha_rank(metagame)
    figures = {
        "ratings": fig_ratings(rate(agents, outcomes, bootstrap=50), title=name),
        "metagame": fig_metagame(metagame, title=name),
        "response graph": fig_response_graph(metagame, alpharank, title=name),
    }
    for kind, fig in figures.items():
        assert _png(fig)[:4] == b"\x89PNG", kind
        texts = " ".join(_texts(fig)).lower()
        assert "nan" not in texts and "inf" not in texts, (kind, texts)


@pytest.mark.parametrize("name", list(PLANTED))
def test_response_graph_keeps_its_square_axes_and_arrows_only_for_strict_winners(
    name: str,
) -> None:
    agents, outcomes = PLANTED[name]
    metagame = empirical_metagame(agents, outcomes)
    fig = fig_response_graph(metagame, alpha_rank(metagame), title=name)
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    # Never a sliver: the unit circle of the layout and its labels fit, whatever the edges.
    assert x1 - x0 == pytest.approx(y1 - y0) and y1 - y0 > 2.5
    payoff = metagame.payoff_matrix()
    n = len(agents)
    strict = sum(1 for i in range(n) for j in range(n) if i != j and payoff[j, i] > 0.5)
    even = sum(1 for i in range(n) for j in range(i + 1, n) if math.isclose(payoff[i, j], 0.5))
    # Arrows are FancyArrowPatches; even pairs are dotted lines.
    from matplotlib.patches import FancyArrowPatch

    assert len(ax.findobj(FancyArrowPatch)) == strict
    assert sum(1 for line in ax.get_lines() if line.get_linestyle() == ":") == even
    # Every node is labelled with a finite stationary mass.
    labels = [t for t in _texts(fig) if t.split("\n")[0] in agents and "π = " in t]
    assert sorted(t.split("\n")[0] for t in labels) == sorted(agents)


def test_tournament_without_a_strict_winner_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "t"
    result = run_cli(
        [
            "werewolf",
            "tournament",
            "--agents",
            "none,rules",
            "--games",
            "2",
            "--max-rounds",
            "1",
            "--bootstrap",
            "50",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    doc = json.loads((out / "tournament.json").read_text())
    payoff = doc["metagame"]["payoff"]
    assert payoff[0][1] == payoff[1][0] == 0.5  # the case that crashed: no strict winner
    for name in ("fig_ratings.png", "fig_metagame.png", "fig_response_graph.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG", name
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True
