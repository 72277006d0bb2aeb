"""Each fault of the second hardening pass made real.

Runs the real ``gt-llm`` command in a child process against the loopback
fake chat-completions server (tests/llm/fake_server.py), as a new user would.
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_server import Canned, FakeChatServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SECRET = "SECRETPW77"


@pytest.fixture
def server():
    with FakeChatServer() as s:
        yield s


@pytest.fixture
def env(monkeypatch) -> dict[str, str]:
    import os

    e = dict(os.environ)
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        e.pop(name, None)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), e.get("PYTHONPATH", "")]))
    e["NO_PROXY"] = "127.0.0.1,localhost"
    return e


def gt(env, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", *args],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )  # fmt: skip


def secret_spec(server: FakeChatServer) -> str:
    return f"openai:m@http://alice:{SECRET}@127.0.0.1:{server.port}/v1"


def files_holding(folder: Path, needle: str) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and needle.encode() in p.read_bytes()
    )


# -- 1. no password on disk or on the terminal ------------------------------------------------------

FRUIT_SMALL = ("--inits", "1", "--iterations", "10", "--max-messages", "2", "--num-seeds", "1",
               "--variants", "tone", "--no-generalisation", "--no-whole-game",
               "--no-progress")  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        # Every probe (about 5 s each) runs in CI's slow step; the 401 echo below is the
        # default suite's check that a credential never reaches the terminal.
        pytest.param(("fruit-trading", "run", *FRUIT_SMALL), marks=pytest.mark.slow),
        pytest.param(("werewolf", "play", "--games", "2", "--no-progress"),
                     marks=pytest.mark.slow),
        pytest.param(("werewolf", "arena", "--games", "2", "--no-progress"),
                     marks=pytest.mark.slow),
        pytest.param(("werewolf", "solve", "--days", "1", "--iterations", "5", "--models",
                      "none", "--no-progress"), marks=pytest.mark.slow),
    ],
    ids=["fruit-run", "werewolf-play-games", "werewolf-arena", "werewolf-solve"],
)  # fmt: skip
def test_a_password_in_the_backend_url_reaches_no_file_and_no_terminal(
    server, env, tmp_path, command
):
    out = tmp_path / "out"
    proc = gt(env, "-vv", *command, "--out", str(out), "--backend", secret_spec(server))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert server.request_count > 0
    assert server.requests[0].headers["authorization"].startswith("Basic ")
    assert files_holding(out, SECRET) == []
    assert SECRET not in proc.stdout and SECRET not in proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert "alice" not in json.dumps(manifest)


def test_a_401_echo_of_basic_credentials_is_redacted_on_the_terminal(server, env):
    server.enqueue(Canned(status=401, echo_auth=True))
    proc = gt(env, "-vv", "ask", "--backend", secret_spec(server), "hi")
    assert proc.returncode == 2
    basic = base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert "401" in proc.stderr
    for text in (proc.stdout, proc.stderr):
        assert SECRET not in text and basic not in text


# -- 2/3. --force checks everything first and removes only our files ----------------------------

FRUIT_RUN = ("fruit-trading", "run", *FRUIT_SMALL)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def run_main(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    from gt_llm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, err.getvalue()


@pytest.fixture
def finished(tmp_path) -> Path:
    out = tmp_path / "run"
    code, err = run_main(*FRUIT_RUN, "--out", str(out))
    assert code == 0, err
    return out


def test_force_never_empties_a_folder_without_our_manifest(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    for name in ("thesis.md", "notes.txt", "paper.pdf", "budget.csv"):
        (out / name).write_text(name)
    before = snapshot(out)
    code, err = run_main(*FRUIT_RUN, "--out", str(out), "--force")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "never emptied" in lines[0], err
    assert "thesis.md" in lines[0] and "budget.csv" in lines[0]
    assert snapshot(out) == before


@pytest.mark.parametrize(
    ("extra", "env", "needle"),
    [
        (("--backend", "openai:no-url"), {}, "bad spec"),
        (("--backend", "groq"), {"GROQ_API_KEY": None}, "GROQ_API_KEY"),
        (("--cache", "FOREIGN"), {}, "not a gt-llm cache"),
    ],
    ids=["malformed-backend", "unset-key", "foreign-cache"],
)
def test_force_deletes_nothing_before_backend_key_and_cache_are_checked(
    finished, tmp_path, monkeypatch, extra, env, needle
):
    import sqlite3

    foreign = tmp_path / "other.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE jobs (id INTEGER)")
    conn.commit()
    conn.close()
    extra = tuple(str(foreign) if x == "FOREIGN" else x for x in extra)
    for name, value in env.items():
        monkeypatch.delenv(name, raising=False) if value is None else monkeypatch.setenv(
            name, value
        )
    before = snapshot(finished)
    code, err = run_main(
        *FRUIT_RUN, "--iterations", "11", "--out", str(finished), "--force", *extra
    )
    assert code == 2 and needle in err, err
    assert len(err.strip().splitlines()) == 1
    assert snapshot(finished) == before


def test_force_removes_only_the_files_the_manifest_lists(finished):
    (finished / "notes.txt").write_text("mine")
    (finished / "extra.csv").write_text("a,b\n")
    code, err = run_main(*FRUIT_RUN, "--iterations", "11", "--out", str(finished), "--force")
    assert code == 0, err
    assert (finished / "notes.txt").read_text() == "mine"
    assert (finished / "extra.csv").read_text() == "a,b\n"
    manifest = json.loads((finished / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["settings"]["iterations"] == 11


@pytest.mark.slow  # long end to end: .ci/run runs it (-m slow)
def test_a_finished_groq_run_is_resolved_and_replotted_without_the_key(server, env, tmp_path):
    out = tmp_path / "groq"
    keyed = dict(env, GROQ_API_KEY="test-key-123456", GROQ_BASE_URL=server.url)
    first = gt(keyed, *FRUIT_RUN, "--backend", "groq:llama-test", "--out", str(out))
    assert first.returncode == 0, first.stderr[-2000:]
    paid = server.request_count
    keyless = dict(env, GROQ_BASE_URL=server.url)
    # A refused re-run (other settings, --force, no key) leaves the finished run as it was.
    before = snapshot(out)
    refused = gt(keyless, *FRUIT_RUN, "--iterations", "12", "--backend", "groq:llama-test",
                 "--out", str(out), "--force")  # fmt: skip
    assert refused.returncode == 2 and "GROQ_API_KEY" in refused.stderr
    assert snapshot(out) == before
    # Re-solved from the cache alone, then re-plotted: no key, no request.
    again = gt(keyless, *FRUIT_RUN, "--backend", "groq:llama-test", "--out", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((out / "manifest.json").read_text())["complete"] is True
    figures = gt(keyless, "fruit-trading", "figures", "--out", str(out))
    assert figures.returncode == 0, figures.stderr[-2000:]
    assert server.request_count == paid


# -- 4/15. every result-changing flag is compared; the server's port is not ------------------------


def test_pools_and_names_are_other_settings(finished):
    before = snapshot(finished)
    code, err = run_main(
        *FRUIT_RUN, "--pools", "shared", "--names", "fixed", "--out", str(finished)
    )
    assert code == 2 and "other settings" in err and "pools" in err, err
    assert snapshot(finished) == before


def _other_value(action):
    import argparse

    if isinstance(action, argparse._StoreTrueAction):
        return []
    if action.choices:
        return [next(c for c in action.choices if c != action.default)]
    if action.dest == "variants":
        return ["tone"]
    if action.dest == "player_backends":
        return ["scripted,scripted:rules-v2/b"]
    if action.dest == "eval_seeds":  # default None: as many as the solve's on a model
        return ["1"]
    if action.dest == "fdr_q":  # bounded to (0, 0.5]
        return ["0.1"]
    if isinstance(action.default, (int, float)) and not isinstance(action.default, bool):
        return [str(action.default + 1)]
    return None


def test_every_result_changing_fruit_flag_is_compared():
    from games.engine.cli_options import NON_RESULT_OPTIONS
    from games.fruit_trading.cli import settings_from_args
    from gt_llm.cli import build_parser

    parser = build_parser()
    base = parser.parse_args(["fruit-trading", "run"])
    run_parser = parser._subparsers._group_actions[0].choices["fruit-trading"]
    run_parser = run_parser._subparsers._group_actions[0].choices["run"]
    checked = []
    for action in run_parser._actions:
        if action.dest in ("help",) or action.dest in NON_RESULT_OPTIONS:
            continue
        value = _other_value(action)
        assert value is not None, f"no other value known for {action.option_strings}"
        changed = parser.parse_args(["fruit-trading", "run", action.option_strings[0], *value])
        assert (
            settings_from_args(changed).results_settings()
            != settings_from_args(base).results_settings()
        ), f"{action.option_strings[0]} changes results but is not compared"
        checked.append(action.option_strings[0])
    assert {"--pools", "--names", "--inits", "--seed"} <= set(checked)


@pytest.mark.slow  # long end to end: .ci/run runs it (-m slow)
def test_a_server_restarted_on_another_port_is_the_same_run_asked_again(env, tmp_path):
    # The folder takes the run (the settings name no port), but the cache key holds the
    # server's address: another server's answers are never served as this one's, so every
    # call is asked again.
    out = tmp_path / "port"
    with FakeChatServer() as first:
        proc = gt(env, *FRUIT_RUN, "--backend", f"openai:m@{first.url}/v1", "--out", str(out))
        assert proc.returncode == 0, proc.stderr[-2000:]
        asked = first.request_count
    with FakeChatServer() as second:
        proc = gt(env, *FRUIT_RUN, "--backend", f"openai:m@{second.url}/v1", "--out", str(out))
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert second.request_count == asked > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"] == "m" and manifest["spec"].endswith(f"{second.port}/v1")


# -- 15. the smaller points -----------------------------------------------------------------------


def test_compare_refuses_an_empty_out(finished):
    code, err = run_main("fruit-trading", "compare", str(finished), "--out", "")
    assert code == 2 and "--out is empty" in err, err


def test_a_repeated_variant_names_the_flag():
    code, err = run_main(*FRUIT_RUN, "--variants", "tone,tone")
    assert code == 2 and "argument --variants" in err and "twice" in err, err


def test_a_full_disk_names_the_file(tmp_path, monkeypatch):
    import errno
    import os

    from runs.atomic import atomic_write_text

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as err:
        atomic_write_text(tmp_path / "summary.json", "{}")
    assert "summary.json" in str(err.value) and "No space left" in str(err.value)
    assert list(tmp_path.iterdir()) == []


# -- 14. no orphans when the parent is killed -----------------------------------------------------


def _processes_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker.encode() in (proc / "environ").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.slow  # the solver pool is threads now: a regression guard, run by .ci/run (-m slow)
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_killing_a_run_with_worker_processes_leaves_no_orphan(env, tmp_path, sig):
    import os
    import signal
    import time

    marker = f"GT_LLM_ORPHAN_TEST={os.getpid()}_{sig}"
    name, _, value = marker.partition("=")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gt_llm.cli", "fruit-trading", "run", "--inits", "4",
         "--iterations", "200000", "--max-messages", "4", "--processes", "2", "--no-progress",
         "--no-whole-game", "--out", str(tmp_path / "o")],
        env=dict(env, **{name: value}), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (tmp_path / "o" / "manifest.json").exists():  # running, past the checks
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(3.0)  # into the solves
    proc.send_signal(getattr(signal, sig))
    proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _processes_with(marker)
    for pid in left:  # never leave them behind, even when the test fails
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert left == []


# -- 8/9. size flags refused from the estimate, before any call, in one line naming the flag -------

HUGE = "1" + "0" * 400


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("fruit-trading", "run", "--max-messages", "5000"), "--max-messages"),
        (("fruit-trading", "run", "--max-messages", "1000000"), "--max-messages"),
        (("fruit-trading", "run", "--max-messages", "200"), "--max-messages"),
        (("fruit-trading", "run", "--iterations", HUGE), "--iterations"),
        (("werewolf", "play", "--games", "100000000000"), "--games"),
        (("werewolf", "arena", "--games", "100000000000"), "--games"),
        (("werewolf", "solve", "--iterations", "3000000000"), "--iterations"),
        (("werewolf", "solve", "--iterations", "99999999999999999999"), "--iterations"),
        (("werewolf", "solve", "--days", "100000000000"), "--days"),
    ],
)
def test_size_flags_are_refused_before_any_call_naming_the_flag(server, tmp_path, args, flag):
    import time

    start = time.monotonic()
    code, err = run_main(*args, "--backend", f"openai:m@{server.url}/v1", "--out",
                         str(tmp_path / "o"))  # fmt: skip
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and flag in lines[0], err[-800:]
    assert len(lines[0]) < 400  # no 240-digit counts
    assert server.request_count == 0 and not (tmp_path / "o").exists()
    assert time.monotonic() - start < 30


# -- 11. damaged results folders: one line naming the file, no traceback ---------------------------


def _damage_folder(out: Path, how: str) -> str:
    summary = out / "summary.json"
    curves = out / "curves_tone.csv"
    data = json.loads(summary.read_text())
    if how == "summary-is-a-list":
        summary.write_text("[1, 2]")
        return "summary.json"
    if how == "summary-truncated":
        summary.write_text(summary.read_text()[:200])
        return "summary.json"
    if how == "summary-deeply-nested":
        summary.write_text('{"a": ' + "[" * 100000 + "]" * 100000 + "}")
        return "summary.json"
    if how == "variant-is-a-string":
        data["variants"]["tone"] = "oops"
    elif how == "final-missing":
        del data["variants"]["tone"]["final"]
    elif how == "settings-wrong-type":
        data["settings"]["inits"] = "thirty"
    if how in ("variant-is-a-string", "final-missing", "settings-wrong-type"):
        summary.write_text(json.dumps(data))
        return "summary.json"
    if how == "curves-empty":
        curves.write_text("")
    elif how == "curves-header-only":
        curves.write_text(curves.read_text().splitlines()[0] + "\n")
    elif how == "curves-not-a-number":
        lines = curves.read_text().splitlines()
        cells = lines[2].split(",")
        cells[1] = "banana"
        lines[2] = ",".join(cells)
        curves.write_text("\n".join(lines) + "\n")
    elif how == "curves-truncated-row":
        lines = curves.read_text().splitlines()
        curves.write_text("\n".join([*lines[:3], lines[3][:5]]) + "\n")
    elif how == "manifest-files-not-a-list":
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["files"] = "all of them"
        (out / "manifest.json").write_text(json.dumps(manifest))
        return "manifest.json"
    return "curves_tone.csv"


FOLDER_DAMAGES = ["summary-is-a-list", "summary-truncated", "summary-deeply-nested",
                  "variant-is-a-string", "final-missing", "settings-wrong-type", "curves-empty",
                  "curves-header-only", "curves-not-a-number", "curves-truncated-row",
                  "manifest-files-not-a-list"]  # fmt: skip


@pytest.mark.parametrize("how", FOLDER_DAMAGES)
def test_damaged_results_folders_are_reported_in_one_line(finished, how):
    name = _damage_folder(finished, how)
    code, err = run_main("fruit-trading", "figures", "--out", str(finished))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err[-1500:]
    assert name in lines[0] and "Traceback" not in err, lines[0]
