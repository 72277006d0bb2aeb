"""Every reader of a results or log file opens regular files only, and reads a bounded size.

A FIFO where a file should be (``decisions.json`` of a ``+cfr:`` agent,
``tournament.json`` under ``werewolf view``, ``manifest.json``, a game log, a
table) used to block forever; a link to ``/dev/zero`` grew memory until a
``MemoryError``. Each reader is called on both, in a child process with a
timeout and a memory limit (so a regression fails instead of hanging or
eating the machine), and must refuse in one line naming the file and what it
is. A folder where a file should be is named as one too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from runs.atomic import MAX_READ_BYTES, ResultsError, read_json
from runs.readers import read_jsonl, read_text

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs"
)

#: The readers, each called on ``P`` (the odd file) or ``D`` (a folder holding it as ``NAME``).
#: name -> (file name, Python expression)
READERS = {
    "read_json": ("summary.json", "runs.atomic.read_json(P)"),
    "read_json_as": ("arena.json", "runs.atomic.read_json_as(P, dict, what='x', rerun='y')"),
    "read_text": ("days.csv", "runs.readers.read_text(P)"),
    "read_jsonl": ("dialogues_tone.jsonl", "runs.readers.read_jsonl(P)"),
    "read_csv_rows": ("pairs.csv", "solvers.plots.read_csv_rows(P)"),
    "curves": ("curves.json", "solvers.curve_data.Curves.from_json(P)"),
    "manifest": ("manifest.json", "runs.results.read_manifest(D)"),
    "game log": ("game_0000.jsonl", "games.werewolf.play.log.read_log(P)"),
    "decisions.json": (
        "decisions.json",
        "games.werewolf.players.cfr_policy.load_day_policy(D, 'gratr')",
    ),
    "werewolf view": ("tournament.json", "view(D)"),
}

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    from pathlib import Path
    # A reader that reads /dev/zero whole fails here instead of filling the machine's memory.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    import games.werewolf.play.log, games.werewolf.players.cfr_policy
    import runs.atomic, runs.readers, runs.results, solvers.curve_data, solvers.plots
    from tests.cli_runner import run_cli

    def view(folder):
        proc = run_cli(["werewolf", "view", str(folder), "--no-games"])
        raise ValueError(proc.stderr.strip() or f"exit {proc.returncode}")

    for name, kind, where, expression in json.loads(sys.argv[1]):
        D = Path(where)
        P = D / os.listdir(D)[0]
        try:
            eval(expression)
            result = [name, kind, None, "read without an error"]
        except BaseException as exc:
            result = [name, kind, type(exc).__name__, str(exc)]
        sys.stdout.write(json.dumps(result) + "\\n")
        sys.stdout.flush()
    """
)


def _make(folder: Path, name: str, kind: str) -> Path:
    folder.mkdir(parents=True)
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


def test_no_reader_follows_a_fifo_or_a_device(tmp_path):
    cases = []
    for name, (file, expression) in READERS.items():
        for kind in ("fifo", "zero"):
            folder = tmp_path / f"{name.replace(' ', '_')}-{kind}"
            _make(folder, file, kind)
            cases.append([name, kind, str(folder), expression])
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(cases)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,  # a reader blocked on a FIFO fails the test here
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        done = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        finished = [json.loads(line)[:2] for line in done.splitlines() if line.startswith("[")]
        pytest.fail(f"a reader blocked for 60 s after these finished: {finished}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    assert len(results) == len(cases), proc.stderr[-2000:]
    for name, kind, error, message in results:
        what = "a named pipe (FIFO)" if kind == "fifo" else "a device"
        where = f"{name} on {kind}"
        assert error is not None and error != "MemoryError", f"{where}: {error}: {message}"
        assert "Traceback" not in message and len(message.splitlines()) == 1, f"{where}: {message}"
        assert f"is {what}, not " in message and "(a regular file)" in message, (
            f"{where}: {message}"
        )
        assert READERS[name][0] in message, f"{where}: {message}"


def test_a_folder_where_a_file_should_be_is_named_as_one(tmp_path):
    for name, reader in (
        ("summary.json", read_json),
        ("days.csv", read_text),
        ("dialogues_tone.jsonl", read_jsonl),
    ):
        path = tmp_path / name
        path.mkdir()
        with pytest.raises(ResultsError) as err:
            reader(path, rerun="`gt-llm x --out OUT`")
        message = str(err.value)
        assert message.startswith(f"{path} is a folder, not a result file (a regular file)")
        assert message.endswith("re-run `gt-llm x --out OUT`"), message


def test_a_folder_as_tournament_json_is_named_by_werewolf_view(tmp_path):
    from tests.cli_runner import run_cli

    out = tmp_path / "T"
    (out / "tournament.json").mkdir(parents=True)
    (out / "logs").mkdir()
    proc = run_cli(["werewolf", "view", str(out)])
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line == (
        f"gt-llm: error: {out}/tournament.json is a folder, not a result file (a regular file): "
        f"re-run gt-llm werewolf tournament --out {out}"
    ), line


def test_the_size_bound_is_one_named_constant(tmp_path, monkeypatch):
    import runs.atomic

    path = tmp_path / "summary.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    monkeypatch.setattr(runs.atomic, "MAX_READ_BYTES", 4)
    with pytest.raises(ResultsError, match=r"8 bytes, more than the 4 a result file may hold"):
        runs.atomic.read_json(path)
    assert MAX_READ_BYTES == 256 * 1024 * 1024
