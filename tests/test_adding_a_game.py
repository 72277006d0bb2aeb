"""The walk-through of ``docs/adding-a-game.md`` works as written.

The commands of the page's ``sh`` blocks run one by one, in a copy of the
repository's ``games`` and ``tests`` folders (the other packages are imported
from this checkout), with ``.venv/bin/`` standing for this interpreter's
folder. A command that fails, or a step that stops doing what the page says,
fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "adding-a-game.md"


def _walkthrough_commands() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_page_has_the_walkthrough_commands():
    commands = _walkthrough_commands()
    assert commands[0] == "cp -r games/ultimatum games/ultimatum2", commands
    assert any("ultimatum2 solve" in c for c in commands), commands


def copy_of_games_and_tests(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of ``games`` and ``tests`` (and pyproject.toml), and the environment to run it.

    The copy's games come first on the path; gt_llm, solvers and runs from this checkout.
    """
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("games", "tests"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy, {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(ROOT)])}


@pytest.mark.slow  # about 15 s: the whole walk-through; CI runs it in its slow step
def test_the_walkthrough_runs_as_written(tmp_path):
    copy, env = copy_of_games_and_tests(tmp_path)
    bin_dir = str(Path(sys.executable).parent) + os.sep
    outputs = []
    for command in _walkthrough_commands():
        line = command.replace(".venv/bin/", bin_dir)
        done = subprocess.run(
            ["bash", "-c", line], cwd=copy, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, (
            f"`{command}` exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        outputs.append(done.stdout)
    help_text = outputs[2]
    assert re.search(r"^\s+ultimatum2\s", help_text, flags=re.M), help_text
    summary = json.loads((copy / "results" / "u2" / "summary.json").read_text())
    assert summary["settings"]["command"] == "ultimatum2 solve" and summary["nodes"][0] > 1
    assert "passed" in outputs[-1] and "failed" not in outputs[-1], outputs[-1]


def test_a_game_that_fails_to_import_fails_the_tests_its_name_selects(tmp_path):
    # A copied game with an import error is not registered; `pytest -k <folder>` must still
    # select a test that names the folder, and that test must fail (not "0 selected").
    copy, env = copy_of_games_and_tests(tmp_path)
    shutil.copytree(copy / "games" / "ultimatum", copy / "games" / "planted_game")
    init = copy / "games" / "planted_game" / "__init__.py"
    init.write_text("import a_module_that_does_not_exist\n" + init.read_text(encoding="utf-8"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts="]
        + ["-k", "planted_game", "tests/games/engine/test_conformance.py"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert (
        "FAILED tests/games/engine/test_conformance.py::test_game_package_imports[planted_game]"
        in out
    )
    assert "a_module_that_does_not_exist" in out
