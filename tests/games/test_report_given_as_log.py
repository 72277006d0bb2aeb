"""A results folder's report given where a game log goes is named for what it is.

``werewolf summary T/tournament.json`` called a valid tournament report
"damaged ... delete the log". ``summary``, ``replay`` and ``view`` now say
that the file is a tournament (arena, ...) report, which command wrote it,
and where the game logs and the folder's viewer are; a game log is still read
whatever its name.
"""

from __future__ import annotations

import json

import pytest

from tests.cli_runner import run_cli

COMMANDS = [["werewolf", "summary"], ["werewolf", "replay"], ["werewolf", "view"]]


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "T"
    (out / "logs" / "a_vs_b").mkdir(parents=True)
    (out / "logs" / "a_vs_b" / "game_0000.jsonl").write_text("", encoding="utf-8")
    (out / "tournament.json").write_text(json.dumps({"games": 2}, indent=2), encoding="utf-8")
    (out / "pairs.csv").write_text("pair,games\na vs b,2\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[1])
def test_a_tournament_report_is_named_with_its_command(command, folder):
    proc = run_cli([*command, str(folder / "tournament.json")])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    line = lines[0]
    assert "damaged" not in line and "delete" not in line, line
    assert line.startswith(
        f"gt-llm: error: {' '.join(command)}: {folder}/tournament.json is a tournament report "
        "written by `gt-llm werewolf tournament`, not a game log: give a game log such as "
        f"{folder}/logs/a_vs_b/game_0000.jsonl"
    ), line
    assert line.endswith(f"or see the folder with `gt-llm werewolf view {folder}`"), line


def test_a_table_is_named_as_one(folder):
    proc = run_cli(["werewolf", "summary", str(folder / "pairs.csv")])
    assert proc.returncode == 2
    assert "pairs.csv is a CSV file of a results folder, not a game log" in proc.stderr


def test_a_damaged_log_is_still_called_damaged(folder):
    log = folder / "logs" / "a_vs_b" / "game_0000.jsonl"
    log.write_text("{not json\n", encoding="utf-8")
    proc = run_cli(["werewolf", "summary", str(log)])
    assert proc.returncode == 2 and "the log is damaged" in proc.stderr, proc.stderr
