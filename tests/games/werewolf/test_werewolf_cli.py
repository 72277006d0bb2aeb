"""The werewolf command line: play with transcript, replay, series, a human seat."""

from __future__ import annotations

import io
import json

import pytest

from games.werewolf import cli, rules
from games.werewolf.play import runner
from games.werewolf.players.human import HumanPlayer
from tests.cli_runner import run_cli
from tests.games.conftest import ROOT
from tests.games.werewolf_helpers import dealt

#: Werewolves at seats 1 and 3, the seer at 2.
CLI_SEATS = ("villager", "werewolf", "seer", "werewolf", "doctor") + ("villager",) * 3


def _run(argv, stdin=""):
    # In this process (tests/cli_runner.py), with a bare environment as a child would get.
    return run_cli(
        ["werewolf", *argv],
        stdin=stdin,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_play_prints_transcript_and_replays(tmp_path):
    log = tmp_path / "game.jsonl"
    out = _run(["play", "--preset", "arena", "--seed", "7", "--log", str(log)])
    assert out.returncode == 0, out.stderr
    assert "== Night 1 ==" in out.stdout and "Game over:" in out.stdout
    assert "Werewolves: P" in out.stdout  # a spectator sees everything
    rep = _run(["replay", str(log)])
    assert rep.returncode == 0 and "final state matches the log" in rep.stdout
    winner = runner.read_log(log)[-1]["winner"]
    assert f"winner {winner}" in rep.stdout


def test_games_series_writes_summary(tmp_path):
    out = _run(
        ["play", "--preset", "gratr", "--games", "6", "--out", str(tmp_path), "--no-progress"]
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["games"] == 6 and len(list((tmp_path / "logs").glob("*.jsonl"))) == 6
    rates = summary["win_rates"]
    assert sum(w["count"] for w in rates.values()) == 6
    for w in rates.values():
        assert w["ci95"][0] <= w["rate"] <= w["ci95"][1]
    assert "scripted" in summary["players"]
    again = _run(["play", "--games", "2", "--out", str(tmp_path)])
    assert again.returncode == 2 and "--force" in again.stderr


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["play", "--human", "9"], "--human"),
        (["play", "--games", "3", "--log", "x.jsonl"], "--log"),
        (["play", "--backend", "nosuch:x"], "nosuch"),
        (["play", "--players", "rules", "--backend", "groq:x"], "--backend"),
        (["play", "--roles", "werewolf:4,villager:4"], "RoleSet"),
    ],
)
def test_bad_options_give_one_line_errors(argv, flag):
    out = _run(argv)
    assert out.returncode == 2 and flag in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_human_seat_from_piped_stdin(tmp_path):
    # Seat 0 answers every question with option 0, after one bad line each time.
    answers = "".join("nonsense\n0\n" for _ in range(400))
    log = tmp_path / "h.jsonl"
    out = _run(["play", "--seed", "3", "--human", "0", "--log", str(log)], stdin=answers)
    assert out.returncode == 0, out.stderr
    assert "Please type a number" in out.stdout and "[0]" in out.stdout
    assert "You are the" in out.stdout
    header = runner.read_log(log)[0]
    assert header["players"][0]["name"] == "human"
    roles = runner.read_log(log)[-1]["roles"]
    before_end = out.stdout.split("Game over:")[0]
    # The human sees only its own role before the end.
    others = [f"P{p} is the" for p in range(1, 8)]
    assert not any(o in before_end for o in others)
    assert roles and runner.replay(log).winner is not None


def test_human_player_speech_narrowing_and_eof():
    state = dealt(rules.preset("arena", debate_turns=1), CLI_SEATS)
    legal = rules.speech_options(state, 0)
    lines = iter(["1\n", "x\n", "2\n", "0\n"])  # kind=claim, (bad), role=seer, tone=assertive
    shown = []
    player = HumanPlayer(lambda: next(lines, ""), shown.append)
    act = player.act(rules.knowledge(state, 0), legal, None)
    assert act == rules.SpeechAct("claim", "assertive", role="seer")
    assert any("Please type" in s for s in shown)
    with pytest.raises(ValueError, match="input ended"):
        HumanPlayer(lambda: "", shown.append).act(rules.knowledge(state, 0), legal, None)


def test_add_parser_registers_commands():
    import argparse

    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["werewolf", "replay", "x.jsonl", "--transcript"])
    assert args.transcript and args.func is not None
    stream = io.StringIO()
    HumanPlayer.from_streams(io.StringIO("0\n"), stream)._write("hi")
    assert stream.getvalue() == "hi\n"


def test_describe_event_respects_visibility():
    from games.werewolf.play.transcript import describe_event

    state = dealt("arena", CLI_SEATS)
    partners = [e for e in state.events if e.kind == "partners"][0]
    assert describe_event(partners) == "Werewolves: P1, P3"
    assert describe_event(partners, seat=1) == "Werewolves: P1, P3"
    assert describe_event(partners, seat=0) is None
