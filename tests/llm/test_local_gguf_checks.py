"""``local:PATH`` must name a loadable GGUF file.

``gt-llm backends local:bad.gguf`` (missing, zero bytes, text, random bytes,
a folder) reported the backend configured and working. Now the file's header
is checked (exists, regular file, magic ``GGUF``, a version llama.cpp reads,
sane counts) and what is wrong is said in one line, by ``backends`` and
before any ``--backend local:PATH`` command starts (no folder, no cache).
None of this needs llama.cpp: the header is read before the vendor module.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

import gt_llm
from gt_llm.backends import local
from gt_llm.errors import ConfigurationError
from tests.cli_runner import run_cli
from tests.llm.gguf_files import gguf_bytes


def _header(version: int = 3, tensors: int = 10, entries: int = 5) -> bytes:
    return struct.pack("<4sIQQ", b"GGUF", version, tensors, entries)


#: name -> (how to make it, a word the one-line reason must hold)
BAD_FILES = {
    "missing": (None, "no model file"),
    "zero-bytes": (b"", "empty"),
    "text": (b"hello, I am not a model\n", "not a GGUF"),
    "random": (bytes(range(7, 200)), "not a GGUF"),
    "folder": ("dir", "folder"),
    "version-1": (_header(version=1) + b"x" * 64, "version 1"),
    "version-99": (_header(version=99) + b"x" * 64, "version 99"),
    "cut-short": (b"GGUF\x03\x00", "cut short"),
    "no-tensors": (_header(tensors=0) + b"x" * 64, "damaged"),
}


def _make(tmp_path: Path, name: str) -> str:
    content, _ = BAD_FILES[name]
    path = tmp_path / "model.gguf"  # a name without the words the reasons are matched by
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_backends_names_what_is_wrong_with_the_file(name, tmp_path):
    path = _make(tmp_path, name)
    proc = run_cli(["backends", f"local:{path}"])
    assert proc.returncode == 1, proc.stdout
    row, note = proc.stdout.splitlines()[1:3]
    assert row.split()[1] == "no", row  # not configured
    assert note.startswith(f"local:{path}: not configured: ") and BAD_FILES[name][1] in note, note


@pytest.mark.parametrize("name", sorted(BAD_FILES))
@pytest.mark.parametrize(
    "command",
    [
        ("ultimatum", "solve", "--iterations", "5"),
        ("werewolf", "play", "--max-rounds", "2", "--debate-turns", "1"),
        ("werewolf", "solve", "--days", "1", "--speakers", "1", "--iterations", "5"),
        ("fruit-trading", "run", "--inits", "1", "--max-messages", "2", "--iterations", "5"),
        ("ask", "hello"),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_commands_refuse_the_file_before_they_start(command, name, tmp_path):
    path = _make(tmp_path, name)
    out = tmp_path / "out"
    extra = [] if command[0] == "ask" else ["--no-progress", "--out", str(out)]
    proc = run_cli([*command, "--backend", f"local:{path}", *extra])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "--backend" in lines[0] and BAD_FILES[name][1] in lines[0], lines[0]
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_load_model_and_the_model_name_the_file_first(name, tmp_path):
    path = _make(tmp_path, name)
    reason = BAD_FILES[name][1]
    with pytest.raises(ConfigurationError, match=reason):
        gt_llm.load_model(f"local:{path}")
    # Whether or not llama.cpp is installed: the file is what the user must fix.
    with pytest.raises(ConfigurationError, match=reason):
        local.LocalModel(path)


def test_a_complete_model_passes_the_header_and_layout_checks(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_bytes())  # header, metadata, tensor records and their data
    assert local.check_model_file(str(path)) is None
    proc = run_cli(["backends", f"local:{path}"])
    note = proc.stdout.splitlines()[2] if proc.returncode else ""
    assert "GGUF" not in note and "file" not in note, note  # only the install may be missing


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_is_refused_without_being_opened(tmp_path):
    path = tmp_path / "pipe.gguf"
    os.mkfifo(path)
    reason = local.check_model_file(str(path))  # would block forever if it opened the pipe
    assert reason is not None and "not a regular file" in reason


def test_the_bundled_model_needs_no_file_check():
    assert local.check_rest("") is None
    assert local.check_rest(local.BUNDLED_MODEL) is None
