"""The two fruit traders on different backends (routed by player, cached apart)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import games.fruit_trading.scripted  # noqa: F401  (registers the scripted answers)
from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from games.fruit_trading.seats import (
    NEUTRAL_TASKS,
    PLAYER_TASKS,
    player_of_request,
    player_routed_model,
)
from gt_llm.chat import user_request
from gt_llm.recording import RecordingModel
from gt_llm.registry import load_model
from gt_llm.routing import UnroutedRequest
from tests.cli_runner import run_cli

TINY = dict(
    inits=1,
    iterations=10,
    max_messages=3,
    variants=("tone", "tone+dirichlet"),
    generalisation=False,
    whole_game=False,
    progress=False,
)


def _run(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``gt-llm fruit-trading run`` at small settings (in this process: ``run_cli``)."""
    argv = [
        "fruit-trading",
        "run",
        "--inits",
        "1",
        "--max-messages",
        "3",
        "--iterations",
        "10",
        "--no-generalisation",
        "--no-whole-game",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    ]
    return run_cli(argv)


def test_every_fruit_request_is_routed(tmp_path: Path) -> None:
    rec = RecordingModel(load_model("scripted"))
    run_experiment(ExperimentSettings(out=str(tmp_path / "r"), **TINY), model=rec)
    requests = [r for batch in rec.rounds for r in batch]
    assert {r.task for r in requests} == PLAYER_TASKS | NEUTRAL_TASKS
    for r in requests:
        p = player_of_request(r)
        assert (p is None) == (r.task in NEUTRAL_TASKS)
        if r.task in ("fruit_trading.opening", "fruit_trading.message"):
            # The speaker's name in the prompt is the routed player's.
            assert r.fields["speaker"] != r.fields["opponent"] and p in (0, 1)
    with pytest.raises(UnroutedRequest, match="neither a player's"):
        player_of_request(user_request("hello"))


#: The field naming the acting player in each player task's prompt.
NAME_FIELD = {
    "fruit_trading.opening": "speaker",
    "fruit_trading.message": "speaker",
    "fruit_trading.compute_payoff": "name",
    "fruit_trading.extract_payoff": "name",
    "fruit_trading.guess_fruit": "observer",
}


def test_each_backend_gets_only_its_players_requests(tmp_path: Path) -> None:
    # Three distinct backends, so a judge sent to a player's backend (or a player's
    # request to the judge's) shows; fixed names, so each request's name is checkable.
    judge, a, b = (
        RecordingModel(load_model(s))
        for s in ("scripted", "scripted:rules-v2/a", "scripted:rules-v2/b")
    )
    models = {"scripted": judge, "scripted:rules-v2/a": a, "scripted:rules-v2/b": b}
    routed = player_routed_model(models, ("scripted:rules-v2/a", "scripted:rules-v2/b"), "scripted")
    settings = ExperimentSettings(out=str(tmp_path / "r"), names="fixed", **TINY)
    result = run_experiment(settings, model=routed)
    players = result.subgames["tone"][0].scenario.players
    names = (players[0].name, players[1].name)
    assert {r.task for r in judge.requests} == NEUTRAL_TASKS
    for p, rec in enumerate((a, b)):
        assert rec.requests and {r.task for r in rec.requests} <= PLAYER_TASKS
        for r in rec.requests:
            assert r.fields["player"] == p
            assert r.fields[NAME_FIELD[r.task]] == names[p], r.task
        counts = {t: sum(r.task == t for r in rec.requests) for t in PLAYER_TASKS}
        assert counts["fruit_trading.message"] > 0 and counts["fruit_trading.guess_fruit"] > 0
    assert sum(r.task == "fruit_trading.opening" for r in a.requests + b.requests) > 0
    assert set(NAME_FIELD) == PLAYER_TASKS
    assert "scripted:rules-v2/a" in result.summary["label"]
    assert "scripted:rules-v2/b" in result.summary["label"]


def test_unplaceable_requests_are_refused_in_one_line() -> None:
    for request in (
        user_request("hello"),
        # A player's task without its player (say, a request rendered elsewhere).
        dataclasses.replace(user_request("hi"), task="fruit_trading.message"),
    ):
        with pytest.raises(UnroutedRequest) as err:
            player_of_request(request)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="2 player backends"):
        player_routed_model({}, ("scripted",), "scripted")


@pytest.mark.slow  # about 5 s; CI runs it in its slow step
def test_players_on_two_backends_cached_apart_and_resumed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = _run(out, "--player-backends", "scripted,scripted:rules-v2/b")
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(out / "llm_cache.sqlite") as db:
        rows = db.execute("SELECT model, task, request_json FROM calls").fetchall()
    by_model: dict[str, set[str]] = {}
    for model, task, request in rows:
        by_model.setdefault(model, set()).add(task)
        player = json.loads(request).get("fields", {}).get("player")
        if task in NEUTRAL_TASKS:
            assert model == "rules-v2"  # the judge is --backend's
        elif player == 1:
            assert model == "rules-v2/b"
        elif player == 0:
            assert model == "rules-v2"
    players = [json.loads(r).get("fields", {}).get("player") for _, _, r in rows]
    assert players.count(0) > 0 and players.count(1) > 0  # the checks above were not vacuous
    assert "fruit_trading.message" in by_model["rules-v2/b"]
    assert {"fruit_trading.opening", "fruit_trading.agreement"} <= by_model["rules-v2"]
    summary = json.loads((out / "summary.json").read_text())
    assert "scripted:rules-v2/b" in summary["label"] and summary["is_llm"] is False
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["settings"]["player_backends"] == ["scripted", "scripted:rules-v2/b"]
    again = _run(out, "--player-backends", "scripted,scripted:rules-v2/b")
    assert again.returncode == 0 and "LLM calls: 0 made" in again.stdout, again.stdout[-800:]


def test_player_backends_refused_before_out_is_touched(tmp_path: Path) -> None:
    out = tmp_path / "never"
    bad = _run(out, "--player-backends", "scripted,nope")
    assert bad.returncode != 0 and "player 1" in bad.stderr and "unknown backend" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    one = _run(out, "--player-backends", "scripted")
    assert one.returncode != 0 and "needs two backend specs" in one.stderr
    assert not out.exists()
