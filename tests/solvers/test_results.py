"""Results folders: atomic writes (proved with SIGKILL), manifests, mixed-folder refusal, readers."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runs.atomic import (
    ResultsError,
    atomic_path,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    read_json,
)
from runs.lock import LOCK_NAME
from runs.results import (
    MANIFEST_NAME,
    prepare_results_dir,
    read_manifest,
    require_complete,
    warn_if_incomplete,
)

ROOT = Path(__file__).resolve().parents[2]

# Writes a valid small summary, says so, then rewrites a large one forever.
CHILD_WRITER = r"""
import sys
from runs.atomic import atomic_write_json
path = sys.argv[1]
atomic_write_json(path, {"version": "old", "rows": [1, 2, 3]})
print("ready", flush=True)
big = {"version": "new", "rows": list(range(1_000_000))}
while True:
    atomic_write_json(path, big)
"""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def test_sigkill_mid_write_leaves_the_previous_file_intact(tmp_path):
    target = tmp_path / "summary.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD_WRITER, str(target)],
        env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        # Kill while a temporary file exists, i.e. while the large summary is being written.
        deadline = time.monotonic() + 20
        while not any(p.name.startswith(".tmp-") for p in tmp_path.iterdir()):
            assert time.monotonic() < deadline, "the child never started its large write"
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    data = json.loads(target.read_text())  # never truncated: old or a complete new one
    assert data["version"] in ("old", "new")
    assert data["rows"] == ([1, 2, 3] if data["version"] == "old" else list(range(1_000_000)))
    # A refused prepare touches nothing, not even the killed write's temporary file
    # (summary.json without a manifest is refused, never cleared, even with force) ...
    assert any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())
    with pytest.raises(ResultsError, match="never emptied"):
        prepare_results_dir(tmp_path, {"a": 1}, force=True)
    assert any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())
    # ... an accepted one removes it (the writer is gone).
    target.rename(tmp_path / "summary.json.moved")
    prepare_results_dir(tmp_path, {"a": 1}).close()
    assert not any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())


def test_atomic_writers_round_trip_and_leave_no_temp_files(tmp_path):
    atomic_write_bytes(tmp_path / "a.bin", b"\x00\x01")
    atomic_write_text(tmp_path / "b.txt", "héllo\n")
    atomic_write_json(tmp_path / "c.json", {"x": [1, 2]})
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "héllo\n"
    assert json.loads((tmp_path / "c.json").read_text()) == {"x": [1, 2]}
    with pytest.raises(ValueError):
        atomic_write_json(tmp_path / "c.json", {"x": float("nan")})  # strict JSON
    assert json.loads((tmp_path / "c.json").read_text()) == {"x": [1, 2]}  # unchanged
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "d.csv") as tmp:
        tmp.write_text("partial")
        raise RuntimeError("writer failed")
    assert not (tmp_path / "d.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "b.txt", "c.json"]


def test_manifest_is_written_first_incomplete_and_last_complete(tmp_path):
    out = tmp_path / "run"
    run = prepare_results_dir(
        out, {"inits": 2, "variants": ["tone"]}, backend="scripted", model="rules-v1",
        command=["gt-llm", "fruit-trading", "run"],
    )  # fmt: skip
    first = read_manifest(out)
    assert first["complete"] is False and first["finished_at"] is None
    assert first["settings"] == {"inits": 2, "variants": ["tone"]}
    assert (first["backend"], first["model"]) == ("scripted", "rules-v1")
    assert first["command"] == ["gt-llm", "fruit-trading", "run"]
    assert first["python"] and "numpy" in first["packages"]
    assert first["git_commit"] is None or len(first["git_commit"]) == 40
    with pytest.raises(ResultsError, match="is incomplete"):
        require_complete(out)
    run.write_json("summary.json", {"m": 1.5})
    with run.atomic_path("curves.csv") as tmp:
        tmp.write_text("a,b\n1,2\n")
    assert read_manifest(out)["files"] == ["summary.json", "curves.csv"]
    final = run.finish(calls=7)
    assert final["complete"] is True and final["calls"] == 7 and final["finished_at"]
    assert require_complete(out)["settings"] == {"inits": 2, "variants": ["tone"]}
    assert warn_if_incomplete(out) is True


def test_other_settings_are_refused_in_one_line_and_force_keeps_the_cache(tmp_path):
    out = tmp_path / "fruit"
    run = prepare_results_dir(out, {"inits": 30, "iterations": 1000}, backend="scripted")
    run.write_json("summary.json", {"inits": 30})
    run.write_text("curves_tone+belief.csv", "x\n")
    run.finish()
    (out / "llm_cache.sqlite").write_bytes(b"cache")
    (out / "llm_cache.sqlite-wal").write_bytes(b"wal")
    (out / "notes").mkdir()
    (out / "notes" / "keep.txt").write_text("mine")

    with pytest.raises(ResultsError) as err:
        prepare_results_dir(out, {"inits": 2, "iterations": 1000}, backend="scripted")
    msg = str(err.value)
    assert "\n" not in msg and "other settings" in msg and "inits: 30 -> 2" in msg
    assert "--force" in msg
    assert json.loads((out / "summary.json").read_text()) == {"inits": 30}  # untouched

    # The same settings are a re-run: accepted as is.
    prepare_results_dir(out, {"iterations": 1000, "inits": 30}, backend="scripted")

    run = prepare_results_dir(out, {"inits": 2, "iterations": 1000}, backend="scripted", force=True)
    left = sorted(p.name for p in out.iterdir())
    # (.gt-llm.lock: the folder's lock, held by the open run until it finishes.)
    kept = [MANIFEST_NAME, LOCK_NAME, "llm_cache.sqlite", "llm_cache.sqlite-wal", "notes"]
    assert left == sorted(kept)
    assert (out / "notes" / "keep.txt").read_text() == "mine"
    assert run.manifest["settings"]["inits"] == 2


def test_a_folder_of_results_without_manifest_is_refused(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ResultsError, match="no manifest.json"):
        prepare_results_dir(tmp_path, {"a": 1})
    with pytest.raises(ResultsError, match="no manifest.json"):
        require_complete(tmp_path)
    # Unrelated files are neither results nor a reason to refuse.
    other = tmp_path / "other"
    other.mkdir()
    (other / "script.py").write_text("x = 1\n")
    (other / "c.sqlite").write_bytes(b"")
    prepare_results_dir(other, {"a": 1})
    assert (other / "script.py").exists()


def test_force_refuses_a_project_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "README.md").write_text("# mine\n")
    with pytest.raises(ResultsError, match="looks like a project folder"):
        prepare_results_dir(tmp_path, {"a": 1}, force=True)
    assert (tmp_path / "README.md").exists()


@pytest.mark.parametrize("out", ["", "  "])
def test_empty_out_is_refused(out, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ResultsError, match="output folder is empty"):
        prepare_results_dir(out, {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_readers_name_the_broken_file(tmp_path, caplog):
    (tmp_path / "summary.json").write_bytes(b"")  # what an in-place write leaves after a kill
    with pytest.raises(ResultsError) as err:
        read_json(tmp_path / "summary.json", rerun="gt-llm fruit-trading run")
    msg = str(err.value)
    assert msg.startswith("summary.json is not valid JSON (Expecting value at line 1 column 1)")
    assert "re-run gt-llm fruit-trading run" in msg
    with pytest.raises(ResultsError, match="missing"):
        read_json(tmp_path / "nope.json")

    run = prepare_results_dir(tmp_path / "r", {"a": 1})
    run.write_json("summary.json", {})
    with caplog.at_level(logging.WARNING, logger="runs.results"):
        assert warn_if_incomplete(tmp_path / "r") is False
    assert "is incomplete" in caplog.text
    (tmp_path / "r" / MANIFEST_NAME).write_text('{"complete": tr')
    with pytest.raises(ResultsError, match="manifest.json is not valid JSON"):
        require_complete(tmp_path / "r")


def test_file_names_must_be_plain(tmp_path):
    run = prepare_results_dir(tmp_path, {})
    for bad in ["../x.json", "sub/x.json", MANIFEST_NAME, "c.sqlite", ""]:
        with pytest.raises(ResultsError):
            run.write_text(bad, "x")


def test_an_interrupted_run_of_the_same_settings_is_resumed_in_place(tmp_path):
    run = prepare_results_dir(tmp_path, {"inits": 3}, backend="scripted")
    run.write_json("summary.json", {"partial": True})  # then the process dies: no finish()
    run.close()  # what the end of the process does: the folder's lock is freed
    again = prepare_results_dir(tmp_path, {"inits": 3}, backend="scripted")
    assert again.manifest["files"] == ["summary.json"] and again.manifest["complete"] is False
    again.write_json("summary.json", {"partial": False})
    again.finish()
    assert require_complete(tmp_path)["files"] == ["summary.json"]
    # Another backend is other settings.
    with pytest.raises(ResultsError, match='backend: "scripted" -> "groq"'):
        prepare_results_dir(tmp_path, {"inits": 3}, backend="groq")


def test_every_reader_refuses_an_oversized_or_missing_file_through_one_guard(tmp_path, monkeypatch):
    # One size guard (runs.atomic.checked_size) for result JSON, CSV tables and game logs:
    # a file over the reader's limit is refused before it is loaded, in the reader's error.
    import runs.atomic as atomic
    from games.werewolf.play import log as wlog
    from solvers.plots import read_csv_rows

    big = tmp_path / "big.json"
    big.write_text(json.dumps({"x": "y" * 200}))
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    game = tmp_path / "g.jsonl"
    game.write_text('{"type": "header"}\n' + "{}\n" * 50)
    assert atomic.read_json(big) == {"x": "y" * 200}
    assert read_csv_rows(table) == [{"a": "1", "b": "2"}]
    monkeypatch.setattr(atomic, "MAX_READ_BYTES", 100)
    monkeypatch.setattr(wlog, "MAX_LOG_BYTES", 100)
    with pytest.raises(
        ResultsError,
        match=r"big\.json: 2\d\d bytes, more than the 100 a result file may hold: re-run",
    ):
        atomic.read_json(big)
    table.write_text("a,b\n" + "1,2\n" * 40)
    with pytest.raises(
        ResultsError,
        match=r"t\.csv: 1\d\d bytes, more than the 100 a result table may hold: re-run the",
    ):
        read_csv_rows(table)
    with pytest.raises(
        wlog.LogError, match=r"g\.jsonl: 1\d\d bytes, more than the 100 a log may hold$"
    ):
        wlog.read_log(game)
    with pytest.raises(ResultsError, match="missing.json is missing in"):
        atomic.read_json(tmp_path / "missing.json")
    with pytest.raises(ResultsError, match="no such table"):
        read_csv_rows(tmp_path / "missing.csv")
    with pytest.raises(wlog.LogError, match="no such log"):
        wlog.read_log(tmp_path / "missing.jsonl")
    with pytest.raises(ResultsError, match=r"cannot read a result table \("):
        atomic.checked_size(tmp_path / "t.csv" / "below", 10, what="a result table")
