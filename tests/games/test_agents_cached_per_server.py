"""Two agents on two servers that serve one model name get each their own server's answers.

``gt-llm werewolf tournament --agents a=none@openai:mX@URL1,b=none@openai:mX@URL2,rules``:
the pairs ``a_vs_rules`` and ``b_vs_rules`` ask the very same requests (same
seeds, same sides), so a cache keyed by backend and model name alone served all
of b's calls from a's server. Here every call of a seat of ``a`` is answered by
server 1 and every call of a seat of ``b`` by server 2, in every pair; the cache
holds the two servers' answers apart, naming each server without credentials.
A failed call names the agent it was made for, not only the server's URL.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli_runner import run_cli
from tests.llm.fake_server import Canned, FakeChatServer, completion_body

#: A small table and two games per pair: every pair's games, in a few seconds.
SMALL = ("--games", "2", "--roles", "werewolf:1,seer:1,villager:2", "--debate-turns", "1")


class TaggedServer(FakeChatServer):
    """A loopback server whose every answer is ``answer from TAG`` (or a scripted status)."""

    def __init__(self, tag: str, status: int = 200) -> None:
        super().__init__()
        self.tag = tag
        self.status = status

    def _next(self, body: object) -> Canned:
        if self.status != 200:
            return Canned(status=self.status, body={"error": {"message": "busy"}})
        return Canned(body=completion_body(f"answer from {self.tag}"))


def _llm_calls(log: Path) -> tuple[list[str], list[dict]]:
    """The agent of each seat and the ``llm_call`` records of one game's log."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    (arena,) = [r for r in records if r["type"] == "arena"]
    return arena["seats"], [r for r in records if r["type"] == "llm_call"]


def test_each_agent_gets_its_own_servers_answers(tmp_path: Path) -> None:
    out = tmp_path / "t"
    with TaggedServer("ONE") as one, TaggedServer("TWO") as two:
        agents = f"a=none@openai:mX@{one.url}/v1,b=none@openai:mX@{two.url}/v1,rules"
        proc = run_cli(
            ["werewolf", "tournament", "--agents", agents, *SMALL, "--out", str(out)]
            + ["--no-progress"]
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert one.request_count and two.request_count
    expected = {"a": "answer from ONE", "b": "answer from TWO"}
    logs = sorted((out / "logs").glob("*/*.jsonl"))
    assert {p.parent.name for p in logs} == {"a_vs_b", "a_vs_rules", "b_vs_rules"}
    for log in logs:
        seats, calls = _llm_calls(log)
        assert calls, log
        for call in calls:
            if isinstance(call["seat"], int):
                assert call["answer"] == expected[seats[call["seat"]]], (log, call)
        if log.parent.name.endswith("_vs_rules"):
            agent = log.parent.name.partition("_vs_")[0]
            assert {c["answer"] for c in calls} == {expected[agent]}, log
    with sqlite3.connect(out / "llm_cache.sqlite") as db:
        rows = db.execute("SELECT request_json, text FROM calls").fetchall()
    by_endpoint: dict[str, set[str]] = {}
    for request_json, text in rows:
        by_endpoint.setdefault(json.loads(request_json)["endpoint"], set()).add(text)
    assert by_endpoint == {
        f"{one.url}/v1": {"answer from ONE"},
        f"{two.url}/v1": {"answer from TWO"},
    }


def test_a_spent_retry_budget_names_the_agent(tmp_path: Path) -> None:
    with TaggedServer("ONE") as one, TaggedServer("TWO", status=503) as busy:
        agents = f"a=none@openai:mX@{one.url}/v1,b=none@openai:mX@{busy.url}/v1,rules"
        proc = run_cli(
            ["werewolf", "tournament", "--agents", agents, *SMALL, "--retry-budget", "1"]
            + ["--out", str(tmp_path / "t"), "--no-progress"]
        )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert "requests of 'b'" in last and "requests of 'a'" not in last, last
    assert "retry budget" in last and f"{busy.url}/v1" in last, last
