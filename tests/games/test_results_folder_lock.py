"""One results folder, one writer: the folder's lock, with real processes.

A real ``gt-llm werewolf tournament`` (a child process) is held while it
writes its first game log, so that it holds the folder's lock at a known
moment. Meanwhile every command that writes a results folder is run on the
same folder (``--force``, other settings) and refused in one line naming the
child's process id and the folder, changing nothing. Then the child is killed
with SIGKILL: its lock dies with it, and its first log is left as a temporary
file; the same command run again takes the folder over, removes that
temporary log and finishes with exactly its own games, and ``werewolf view``
lists no temporary log as a game. The lock's own rules (the lock file is never
a result, an unfinished run in this process also holds it) are checked in
this process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.atomic import ResultsError
from runs.lock import LOCK_NAME, FolderLock
from runs.results import CACHE_SUFFIXES, prepare_results_dir, read_manifest
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
TOURNAMENT = ("werewolf", "tournament", "--agents", "none,rules", "--games", "2",
              "--max-rounds", "1", "--no-progress")  # fmt: skip
# Every command that writes a results folder, on the smallest settings, replacing
# (--force) what is there with results of another seed.
WRITERS = {
    "werewolf tournament": TOURNAMENT,
    "werewolf arena": ("werewolf", "arena", "--models", "none,rules", "--games", "2",
                       "--max-rounds", "1", "--no-progress"),
    "werewolf play --games": ("werewolf", "play", "--games", "2", "--max-rounds", "1",
                              "--no-progress"),
    "werewolf solve": ("werewolf", "solve", "--days", "1", "--speakers", "1",
                       "--iterations", "5", "--models", "none", "--deals", "1", "--no-progress"),
    "fruit-trading run": ("fruit-trading", "run", "--inits", "1", "--iterations", "3",
                          "--max-messages", "2", "--num-seeds", "1", "--no-generalisation",
                          "--no-whole-game", "--no-progress"),
    "ultimatum solve": ("ultimatum", "solve", "--iterations", "5", "--no-progress"),
}  # fmt: skip

# The CLI, held when the first game log is about to be renamed into place (the
# game is whole in its temporary file) until a line arrives on stdin.
HELD = r"""
import os, sys
real_replace = os.replace
def held_replace(src, dst, *a, **k):
    if str(dst).endswith("game_0000.jsonl") and not getattr(held_replace, "done", False):
        held_replace.done = True
        print("held", flush=True)
        sys.stdin.readline()
    return real_replace(src, dst, *a, **k)
os.replace = held_replace
from gt_llm.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` and its bytes, but the call cache's.

    (The cache is SQLite, shared by design: a refused command checks that it
    can open it, which may touch its ``-shm`` index; it holds no results.)
    """
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and not p.name.endswith(CACHE_SUFFIXES)
    }


def _temps(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".tmp-*"))


@pytest.fixture(scope="module")
def held(tmp_path_factory) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A tournament child holding its folder's lock, stopped before its first log is in place."""
    out = tmp_path_factory.mktemp("lock") / "C"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD, *TOURNAMENT, "--seed", "0", "--out", str(out)],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line == "held", proc.stderr.read() if proc.stderr else ""
        yield proc, out
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_every_writer_is_refused_while_another_process_writes_the_folder(held):
    proc, out = held
    assert (out / LOCK_NAME).read_text().strip() == str(proc.pid)
    before = _snapshot(out)
    for command, args in WRITERS.items():
        done = run_cli([*args, "--seed", "100", "--force", "--out", str(out)])
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (command, lines)
        assert f"pid {proc.pid}" in lines[0] and f"'{out}'" in lines[0], (command, lines)
        assert "pass another --out" in lines[0]
    assert _snapshot(out) == before  # nothing read into, cleared or written


def test_a_killed_run_is_taken_over_its_temporary_logs_removed_and_never_listed(held):
    proc, out = held
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    pair = out / "logs" / "none_vs_rules"
    assert [p.name.startswith(".tmp-game_0000.") for p in pair.iterdir()] == [True]
    assert (out / LOCK_NAME).exists()  # left behind, no longer locked

    done = run_cli([*TOURNAMENT, "--seed", "0", "--out", str(out)])
    assert done.returncode == 0, done.stderr
    assert _temps(out) == [] and not (out / LOCK_NAME).exists()
    manifest = read_manifest(out)
    assert manifest is not None and manifest["complete"] is True
    logs = sorted(p.name for p in pair.iterdir())
    assert logs == ["game_0000.jsonl", "game_0001.jsonl"]
    assert json.loads((out / "tournament.json").read_text())["games"] == 2
    seeds = [json.loads((pair / n).read_text().splitlines()[0])["seed"] for n in logs]
    assert seeds == [0, 0]  # a tournament plays one deal twice, the sides swapped

    # A temporary log (as a kill leaves it) is no game of the index.
    (pair / ".tmp-game_0001.gtllm999999-abcdefgh.jsonl").write_bytes((pair / logs[1]).read_bytes())
    done = run_cli(["werewolf", "view", str(out), "--no-games"])
    assert done.returncode == 0, done.stderr
    page = (out / "view" / "index.html").read_text(encoding="utf-8")
    data = json.loads(page.split('id="page-data">', 1)[1].split("</script>", 1)[0])
    assert [r["log"] for r in data["rows"]] == [f"none_vs_rules/{n}" for n in logs]


def test_the_lock_file_is_never_a_result_and_an_unfinished_run_holds_it(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / LOCK_NAME).write_text("999999\n")  # left by a killed run: no manifest, not foreign
    run = prepare_results_dir(out, {"a": 1})
    with pytest.raises(ResultsError, match="unfinished run in this process"):
        prepare_results_dir(out, {"a": 1})
    run.write_text("a.csv", "x\n")
    with pytest.raises(ResultsError):
        run.record(LOCK_NAME)
    run.finish()
    assert not (out / LOCK_NAME).exists()

    # A manifest naming the lock file: --force clears the results, never the held lock.
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"].append(LOCK_NAME)
    (out / "manifest.json").write_text(json.dumps(manifest))
    run = prepare_results_dir(out, {"a": 2}, force=True)
    assert not (out / "a.csv").exists() and (out / LOCK_NAME).exists()
    with pytest.raises(ResultsError, match="unfinished run"):
        FolderLock.acquire(out)
    run.close()
    FolderLock.acquire(out).release()
