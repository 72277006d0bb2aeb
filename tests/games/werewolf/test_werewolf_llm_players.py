"""LLM players against the fake chat-completions server (no network, no key).

The server answers with canned texts: bad answers are re-asked with new
seeds, then fall back to the task's documented value, and both are counted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llm"))

from fake_server import Canned, FakeChatServer, completion_body  # noqa: E402

import gt_llm  # noqa: E402
from games.engine.calls import run_batched, run_sync  # noqa: E402
from games.werewolf.players import llm as players  # noqa: E402
from games.werewolf.players import prompts  # noqa: E402
from games.werewolf.players.view import PlayerView, PublicStatement
from games.werewolf.rules import SPEECH_ACTS, SpeechAct  # noqa: E402
from gt_llm.parsing import ParsePolicy, ParseStats  # noqa: E402
from gt_llm.retry import RetryPolicy  # noqa: E402
from tests.games.werewolf_helpers import dealt  # noqa: E402

VIEW = PlayerView(
    player=1,
    role="villager",
    num_players=5,
    alive=(0, 1, 2, 4),
    scratchpad="P3 is quiet.",
)


def say(*texts: str) -> list[Canned]:
    return [Canned(body=completion_body(t)) for t in texts]


def listed(prompt: str, label: str) -> list[str]:
    """The players a prompt lists after ``label`` (in the prompt's own order)."""
    line = next(x for x in prompt.splitlines() if x.startswith(label))
    return line.removeprefix(label).strip().rstrip(".").split(", ")


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeChatServer() as s:
        yield s


@pytest.fixture
def model(server):
    retry = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.1)
    return gt_llm.load_model(f"openai:fake@{server.url}/v1", retry=retry)


def test_vote_bad_answers_are_reasked_then_fall_back(server, model):
    server.enqueue(*say('{"vote": 4}', "I vote Player 3!", '{"ballot": 1}'))  # dead, no JSON, key
    stats = ParseStats()
    got = run_sync(players.vote(VIEW, [0, 2, 4], seed=7), model, stats=stats, policy=ParsePolicy(2))
    assert got is None  # the documented fallback: abstain
    assert stats.to_dict() == {
        "parsed": {},
        "reasks": {"werewolf.vote": 2},
        "fallbacks": {"werewolf.vote": 1},
        "total_fallbacks": 1,
        "copied": {},
    }
    seeds = [r.body["seed"] for r in server.requests]
    assert len(seeds) == 3 and len(set(seeds)) == 3  # re-asked with new, derived seeds
    prompt = server.requests[0].body["messages"][-1]["content"]
    assert sorted(listed(prompt, "Valid votes:")) == ["Player 1", "Player 3", "Player 5"]
    assert "P3 is quiet." in prompt  # the scratchpad is fed back


def test_reask_recovers(server, model):
    server.enqueue(*say("no idea", '```json\n{"vote": 5, "reason": "quiet"}\n```'))
    stats = ParseStats()
    assert run_sync(players.vote(VIEW, [0, 2, 4], seed=1), model, stats=stats) == 4
    assert stats.reasks["werewolf.vote"] == 1 and not stats.fallbacks


def test_speak_falls_back_to_nothing_then_renders_statement(server, model):
    bad = '{"act": "accuse", "tone": "calm", "target": 4}'  # dead player 4 (number 4 = id 3)
    server.enqueue(*say(bad, bad, bad, '{"statement": "I have nothing to add."}'))
    stats = ParseStats()
    speech = run_sync(
        players.speak(VIEW, acts=SPEECH_ACTS, tones=["calm"], targets=[0, 2, 4], roles=[], seed=3),
        model,
        stats=stats,
    )
    assert speech.act == SpeechAct("nothing", "calm")
    assert speech.text == "I have nothing to add."
    assert stats.fallbacks["werewolf.speech_act"] == 1
    assert stats.parsed["werewolf.statement"] == 1


def test_batched_bids_and_analyses_count_fallbacks(server, model):
    views = {
        p: PlayerView(player=p, role="villager", num_players=5, alive=(0, 1, 2, 4))
        for p in (0, 1, 2, 4)
    }
    # Echo answers (the server's default) never parse: every bid falls back to 0.
    stats = ParseStats()
    bids = run_batched(
        [players.bid(v, seed=p) for p, v in views.items()],
        model,
        stats=stats,
        policy=ParsePolicy(1),
    )
    assert bids == [0, 0, 0, 0]
    assert stats.fallbacks["werewolf.bid"] == 4 and stats.reasks["werewolf.bid"] == 4
    stmt = PublicStatement(0, 1, 2, SpeechAct("claim", "calm", role="villager"), "I am a villager.")
    own, peers = run_sync(
        players.analyse_statement(views, stmt, seed=0), model, stats=stats, policy=ParsePolicy(0)
    )
    # Unparsed analyses are not recorded (documented fallback None).
    assert own is None and peers == ()
    assert stats.fallbacks["werewolf.self_analysis"] == 1
    assert stats.fallbacks["werewolf.peer_analysis"] == 3


def test_steps_validate_before_any_call():
    with pytest.raises(ValueError, match="night_kill: player 1 is a villager"):
        players.night_kill(VIEW, [0], seed=0).send(None)
    with pytest.raises(ValueError, match="vote: no options"):
        players.vote(VIEW, [], seed=0).send(None)
    with pytest.raises(ValueError, match="unknown players"):
        players.vote(VIEW, [9], seed=0).send(None)
    with pytest.raises(ValueError, match="speak: unknown acts"):
        players.speak(VIEW, acts=["sing"], tones=["calm"], targets=[0], roles=[], seed=0).send(None)
    with pytest.raises(ValueError, match="only a werewolf has partners"):
        PlayerView(player=0, role="seer", num_players=3, alive=(0, 1), partners=(1,))
    with pytest.raises(ValueError, match="role must be one of"):
        PlayerView(player=0, role="mayor", num_players=3, alive=(0, 1))


def test_decide_on_a_rules_state_defaults_to_a_legal_action_after_fallback(server, model):
    import numpy as np

    from games.werewolf import rules

    state = dealt()
    legal = rules.legal_actions(state)
    stats = ParseStats()
    step = players.decide(rules.knowledge(state, 0), legal, seed=1, rng=np.random.default_rng(0))
    # Echo answers never parse: the kill falls back (None), and a legal target is drawn.
    d = run_sync(step, model, stats=stats, policy=ParsePolicy(1))
    assert d.defaulted and d.action in legal
    assert stats.fallbacks["werewolf.night_kill"] == 1
    prompt = server.requests[0].body["messages"][-1]["content"]
    assert sorted(listed(prompt, "Valid targets:")) == [f"Player {n}" for n in range(3, 9)]
    # The seat's own identity comes last, in the user message; the system message is
    # the rules every seat shares (laid out for prompt-prefix reuse).
    system = server.requests[0].body["messages"][0]["content"]
    assert "Your fellow werewolves: Player 2." in prompt
    assert "Your fellow werewolves" not in system
    # A good answer is used as is.
    server.enqueue(*say('{"target": 5}'))
    d = run_sync(
        players.decide(rules.knowledge(state, 0), legal, seed=2, rng=np.random.default_rng(0)),
        model,
    )
    assert d.action == rules.Target(4) and not d.defaulted
    assert sorted(d.offered) == [2, 3, 4, 5, 6, 7]  # what the prompt listed, in its order
    assert (
        f"Valid targets: {prompts.players_text(d.offered)}."
        in server.requests[-1].body["messages"][-1]["content"]
    )
