"""A GGUF file whose header is valid but whose body is missing is refused before anything starts.

``local:PATH`` is checked past its 24-byte header: every metadata entry and
tensor record must be there, and the file must hold the data its tensors
declare (:mod:`gt_llm.backends.gguf`). A header alone, or a download cut
short, is reported unusable by ``gt-llm backends`` and refused in one line
by a command before its ``--out`` folder, manifest or worker exists.
"""

from __future__ import annotations

import struct

import pytest

from gt_llm.backends import gguf, local
from tests.cli_runner import run_cli
from tests.llm.gguf_files import gguf_bytes

FULL = gguf_bytes()

#: name -> (the file's bytes, a word the one-line reason must hold)
INCOMPLETE = {
    "header-only": (FULL[:24], "cut short"),
    "metadata-cut": (FULL[:60], "cut short"),
    "no-tensor-data": (gguf_bytes(with_data=False), "cut short"),
    "last-byte-missing": (FULL[:-1], "cut short"),
    "five-dimensions": (gguf_bytes(((32, 1, 1, 1, 1),)), "damaged"),
    "row-not-whole-blocks": (gguf_bytes(((30, 2),), kind=2), "damaged"),  # Q4_0: 32 a block
}


@pytest.mark.parametrize("name", sorted(INCOMPLETE))
def test_the_layout_check_names_what_is_missing(name, tmp_path):
    content, word = INCOMPLETE[name]
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    reason = local.check_model_file(str(path))
    assert reason is not None and word in reason and "\n" not in reason, reason
    assert str(path) in reason


def test_a_complete_file_is_exactly_as_large_as_its_tensors_need():
    tensors, entries = struct.unpack_from("<QQ", FULL, 8)
    assert gguf.layout_problem(FULL, header_size=24, tensors=tensors, entries=entries) is None
    cut = gguf.layout_problem(FULL[:-1], header_size=24, tensors=tensors, entries=entries)
    assert cut is not None and f"end at byte {len(FULL):,}" in cut


def test_a_damaged_count_is_refused_without_looping_over_it():
    # A string array claiming 2^60 items in a file of a few bytes: refused at once.
    body = (
        struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2**60) + struct.pack("<Q", 1) + b"x"
    )
    data = struct.pack("<4sIQQ", b"GGUF", 3, 1, 1) + body
    problem = gguf.layout_problem(data, header_size=24, tensors=1, entries=1)
    assert problem is not None and "cut short" in problem


def test_backends_reports_a_header_only_file_unusable(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(FULL[:24])
    proc = run_cli(["backends", f"local:{path}"])
    assert proc.returncode == 1, proc.stdout
    row, note = proc.stdout.splitlines()[1:3]
    assert row.split()[1] == "no", row  # not configured, so never "reachable yes"
    assert "not configured" in note and "cut short" in note, note


def test_a_command_refuses_it_before_creating_its_folder(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_bytes(with_data=False))
    out = tmp_path / "out"
    proc = run_cli(
        ["werewolf", "play", "--games", "2", "--backend", f"local:{path}", "--out", str(out)]
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "--backend" in lines[0] and "cut short" in lines[0], lines[0]
    assert not out.exists()
