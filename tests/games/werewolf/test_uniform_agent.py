"""The uniform day-policy agent (``MODEL+uniform``): the control of every CFR comparison."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
from games.werewolf import rules
from games.werewolf.agents import parse_agent, parse_agents
from games.werewolf.arena.matches import play_arena_game
from games.werewolf.arena.runner import load_policies, plain_models, seat_agents
from games.werewolf.day.abstraction import DEFAULT_ACTS, DEFAULT_TONES
from games.werewolf.players.cfr_policy import GROUPS, choose_speech, uniform_day_policy
from gt_llm.registry import load_model
from tests.games.werewolf_helpers import dealt

ARENA = rules.preset("arena")


def test_the_uniform_agent_is_spelled_plus_uniform():
    a = parse_agent("gratr+uniform")
    assert (a.name, a.opponent, a.uniform, a.policy, a.day_policy) == (
        "gratr+uniform",
        "gratr",
        True,
        None,
        "uniform",
    )
    assert a.to_json("scripted")["policy"] == "uniform"
    b = parse_agent("u=none+uniform@scripted")
    assert (b.name, b.opponent, b.backend, b.uniform) == ("u", "none", "scripted", True)
    # In a list, the uniform agent starts an agent of its own.
    assert [x.name for x in parse_agents("gratr,none+uniform,rules")] == [
        "gratr",
        "none+uniform",
        "rules",
    ]
    assert not plain_models(parse_agents("gratr,gratr+uniform"))
    assert parse_agent("gratr").day_policy == "own" and parse_agent("rules").day_policy == "rules"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gratr+uniform+cfr:some/folder", "one day policy per agent"),
        ("rules+uniform", "take no backend and no policy"),
        ("+uniform", "names no opponent model"),
    ],
)
def test_uniform_agent_specs_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as e:
        parse_agent(text)
    assert "\n" not in str(e.value) and str(e.value).startswith("--agents")


def test_the_uniform_policy_gives_every_tone_and_act_the_same_probability():
    policy = uniform_day_policy(ARENA.roles.as_dict(), "gratr")
    assert policy.tones == DEFAULT_TONES and policy.acts == DEFAULT_ACTS
    k = len(DEFAULT_TONES) * len(DEFAULT_ACTS)
    for g in GROUPS:
        assert np.allclose(policy.groups[g], 1.0 / k)
    assert policy.source == "uniform" and policy.opponent_model == "gratr"


def _legal(speaker: int = 4):
    return rules.speech_options(dealt(), speaker)


def test_uniform_choices_are_deterministic_per_seed_and_cover_every_tone_and_act():
    policy = uniform_day_policy(ARENA.roles.as_dict(), "none")
    ranking, legal = (1, 2, 3), _legal()

    def draw(seed: int):
        return choose_speech(policy, "villager", legal, ranking, np.random.default_rng(seed))

    assert [draw(s) for s in range(50)] == [draw(s) for s in range(50)]
    n = 4000
    counts = Counter((c.tone, c.token) for c in (draw(s) for s in range(n)))
    cells = {(t, a) for t in DEFAULT_TONES for a in DEFAULT_ACTS}
    assert set(counts) == cells
    for cell in cells:  # each cell 1/k of the draws, within sampling error
        assert counts[cell] / n == pytest.approx(1 / len(cells), abs=0.02)
    assert all(draw(s).outcome == "matched" for s in range(50))  # three ranked: every act fits


def _uniform_game(seed: int, log: Path) -> list[dict]:
    """One arena game of a uniform agent against rule-based players: its policy records."""
    agents = parse_agents("u=none+uniform,rules")
    config = dataclasses.replace(ARENA, max_rounds=3)
    model = load_model("scripted")
    seated = seat_agents(agents, {"scripted": model}, load_policies(agents, config), "scripted")
    game, _ = play_arena_game(
        config, model, wolf_model="u", leader_model="rules", seed=seed, agents=seated, log=log
    )
    records = [json.loads(line) for line in log.read_text().splitlines()]
    picked = [r for r in records if r["type"] == "policy"]
    assert dict(game.policy_counts)["u"] and all(r["agent"] == "u" for r in picked)
    return picked


def test_a_uniform_agents_game_repeats_its_choices_and_its_draws_cover_the_acts(tmp_path):
    first = [_uniform_game(s, tmp_path / f"a{s}.jsonl") for s in range(6)]
    again = [_uniform_game(s, tmp_path / f"b{s}.jsonl") for s in range(6)]
    assert first == again  # the same seed: the same seats draw the same tones and acts
    assert first[0] != first[1]  # another seed: other draws
    tokens = Counter(r["token"] for game in first for r in game)
    assert set(tokens) == set(DEFAULT_ACTS), tokens
    assert len({r["tone"] for game in first for r in game}) >= 3
