"""Agents, seats on different backends (routed and cached apart), tournaments."""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pytest

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
from games.werewolf import rules
from games.werewolf.agents import parse_agent, parse_agents, seat_of_request
from games.werewolf.arena import matches as arena
from games.werewolf.arena.runner import seat_agents
from games.werewolf.cli import add_parser
from gt_llm.recording import RecordingModel
from gt_llm.registry import load_model
from gt_llm.routing import RoutedModel, UnroutedRequest
from tests.headless_chromium import Browser, find_chromium
from tests.llm.fake_server import FakeChatServer

ARENA = rules.preset("arena")


def cli(argv: list[str]) -> tuple[int, list[str]]:
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers())
    args = p.parse_args(["werewolf", *argv])
    lines: list[str] = []
    try:
        rc = args.func(args, write=lines.append)
    except TypeError:  # commands without a write hook print through say()
        rc = args.func(args)
    return rc, lines


# --------------------------------------------------------------------------- agents


def test_agent_specs() -> None:
    a = parse_agent("gratr")
    assert (a.name, a.opponent, a.backend, a.policy, a.rules) == (
        "gratr",
        "gratr",
        None,
        None,
        False,
    )
    b = parse_agent("none@scripted:rules-v2/b")
    assert (b.name, b.opponent, b.backend) == (
        "none@scripted-rules-v2-b",
        "none",
        "scripted:rules-v2/b",
    )
    c = parse_agent("cfrG=gratr+cfr:some/folder@scripted")
    assert (c.name, c.opponent, c.policy, c.backend) == ("cfrG", "gratr", "some/folder", "scripted")
    r = parse_agent("rules")
    assert r.rules and r.backend_or("scripted") is None
    assert [x.name for x in parse_agents("gratr,none,rules")] == ["gratr", "none", "rules"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gratt", "unknown opponent model 'gratt'"),
        ("gratr@nope", "unknown backend 'nope'"),
        ("gratr@scripted:other", "rules-v2/NAME for a variant"),
        ("gratr+cfr:", "needs a werewolf solve folder"),
        ("rules@scripted", "take no backend and no policy"),
        ("a b=gratr", "letters, digits and ._+@- only"),
        ("gratr,gratr", "agents named twice"),
        ("gratr", "at least 2 agents"),
    ],
)
def test_agent_specs_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("+", r"\+")) as e:
        parse_agents(text)
    assert "\n" not in str(e.value) and "--agents" in str(e.value)


def test_agent_secrets_never_name_it() -> None:
    a = parse_agent("gratr@openai:m@http://alice:SECRET@127.0.0.1:9/v1")
    assert "SECRET" not in a.name and "SECRET" not in json.dumps(a.to_json())


# --------------------------------------------------------------------------- routing


def _recorded_arena_requests():
    rec = RecordingModel(load_model("scripted"))
    arena.play_arena_game(ARENA, rec, wolf_model="gratr", leader_model="dirichlet", seed=3)
    return [r for batch in rec.rounds for r in batch]


def test_every_werewolf_request_is_routed_to_its_seat() -> None:
    requests = _recorded_arena_requests()
    tasks = {r.task for r in requests}
    assert {"werewolf.speech_act", "werewolf.vote", "werewolf.peer_analysis"} <= tasks
    assert any(t.startswith("opponents.") for t in tasks)
    for r in requests:
        seat = seat_of_request(r)
        assert 0 <= seat < ARENA.num_players
        if "player" in r.fields:
            assert seat == r.fields["player"]


def test_unroutable_request_is_an_error_not_a_default() -> None:
    from gt_llm.chat import user_request

    model = RoutedModel({"a": load_model("scripted")}, lambda r: str(seat_of_request(r)))
    with pytest.raises(UnroutedRequest, match="names no seat"):
        model.complete(user_request("hello"))


def test_seats_on_two_scripted_variants_call_only_their_own_backend(tmp_path: Path) -> None:
    a = RecordingModel(load_model("scripted"))
    b = RecordingModel(load_model("scripted:rules-v2/b"))
    names = ("A", "B")
    agents = {
        "A": arena.SeatedAgent(parse_agent("A=gratr"), a),
        "B": arena.SeatedAgent(parse_agent("B=gratr@scripted:rules-v2/b"), b),
    }
    game, _ = arena.play_arena_game(
        ARENA, None, wolf_model=names[0], leader_model=names[1], seed=5, agents=agents
    )
    seats = game.seats
    assert set(seats) == {"A", "B"}
    for model, name in ((a, "A"), (b, "B")):
        calls = [r for batch in model.rounds for r in batch]
        assert calls, name
        assert {seats[seat_of_request(r)] for r in calls} == {name}
    # The variants differ only in noise: some answer of B differs from A's to the same request.
    same = [r for batch in b.rounds for r in batch][:40]
    assert any(a.inner.complete(r).text != b.inner.complete(r).text for r in same)


def test_seat_backends_cached_apart_and_rerun_makes_no_call(tmp_path: Path) -> None:
    specs = ",".join(["scripted", "scripted:rules-v2/b"] * 4)
    log = tmp_path / "g.jsonl"
    rc, _ = cli(["play", "--seat-backends", specs, "--seed", "2", "--log", str(log)])
    assert rc in (0, 1)
    records = [json.loads(x) for x in log.read_text().splitlines()]
    calls = [r for r in records if r["type"] == "llm_call"]
    assert calls and not any(r["cached"] for r in calls)
    with sqlite3.connect(tmp_path / "llm_cache.sqlite") as db:
        models = {row[0] for row in db.execute("SELECT DISTINCT model FROM calls")}
    assert models == {"rules-v2", "rules-v2/b"}
    log2 = tmp_path / "g2.jsonl"
    cli(["play", "--seat-backends", specs, "--seed", "2", "--log", str(log2)])
    again = [json.loads(x) for x in log2.read_text().splitlines()]
    calls2 = [r for r in again if r["type"] == "llm_call"]
    assert len(calls2) == len(calls) and all(r["cached"] for r in calls2)
    assert [r["key"] for r in calls2] == [r["key"] for r in calls]


def test_seat_backends_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs 8 backend specs"):
        cli(["play", "--seat-backends", "scripted,scripted", "--log", str(tmp_path / "x.jsonl")])
    with pytest.raises(ValueError, match="seat 1: .*unknown backend 'nope'"):
        cli(["play", "--seat-backends", "scripted,nope" + ",scripted" * 6])
    assert not (tmp_path / "x.jsonl").exists()


def test_a_seat_on_a_loopback_server_gets_exactly_its_seats_calls() -> None:
    with FakeChatServer() as server:
        spec = f"openai:m@{server.url}/v1"
        remote = load_model(spec, retry_budget=30)
        local = RecordingModel(load_model("scripted"))
        agents = {
            "R": arena.SeatedAgent(parse_agent("R=none"), RecordingModel(remote)),
            "S": arena.SeatedAgent(parse_agent("S=none"), local),
        }
        game, _ = arena.play_arena_game(
            ARENA, None, wolf_model="S", leader_model="R", seed=1, agents=agents
        )
        sent = [r for batch in agents["R"].model.rounds for r in batch]  # type: ignore[union-attr]
        assert sent and {game.seats[seat_of_request(r)] for r in sent} == {"R"}
        # Every request the server received came from a seat of R (echo answers fall back).
        assert server.request_count >= len(sent)
        local_calls = [r for batch in local.rounds for r in batch]
        assert {game.seats[seat_of_request(r)] for r in local_calls} == {"S"}
        remote.close()


def test_seat_agents_by_name() -> None:
    agents = parse_agents("gratr,rules")
    m = load_model("scripted")
    seated = seat_agents(agents, {"scripted": m}, {}, "scripted")
    assert seated["gratr"].model is m and seated["rules"].model is None


# --------------------------------------------------------------------------- tournament

AGENTS = "gratr,none,dirichlet,cfrG=gratr+cfr:{day},rules,uni=gratr+uniform"


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    from games.werewolf.day.solve import SolveSettings, run_solve

    root = tmp_path_factory.mktemp("tournament")
    day = root / "day"
    run_solve(SolveSettings(out=str(day), days=2, iterations=40, models=("gratr",), progress=False))
    out = root / "t"
    argv = [
        "tournament",
        "--agents",
        AGENTS.format(day=day),
        "--games",
        "2",
        "--max-rounds",
        "2",
        "--bootstrap",
        "200",
        "--out",
        str(out),
        "--no-progress",
    ]
    rc, lines = cli(argv)
    assert rc == 0
    return out, argv, lines


def _results(out: Path) -> dict[str, bytes]:
    skip = {"manifest.json", "llm_cache.sqlite", "llm_cache.sqlite-wal", "llm_cache.sqlite-shm"}
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in skip and "logs" not in p.parts
    }


@pytest.mark.slow  # a whole tournament with a CFR agent (about 15 s)
def test_tournament_files_and_numbers(tournament) -> None:
    out, _, lines = tournament
    doc = json.loads((out / "tournament.json").read_text())
    names = [a["name"] for a in doc["agents"]]
    assert names == ["gratr", "none", "dirichlet", "cfrG", "rules", "uni"]
    assert doc["games"] == 15 * 2 and doc["is_llm"] is False
    assert "not an LLM" in doc["label"]
    for f in ("pairs.csv", "ratings.csv", "metagame.csv", "win_rates.csv"):
        assert (out / f).stat().st_size > 0
    for f in ("fig_ratings.png", "fig_metagame.png", "fig_response_graph.png"):
        assert (out / f).read_bytes().startswith(b"\x89PNG")
    # Every game's outcome is in the meta-game: row + column scores of a pair sum to 1.
    mg = doc["metagame"]
    n = len(names)
    for i in range(n):
        for j in range(n):
            if i != j:
                assert mg["payoff"][i][j] + mg["payoff"][j][i] == pytest.approx(1.0)
    assert sum(doc["alpha_rank"]["pi"]) == pytest.approx(1.0)
    assert sum(doc["nash"]["strategy"]) == pytest.approx(1.0)
    cfr = doc["cfr_agents"][0]
    assert cfr["agent"] == "cfrG" and cfr["twin"] == "gratr"
    assert sum(cfr["speeches"].values()) > 0
    assert any("followed its CFR policy" in x for x in lines)
    # The uniform control: beside the CFR agent's twin, and reported as an agent itself.
    assert cfr["uniform_control"] == "uni" and cfr["against_uniform"]["games"] == 2
    (uni,) = doc["uniform_agents"]
    assert uni["agent"] == "uni" and uni["twin"] == "gratr" and sum(uni["speeches"].values()) > 0
    assert any("followed its uniform policy" in x for x in lines)
    assert any(x.startswith("  cfrG vs uni: won") for x in lines)
    assert any(x.startswith("ratings") for x in lines)
    assert any("only 1 deal(s) per pair" in x for x in lines)  # the small-sample caveat
    # Rule-based seats make no call: their agent's logs hold no llm_call of its seats.
    log = next((out / "logs").rglob("game_0000.jsonl"))
    assert log.exists()


@pytest.mark.slow  # a whole tournament with a CFR agent (about 15 s)
def test_tournament_rerun_makes_no_call_and_identical_files(tournament) -> None:
    out, argv, _ = tournament
    before = _results(out)
    rc, lines = cli(argv)
    assert rc == 0
    assert any(x.startswith("LLM calls: 0 new") for x in lines), lines
    assert _results(out) == before


@pytest.mark.slow  # a whole tournament with a CFR agent (about 15 s)
def test_tournament_view_page(tournament) -> None:
    out, _, _ = tournament
    rc, _ = cli(["view", str(out)])
    assert rc == 0
    page = (out / "view" / "index.html").read_text()
    assert "cfrG" in page and "alpha" in page.lower()


@pytest.mark.browser
@pytest.mark.skipif(find_chromium() is None, reason="no Chromium found (apt-get install chromium)")
@pytest.mark.slow  # a whole tournament with a CFR agent (about 15 s)
def test_tournament_page_in_a_browser(tournament, tmp_path: Path) -> None:
    from games.werewolf.view.index import write_folder_pages

    out, _, _ = tournament
    index = write_folder_pages(out, tmp_path / "index.html", games=False)
    doc = json.loads((out / "tournament.json").read_text())
    n = len(doc["agents"])
    with Browser(find_chromium()) as browser:
        browser.open(index)
        assert browser.eval("document.querySelectorAll('#ratings tr').length") == n + 1
        assert browser.eval("document.querySelectorAll('#metagame tr').length") == n + 1
        assert browser.eval("document.querySelectorAll('#alpharank tr').length") == n + 1
        assert browser.eval("document.querySelectorAll('tr.game-row').length") == doc["games"]


def test_tournament_refuses_before_touching_out(tmp_path: Path) -> None:
    out = tmp_path / "t"
    with pytest.raises(ValueError, match="load_day_policy"):
        cli(["tournament", "--agents", "gratr,x=gratr+cfr:/nonexistent", "--out", str(out)])
    assert not out.exists()


def test_backend_credentials_never_reach_the_settings() -> None:
    from games.engine.cli_options import result_settings

    spec = "openai:m@http://alice:SECRET@127.0.0.1:9/v1"
    args = argparse.Namespace(
        agents=f"gratr,none@{spec}", seat_backends=",".join([spec] * 8), games=2
    )
    settings = result_settings(args)
    assert "SECRET" not in json.dumps(settings) and "alice" not in json.dumps(settings)
    assert settings["games"] == 2 and settings["agents"].startswith("gratr,none@openai:m@")


def test_team_backends_send_each_team_to_its_backend(tmp_path: Path) -> None:
    log = tmp_path / "g.jsonl"
    teams = "werewolves=scripted:rules-v2/b,villagers=scripted"
    rc, _ = cli(["play", "--team-backends", teams, "--seed", "4", "--log", str(log)])
    assert rc in (0, 1)
    with sqlite3.connect(tmp_path / "llm_cache.sqlite") as db:
        rows = db.execute("SELECT model, task, request_json FROM calls").fetchall()
    seen = set()
    for model, task, request in rows:
        fields = json.loads(request)["fields"]
        role = fields["role"] if task.startswith("werewolf.") else fields["self_role"]
        assert model == ("rules-v2/b" if role == "werewolf" else "rules-v2"), (task, role)
        seen.add(model)
    assert seen == {"rules-v2", "rules-v2/b"}
    with pytest.raises(ValueError, match="needs both teams"):
        cli(["play", "--team-backends", "werewolves=scripted"])
    with pytest.raises(ValueError, match="not both"):
        cli(["play", "--team-backends", teams, "--seat-backends", "scripted"])


def test_every_werewolf_request_names_its_seats_team() -> None:
    from games.werewolf.agents import team_of_request
    from games.werewolf.rules import team_of

    requests = _recorded_arena_requests()
    for r in requests:
        assert team_of_request(r) in ("werewolves", "villagers")
    # The role a request carries is its seat's: checked against the seat routing.
    game, _ = arena.play_arena_game(ARENA, load_model("scripted"), wolf_model="gratr",
                                    leader_model="dirichlet", seed=3)  # fmt: skip
    assert all(team_of_request(r) == team_of(game.roles[seat_of_request(r)]) for r in requests)
