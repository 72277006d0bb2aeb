"""The sweep of temporary files: only ours, only of a writer that is gone, only once checked.

Our atomic writes name their temporary files ``.tmp-<name>.gtllm<pid>-<random>``.
A results folder is swept when a run has taken its lock and the folder was
accepted: at the top and in the folders of its listed files, the temporary
files of a process that is gone (a killed run) are removed. A user's
``.tmp-precious.txt``, the temporary manifest of another live process, a file
behind a link, and anything in a folder whose run is refused are left alone.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.atomic import atomic_path, atomic_write_bytes, own_temp_pid
from runs.results import prepare_results_dir
from tests.cli_runner import run_cli

PLAY = ("werewolf", "play", "--games", "2", "--max-rounds", "1", "--no-progress")


@pytest.fixture
def pids() -> Iterator[tuple[int, int]]:
    """``(live, dead)``: a process that runs during the test, and one that has ended."""
    ended = subprocess.Popen(["true"])
    ended.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        yield live.pid, ended.pid
    finally:
        live.kill()
        live.wait()


def test_our_temporary_names_carry_the_writer_and_no_other_name_matches(tmp_path, monkeypatch):
    seen: list[str] = []
    real_replace = os.replace

    def spy(src, dst, *a, **k):
        seen.append(Path(src).name)
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", spy)
    atomic_write_bytes(tmp_path / "summary.json", b"{}")
    with atomic_path(tmp_path / "game_0000.jsonl") as tmp:
        tmp.write_text("{}\n")
    assert [own_temp_pid(n) for n in seen] == [os.getpid()] * 2, seen
    assert seen[1].startswith(".tmp-game_0000.") and seen[1].endswith(".jsonl")
    for other in (".tmp-precious.txt", ".tmp-x.gtllm12-abc", "tmp-a.gtllm12-abcdefgh", "a.json"):
        assert own_temp_pid(other) is None


def test_only_our_dead_writes_are_swept_and_only_in_an_accepted_folder(tmp_path, pids):
    live, dead = pids
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    old = prepare_results_dir(out, {"other": "settings"})
    (out / "logs").mkdir()
    old.record("logs/game_000000.jsonl")
    old.record("linked/x.jsonl")
    old.close()  # killed: its manifest lists what it was writing
    (out / "linked").symlink_to(outside, target_is_directory=True)
    kept = {
        ".tmp-precious.txt": "the user's",
        f".tmp-manifest.json.gtllm{live}-v5sd3w0t": "another live process's write",
    }
    swept = {
        f".tmp-summary.json.gtllm{dead}-abcdefgh": "a killed run's write",
        f"logs/.tmp-game_000000.gtllm{dead}-abcdefgh.jsonl": "a killed run's log",
    }
    for name, text in {**kept, **swept}.items():
        (out / name).write_text(text)
    behind_link = outside / f".tmp-x.gtllm{dead}-abcdefgh.jsonl"
    behind_link.write_text("outside the folder")
    every = {**kept, **swept}

    # Refused (other settings, no --force): nothing is touched.
    done = run_cli([*PLAY, "--out", str(out)])
    assert done.returncode == 2 and "other settings" in done.stderr, done.stderr
    assert all((out / n).read_text() == t for n, t in every.items())

    # Accepted: the killed run's files go, nothing else.
    done = run_cli([*PLAY, "--force", "--out", str(out)])
    assert done.returncode == 0, done.stderr
    assert all((out / n).read_text() == t for n, t in kept.items())
    assert not any((out / n).exists() for n in swept)
    assert behind_link.read_text() == "outside the folder"
