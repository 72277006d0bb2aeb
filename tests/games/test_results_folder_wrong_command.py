"""A results folder given to another command than the one that wrote it: one short line.

An arena's folder given to ``werewolf tournament`` or ``werewolf play
--games`` differs in almost every setting; the refusal listed them (700
characters). It now names the command that wrote the folder and says to use
it, or another ``--out``; the same command with other settings still lists
what differs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.atomic import ResultsError
from runs.commands import command_words, written_by
from runs.results import prepare_results_dir
from tests.cli_runner import run_cli

ARENA = ["gt-llm", "werewolf", "arena", "--models", "gratr,none", "--out", "A"]


def _arena_folder(path: Path) -> Path:
    run = prepare_results_dir(
        path, {"command": "werewolf arena", "games": 2}, backend="scripted", command=ARENA
    )
    run.finish()
    return path


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["gt-llm", "werewolf", "arena", "--games", "2"], "werewolf arena"),
        (["/venv/bin/gt-llm", "-vv", "--quiet", "fruit-trading", "run", "--out", "x"], "fruit-trading run"),
        (["/src/gt_llm/cli.py", "ultimatum", "solve"], "ultimatum solve"),
        (["gt-llm", "ask", "--backend", "scripted", "hello"], "ask"),
        (["/usr/bin/pytest", "tests/a.py"], None),  # not a gt-llm command line
        (["ipykernel_launcher.py", "-f", "kernel.json"], None),
        ([], None),
    ],
)  # fmt: skip
def test_command_words(argv, words):
    assert command_words(argv) == words


def test_the_settings_name_the_command_first():
    manifest = {"settings": {"command": "werewolf solve"}, "command": ["gt-llm", "x", "y"]}
    assert written_by(manifest) == "werewolf solve"
    assert written_by({"settings": {}, "command": ["gt-llm", "werewolf", "play"]}) == (
        "werewolf play"
    )
    assert written_by({"settings": {}, "command": "gt-llm werewolf play"}) is None


def test_another_command_is_refused_in_one_short_line(tmp_path):
    folder = _arena_folder(tmp_path / "A")
    with pytest.raises(ResultsError) as err:
        prepare_results_dir(
            folder,
            {"command": "werewolf tournament", "agents": ["gratr", "none"]},
            backend="scripted",
            command=["gt-llm", "werewolf", "tournament", "--out", str(folder)],
        )
    assert str(err.value) == (
        f"results folder {str(folder)!r} was written by `gt-llm werewolf arena`, not by "
        "`gt-llm werewolf tournament`: run `gt-llm werewolf arena` on it, or give this command "
        "another --out (or --force to replace its results)"
    )


def test_the_same_command_with_other_settings_still_lists_them(tmp_path):
    folder = _arena_folder(tmp_path / "A")
    with pytest.raises(ResultsError, match=r"holds results of other settings \(games: 2 -> 4\)"):
        prepare_results_dir(
            folder, {"command": "werewolf arena", "games": 4}, backend="scripted", command=ARENA
        )


def test_force_still_replaces_another_commands_results(tmp_path):
    folder = _arena_folder(tmp_path / "A")
    run = prepare_results_dir(
        folder,
        {"command": "werewolf tournament"},
        force=True,
        backend="scripted",
        command=["gt-llm", "werewolf", "tournament"],
    )
    run.finish()
    assert written_by(run.manifest) == "werewolf tournament"


@pytest.mark.parametrize(
    "argv",
    [
        ["werewolf", "play", "--games", "2", "--max-rounds", "1"],
        ["werewolf", "tournament", "--agents", "gratr,rules", "--games", "2"],
    ],
    ids=lambda a: a[1],
)
def test_commands_name_the_command_that_wrote_the_folder(argv, tmp_path):
    folder = _arena_folder(tmp_path / "A")
    proc = run_cli([*argv, "--out", str(folder), "--no-progress"])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "was written by `gt-llm werewolf arena`, not by `gt-llm werewolf " in lines[0]
    assert len(lines[0]) < 300, lines[0]
