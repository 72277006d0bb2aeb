"""Every check before ``--out`` is touched; ``--force`` stays inside it.

The same probes for each of the five commands that write a results folder
through the model (``fruit-trading run``, ``werewolf play --games``,
``werewolf solve``, ``werewolf arena``, ``ultimatum solve``), run in this
process on the scripted stand-in with tiny sizes:

* a cache that cannot be opened for writing (under ``/proc``, or below a
  regular file) is refused before ``--force`` clears the old run, and before a
  new ``--out`` is created;
* a missing key (``--backend groq`` without ``GROQ_API_KEY``) likewise;
* ``--force`` never deletes through a link listed in the old manifest (a
  symlinked sub-folder, at any depth): the file outside survives.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

COMMANDS = {
    "fruit-run": ("fruit-trading", "run", "--inits", "1", "--max-messages", "2",
                  "--num-seeds", "1", "--iterations", "5", "--no-generalisation",
                  "--no-whole-game"),
    "werewolf-play-games": ("werewolf", "play", "--games", "2", "--max-rounds", "2",
                            "--debate-turns", "1"),
    "werewolf-solve": ("werewolf", "solve", "--days", "1", "--speakers", "1",
                       "--iterations", "5", "--models", "none", "--deals", "1"),
    "werewolf-arena": ("werewolf", "arena", "--models", "gratr,none", "--games", "2",
                       "--max-rounds", "2", "--debate-turns", "1"),
    "ultimatum-solve": ("ultimatum", "solve", "--iterations", "5"),
}  # fmt: skip


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _gt(command: str, out: Path, *extra: str, env: dict[str, str] | None = None):
    return run_cli(
        [*COMMANDS[command], "--no-progress", "--out", str(out), *extra], env=env or _env()
    )


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (links not followed) and its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture(scope="module", params=list(COMMANDS))
def finished(request, tmp_path_factory) -> tuple[str, Path]:
    """A finished run of each command (made once; tests work on copies)."""
    command = request.param
    out = tmp_path_factory.mktemp("issue29") / command
    done = _gt(command, out)
    assert done.returncode == 0, done.stderr
    return command, out


@pytest.fixture
def old_run(finished, tmp_path) -> tuple[str, Path]:
    """A copy of the finished run to spoil."""
    command, template = finished
    out = tmp_path / "run"
    shutil.copytree(template, out, symlinks=True)
    return command, out


def _bad_caches(tmp: Path) -> dict[str, str]:
    a_file = tmp / "a_file"
    a_file.write_text("not a folder\n")
    # /proc refuses every new entry, even to root; a regular file holds no cache either
    # (as root a read-only folder is writable, so these stand for "cannot be written").
    return {
        "proc": "/proc/nope/c.sqlite",
        "below-a-file": str(a_file / "c.sqlite"),
        "device": os.devnull,  # exists, but no SQLite file can live there
    }


@pytest.mark.parametrize("cache", ["proc", "below-a-file", "device"])
def test_force_with_a_cache_that_cannot_be_opened_keeps_the_old_results(old_run, tmp_path, cache):
    command, out = old_run
    before = _snapshot(out)
    path = _bad_caches(tmp_path)[cache]
    done = _gt(command, out, "--seed", "1", "--force", "--cache", path)
    assert done.returncode != 0
    assert f"cache: cannot open {path} for writing" in done.stderr
    assert "--cache" in done.stderr
    assert _snapshot(out) == before


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("cache", ["proc", "below-a-file", "device"])
def test_a_cache_that_cannot_be_opened_creates_no_out(tmp_path, command, cache):
    out = tmp_path / "new" / "out"
    path = _bad_caches(tmp_path)[cache]
    done = _gt(command, out, "--cache", path)
    assert done.returncode != 0
    assert f"cache: cannot open {path} for writing" in done.stderr
    assert not (tmp_path / "new").exists()


def test_force_without_the_key_keeps_the_old_results(old_run):
    command, out = old_run
    before = _snapshot(out)
    done = _gt(command, out, "--backend", "groq", "--force", env=_env(GROQ_API_KEY=None))
    assert done.returncode != 0
    assert "GROQ_API_KEY" in done.stderr
    assert _snapshot(out) == before


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_key_creates_no_out(tmp_path, command):
    out = tmp_path / "new" / "out"
    done = _gt(command, out, "--backend", "groq", env=_env(GROQ_API_KEY=None))
    assert done.returncode != 0
    assert "GROQ_API_KEY" in done.stderr
    assert not (tmp_path / "new").exists()


def test_force_never_deletes_through_a_link(old_run, tmp_path):
    command, out = old_run
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    (outside / "keep.txt").write_text("not gt-llm's\n")
    (outside / "deeper" / "keep.txt").write_text("not gt-llm's either\n")
    # A symlinked sub-folder, and a link one level down inside a real sub-folder.
    (out / "linkdir").symlink_to(outside, target_is_directory=True)
    (out / "sub").mkdir()
    (out / "sub" / "inner").symlink_to(outside / "deeper", target_is_directory=True)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"] += ["linkdir/keep.txt", "sub/inner/keep.txt"]
    (out / "manifest.json").write_text(json.dumps(manifest))

    done = _gt(command, out, "--seed", "1", "--force")

    assert done.returncode == 0, done.stderr
    assert (outside / "keep.txt").read_text() == "not gt-llm's\n"
    assert (outside / "deeper" / "keep.txt").read_text() == "not gt-llm's either\n"
    assert "linkdir/keep.txt" in done.stderr and "sub/inner/keep.txt" in done.stderr
    assert json.loads((out / "manifest.json").read_text())["complete"] is True
