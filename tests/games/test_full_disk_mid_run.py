"""A disk that fills up mid-run: one line naming the file being written and the fix.

The disk fills while ``werewolf play --games 2`` writes its first game log
(in a second run: its ``summary.json``, after the games): the command stops
with one line naming that file, the cause and what to do, and no file is left
under that name.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

PLAY = ("werewolf", "play", "--games", "2", "--max-rounds", "1", "--no-progress")


def _full_when_writing(monkeypatch, part: str) -> None:
    """``os.fsync`` fails with ENOSPC for open files whose path holds ``part``."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if part in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.parametrize("file", ["logs/game_000000.jsonl", "summary.json"])
def test_a_full_disk_names_the_file_and_the_fix(tmp_path, monkeypatch, file):
    out = tmp_path / "out"
    _full_when_writing(monkeypatch, f".tmp-{Path(file).stem}")
    done = run_cli([*PLAY, "--out", str(out)])
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{out / file}: No space left on device (the disk is full)" in lines[0], lines
    assert "free some space, then re-run the same command" in lines[0]
    assert not (out / file).exists()
