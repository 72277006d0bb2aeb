"""The LLM players' game loop: batching, logs, replay, history window, belief hook, CLI series."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))
from fake_server import Canned, FakeChatServer, completion_body  # noqa: E402

import games  # noqa: E402,F401
import gt_llm  # noqa: E402
from games.werewolf import rules  # noqa: E402
from games.werewolf.play import runner  # noqa: E402
from games.werewolf.players import llm as players  # noqa: E402
from games.werewolf.players.table import HISTORY_K, play_llm_game  # noqa: E402
from games.werewolf.players.view import PlayerView, context_fields, view_from_knowledge
from gt_llm.chat import ChatModel  # noqa: E402
from gt_llm.cli import main as cli  # noqa: E402
from gt_llm.parsing import ParsePolicy  # noqa: E402
from gt_llm.retry import RetryPolicy  # noqa: E402

SMALL = "werewolf:1/seer:1/doctor:1/villager:2"


@pytest.fixture(scope="module")
def scripted():
    return gt_llm.load_model("scripted")


class Counting(ChatModel):
    """Passes calls on and remembers the tasks of every complete_batch call."""

    def __init__(self, inner):
        self.inner, self.backend, self.model = inner, inner.backend, inner.model
        self.batches: list[list[str]] = []

    def complete(self, request):
        return self.inner.complete(request)

    def complete_batch(self, requests, *, max_concurrency=None, on_done=None):
        self.batches.append([r.task for r in requests])
        return self.inner.complete_batch(requests)


def _records(path):
    recs = runner.read_log(path)
    recs[0].pop("started")
    return recs


def test_same_seed_same_log_and_replay(tmp_path, scripted):
    cfg = rules.preset("arena", debate_turns=2)
    a, _ = play_llm_game(cfg, scripted, seed=3, log=tmp_path / "a.jsonl")
    b, _ = play_llm_game(cfg, scripted, seed=3, log=tmp_path / "b.jsonl")
    ra, rb = _records(tmp_path / "a.jsonl"), _records(tmp_path / "b.jsonl")
    assert ra == rb and a.digest == b.digest
    kinds = {r["type"] for r in ra}
    assert {"llm_call", "scratchpad", "deception_statement", "self_analysis"} <= kinds
    assert {"peer_analysis", "action", "chance", "result"} <= kinds
    assert ra[0]["backend"] == "scripted" and "not an LLM" in ra[0]["model_label"]
    assert sum(r["type"] == "llm_call" for r in ra) == ra[-1]["model_calls"] > 0
    assert all(len(r["key"]) == 64 and r["answer"] for r in ra if r["type"] == "llm_call")
    # A different seed gives another game.
    c, _ = play_llm_game(cfg, scripted, seed=4)
    assert c.digest != a.digest
    # The log replays into the same final state.
    assert runner.state_digest(runner.replay(tmp_path / "a.jsonl")) == a.digest
    assert cli(["werewolf", "replay", str(tmp_path / "a.jsonl")]) == 0


def test_independent_calls_go_out_as_one_batch(scripted):
    model = Counting(scripted)
    cfg = rules.preset("arena", debate_turns=1, max_rounds=2)
    play_llm_game(cfg, model, seed=1)
    first = model.batches[0]
    # Night 1: the first werewolf with the doctor and the seer, in one batch.
    assert sorted(first) == [
        "werewolf.night_check",
        "werewolf.night_kill",
        "werewolf.night_protect",
    ]
    # Each request keeps its own parser (options differ per seat), yet they share a batch.
    assert any(b.count("werewolf.bid") >= 6 for b in model.batches)
    assert any(b.count("werewolf.vote") >= 5 for b in model.batches)
    # One statement: its self-analysis and the living others' peer analyses together.
    mixed = [b for b in model.batches if "werewolf.self_analysis" in b]
    assert mixed and all(b.count("werewolf.peer_analysis") >= 4 for b in mixed)
    assert any(b.count("werewolf.scratchpad") >= 5 for b in model.batches)


def test_prompts_show_the_last_15_public_messages(scripted, tmp_path):
    cfg = rules.preset("arena", debate_turns=3)
    # Seed 10: a game long enough to cut (24 public messages for seat 0 since the
    # chronological history changed the stand-in's prompts and draws).
    res, table = play_llm_game(cfg, scripted, seed=10, log=tmp_path / "g.jsonl", log_prompts=True)
    assert HISTORY_K == 15
    k = rules.knowledge(res.final, 0)
    full = view_from_knowledge(k)
    cut = view_from_knowledge(k, history_limit=15)
    n_full = len(full.statements) + len(full.announcements) + len({d for d, _, _ in full.votes})
    assert n_full > 15
    n_cut = len(cut.statements) + len(cut.announcements) + len({d for d, _, _ in cut.votes})
    assert n_cut == 15 and cut.earlier_messages == n_full - 15
    assert cut.statements[-1] == full.statements[-1]
    text = context_fields(cut)["history"]
    assert f"({n_full - 15} earlier public messages not shown)" in text
    # The logged prompts of the last day show the window, not the whole game.
    last = [r for r in runner.read_log(tmp_path / "g.jsonl") if r["type"] == "llm_call"][-1]
    assert "earlier public messages not shown" in last["messages"][-1]["content"]


class Recorder:
    """A belief provider that records what it observes and claims one fixed belief."""

    def __init__(self, me):
        self.me, self.seen = me, []

    def observe(self, observation):
        self.seen.append(observation)

    def beliefs(self, phase=""):
        return {(self.me + 1) % 5: {"werewolf": 0.8, "villager": 0.2}}

    def belief_lines(self, phase=""):
        return f"MODEL LINES OF SEAT {self.me}"


def test_belief_provider_observes_and_fills_prompts(scripted, tmp_path):
    made = {}

    def factory(k):
        made[k.player] = Recorder(k.player)
        return made[k.player]

    cfg = rules.Config(rules.RoleSet.parse(SMALL), debate_turns=1, max_rounds=3)
    play_llm_game(cfg, scripted, seed=2, belief_factory=factory, log=tmp_path / "g.jsonl")
    assert sorted(made) == [0, 1, 2, 3, 4]
    seen = made[0].seen
    assert {o.kind for o in seen} == {"statement", "vote"}
    assert all(o.text for o in seen if o.kind == "statement")
    recs = runner.read_log(tmp_path / "g.jsonl")
    assert recs[0]["llm"]["belief_models"] is True


def test_llm_game_against_chat_server_reasks_then_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeChatServer() as server:
        # Night 1 is one batch (the werewolf, then the seer, one at a time here): the
        # werewolf's answer names an unknown player, the seer's parses; every later
        # answer is the server's echo, which never parses.
        server.enqueue(
            Canned(body=completion_body('{"target": 9}')),
            Canned(body=completion_body('{"target": 3, "reason": "quiet"}')),
        )
        retry = RetryPolicy(max_attempts=1, base_delay=0.01, max_delay=0.05)
        model = gt_llm.load_model(f"openai:fake@{server.url}/v1", retry=retry)
        cfg = rules.Config(rules.RoleSet.parse("werewolf:1/seer:1/villager:2"), debate_turns=1)
        cfg = rules.Config(cfg.roles, debate_turns=1, max_rounds=1)
        log = tmp_path / "g.jsonl"
        res, table = play_llm_game(
            cfg, model, seed=0, log=log, policy=ParsePolicy(max_reasks=1), max_concurrency=1
        )
    assert res.winner in (rules.WEREWOLVES, rules.VILLAGERS, rules.DRAW)
    stats = res.extra["parse_stats"]
    assert stats["parsed"] == {"werewolf.night_check": 1}
    assert stats["reasks"]["werewolf.night_kill"] == 1  # the bad answer was re-asked
    assert stats["total_fallbacks"] > 0 and res.extra["defaulted"] > 0
    recs = runner.read_log(log)
    calls = [r for r in recs if r["type"] == "llm_call"]
    assert calls[0]["answer"] == '{"target": 9}' and calls[0]["task"] == "werewolf.night_kill"
    assert calls[2]["task"] == "werewolf.night_kill" and calls[2]["seed"] != calls[0]["seed"]
    assert len(calls) == res.extra["model_calls"]
    parse = [r for r in recs if r["type"] == "parse"]
    assert sum(sum(r["fallbacks"].values()) for r in parse) == stats["total_fallbacks"]
    assert sum(r["type"] == "defaulted" for r in recs) == res.extra["defaulted"]
    assert recs[0]["model"] == "fake"
    assert runner.state_digest(runner.replay(log)) == res.digest


@pytest.mark.slow  # long end to end: .ci/run runs it (-m slow)
@pytest.mark.parametrize("preset", ["arena", "gratr"])
def test_200_scripted_llm_games_end_with_a_result(preset, scripted):
    # One debate turn per day: measured 6 s (arena) / 12 s (gratr) on an idle core,
    # about 26 s each with the 2 cores shared.
    cfg = rules.preset(preset, debate_turns=1)
    results = [play_llm_game(cfg, scripted, seed=s)[0] for s in range(200)]
    assert all(r.winner in (rules.WEREWOLVES, rules.VILLAGERS, rules.DRAW) for r in results)
    rate = runner.summarize(results)["win_rates"][rules.WEREWOLVES]["rate"]
    assert 0.0 < rate < 1.0
    assert all(r.extra["parse_stats"]["total_fallbacks"] == 0 for r in results)


def test_summary_cli_and_series_resume_through_the_cache(tmp_path, capsys):
    out = tmp_path / "series"
    args = ["werewolf", "play", "--roles", SMALL, "--debate-turns", "1", "--games", "3"]
    args += ["--out", str(out), "--no-progress", "--seed", "5"]
    assert cli(args) == 0
    first = json.loads((out / "summary.json").read_text())
    assert first["model_calls"]["new_backend_calls"] == first["model_calls"]["total"] > 0
    assert "not an LLM" in first["players"]
    assert first["deception"]["total_statements"] > 0
    assert (out / "games.csv").exists() and (out / "llm_cache.sqlite").exists()
    # Interrupted or not, the second run pays for nothing: every call is in the cache.
    assert cli([*args, "--force"]) == 0
    second = json.loads((out / "summary.json").read_text())
    assert second["model_calls"]["new_backend_calls"] == 0
    assert second["model_calls"]["cache_hits"] == first["model_calls"]["total"]
    assert second["win_rates"] == first["win_rates"]
    capsys.readouterr()
    log = sorted((out / "logs").glob("*.jsonl"))[0]
    assert cli(["werewolf", "summary", str(log)]) == 0
    text = capsys.readouterr().out
    assert "Deception summary" in text and "peer precision" in text and "P4" in text
    assert cli(["werewolf", "summary", *map(str, (out / "logs").glob("*.jsonl"))]) == 0
    assert "3 logs (pooled)" in capsys.readouterr().out


def test_play_cli_prints_statements_and_keeps_rule_players(tmp_path, capsys):
    log = tmp_path / "g.jsonl"
    base = ["werewolf", "play", "--roles", SMALL, "--debate-turns", "1", "--seed", "7"]
    assert cli([*base, "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert '      "' in out and "model calls" in out  # statements in words
    assert (tmp_path / "llm_cache.sqlite").exists()  # the cache sits next to the log
    assert cli([*base, "--players", "rules", "--out", str(tmp_path)]) == 0
    assert "model calls" not in capsys.readouterr().out
    assert cli([*base, "--players", "rules", "--backend", "groq:x"]) != 0


def test_calls_with_their_own_parsers_go_out_concurrently(monkeypatch):
    """Four votes with different options (four parsers) take one delay, not four."""
    from games.engine.calls import run_batched

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    delay = 0.4
    with FakeChatServer() as server:
        server.enqueue(
            *[Canned(body=completion_body('{"vote": 1, "reason": "x"}'), delay=delay)] * 4
        )
        model = gt_llm.load_model(f"openai:fake@{server.url}/v1")
        views = [
            PlayerView(player=p, role="villager", num_players=5, alive=(0, 1, 2, 3, 4))
            for p in (1, 2, 3, 4)
        ]
        gens = [players.vote(v, [0, (v.player % 4) + 1], seed=v.player) for v in views]
        start = time.perf_counter()
        got = run_batched(gens, model, max_concurrency=4)
        elapsed = time.perf_counter() - start
    assert got == [0, 0, 0, 0]
    assert len({id(g) for g in gens}) == 4
    assert elapsed < 2.5 * delay  # sequential groups would take 4 delays


def test_series_on_a_remote_backend_runs_in_threads_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "remote"
    with FakeChatServer() as server:  # echo answers: nothing parses, everything falls back
        args = ["werewolf", "play", "--roles", SMALL, "--debate-turns", "1", "--max-rounds", "1"]
        args += ["--games", "2", "--out", str(out), "--no-progress"]
        args += ["--backend", f"openai:fake@{server.url}/v1", "--jobs", "2"]
        assert cli(args) == 0
        sent = server.request_count
        first = json.loads((out / "summary.json").read_text())
        assert first["parallel"] == "2 game(s) at a time (threads)"
        assert first["players"].startswith("openai:fake@") and first["games"] == 2
        assert first["fallbacks"] > 0 and first["defaulted_actions"] > 0
        parse = first["parse"]  # per task, pooled over the series
        assert sum(parse["fallbacks"].values()) == parse["total_fallbacks"] == first["fallbacks"]
        assert set(parse["fallback_rate"]) == set(parse["parsed"]) | set(parse["fallbacks"])
        assert all(0.0 < r <= 1.0 for r in parse["fallback_rate"].values())
        assert first["model_calls"]["new_backend_calls"] == sent > 0
        assert cli([*args, "--force"]) == 0
        assert server.request_count == sent  # resumed from the cache: no new request
    second = json.loads((out / "summary.json").read_text())
    assert second["model_calls"]["new_backend_calls"] == 0
    assert second["win_rates"] == first["win_rates"]
