"""The scripted stand-in's Werewolf answers: deterministic and sensible.

Situations are drawn at random (roles, who is alive, what was said, checks,
suspicion) with a seeded generator; every answer goes through the real
prompts, parsers and call driver.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
import gt_llm
from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.players import llm as players
from games.werewolf.players.view import PlayerView, PublicStatement
from games.werewolf.rules import ROLES, SPEECH_ACTS, TONES, SpeechAct
from gt_llm.parsing import ParseStats

ARENA = ("werewolf", "werewolf", "seer", "doctor", "villager", "villager", "villager", "villager")


@pytest.fixture(scope="module")
def model():
    return gt_llm.load_model("scripted")


def random_act(rng, speaker, n):
    kind = SPEECH_ACTS[int(rng.integers(len(SPEECH_ACTS)))]
    tone = TONES[int(rng.integers(3))]
    target = int(rng.choice([p for p in range(n) if p != speaker]))
    if kind == "claim":
        return SpeechAct(kind, tone, role=ROLES[int(rng.integers(len(ROLES)))])
    if kind in ("accuse", "defend"):
        return SpeechAct(kind, tone, target=target)
    if kind == "share_check":
        return SpeechAct(
            kind, tone, target=target, result=str(rng.choice(["werewolf", "villager"]))
        )
    return SpeechAct(kind, tone)


def situation(rng, role: str | None = None):
    """(roles, view) for a random player (of ``role`` if given) in a random arena game."""
    roles = list(ARENA)
    rng.shuffle(roles)
    n = len(roles)
    me = int(rng.choice([p for p in range(n) if role is None or roles[p] == role]))
    alive = sorted({me} | {p for p in range(n) if rng.random() < 0.75})
    statements = tuple(
        PublicStatement(i, 1, sp, random_act(rng, sp, n), "...")
        for i, sp in enumerate(int(rng.choice(alive)) for _ in range(int(rng.integers(0, 6))))
    )
    checks = {}
    if roles[me] == "seer":
        for p in rng.choice(
            [q for q in range(n) if q != me], size=int(rng.integers(0, 3)), replace=False
        ):
            checks[int(p)] = roles[int(p)]
    view = PlayerView(
        player=me,
        role=roles[me],
        num_players=n,
        alive=tuple(alive),
        partners=tuple(p for p in range(n) if roles[p] == "werewolf" and p != me)
        if roles[me] == "werewolf"
        else (),
        checks=checks,
        check_results=ROLES,
        statements=statements,
        suspicion={p: float(rng.random()) for p in alive if p != me and rng.random() < 0.7},
    )
    return roles, view


def test_answers_are_deterministic(model):
    rng = np.random.default_rng(0)
    for _ in range(10):
        _, v = situation(rng)
        opts = [p for p in v.alive if p != v.player]
        a = [run_sync(players.vote(v, opts, seed=s), model) for s in range(3)]
        b = [run_sync(players.vote(v, opts, seed=s), model) for s in range(3)]
        assert a == b
        step = dict(acts=SPEECH_ACTS, tones=TONES[:3], targets=opts, roles=ROLES)
        assert run_sync(players.speak(v, **step, seed=4), model) == run_sync(
            players.speak(v, **step, seed=4), model
        )


def test_werewolf_never_votes_or_targets_a_partner(model):
    rng = np.random.default_rng(1)
    stats = ParseStats()
    for _ in range(100):
        _, v = situation(rng, "werewolf")
        opts = [p for p in v.alive if p != v.player]
        choice = run_sync(
            players.vote(v, opts, seed=int(rng.integers(1 << 30))), model, stats=stats
        )
        assert choice in opts and choice not in v.partners
        kill_opts = [p for p in v.alive if p not in v.partners and p != v.player]
        if kill_opts:
            t = run_sync(players.night_kill(v, kill_opts, seed=int(rng.integers(1 << 30))), model)
            assert t in kill_opts
        act = run_sync(
            players.speak(v, acts=SPEECH_ACTS, tones=TONES[:3], targets=opts, roles=ROLES, seed=0),
            model,
        ).act
        if act.kind == "accuse":
            assert act.target not in v.partners
    assert stats.to_dict()["total_fallbacks"] == 0


def test_seer_accuses_and_votes_a_checked_werewolf(model):
    rng = np.random.default_rng(2)
    for _ in range(50):
        roles, v = situation(rng, "seer")
        wolf = int(rng.choice([p for p in v.alive if roles[p] == "werewolf"] or [-1]))
        if wolf < 0:
            continue
        v = dataclasses.replace(v, checks={**v.checks, wolf: "werewolf"}, statements=())
        opts = [p for p in v.alive if p != v.player]
        speech = run_sync(
            players.speak(v, acts=SPEECH_ACTS, tones=TONES[:3], targets=opts, roles=ROLES, seed=1),
            model,
        )
        # It exposes a checked werewolf (there may be two) and votes for one.
        assert speech.act.kind in ("share_check", "accuse")
        assert v.checks.get(speech.act.target) == "werewolf"
        assert v.checks.get(run_sync(players.vote(v, opts, seed=1), model)) == "werewolf"


def test_villager_vote_follows_the_belief(model):
    """A better belief gives better votes: the villager votes its belief's werewolf."""
    rng = np.random.default_rng(3)
    hits_oracle = hits_none = trials = 0
    for _ in range(60):
        roles, v = situation(rng, "villager")
        opts = [p for p in v.alive if p != v.player]
        wolves = [p for p in opts if roles[p] == "werewolf"]
        if not wolves:
            continue
        trials += 1
        oracle = {
            p: (
                {"werewolf": 0.9, "villager": 0.1}
                if roles[p] == "werewolf"
                else {"villager": 0.8, "werewolf": 0.2}
            )
            for p in opts
        }
        with_belief = dataclasses.replace(v, beliefs=oracle, suspicion={})
        without = dataclasses.replace(v, suspicion={})
        hits_oracle += run_sync(players.vote(with_belief, opts, seed=0), model) in wolves
        hits_none += run_sync(players.vote(without, opts, seed=0), model) in wolves
    assert trials > 30
    assert hits_oracle == trials  # an exact belief always finds a werewolf
    assert hits_none < trials  # without one, the stand-in is far from perfect


def test_self_analysis_matches_the_rules_truth(model):
    """The stand-in's self-report equals ``rules.is_deceptive_in_truth`` in random states."""
    rng = np.random.default_rng(4)
    cfg = rules.preset("arena")
    checked = 0
    for _ in range(100):
        roles, v = situation(rng)
        act = random_act(rng, v.player, v.num_players)
        state = rules.GameState(
            config=cfg,
            roles=tuple(roles),
            alive=tuple(p in v.alive for p in range(8)),
            checks=tuple((1, p, r) for p, r in v.checks.items()),
        )
        truth = rules.is_deceptive_in_truth(state, v.player, act)
        stmt = PublicStatement(99, 1, v.player, act, "...")
        spoken = dataclasses.replace(v, statements=(*v.statements, stmt))
        own, _ = run_sync(players.analyse_statement({v.player: spoken}, stmt, seed=0), model)
        assert own.deceptive == truth, (roles[v.player], act)
        checked += truth
    assert 10 < checked < 90  # both kinds occurred


def test_peer_analysis_sees_a_claim_of_its_own_role(model):
    seer = PlayerView(player=2, role="seer", num_players=8, alive=tuple(range(8)))
    liar = PlayerView(
        player=5, role="werewolf", num_players=8, alive=tuple(range(8)), partners=(0,)
    )
    stmt = PublicStatement(0, 1, 5, SpeechAct("claim", "calm", role="seer"), "I am the seer.")
    _, peers = run_sync(
        players.analyse_statement(
            {5: liar, 2: dataclasses.replace(seer, statements=(stmt,))}, stmt, seed=0
        ),
        model,
    )
    [p] = peers
    assert p.observer == 2 and p.deceptive and p.suspicion >= 0.85


def test_bid_is_high_for_a_seer_with_news(model):
    v = PlayerView(
        player=2, role="seer", num_players=8, alive=tuple(range(8)), checks={4: "werewolf"}
    )
    assert run_sync(players.bid(v, seed=0), model) >= 9


def test_the_stand_in_combines_every_model_the_same_way():
    """Own signal and model belief are mixed 50/50 for every model: ``none`` gains nothing."""
    from games.werewolf.players.stand_in import BELIEF_WEIGHT, wolf_scores
    from games.werewolf.players.view import context_fields

    rng = np.random.default_rng(11)
    for _ in range(40):
        _roles, v = situation(rng, "villager")
        others = [p for p in v.alive if p != v.player]
        own = wolf_scores(context_fields(v))  # no model in the prompt: the own signal
        # `none` knows nothing: its belief is the base rate for everyone.
        prior = {p: {"werewolf": 2 / 7, "villager": 5 / 7} for p in others}
        flat = wolf_scores(context_fields(dataclasses.replace(v, beliefs=prior)))
        # A model with something to say about one player.
        told = dict(prior) | {others[0]: {"werewolf": 0.8, "villager": 0.2}}
        moved = wolf_scores(context_fields(dataclasses.replace(v, beliefs=told)))
        for p in others:
            assert flat[p] == pytest.approx(BELIEF_WEIGHT * 2 / 7 + (1 - BELIEF_WEIGHT) * own[p])
        # The base rate keeps the own ranking; a belief moves only its own player.
        assert sorted(others, key=lambda p: (own[p], p)) == sorted(
            others, key=lambda p: (flat[p], p)
        )
        assert moved[others[0]] == pytest.approx(
            BELIEF_WEIGHT * 0.8 + (1 - BELIEF_WEIGHT) * own[others[0]]
        )
        assert all(moved[p] == flat[p] for p in others[1:])
