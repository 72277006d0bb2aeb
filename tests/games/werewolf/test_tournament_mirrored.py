"""The tournament's mirrored deals, its seed bootstrap and its honest meta-game (stand-in).

Each deal (seed) is played twice by every pair, the sides swapped, so identical
agents come out identical: equal ratings, equal α-Rank masses and a Nash
equilibrium flagged as not unique (the list order used to decide all three).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import pytest

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
from games.werewolf.cli import add_parser
from tests.cli_runner import run_cli

IDENTICAL = "a=none,b=none,c=none"
BOOT = ["--bootstrap", "100", "--metagame-bootstrap", "30", "--no-progress"]


def cli(argv: list[str]) -> tuple[int, list[str]]:
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers())
    args = p.parse_args(["werewolf", *argv])
    lines: list[str] = []
    return args.func(args, write=lines.append), lines


@pytest.fixture(scope="module")
def identical(tmp_path_factory):
    out = tmp_path_factory.mktemp("identical") / "t"
    rc, lines = cli(
        [
            "tournament",
            "--agents",
            IDENTICAL,
            "--games",
            "4",
            "--max-rounds",
            "1",
            *BOOT,
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    return json.loads((out / "tournament.json").read_text()), lines, out


@pytest.fixture(scope="module")
def different(tmp_path_factory):
    out = tmp_path_factory.mktemp("different") / "t"
    # Three rounds: fewer end in a draw, so the resamples differ (one round: all draws).
    argv = ["tournament", "--agents", "none,gratr,rules", "--games", "6", "--max-rounds", "3"]
    argv += [*BOOT, "--out", str(out)]
    rc, lines = cli(argv)
    assert rc == 0
    return json.loads((out / "tournament.json").read_text()), lines


def test_identical_agents_get_equal_ratings_masses_and_a_non_unique_nash(identical):
    doc, lines, _ = identical
    ratings = [r["rating"] for r in doc["ratings"]["agents"]]
    assert max(ratings) - min(ratings) < 1.0, ratings
    ar = doc["alpha_rank"]
    assert max(ar["pi"]) - min(ar["pi"]) < 1e-9, ar["pi"]
    ne = doc["nash"]
    assert ne["unique"] is False and ne["support"] == ["a", "b", "c"]
    assert ne["strategy"] == pytest.approx([1 / 3] * 3, abs=1e-6)
    assert ne["exploitability"] == pytest.approx(0.0, abs=1e-7)
    # Every pair is an even match: the first-listed agent gains nothing.
    for pair in doc["pairs"]:
        a, b = pair["pair"]
        assert pair["models"][a]["TWR"]["rate"] == pair["models"][b]["TWR"]["rate"]
    assert any(x.startswith("Nash of the meta-game: NOT unique") for x in lines), lines


def test_every_seed_is_played_twice_per_pair_with_the_sides_swapped(identical):
    doc, _, out = identical
    assert doc["mirrored"] is True and doc["seeds_per_pair"] == 2 and doc["seeds"] == [0, 1]
    schedule = doc["schedule"]
    assert len(schedule) == doc["games"] == 3 * 4
    by_pair: dict[tuple[str, str], list[dict]] = {}
    for g in schedule:
        by_pair.setdefault(tuple(g["pair"]), []).append(g)
    assert set(by_pair) == {("a", "b"), ("a", "c"), ("b", "c")}
    for (first, second), played in by_pair.items():
        assert Counter(g["seed"] for g in played) == {0: 2, 1: 2}
        for seed in (0, 1):
            sides = [g["werewolf_side"] for g in played if g["seed"] == seed]
            assert sorted(sides) == sorted([first, second]), (first, second, seed, sides)
        # Game 2k: the first-listed agent on the werewolf side; game 2k + 1: the other.
        for g in played:
            assert g["werewolf_side"] == (first if g["game"] % 2 == 0 else second)
            assert g["seed"] == g["game"] // 2
        # The logs agree: game i was dealt with seed i // 2 (the same deal twice).
        logs = sorted((out / "logs" / f"{first}_vs_{second}").glob("game_*.jsonl"))
        assert [json.loads(p.read_text().splitlines()[0])["seed"] for p in logs] == [0, 0, 1, 1]


def test_the_console_says_whether_alpha_rank_settled(identical):
    _, lines, _ = identical
    line = next(x for x in lines if x.startswith("alpha-Rank"))
    assert "the sweep settled" in line and "resamples" in line
    assert any("seed-bootstrap intervals" in x for x in lines)


def test_seed_bootstrap_intervals_are_present_and_contain_the_point_estimates(different):
    doc, _ = different
    assert doc["ratings"]["clusters"] == 3 and doc["ratings"]["bootstrap"] == 100
    for row in doc["ratings"]["agents"]:
        assert row["low"] <= row["rating"] <= row["high"], row
    assert any(row["high"] - row["low"] > 1.0 for row in doc["ratings"]["agents"])
    boot = doc["metagame_bootstrap"]
    assert boot["replicates"] == 30 and boot["clusters"] == 3 and boot["seed"] == 0
    assert any(r["alpha_rank_high"] - r["alpha_rank_low"] > 0.01 for r in boot["agents"])
    names = [a["name"] for a in doc["agents"]]
    assert [r["agent"] for r in boot["agents"]] == names
    for x, row in enumerate(boot["agents"]):
        assert row["alpha_rank_mass"] == pytest.approx(doc["alpha_rank"]["pi"][x])
        assert (
            row["alpha_rank_low"] - 1e-9 <= row["alpha_rank_mass"] <= row["alpha_rank_high"] + 1e-9
        )
        assert row["nash_weight"] == pytest.approx(doc["nash"]["strategy"][x])
        assert row["nash_low"] - 1e-9 <= row["nash_weight"] <= row["nash_high"] + 1e-9
        assert 0.0 <= row["alpha_rank_top"] <= 1.0 and 0.0 <= row["nash_support"] <= 1.0
    # Some agent is on top of α-Rank in every resample (ties count for each tied agent).
    assert sum(r["alpha_rank_top"] for r in boot["agents"]) >= 1.0


@pytest.mark.parametrize("games", ["3", "5"])
def test_an_odd_number_of_games_is_refused_before_anything(tmp_path: Path, games: str) -> None:
    out = tmp_path / "t"
    argv = ["werewolf", "tournament", "--agents", "none,rules", "--games", games]
    done = run_cli([*argv, "--out", str(out), "--no-progress"])
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--games: must be an even number" in lines[0], lines
    assert f"--games {int(games) + 1}" in lines[0]
    assert not out.exists()
