"""Nothing is written through a link inside a results folder, and a file in a sub-folder's
place is refused in one line.

A symlinked ``OUT/logs`` (a real ``gt-llm werewolf tournament`` in a child
process, then ``--force`` over an old run and ``werewolf play --games`` in
this one), a symlinked pair folder below a real ``logs/``, and a symlinked
``OUT/view`` (or a folder below it) for ``werewolf view OUT`` (and
``fruit-trading view OUT``): each command
stops in one line naming the link and the fix, and the files behind the link
are unchanged. ``OUT/logs`` being a file is refused the same way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runs.results import prepare_results_dir
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
TOURNAMENT = ("werewolf", "tournament", "--agents", "none,rules", "--games", "2",
              "--max-rounds", "1", "--no-progress")  # fmt: skip
PLAY = ("werewolf", "play", "--games", "2", "--max-rounds", "1", "--no-progress")


def _victim(folder: Path, *names: str) -> dict[str, str]:
    """A folder outside ``--out`` holding ``names``; returns what it holds."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"the user's {name}\n")
    return _listing(folder)


def _listing(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_a_tournament_never_writes_through_a_linked_logs_folder(tmp_path):
    victim, out = tmp_path / "victim", tmp_path / "out"
    before = _victim(victim, "none_vs_rules/game_0000.jsonl")
    out.mkdir()
    (out / "logs").symlink_to("../victim", target_is_directory=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", *TOURNAMENT, "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    line = _one_line(done)
    assert f"{out / 'logs'} is a link (to ../victim)" in line
    assert "never writes through a link" in line and "pass another --out" in line
    assert _listing(victim) == before


def test_force_over_an_old_run_neither_clears_nor_writes_through_a_link(tmp_path):
    victim, out = tmp_path / "victim", tmp_path / "out"
    before = _victim(victim, "none_vs_rules/game_0000.jsonl")
    old = prepare_results_dir(out, {"other": "settings"})
    old.write_text("summary.json", "{}\n")
    old.record("logs/none_vs_rules/game_0000.jsonl")
    old.finish()
    (out / "logs").symlink_to(victim, target_is_directory=True)
    line = _one_line(run_cli([*TOURNAMENT, "--force", "--out", str(out)]))
    assert f"{out / 'logs'} is a link" in line
    assert _listing(victim) == before
    assert (out / "summary.json").read_text() == "{}\n"  # refused before anything was cleared


def test_a_linked_pair_folder_below_a_real_logs_folder_is_refused(tmp_path):
    victim, out = tmp_path / "victim", tmp_path / "out"
    before = _victim(victim, "game_0000.jsonl")
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "none_vs_rules").symlink_to(victim, target_is_directory=True)
    line = _one_line(run_cli([*TOURNAMENT, "--out", str(out)]))
    assert f"{out / 'logs' / 'none_vs_rules'} is a link" in line
    assert _listing(victim) == before


@pytest.mark.parametrize("command", [PLAY, TOURNAMENT], ids=["play", "tournament"])
def test_logs_as_a_link_or_a_file_is_refused_in_one_line(tmp_path, command):
    victim, out = tmp_path / "victim", tmp_path / "out"
    before = _victim(victim, "game_000000.jsonl")
    out.mkdir()
    (out / "logs").symlink_to(victim, target_is_directory=True)
    line = _one_line(run_cli([*command, "--out", str(out)]))
    assert f"{out / 'logs'} is a link" in line
    assert _listing(victim) == before

    (out / "logs").unlink()
    (out / "logs").write_text("mine\n")
    line = _one_line(run_cli([*command, "--out", str(out)]))
    assert f"{out / 'logs'} is a file, not a folder" in line
    assert "move the file away, or pass another --out" in line
    assert (out / "logs").read_text() == "mine\n"


def test_view_never_writes_through_a_linked_view_folder(tmp_path):
    out = tmp_path / "out"
    assert run_cli([*PLAY, "--out", str(out)]).returncode == 0
    victim = tmp_path / "victim2"
    before = _victim(victim, "index.html", "sub/game_000000.html")
    (out / "view").symlink_to(victim, target_is_directory=True)
    line = _one_line(run_cli(["werewolf", "view", str(out)]))
    assert f"{out / 'view'} is a link" in line
    assert _listing(victim) == before

    # A folder of game pages below a real view/ (a log in logs/sub/ has its page in view/sub/).
    (out / "view").unlink()
    (out / "view").mkdir()
    (out / "view" / "sub").symlink_to(victim / "sub", target_is_directory=True)
    (out / "logs" / "sub").mkdir()
    (out / "logs" / "sub" / "game_000000.jsonl").write_bytes(
        (out / "logs" / "game_000000.jsonl").read_bytes()
    )
    line = _one_line(run_cli(["werewolf", "view", str(out)]))
    assert f"{out / 'view' / 'sub'} is a link" in line
    assert _listing(victim) == before

    # A day study's page goes to view/ too.
    study = tmp_path / "study"
    study.mkdir()
    (study / "summary.json").write_text("{}\n")
    (study / "days.csv").write_text("a\n")
    (study / "view").symlink_to(victim, target_is_directory=True)
    line = _one_line(run_cli(["werewolf", "view", str(study)]))
    assert f"{study / 'view'} is a link" in line
    assert _listing(victim) == before

    # So does a fruit-trading run's page (refused before the run's files are read).
    fruit = tmp_path / "fruit"
    prepare_results_dir(fruit, {"inits": 1}).finish()
    (fruit / "view").symlink_to(victim, target_is_directory=True)
    args = ["fruit-trading", "view", str(fruit), "--variant", "tone", "--init", "0"]
    line = _one_line(run_cli(args))
    assert f"{fruit / 'view'} is a link" in line
    assert _listing(victim) == before
