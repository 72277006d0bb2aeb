"""The Werewolf arena: seats, sides, scores by hand, the CLI end to end, resume, graph."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
import gt_llm
from games.werewolf import rules
from games.werewolf.arena import graph
from games.werewolf.arena import matches as arena
from games.werewolf.arena.results import DeceptionRate, PairSummary
from games.werewolf.arena.runner import add_arena_parser
from games.werewolf.play import runner

GRATR = rules.preset("gratr")
ALL = "gratr,dirichlet,native-rag,rerank-rag,none"


def cli(argv):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    add_arena_parser(sub)
    graph.add_graph_parser(sub)
    args = p.parse_args(argv)
    lines: list[str] = []
    rc = args.func(args, write=lines.append)
    return rc, lines


# --------------------------------------------------------------------------- seats


def test_seat_models_four_each_three_special_one_villager():
    roles = ("guard", "werewolf", "seer", "villager", "werewolf", "werewolf", "villager", "witch")
    for s in range(20):
        seats = arena.seat_models(roles, "A", "B", np.random.default_rng(s))
        assert seats.count("A") == 4 and seats.count("B") == 4
        a_roles = sorted(r for r, m in zip(roles, seats, strict=True) if m == "A")
        b_roles = sorted(r for r, m in zip(roles, seats, strict=True) if m == "B")
        assert a_roles == ["villager", "werewolf", "werewolf", "werewolf"]
        assert b_roles == ["guard", "seer", "villager", "witch"]
    # The villager each side gets is drawn: both splits happen.
    splits = {arena.seat_models(roles, "A", "B", np.random.default_rng(s))[3] for s in range(20)}
    assert splits == {"A", "B"}


def test_seating_needs_two_halves():
    arena.check_seating(rules.preset("arena"))  # 2 wolves + 2 villagers / seer, doctor + 2
    with pytest.raises(ValueError, match="cannot be split into two halves"):
        arena.check_seating(rules.Config(rules.RoleSet(werewolf=1, villager=3, seer=1, doctor=0)))


def test_parse_models_and_pairs():
    assert arena.parse_models("gratr, none") == ("gratr", "none")
    with pytest.raises(ValueError, match="--models: unknown opponent model 'gratt'"):
        arena.parse_models("gratt,none")
    with pytest.raises(ValueError, match="at least two distinct"):
        arena.parse_models("gratr")
    pairs = arena.model_pairs(ALL.split(","))
    assert len(pairs) == 10 and pairs[0] == ("gratr", "dirichlet")
    assert len({frozenset(p) for p in pairs}) == 10


# --------------------------------------------------------------------------- scores


def fake_game(winner, votes, index=0, wolf="A", lead="B"):
    roles = ("werewolf", "werewolf", "werewolf", "villager", "seer", "witch", "guard", "villager")
    seats = (wolf, wolf, wolf, wolf, lead, lead, lead, lead)
    return arena.ArenaGame(
        index=index,
        seed=index,
        wolf_model=wolf,
        leader_model=lead,
        seats=seats,
        roles=roles,
        winner=winner,
        rounds=2,
        votes=tuple(votes),
        identification=(),
        statements=((1, 0, True), (1, 4, False)),
    )


def test_action_scores_by_hand():
    votes = [
        (1, 0, 4),  # werewolf votes the seer: correct, +0.5
        (1, 1, 2),  # werewolf votes a partner: incorrect, -0.5
        (1, 3, 0),  # villager votes a werewolf: +1.0
        (1, 4, 3),  # seer votes a villager: -1.5
        (1, 5, 1),  # witch votes a werewolf: +1.5
        (1, 6, 7),  # guard votes a villager: -1.5
        (2, 3, 1),  # villager again, a werewolf: +1.0
    ]
    s = arena.action_scores(fake_game(rules.VILLAGERS, votes))
    # Villagers won: +5 for every non-werewolf.
    assert s == [0.5, -0.5, 0.0, 5 + 2.0, 5 - 1.5, 5 + 1.5, 5 - 1.5, 5.0]
    s = arena.action_scores(fake_game(rules.WEREWOLVES, votes))
    assert s[:3] == [5.5, 4.5, 5.0] and s[3] == 2.0
    assert arena.action_scores(fake_game(rules.DRAW, []))[0] == 0.0


def test_summarize_pair_by_hand():
    games = [
        fake_game(rules.WEREWOLVES, [], 0, "A", "B"),  # A wins as werewolves
        fake_game(rules.WEREWOLVES, [], 1, "B", "A"),  # B wins as werewolves
        fake_game(rules.VILLAGERS, [], 2, "A", "B"),  # B wins as leaders
        fake_game(rules.DRAW, [], 3, "B", "A"),  # nobody
    ]
    s = arena.summarize_pair(games, "A", "B")
    a, b = s.models["A"], s.models["B"]
    assert s.draws == 1
    assert (a.twr.wins, a.twr.games) == (1, 4)
    assert (a.wwr.wins, a.wwr.games) == (1, 2)
    assert (a.lwr.wins, a.lwr.games) == (0, 2)
    assert (b.twr.wins, b.wwr.wins, b.lwr.wins) == (2, 1, 1)
    lo, hi = runner.wilson_interval(2, 4)
    assert b.twr.ci95 == (lo, hi) and lo < 0.5 < hi
    # A's seats: werewolves in games 0 and 2 (seats 0-2), the villager at seat 3.
    # Werewolf scores: 5 (g0 win), 0 (g2 loss) -> mean 2.5 over 6 seats-games.
    assert a.action_scores["werewolf"].mean == pytest.approx(2.5)
    assert a.action_scores["werewolf"].n == 6
    # Deception: A spoke once as a werewolf-side seat per game where it was wolf (seat 0).
    assert a.deception["werewolf"] == DeceptionRate(statements=2, deceptive=2, rate=1.0)
    assert a.identification is None
    # The JSON keeps the file's keys and reads back to the same value.
    j = s.to_json()
    assert j["models"]["A"]["TWR"] == {
        "wins": 1,
        "games": 4,
        "rate": 0.25,
        "ci95": list(a.twr.ci95),
    }
    assert PairSummary.from_json(json.loads(json.dumps(j))) == s


# --------------------------------------------------------------------------- games


@pytest.fixture(scope="module")
def chat():
    return gt_llm.load_model("scripted")


def test_one_game_is_deterministic_and_logs_beliefs(chat, tmp_path):
    cfg = rules.preset("gratr", max_rounds=2)
    g1, d1 = arena.play_arena_game(
        cfg, chat, wolf_model="gratr", leader_model="dirichlet", seed=3, log=tmp_path / "a.jsonl"
    )
    g2, _ = arena.play_arena_game(
        cfg, chat, wolf_model="gratr", leader_model="dirichlet", seed=3, log=tmp_path / "b.jsonl"
    )
    assert dataclasses_equal(g1, g2)
    assert sorted(g1.seats.count(m) for m in ("gratr", "dirichlet")) == [4, 4]
    wolves = [p for p, r in enumerate(g1.roles) if r == "werewolf"]
    assert all(g1.seats[p] == "gratr" for p in wolves)
    assert g1.identification and all(m in ("gratr", "dirichlet") for m, *_ in g1.identification)
    # A werewolf identifies its partners (certain facts) every time it is asked.
    partners = [
        ok
        for m, team, _, truth, ok in g1.identification
        if team == "werewolf" and truth == "werewolf"
    ]
    assert partners and all(partners)
    recs = runner.read_log(tmp_path / "a.jsonl")
    kinds = {r["type"] for r in recs}
    assert {"belief_init", "belief_evidence", "belief_consult", "llm_call", "arena"} <= kinds
    assert runner.replay(tmp_path / "a.jsonl").winner == g1.winner
    assert d1.total_statements == len(g1.statements)


def dataclasses_equal(a, b):
    import dataclasses

    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    da.pop("log_path"), db.pop("log_path")
    return da == db


@pytest.mark.slow  # about 12 s; CI runs it in its slow step
def test_arena_cli_every_model_and_resume_through_the_cache(tmp_path):
    out = tmp_path / "arena"
    argv = ["arena", "--models", ALL, "--games", "2", "--max-rounds", "2"]
    argv += ["--out", str(out), "--no-progress"]
    rc, lines = cli(argv)
    assert rc == 0
    report = json.loads((out / "arena.json").read_text())
    assert report["stand_in"] and "not an LLM" in report["note"]
    assert len(report["pairs"]) == 10
    assert report["llm_calls"]["new"] > 0
    for s in report["pairs"]:
        a, b = s["pair"]
        assert s["games"] == 2
        for m in (a, b):
            row = s["models"][m]
            # Sides alternate: one game on each side per model.
            assert row["WWR"]["games"] == 1 and row["LWR"]["games"] == 1
            assert row["TWR"]["wins"] == row["WWR"]["wins"] + row["LWR"]["wins"]
            # Only GRATR seats count Eq. 8's floor; the count is never more than the combinations.
            fl = row["eq8_floor"]
            assert (fl is not None) == (m == "gratr")
            if fl is not None:
                assert 0 <= fl["bound"] <= fl["combinations"] and fl["combinations"] > 0
        assert s["models"][a]["TWR"]["wins"] + s["models"][b]["TWR"]["wins"] + s["draws"] == 2
        assert "peer_detection" in s["deception_analyses"]
        logs = sorted((out / "logs" / f"{a}_vs_{b}").glob("game_*.jsonl"))
        assert len(logs) == 2
        first = [r for r in runner.read_log(logs[0]) if r["type"] == "arena"][0]
        second = [r for r in runner.read_log(logs[1]) if r["type"] == "arena"][0]
        assert (first["wolf_model"], second["wolf_model"]) == (a, b)
    rows = (out / "arena.csv").read_text().splitlines()
    assert rows[0].startswith("pair,model,games,TWR") and len(rows) == 21
    assert (out / "arena.png").stat().st_size > 1000
    assert any("gratr vs dirichlet" in line for line in lines)
    # An identical re-run resumes (no --force needed): every call comes from the cache.
    rc, lines = cli(argv)
    again = json.loads((out / "arena.json").read_text())
    assert again["llm_calls"]["new"] == 0 and again["llm_calls"]["cached"] > 0
    assert again["pairs"] == report["pairs"]
    assert "LLM calls: 0 new" in "\n".join(lines)


def test_arena_options_are_checked_before_any_call(tmp_path):
    base = ["arena", "--out", str(tmp_path / "x"), "--no-progress", "--games", "1"]
    with pytest.raises(ValueError, match="--models"):
        cli(base + ["--models", "gratr,nobody"])
    with pytest.raises(ValueError, match="cannot be split"):
        cli(base + ["--roles", "werewolf:1,villager:3,seer:1"])
    with pytest.raises(SystemExit):  # argparse: "argument --threshold: must be a number <= 1"
        cli(base + ["--threshold", "2"])
    with pytest.raises(ValueError):
        cli(base + ["--backend", "nosuch:model"])
    assert not (tmp_path / "x" / "llm_cache.sqlite").exists()


# --------------------------------------------------------------------------- graph


def test_graph_command_rebuilds_the_trust_graph(tmp_path, chat):
    log = tmp_path / "game.jsonl"
    game, _ = arena.play_arena_game(
        rules.preset("gratr", max_rounds=2),
        chat,
        wolf_model="none",
        leader_model="gratr",
        seed=5,
        log=log,
    )
    seat = game.seats.index("gratr")
    recs = runner.read_log(log)
    last = max(r["step"] for r in recs if r["type"] in ("action", "chance"))
    rc, _ = cli(
        [
            "graph",
            str(log),
            "--player",
            str(seat),
            "--step",
            str(last),
            "--out",
            str(tmp_path / "g.json"),
        ]
    )
    assert rc == 0
    g = json.loads((tmp_path / "g.json").read_text())
    assert all(-1.0 <= n["trust"] <= 1.0 for n in g["nodes"])
    assert g["edges"], "votes and statements give edges"
    me = [n for n in g["nodes"] if n["id"] == f"Player {seat + 1}"][0]
    assert me["pinned"] and me["trust"] == 1.0
    # The same model as replaying by hand; at step 0 nothing is known yet.
    model = graph.rebuild_trust_graph(recs, seat, last)
    assert {n["id"]: n["trust"] for n in g["nodes"]} == {
        n: float(d["trust"]) for n, d in model.graph.nodes(data=True)
    }
    assert not graph.rebuild_trust_graph(recs, seat, 0).graph.edges
    for suffix in ("png", "graphml"):
        rc, _ = cli(
            [
                "graph",
                str(log),
                "--player",
                str(seat),
                "--step",
                str(last),
                "--out",
                str(tmp_path / f"g.{suffix}"),
            ]
        )
        assert (tmp_path / f"g.{suffix}").stat().st_size > 200
    other = game.seats.index("none")
    with pytest.raises(ValueError, match="used the 'none' model"):
        cli(
            [
                "graph",
                str(log),
                "--player",
                str(other),
                "--step",
                "3",
                "--out",
                str(tmp_path / "h.png"),
            ]
        )
    with pytest.raises(ValueError, match="--out"):
        cli(
            [
                "graph",
                str(log),
                "--player",
                str(seat),
                "--step",
                "3",
                "--out",
                str(tmp_path / "h.txt"),
            ]
        )
    plain = tmp_path / "plain.jsonl"
    runner.play_game(rules.preset("gratr"), seed=1, log=plain)
    with pytest.raises(ValueError, match="no belief records"):
        cli(["graph", str(plain), "--player", "0", "--step", "3", "--out", str(tmp_path / "p.png")])


def test_gt_llm_command_line_has_arena_and_graph(tmp_path, capsys):
    from gt_llm.cli import main

    out = tmp_path / "a"
    argv = ["werewolf", "arena", "--models", "gratr,none", "--games", "2", "--max-rounds", "1"]
    assert main(argv + ["--out", str(out), "--no-progress"]) == 0
    assert "gratr vs none: 2 games" in capsys.readouterr().out
    log = out / "logs" / "gratr_vs_none" / "game_0000.jsonl"
    rec = [r for r in runner.read_log(log) if r["type"] == "arena"][0]
    seat = rec["seats"].index("gratr")
    png = tmp_path / "g.png"
    argv = ["werewolf", "graph", str(log), "--player", str(seat), "--step", "9", "--out", str(png)]
    assert main(argv) == 0 and png.stat().st_size > 200
    assert main(["werewolf", "arena", "--models", "gratr", "--out", str(tmp_path / "b")]) == 2
    assert "--models" in capsys.readouterr().err
