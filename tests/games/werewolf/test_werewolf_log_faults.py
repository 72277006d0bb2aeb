"""Logs never half-written, readers that say FILE:LINE, a series
that stops at its first failure, model text escaped, --force clearing only our logs.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))
from fake_server import FakeChatServer  # noqa: E402

import gt_llm  # noqa: E402
from games.werewolf import rules  # noqa: E402
from games.werewolf.play import runner  # noqa: E402
from games.werewolf.players.table import play_llm_game  # noqa: E402
from gt_llm.chat import ChatModel  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CONFIG = rules.preset("arena")


def run_main(*args: str) -> tuple[int, str, str]:
    from gt_llm.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


class FailingAfter(ChatModel):
    """The scripted model, failing for good after ``n`` calls (a server gone mid-game)."""

    def __init__(self, n: int) -> None:
        self.inner = gt_llm.load_model("scripted")
        self.backend, self.model = self.inner.backend, self.inner.model
        self.left = n
        self.lock = threading.Lock()

    def complete(self, request):
        with self.lock:
            self.left -= 1
            if self.left < 0:
                raise gt_llm.BackendError("server gone")
        return self.inner.complete(request)


# -- 6. logs through the atomic writer; a failed game keeps the old log, its partial beside ---------


def test_a_failed_game_leaves_the_previous_log_intact_and_its_partial_beside(tmp_path):
    log = tmp_path / "game.jsonl"
    play_llm_game(CONFIG, gt_llm.load_model("scripted"), seed=3, log=log)
    before = log.read_bytes()
    with pytest.raises(gt_llm.BackendError):
        play_llm_game(CONFIG, FailingAfter(40), seed=4, log=log)
    assert log.read_bytes() == before  # not replaced by the failed game
    partial = runner.partial_path(log)
    assert partial.exists() and partial.stat().st_size > 0
    assert runner.replay(log).winner is not None
    code, out, err = run_main("werewolf", "replay", str(partial))
    assert code == 2 and "unfinished game" in err and f"{partial}:" in err, err
    assert len(err.strip().splitlines()) == 1 and "matches" not in out
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_a_full_disk_leaves_no_log_under_its_final_name(tmp_path, monkeypatch):
    import errno
    import os

    log = tmp_path / "game.jsonl"

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        runner.play_game(CONFIG, seed=1, log=log)
    assert not log.exists()  # neither cut mid-line nor empty


def test_play_log_into_an_existing_folder_is_refused_before_any_call(tmp_path):
    with FakeChatServer() as server:
        code, _, err = run_main("werewolf", "play", "--backend", f"openai:m@{server.url}/v1",
                                "--log", f"{tmp_path}/", "--no-progress")  # fmt: skip
        assert server.request_count == 0
    assert code == 2 and "--log" in err and "folder" in err, err


# -- 11. damaged logs: one line, FILE:LINE, no traceback, bounded memory -------------------------


def _good_log(tmp_path) -> list[str]:
    log = tmp_path / "good.jsonl"
    runner.play_game(CONFIG, seed=2, log=log)
    return log.read_text().splitlines()


def _damage(lines: list[str], how: str) -> list[str]:
    lines = list(lines)
    header = json.loads(lines[0])
    idx = {json.loads(x)["type"]: i for i, x in reversed(list(enumerate(lines)))}
    if how == "truncated":
        return [*lines[:5], lines[5][: len(lines[5]) // 2]]
    if how == "record-is-a-list":
        lines[3] = "[1, 2, 3]"
    elif how == "no-type":
        lines[3] = json.dumps({"step": 1})
    elif how == "no-outcome":
        rec = json.loads(lines[idx["chance"]])
        del rec["outcome"]
        lines[idx["chance"]] = json.dumps(rec)
    elif how == "action-is-a-string":
        rec = json.loads(lines[idx["action"]])
        rec["action"] = "kill everyone"
        lines[idx["action"]] = json.dumps(rec)
    elif how == "header-without-config":
        del header["config"]
        lines[0] = json.dumps(header)
    elif how == "deep-nesting":
        lines[3] = '{"type": "note", "x": ' + "[" * 100000 + "]" * 100000 + "}"
    elif how == "huge-role-counts":
        header["config"]["roles"] = {"werewolf": 10000, "villager": 10000}
        lines[0] = json.dumps(header)
    return lines


DAMAGES = ["truncated", "record-is-a-list", "no-type", "no-outcome", "action-is-a-string",
           "header-without-config", "deep-nesting", "huge-role-counts"]  # fmt: skip


# summary reads no chance outcome and no action: those two are replay's alone.
CASES = [("replay", how) for how in DAMAGES] + [
    ("summary", how) for how in DAMAGES if how not in ("no-outcome", "action-is-a-string")
]


@pytest.mark.parametrize(("command", "how"), CASES)
def test_damaged_logs_are_reported_in_one_line_with_file_and_line(tmp_path, how, command):
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(_damage(_good_log(tmp_path), how)))
    code, _, err = run_main("werewolf", command, str(path))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err[-1500:]
    assert f"{path}:" in lines[0] and "Traceback" not in err, lines[0]


# -- 12. model text escaped on the terminal -------------------------------------------------------------


def test_replay_transcript_escapes_control_characters_in_model_text(tmp_path):
    log = tmp_path / "g.jsonl"
    play_llm_game(CONFIG, gt_llm.load_model("scripted"), seed=5, log=log)
    lines = log.read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if json.loads(x)["type"] == "deception_statement")
    rec = json.loads(lines[i])
    rec["text"] = "hi\x1b]0;pwned\x07\x1b[2J\rgone\u202e"
    lines[i] = json.dumps(rec)
    log.write_text("\n".join(lines) + "\n")
    code, out, err = run_main("werewolf", "replay", "--transcript", str(log))
    assert code == 0, err
    assert "hi\\x1b]0;pwned\\x07\\x1b[2J\\x0dgone\\u202e" in out
    for raw in ("\x1b", "\x07", "\r", "\u202e"):
        assert raw not in out


# -- 7/13. a series stops at its first failure; --force clears only its own logs -------------------


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.pop("OPENAI_API_KEY", None)
    env["PYTHONPATH"] = str(ROOT)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


@pytest.mark.slow  # about 4 s; CI runs it in its slow step
def test_a_series_stops_at_the_first_failure_within_the_budget_plus_one_game(tmp_path):
    server = FakeChatServer().start()
    stopped: list[float] = []

    def stop_later() -> None:
        while server.request_count < 30:
            time.sleep(0.01)
        server.stop()
        stopped.append(time.monotonic())

    threading.Thread(target=stop_later, daemon=True).start()
    proc = subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", "-q", "werewolf", "play", "--games", "12", "--jobs", "2",
         "--retry-budget", "1.5", "--timeout", "1", "--no-progress", "--out", str(tmp_path / "s"),
         "--backend", f"openai:m@{server.url}/v1"],
        env=_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    ended = time.monotonic()
    assert proc.returncode == 2 and stopped
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-1500:]
    # Only the games running when the server went away started and failed (each leaves its
    # partial log), plus at most one per worker that a freed worker took up before the
    # first failure cancelled the queue; the other queued games never started.
    started = sorted(p.name for p in (tmp_path / "s" / "logs").glob("*.partial"))
    assert 1 <= len(started) <= 2 * 2, started
    # Every queued game waiting out its own 1.5 s budget would take 12 / 2 * 1.5 = 9 s
    # (a loose bound: the structural check above is the proof, this one catches a hang).
    assert ended - stopped[0] < 12 / 2 * 1.5, ended - stopped[0]
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["complete"] is False


def test_force_on_a_series_clears_its_own_logs_only(tmp_path):
    out = tmp_path / "series"
    code, _, err = run_main("werewolf", "play", "--games", "3", "--out", str(out), "--no-progress")
    assert code == 0, err
    (out / "logs" / "mine.txt").write_text("keep")
    code, _, err = run_main("werewolf", "play", "--games", "2", "--out", str(out), "--force",
                            "--no-progress")  # fmt: skip
    assert code == 0, err
    names = sorted(p.name for p in (out / "logs").iterdir())
    assert names == ["game_000000.jsonl", "game_000001.jsonl", "mine.txt"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert "logs/game_000001.jsonl" in manifest["files"]
    assert "logs/game_000002.jsonl" not in manifest["files"]


def test_an_identical_arena_rerun_resumes_and_force_clears_only_its_logs(tmp_path):
    out = tmp_path / "arena"
    base = ("werewolf", "arena", "--models", "none,gratr", "--no-progress", "--out", str(out))
    code, _, err = run_main(*base, "--games", "4")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"arena.json", "arena.csv", "arena.png"} <= set(manifest["files"])
    assert "logs/none_vs_gratr/game_0003.jsonl" in manifest["files"]
    code, _, err = run_main(*base, "--games", "4")  # identical settings: resumed, not refused
    assert code == 0, err
    (out / "logs" / "none_vs_gratr" / "mine.txt").write_text("keep")
    code, _, err = run_main(*base, "--games", "2", "--force")
    assert code == 0, err
    names = sorted(p.name for p in (out / "logs" / "none_vs_gratr").iterdir())
    assert names == ["game_0000.jsonl", "game_0001.jsonl", "mine.txt"]


def test_solve_lists_all_its_files_in_the_manifest(tmp_path):
    out = tmp_path / "solve"
    code, _, err = run_main("werewolf", "solve", "--days", "1", "--iterations", "5", "--models",
                            "none", "--deals", "1", "--no-progress", "--out", str(out))  # fmt: skip
    assert code == 0, err
    files = set(json.loads((out / "manifest.json").read_text())["files"])
    written = {p.name for p in out.iterdir() if p.is_file()} - {"manifest.json"}
    written = {n for n in written if not n.startswith("llm_cache")}
    assert written and written <= files, written - files


def test_graph_refuses_a_step_the_log_does_not_have(tmp_path):
    out = tmp_path / "arena"
    code, _, err = run_main("werewolf", "arena", "--models", "none,gratr", "--games", "1",
                            "--no-progress", "--out", str(out))  # fmt: skip
    assert code == 0, err
    log = out / "logs" / "none_vs_gratr" / "game_0000.jsonl"
    code, _, err = run_main("werewolf", "graph", str(log), "--player", "0", "--step", "999999",
                            "--out", str(tmp_path / "g.json"))  # fmt: skip
    assert code == 2 and "--step" in err and "999999" in err, err
    assert not (tmp_path / "g.json").exists()


@pytest.mark.slow  # long end to end: .ci/run runs it (-m slow)
def test_four_werewolf_series_sharing_a_cache_pay_each_distinct_call_once(tmp_path):
    # Four `werewolf play --games 8` at once on one cache.
    import sqlite3

    cache = tmp_path / "shared.sqlite"
    with FakeChatServer() as server:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gt_llm.cli", "-q", "werewolf", "play", "--games", "8",
                 "--no-progress", "--cache", str(cache), "--out", str(tmp_path / f"s{i}"),
                 "--backend", f"openai:m@{server.url}/v1"],
                env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )
            for i in range(4)
        ]  # fmt: skip
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err[-1500:]
        requests = server.request_count
    conn = sqlite3.connect(cache)
    distinct = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    conn.close()
    assert distinct > 1000 and requests == distinct


def test_force_on_a_solve_whose_games_never_reach_the_day_deletes_nothing(tmp_path):
    out = tmp_path / "solve"
    base = ("werewolf", "solve", "--days", "1", "--iterations", "5", "--models", "none",
            "--deals", "1", "--no-progress", "--out", str(out))  # fmt: skip
    code, _, err = run_main(*base)
    assert code == 0, err
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, _, err = run_main(*base, "--day", "9", "--force")  # no game lasts 9 days
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


# -- 8. the work estimate, printed before the first call, within 2x of the calls made --------


def _run_counting(monkeypatch, *args: str) -> tuple[int, str, str, int]:
    """Runs ``gt-llm *args`` with the scripted model counting its calls; the stderr seen at the
    first call and the call count come back (the estimate must be in that stderr)."""
    from gt_llm.backends.scripted import ScriptedModel
    from gt_llm.cli import main

    inner = ScriptedModel.complete
    seen = {"calls": 0, "before_first": None}
    err = io.StringIO()

    def counting(self, request):
        if seen["before_first"] is None:
            seen["before_first"] = err.getvalue()
        seen["calls"] += 1
        return inner(self, request)

    monkeypatch.setattr(ScriptedModel, "complete", counting)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    assert code == 0, err.getvalue()
    assert seen["before_first"] is not None, "no model call"
    return code, out.getvalue(), seen["before_first"], seen["calls"]


def _estimated_calls(line_source: str) -> int:
    import re

    # "at most N model calls (about M; ..." (games) or "about M model calls" (solve).
    match = re.search(r"estimate: .*about ([\d,]+)(?: model calls|;)", line_source)
    assert match, f"no estimate line before the first call: {line_source!r}"
    return int(match.group(1).replace(",", ""))


@pytest.mark.parametrize(
    "argv",
    [
        ("werewolf", "play", "--games", "3", "--jobs", "1"),
        ("werewolf", "play", "--games", "3", "--jobs", "1", "--preset", "gratr"),
        ("werewolf", "arena", "--models", "none,gratr", "--games", "2"),
    ],
)
def test_games_print_their_work_estimate_before_the_first_call(tmp_path, monkeypatch, argv):
    _, _, before, calls = _run_counting(monkeypatch, *argv, "--out", str(tmp_path / "o"))
    estimated = _estimated_calls(before)
    assert calls / 2 <= estimated <= 2 * calls, (estimated, calls)


def test_single_game_prints_its_work_estimate_before_the_first_call(tmp_path, monkeypatch):
    _, _, before, calls = _run_counting(
        monkeypatch, "werewolf", "play", "--seed", "3", "--log", str(tmp_path / "g.jsonl")
    )
    assert before.startswith("estimate: 1 game,")
    # One game varies more than a mean: within 2x of its own calls is still asked.
    assert calls / 2 <= _estimated_calls(before) <= 2 * calls


@pytest.mark.slow  # about 4 s; the day solve's bound is also checked in test_werewolf_estimate.py
def test_solve_prints_its_work_estimate_before_the_first_call(tmp_path, monkeypatch):
    out = tmp_path / "solve"
    _, _, before, _ = _run_counting(
        monkeypatch, "werewolf", "solve", "--days", "1", "--iterations", "5", "--models",
        "none,gratr", "--tones", "any,calm", "--deals", "2", "--out", str(out),
    )  # fmt: skip
    assert "day trees of at most" in before and "node-iterations" in before
    # The estimate counts requests (a cache hit is one too): the summary reports both.
    calls = json.loads((out / "summary.json").read_text())["llm_calls"]
    requests = calls["hits"] + calls["misses"]
    assert requests / 2 <= _estimated_calls(before) <= 2 * requests, (before, calls)
