"""Nothing lost when a re-run stops, nothing stale when it ends.

Re-running a finished ``werewolf arena`` used to rewrite each game's log in
place: Ctrl-C a few seconds in, or a server answering 401 once the cache was
deleted, left a cut log under the final name. Every command that logs games
(the arena, a ``werewolf play --games`` series, a single ``werewolf play
--log``) now writes through the same writer: a game's log is renamed over the
old one only when the game finished, a stopped game keeps its records as
``<name>.partial``, and a re-run that finishes leaves no ``.partial`` behind.
The same probes run for every command.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))
from fake_server import Canned, FakeChatServer  # noqa: E402

from games.werewolf import rules  # noqa: E402
from games.werewolf.play import runner  # noqa: E402
from tests.cli_runner import run_cli  # noqa: E402

SMALL = ("--max-rounds", "1", "--debate-turns", "1", "--no-progress")
COMMANDS = {
    "werewolf-arena": ("werewolf", "arena", "--models", "gratr,none", "--games", "1", *SMALL),
    "werewolf-series": ("werewolf", "play", "--games", "2", *SMALL),
    "werewolf-play": ("werewolf", "play", *SMALL),
}


def _argv(name: str, folder: Path, *backend: str) -> tuple[str, ...]:
    where = (
        ("--log", str(folder / "game.jsonl")) if name == "werewolf-play" else ("--out", str(folder))
    )
    return (*COMMANDS[name], *where, *backend)


def _finished(run) -> bool:
    # A single game's exit code says who won (1: nobody), the other commands' only success.
    return run.returncode in (0, 1) if "--log" in run.args else run.returncode == 0


def _logs(folder: Path) -> dict[str, bytes]:
    """Every finished log under ``folder``, by relative name, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.jsonl"))}


def _partials(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.partial"))


def _check_resumed(name: str, folder: Path, *backend: str) -> None:
    """An identical re-run finishes: every log whole, no stale partial beside it."""
    run = run_cli(_argv(name, folder, *backend))
    assert _finished(run), run.stderr[-2000:]
    assert _partials(folder) == []
    for log in _logs(folder):
        assert runner.replay(folder / log).winner is not None, log


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_interrupted_rerun_keeps_every_finished_log_byte_identical(name, tmp_path, monkeypatch):
    folder = tmp_path / "run"
    first = run_cli(_argv(name, folder))  # the scripted stand-in
    assert _finished(first), first.stderr[-2000:]
    before = _logs(folder)
    assert before and _partials(folder) == []

    apply, steps = rules.apply, [0]

    def ctrl_c_mid_game(*args, **kwargs):
        steps[0] += 1
        if steps[0] == 12:  # inside the first game
            raise KeyboardInterrupt
        return apply(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(rules, "apply", ctrl_c_mid_game)
        stopped = run_cli(_argv(name, folder))
    assert stopped.returncode == 130, stopped.stderr[-2000:]
    assert _logs(folder) == before  # byte-identical, none cut
    assert len(_partials(folder)) == 1  # the stopped game's records, beside
    _check_resumed(name, folder)


class RefusesAfter(FakeChatServer):
    """Echoes the first ``n`` requests, then answers 401 (a key revoked mid-run)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def _next(self, body):
        with self._lock:
            late = len(self.requests) > self.n
        if late:
            return Canned(status=401, body={"error": {"message": "invalid api key"}})
        return super()._next(body)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_rerun_the_server_refuses_keeps_every_finished_log_byte_identical(name, tmp_path):
    folder = tmp_path / "run"
    cache = folder / "llm_cache.sqlite"  # in --out, or beside a single game's --log
    with FakeChatServer() as server:
        first = run_cli(_argv(name, folder, "--backend", f"openai:m@{server.url}/v1"))
        assert _finished(first), first.stderr[-2000:]
    before = _logs(folder)
    assert before and cache.exists()
    cache.unlink()  # every call is made again
    with RefusesAfter(20) as server:
        refused = run_cli(_argv(name, folder, "--backend", f"openai:m@{server.url}/v1"))
    assert refused.returncode == 2 and "401" in refused.stderr, refused.stderr[-2000:]
    assert _logs(folder) == before
    assert _partials(folder)  # a series plays its games concurrently: one or more
    with FakeChatServer() as server:
        _check_resumed(name, folder, "--backend", f"openai:m@{server.url}/v1")
