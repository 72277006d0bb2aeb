"""The shared layer under the commands' probes.

``runs.results`` deletes only inside the results folder (never through a
link, at any depth) and checks a folder before anything is created;
``gt_llm.cache_store.check_cache_writable`` refuses a cache that cannot be
written before a command touches ``--out``; ``prepare_model`` makes both
checks. Nothing here creates a lasting file outside ``tmp_path``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from pathlib import Path

import pytest

from games.engine.cli_options import prepare_model
from gt_llm.cache_store import check_cache_writable
from gt_llm.errors import ConfigurationError
from runs.atomic import ResultsError
from runs.results import check_results_dir, prepare_results_dir, unwritable_reason


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_force_deletes_listed_files_but_never_through_a_link(tmp_path, caplog):
    out, outside = tmp_path / "out", tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    for name in ("keep.txt", "deep/keep.txt", "target.csv"):
        (outside / name).write_text("outside\n")
    run = prepare_results_dir(out, {"a": 1})
    run.write_text("mine.csv", "x\n")
    (out / "logs").mkdir()
    (out / "logs" / "g.jsonl").write_text("{}\n")
    run.record("logs/g.jsonl")
    (out / "linkdir").symlink_to(outside, target_is_directory=True)
    (out / "real" / "below").mkdir(parents=True)
    (out / "real" / "below" / "inner").symlink_to(outside / "deep", target_is_directory=True)
    (out / "filelink.csv").symlink_to(outside / "target.csv")
    for name in ("linkdir/keep.txt", "real/below/inner/keep.txt", "filelink.csv"):
        run.record(name)
    run.finish()

    prepare_results_dir(out, {"a": 2}, force=True)

    assert _listing(outside) == ["deep", "deep/keep.txt", "keep.txt", "target.csv"]
    assert not (out / "mine.csv").exists() and not (out / "logs" / "g.jsonl").exists()
    assert (out / "filelink.csv").is_symlink()  # a listed link is left, not followed
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "linkdir/keep.txt" in warned and "real/below/inner/keep.txt" in warned


def test_unwritable_reason_finds_what_permissions_do_not(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert unwritable_reason("/proc/nope/c.sqlite") is not None
    assert unwritable_reason("/proc/nope", folder=True) is not None
    assert "not a folder" in (unwritable_reason(a_file / "c.sqlite") or "")
    assert "not a folder" in (unwritable_reason(a_file, folder=True) or "")
    assert "a folder, not a file" in (unwritable_reason(tmp_path) or "")
    before = _listing(tmp_path)
    assert unwritable_reason(tmp_path / "new.sqlite") is None
    assert unwritable_reason(tmp_path / "x" / "y" / "new.sqlite") is None
    assert unwritable_reason(tmp_path / "x" / "y", folder=True) is None
    assert _listing(tmp_path) == before  # the probes leave nothing behind


def test_check_cache_writable_refuses_in_one_line_and_creates_nothing(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for bad in ("/proc/nope/c.sqlite", str(a_file / "c.sqlite")):
        with pytest.raises(ConfigurationError, match="cannot open .* for writing.*--cache"):
            check_cache_writable(bad)
    before = _listing(tmp_path)
    check_cache_writable(":memory:")
    check_cache_writable(tmp_path / "deep" / "new.sqlite")
    assert _listing(tmp_path) == before
    sqlite3.connect(tmp_path / "ok.sqlite").close()  # an empty database becomes a cache
    check_cache_writable(tmp_path / "ok.sqlite")


def test_check_results_dir(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for bad in ("", "/proc/nope", str(a_file), str(a_file / "out")):
        with pytest.raises(ResultsError, match="--out"):
            check_results_dir(bad)
    check_results_dir(tmp_path / "new" / "out")
    assert not (tmp_path / "new").exists()


def _args(out: Path, cache: str | None, backend: str = "scripted") -> argparse.Namespace:
    return argparse.Namespace(
        out=str(out), cache=cache, backend=backend, force=True, timeout=None,
        retry_budget=None, rpm=None, max_answer_bytes=None,
    )  # fmt: skip


def test_prepare_model_checks_the_cache_before_anything_is_created(tmp_path, monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    out = tmp_path / "out"
    with pytest.raises(ConfigurationError, match="cache: cannot open /proc/nope"):
        prepare_model(_args(out, "/proc/nope/c.sqlite"))
    with pytest.raises(ResultsError, match="--out"):
        prepare_model(_args(Path("/proc/nope/out"), None))
    with pytest.raises(ConfigurationError, match="GROQ_API_KEY"):
        prepare_model(_args(out, None, backend="groq"))
    assert not out.exists()
    prepare_model(_args(out, None)).close()
    assert not out.exists()
    assert os.listdir(tmp_path) == []
