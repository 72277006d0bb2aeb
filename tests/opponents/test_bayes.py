"""The exact Bayesian reference model: deals, likelihoods worked by hand, brute force."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from games.werewolf import rules
from games.werewolf.players.seat_models import make_seat_model
from gt_llm.opponents import BayesModel, Evidence, OpponentContext, make_opponent_model
from gt_llm.opponents.deals import count_prior, deal_count, enumerate_deals

ROLES = ("werewolf", "villager", "seer")


def ctx(counts: dict[str, int], self_role: str = "villager") -> OpponentContext:
    n = sum(counts.values()) + 1
    players = tuple(f"P{i}" for i in range(1, n + 1))
    side = 1.0 if self_role == "werewolf" else -1.0
    return OpponentContext(
        players=players,
        self_id="P1",
        hypotheses=ROLES,
        prior={h: float(c) for h, c in counts.items()},
        alignment={h: side if h == "werewolf" else -side for h in ROLES},
        self_role=self_role,
    )


def judgment(subject: str, value: str, w: float, actor: str = "", step: int = 1) -> Evidence:
    return Evidence(subject=subject, value=value, weight=w, actor=actor, step=step)


def intent(actor: str, subject: str, c: float, step: int = 1) -> Evidence:
    return Evidence(
        subject=subject, value="Attack", kind="intent", actor=actor, credibility=c, step=step
    )


def test_deal_counts_of_the_presets():
    for preset, role, expected in (("arena", "villager", 420), ("gratr", "villager", 840)):
        m = make_seat_model("bayes", rules.preset(preset), 0, role)
        counts = count_prior(m.context)
        assert counts is not None and deal_count(counts) == expected
        assert json.loads(json.dumps(m.snapshot()))["deals"] == expected
    # Facts shrink the set: a werewolf knows its partner in the arena preset.
    wolf = make_seat_model("bayes", rules.preset("arena"), 0, "werewolf")
    wolf = wolf.observe(Evidence(subject="Player 2", value="werewolf", certain=True))
    assert wolf.snapshot()["deals"] == deal_count({"villager": 4, "seer": 1, "doctor": 1})  # 30


def test_enumeration_respects_facts_and_rejects_bad_counts():
    d = enumerate_deals(["a", "b", "c"], ROLES, {"werewolf": 1, "villager": 2, "seer": 0})
    assert d.shape == (3, 3) and not d.flags.writeable
    d = enumerate_deals(
        ["a", "b", "c"],
        ROLES,
        {"werewolf": 1, "villager": 2},
        excluded={"a": frozenset({"werewolf"})},
    )
    assert {tuple(x) for x in d} == {(1, 0, 1), (1, 1, 0)}
    with pytest.raises(ValueError, match="sum to 2"):
        enumerate_deals(["a", "b", "c"], ROLES, {"werewolf": 1, "villager": 1})
    assert count_prior(OpponentContext(hypotheses=ROLES)) is None  # fruit-like: no counts


def test_an_own_judgment_by_hand():
    m = make_opponent_model("bayes", ctx({"werewolf": 1, "villager": 2}))
    assert m.belief("P2").distribution["werewolf"] == pytest.approx(1 / 3)
    m = m.observe(judgment("P2", "werewolf", 1.0))
    # Deals: wolf = P2 (x2), P3 (x1), P4 (x1).
    assert m.belief("P2").distribution["werewolf"] == pytest.approx(2 / 4)
    assert m.belief("P3").distribution["werewolf"] == pytest.approx(1 / 4)
    assert m.reference("P2")["werewolf"] == pytest.approx(1 / 3)  # the facts alone


def test_an_accusation_by_hand():
    m = make_opponent_model("bayes", ctx({"werewolf": 1, "villager": 2}))
    m = m.observe(intent("P2", "P3", -1.0))
    # wolf = P2: a werewolf accuses a villager (fits, x2); wolf = P3: an honest accuser
    # names the werewolf (fits, x2); wolf = P4: an honest player accuses a villager (x1).
    d = {p: m.belief(p).distribution["werewolf"] for p in ("P2", "P3", "P4")}
    assert d == pytest.approx({"P2": 0.4, "P3": 0.4, "P4": 0.2})


def test_a_self_claim_is_cheap_talk_by_hand():
    m = make_opponent_model("bayes", ctx({"werewolf": 1, "villager": 1, "seer": 1}))
    m = m.observe(judgment("P2", "seer", 0.5, actor="P2"))
    # Six deals; those where P2 is the seer or the werewolf get x1.5.
    b = m.belief("P2").distribution
    assert b["seer"] == pytest.approx(3 / 8) and b["werewolf"] == pytest.approx(3 / 8)
    assert b["villager"] == pytest.approx(2 / 8)


def test_a_source_counts_once_with_its_latest_judgment():
    m = make_opponent_model("bayes", ctx({"werewolf": 1, "villager": 2}))
    many = m.observe_all(judgment("P2", "werewolf", 0.45, step=s) for s in range(60))
    once = m.observe(judgment("P2", "werewolf", 0.45, step=59))
    assert many.belief("P2").distribution == pytest.approx(dict(once.belief("P2").distribution))


def brute_force(context: OpponentContext, evidence: list[Evidence]) -> dict[str, dict[str, float]]:
    """The posterior by listing every permutation (an implementation of its own)."""
    others = [p for p in context.players if p != context.self_id]
    pool = [h for h, c in context.prior.items() for _ in range(int(c))]
    weights: dict[tuple[str, ...], float] = {}
    latest: dict[tuple[str, str], Evidence] = {}
    for e in evidence:
        if e.kind == "identity" and not e.certain:
            latest.pop((e.actor, e.subject), None)
            latest[(e.actor, e.subject)] = e
    for deal in set(itertools.permutations(pool)):
        role = dict(zip(others, deal, strict=True))
        role[context.self_id] = context.self_role
        ok = all(
            (role[e.subject] != e.value) if e.negated else (role[e.subject] == e.value)
            for e in evidence
            if e.certain
        )
        if not ok:
            continue
        w = 1.0
        for (actor, subject), e in latest.items():
            if subject == context.self_id or actor == context.self_id:
                continue
            if actor == subject:
                true = role[subject] == e.value or (
                    e.value != "werewolf" and role[subject] == "werewolf"
                )
            elif actor:
                true = role[subject] == e.value and role[actor] != "werewolf"
            else:
                true = role[subject] == e.value
            w *= 1 + e.weight * true
        for e in evidence:
            if e.kind != "intent" or e.actor == context.self_id:
                continue
            honest = role[e.actor] != "werewolf"
            accused_wolf = role[e.subject] == "werewolf"
            fits = (
                (e.credibility < 0) == accused_wolf
                if honest
                else (e.credibility < 0) != accused_wolf
            )
            w *= 1 + abs(e.credibility) * fits
        weights[deal] = w
    total = sum(weights.values())
    out = {p: dict.fromkeys(ROLES, 0.0) for p in others}
    for deal, w in weights.items():
        for p, h in zip(others, deal, strict=True):
            out[p][h] += w / total
    return out


@pytest.mark.parametrize("seed", range(6))
def test_posterior_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    context = ctx(
        {"werewolf": 2, "villager": 3, "seer": 1}, self_role=str(rng.choice(["villager", "seer"]))
    )
    players = list(context.players)
    evidence: list[Evidence] = []
    for step in range(40):
        a, b = (str(x) for x in rng.choice(players, size=2, replace=False))
        kind = rng.random()
        if kind < 0.4:
            evidence.append(intent(a, b, float(np.round(rng.uniform(-1, 1), 2)), step))
        elif kind < 0.9 and b != "P1":
            actor = str(rng.choice([a, b, ""]))
            evidence.append(
                judgment(b, str(rng.choice(ROLES)), float(rng.uniform(0, 1)), actor, step)
            )
    m = make_opponent_model("bayes", context).observe_all(evidence)
    expected = brute_force(context, evidence)
    for p in players[1:]:
        assert dict(m.belief(p).distribution) == pytest.approx(expected[p], abs=1e-12)


def test_reading_never_changes_the_model_and_updates_return_new_values():
    m = make_opponent_model("bayes", ctx({"werewolf": 1, "villager": 2}))
    before = json.dumps(m.snapshot(), sort_keys=True)
    n = m.observe(judgment("P2", "werewolf", 1.0))
    for _ in range(3):
        m.belief("P2"), m.consult(), m.reference("P3")
    assert json.dumps(m.snapshot(), sort_keys=True) == before
    assert isinstance(n, BayesModel) and n is not m
    assert n.consult().model is n  # a decision adds nothing


def test_fruit_trading_context_is_one_subject_at_a_time():
    fruits = ("apples", "bananas", "cherries")
    m = make_opponent_model(
        "bayes", OpponentContext(players=("Ann", "Bob"), self_id="Ann", hypotheses=fruits)
    )
    m = m.observe(Evidence(subject="Bob", value="bananas", weight=1.0, step=1))
    assert dict(m.belief("Bob").distribution) == pytest.approx(
        {"apples": 0.25, "bananas": 0.5, "cherries": 0.25}
    )
    assert math.isclose(sum(m.reference("Bob").values()), 1.0)
