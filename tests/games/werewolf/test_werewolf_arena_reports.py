"""Readers and figures of arena results (what the belief-models notebook shows)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
import gt_llm
from games.werewolf import rules
from games.werewolf.arena import graph, loaders
from games.werewolf.arena import matches as arena
from games.werewolf.arena.report import (
    fig_identification,
    fig_win_rates,
    identification_by_round,
    trust_graph_moments,
    win_rate_markdown,
)
from games.werewolf.arena.results import ArenaReport
from games.werewolf.arena.runner import run_arena
from games.werewolf.play import runner
from runs.atomic import ResultsError
from solvers.plots import plot_grouped_bars

LABEL = "scripted:rules-v2 (scripted stand-in, not an LLM)"
ROLES = ("werewolf", "werewolf", "werewolf", "villager", "seer", "witch", "guard", "villager")


def game(index, wolf, lead, winner, identification=()):
    return arena.ArenaGame(
        index=index,
        seed=index,
        wolf_model=wolf,
        leader_model=lead,
        seats=(wolf,) * 4 + (lead,) * 4,
        roles=ROLES,
        winner=winner,
        rounds=2,
        votes=(),
        identification=tuple(identification),
        statements=(),
    )


def report(pairs):
    return ArenaReport(
        backend="scripted:rules-v2",
        stand_in=True,
        note=LABEL,
        preset="gratr",
        config=rules.preset("gratr").as_dict(),
        models=tuple(dict.fromkeys(m for pair, _ in pairs for m in pair)),
        games_per_pair=2,
        seeds=(0, 1),
        settings={},
        pairs=tuple(arena.summarize_pair(games, a, b) for (a, b), games in pairs),
        llm_calls={"new": 0, "cached": 0},
        seconds=0.0,
    )


@pytest.fixture
def two_pairs():
    # gratr's judgments (model, observer team, round, true role, correct): village
    # observers in round 1: 1 of 2 werewolves and 2 of 2 seers right -> 3/4.
    ident_ab = [
        ("gratr", "village", 1, "werewolf", True),
        ("gratr", "village", 1, "werewolf", False),
        ("gratr", "village", 1, "seer", True),
        ("gratr", "village", 1, "seer", True),
        ("gratr", "werewolf", 2, "seer", False),
    ]
    # The second pair adds one wrong village judgment in round 1 -> 3/5 pooled.
    ident_ac = [("gratr", "village", 1, "villager", False)]
    return report(
        [
            (
                ("gratr", "none"),
                [
                    game(0, "gratr", "none", rules.WEREWOLVES, ident_ab),
                    game(1, "none", "gratr", rules.WEREWOLVES),
                ],
            ),
            (("gratr", "dirichlet"), [game(0, "gratr", "dirichlet", rules.VILLAGERS, ident_ac)]),
        ]
    )


def test_identification_pools_pairs_and_roles_by_judgments(two_pairs):
    ident = identification_by_round(two_pairs)
    assert set(ident) == {"gratr, village observers", "gratr, werewolf observers"}
    assert ident["gratr, village observers"] == [(1, pytest.approx(3 / 5), 5)]
    assert ident["gratr, werewolf observers"] == [(2, 0.0, 1)]


def test_win_rate_table_names_the_model_and_the_sides_without_games(two_pairs):
    md = win_rate_markdown(two_pairs)
    assert LABEL in md.splitlines()[0]
    rows = [line for line in md.splitlines() if line.startswith("| gratr vs")]
    assert len(rows) == 4  # two models per pair
    # gratr vs none: gratr won game 0 as werewolves, none won game 1 as werewolves.
    lo, hi = runner.wilson_interval(1, 2)
    assert f"| gratr vs none | gratr | 2 | 0.50 [{lo:.2f}, {hi:.2f}] |" in md
    # gratr vs dirichlet (one game): dirichlet never held the werewolf side.
    dirichlet = [r for r in rows if "| dirichlet |" in r][0]
    assert dirichlet.split("|")[5].strip() == "n/a"


def test_win_rate_figure_bars_and_intervals(two_pairs):
    fig = fig_win_rates(two_pairs)
    assert LABEL in fig._suptitle.get_text()
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert len(axes) == 2
    ax = axes[0]
    assert ax.get_title() == "gratr vs none (2 games)"
    heights = [p.get_height() for p in ax.patches]
    # gratr: TWR 50, WWR 100 (1/1), LWR 0 (0/1); none: TWR 50, WWR 100, LWR 0.
    assert heights == pytest.approx([50, 100, 0, 50, 100, 0])
    assert sum(isinstance(c, ErrorbarContainer) for c in ax.containers) == 2
    # A side with no game has no bar (NaN), not a bar at 0.
    heights = [p.get_height() for p in axes[1].patches]
    assert np.isnan(heights[4])  # dirichlet's WWR


def test_identification_figure_one_line_per_model_and_team(two_pairs):
    fig = fig_identification(two_pairs)
    ax = fig.axes[0]
    assert LABEL in fig._suptitle.get_text()
    assert [line.get_label() for line in ax.get_lines()] == [
        "gratr, village observers",
        "gratr, werewolf observers",
    ]
    assert ax.get_lines()[0].get_ydata()[0] == pytest.approx(60.0)
    empty = report([(("none", "plain"), [game(0, "none", "plain", rules.DRAW)])])
    ax = fig_identification(empty).axes[0]
    assert not ax.get_lines() and "no model inferred identities" in ax.get_title()


def test_grouped_bars_intervals_are_distances_from_the_bar(two_pairs):
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    plot_grouped_bars(
        ax, ["x", "y"], {"s": [0.5, 0.2]}, intervals={"s": ([0.25, 0.3], [0.75, 0.4])}
    )
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = bars.lines[2][0].get_segments()
    # Lower end 0.25 and upper 0.75 around 0.5; a lower end above the bar is clipped to it.
    assert segments[0][:, 1] == pytest.approx([0.25, 0.75])
    assert segments[1][:, 1] == pytest.approx([0.2, 0.4])


def test_arena_folder_readers(tmp_path, two_pairs):
    with pytest.raises(ResultsError, match="arena.json is missing"):
        loaders.load_arena(tmp_path)
    (tmp_path / "arena.json").write_text(json.dumps({"note": LABEL}))
    with pytest.raises(ResultsError, match="not an arena report.*re-run gt-llm werewolf arena"):
        loaders.load_arena(tmp_path)
    (tmp_path / "arena.json").write_text(json.dumps(two_pairs.to_json()))
    assert loaders.load_arena(tmp_path) == two_pairs
    for rounds, pair in enumerate(("gratr_vs_none", "dirichlet_vs_none", "gratr_vs_dirichlet")):
        (tmp_path / "logs" / pair).mkdir(parents=True)
        record = {"type": "arena", "rounds": rounds + 2}
        (tmp_path / "logs" / pair / "game_0000.jsonl").write_text(json.dumps(record) + "\n")
    assert [p.parent.name for p in loaders.game_logs(tmp_path, model="gratr")] == [
        "gratr_vs_dirichlet",
        "gratr_vs_none",
    ]
    assert len(loaders.game_logs(tmp_path)) == 3
    longest = loaders.game_logs(tmp_path, longest_first=True)
    assert [p.parent.name for p in longest] == [
        "gratr_vs_dirichlet",
        "dirichlet_vs_none",
        "gratr_vs_none",
    ]
    args = loaders.parse_arena_args(["--models", "gratr,none", "--games", "3", "--out", "x"])
    assert (args.models, args.games, args.out, args.func) == (
        "gratr,none",
        3,
        "x",
        run_arena,
    )


def test_trust_graph_moments_from_a_logged_game(tmp_path):
    chat = gt_llm.load_model("scripted")
    log = tmp_path / "game.jsonl"
    g, _ = arena.play_arena_game(
        rules.preset("gratr", max_rounds=3),
        chat,
        wolf_model="none",
        leader_model="gratr",
        seed=5,
        log=log,
    )
    paths = trust_graph_moments(log, tmp_path / "graphs")
    assert len(paths) == 2 and all(p.stat().st_size > 1000 for p in paths)
    steps = [int(p.stem.split("step")[1]) for p in paths]
    seat = int(paths[0].stem.split("seat")[1].split("_")[0])
    assert g.seats[seat] == "gratr" and g.roles[seat] != "werewolf"
    assert steps[0] < steps[1]
    recs = runner.read_log(log)
    early, late = (graph.rebuild_trust_graph(recs, seat, s).graph for s in steps)
    assert early.number_of_edges() <= late.number_of_edges() and late.number_of_edges() > 0
    # A log without a GRATR seat is refused in one line.
    other = tmp_path / "other.jsonl"
    arena.play_arena_game(
        rules.preset("gratr", max_rounds=1),
        chat,
        wolf_model="none",
        leader_model="dirichlet",
        seed=5,
        log=other,
    )
    with pytest.raises(ValueError, match="trust_graph_moments: .* has no GRATR seat"):
        trust_graph_moments(other, tmp_path / "graphs")
