"""Dirichlet belief revision (gt_llm.opponents.dirichlet)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats

from gt_llm.opponents import (
    Belief,
    DirichletBelief,
    Evidence,
    make_opponent_model,
    opponent_models,
    register_opponent_model,
)

FRUITS = ("apples", "bananas", "oranges")


def _ev(value: str, subject: str = "Bob", step: int = 0) -> Evidence:
    return Evidence(subject=subject, value=value, source="test", step=step)


def test_prior_is_all_ones():
    m = make_opponent_model("dirichlet", hypotheses=FRUITS)
    assert isinstance(m, DirichletBelief)
    np.testing.assert_array_equal(m.alpha("Bob"), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(m.probabilities("Bob"), [1 / 3, 1 / 3, 1 / 3])
    assert m.belief("Bob").most_likely() == FRUITS
    assert m.belief("Bob").evidence == ()


def test_update_apples_twice_oranges_once():
    m = make_opponent_model("dirichlet", hypotheses=FRUITS)
    m = (
        m.observe(_ev("apples", step=1))
        .observe(_ev("oranges", step=2))
        .observe(_ev("apples", step=3))
    )
    np.testing.assert_array_equal(m.alpha("Bob"), [3.0, 1.0, 2.0])
    p = m.probabilities("Bob")
    # Exact: 3/6, 1/6, 2/6.
    assert [Fraction(x).limit_denominator(100) for x in p] == [
        Fraction(1, 2),
        Fraction(1, 6),
        Fraction(1, 3),
    ]
    np.testing.assert_allclose(p, [1 / 2, 1 / 6, 1 / 3], rtol=0, atol=1e-15)
    b = m.belief("Bob")
    assert isinstance(b, Belief)
    assert b.subject == "Bob"
    assert dict(b.distribution) == pytest.approx(
        {"apples": 0.5, "bananas": 1 / 6, "oranges": 1 / 3}
    )
    assert [e.value for e in b.evidence] == ["apples", "oranges", "apples"]
    assert [e.step for e in b.evidence] == [1, 2, 3]
    assert b.most_likely() == ("apples",)
    # Other subjects keep the prior.
    np.testing.assert_array_equal(m.alpha("Carol"), [1.0, 1.0, 1.0])


def test_observe_returns_new_model_and_leaves_old_unchanged():
    m0 = DirichletBelief(hypotheses=FRUITS)
    m1 = m0.observe(_ev("bananas"))
    assert m1 is not m0
    np.testing.assert_array_equal(m0.alpha("Bob"), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(m1.alpha("Bob"), [1.0, 2.0, 1.0])
    assert m0.belief("Bob").evidence == ()
    assert m0.snapshot()["subjects"] == {}
    # Branching: two children of m1 do not see each other's evidence.
    a = m1.observe(_ev("apples"))
    b = m1.observe(_ev("oranges"))
    np.testing.assert_array_equal(a.alpha("Bob"), [2.0, 2.0, 1.0])
    np.testing.assert_array_equal(b.alpha("Bob"), [1.0, 2.0, 2.0])
    np.testing.assert_array_equal(m1.alpha("Bob"), [1.0, 2.0, 1.0])
    # The stored mappings are read-only.
    with pytest.raises(TypeError):
        m1.alphas["Bob"] = (9.0, 9.0, 9.0)  # type: ignore[index]
    # The alpha returned is a copy: mutating it does not change the model.
    arr = m1.alpha("Bob")
    arr[0] = 100.0
    np.testing.assert_array_equal(m1.alpha("Bob"), [1.0, 2.0, 1.0])


def test_unknown_hypothesis_raises():
    m = DirichletBelief(hypotheses=FRUITS)
    with pytest.raises(ValueError, match="pears"):
        m.observe(_ev("pears"))
    with pytest.raises(ValueError):
        m.observe(_ev("Apples"))  # exact names only


def test_invalid_construction():
    with pytest.raises(ValueError):
        DirichletBelief(hypotheses=("apples",))
    with pytest.raises(ValueError):
        DirichletBelief(hypotheses=("apples", "apples"))
    with pytest.raises(ValueError):
        DirichletBelief(hypotheses=FRUITS, prior=0.0)


def test_most_likely_returns_all_tied_in_order():
    m = DirichletBelief(hypotheses=FRUITS).observe_all(
        [_ev("oranges"), _ev("apples"), _ev("bananas"), _ev("oranges"), _ev("apples")]
    )
    assert m.belief("Bob").most_likely() == ("apples", "oranges")
    m2 = m.observe(_ev("oranges"))
    assert m2.belief("Bob").most_likely() == ("oranges",)


def test_snapshot_is_json_ready():
    m = DirichletBelief(hypotheses=FRUITS).observe_all(
        [_ev("apples"), _ev("apples"), _ev("oranges"), _ev("bananas", subject="Alice")]
    )
    snap = json.loads(json.dumps(m.snapshot()))
    assert snap["model"] == "dirichlet"
    assert snap["hypotheses"] == list(FRUITS)
    assert snap["prior"] == 1.0
    assert set(snap["subjects"]) == {"Alice", "Bob"}
    bob = snap["subjects"]["Bob"]
    assert bob["alpha"] == [3.0, 1.0, 2.0]
    assert bob["p"] == pytest.approx([0.5, 1 / 6, 1 / 3])
    assert bob["evidence"] == ["apples", "apples", "oranges"]
    assert snap["subjects"]["Alice"]["alpha"] == [1.0, 2.0, 1.0]


def test_render_fills_template():
    m = DirichletBelief(hypotheses=FRUITS).observe(_ev("bananas"))
    text = m.render("Bob", "{name} wants {hypotheses[0]}", name="Bob")
    assert text == "Bob wants bananas"


def test_registry():
    assert "dirichlet" in opponent_models()
    with pytest.raises(ValueError, match="nope"):
        make_opponent_model("nope")
    with pytest.raises(ValueError, match="already registered"):
        register_opponent_model("dirichlet", DirichletBelief)


@pytest.mark.parametrize("seed", range(5))
def test_posterior_mean_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    hyps = tuple(f"h{i}" for i in range(k))
    prior = float(rng.choice([0.5, 1.0, 2.0]))
    m = DirichletBelief(hypotheses=hyps, prior=prior)
    counts = np.zeros(k)
    for _ in range(int(rng.integers(0, 30))):
        j = int(rng.integers(k))
        counts[j] += 1
        m = m.observe(Evidence(subject="s", value=hyps[j]))
    alpha = prior + counts
    np.testing.assert_allclose(m.alpha("s"), alpha)
    np.testing.assert_allclose(m.probabilities("s"), scipy.stats.dirichlet.mean(alpha), rtol=1e-12)
    dist = m.belief("s").distribution
    assert list(dist) == list(hyps)
    assert sum(dist.values()) == pytest.approx(1.0)


# --- The generalised model: roles, thresholds, confidence weights, facts, prompt fields ---

ROLES = ("werewolf", "villager", "seer")


def _guess(value: str, weight: float, subject: str = "P2", step: int = 0) -> Evidence:
    return Evidence(subject=subject, value=value, weight=weight, step=step, source="llm_identity")


def test_threshold_counts_only_confident_guesses():
    m = DirichletBelief(hypotheses=ROLES, threshold=0.5).observe_all(
        [_guess("werewolf", 0.4), _guess("werewolf", 0.5), _guess("seer", 0.9)]
    )
    # 0.4 is below the threshold: alpha = (1 + 1, 1, 1 + 1).
    np.testing.assert_array_equal(m.alpha("P2"), [2.0, 1.0, 2.0])
    assert len(m.belief("P2").evidence) == 3  # recorded all the same


def test_confidence_weighted_variant():
    m = DirichletBelief(hypotheses=ROLES, confidence_weighted=True).observe_all(
        [_guess("werewolf", 0.8), _guess("seer", 0.2), _guess("werewolf", 0.5)]
    )
    # alpha = (1 + 0.8 + 0.5, 1, 1 + 0.2) = (2.3, 1, 1.2); p = alpha / 4.5.
    np.testing.assert_allclose(m.alpha("P2"), [2.3, 1.0, 1.2])
    np.testing.assert_allclose(m.probabilities("P2"), [2.3 / 4.5, 1 / 4.5, 1.2 / 4.5])


def test_certain_fact_pins_the_distribution():
    m = DirichletBelief(hypotheses=ROLES).observe_all(
        [_guess("werewolf", 1.0), _guess("werewolf", 1.0)]
    )
    m = m.observe(Evidence(subject="P2", value="seer", certain=True, step=3))
    m = m.observe_all([_guess("werewolf", 1.0), _guess("villager", 1.0)])
    np.testing.assert_array_equal(m.probabilities("P2"), [0.0, 0.0, 1.0])
    b = m.belief("P2")
    assert b.pinned and b.most_likely() == ("seer",)
    # Later guesses do not move alpha either (recorded only).
    np.testing.assert_array_equal(m.alpha("P2"), [3.0, 1.0, 1.0])
    assert m.snapshot()["facts"] == {"P2": "seer"}


def test_prompt_fields_list_most_likely_with_probabilities():
    from gt_llm.opponents import OpponentContext

    ctx = OpponentContext(players=("P1", "P2", "P3"), self_id="P1", hypotheses=ROLES, k=1)
    m = make_opponent_model("dirichlet", ctx).observe_all(
        [
            _guess("werewolf", 1.0),
            _guess("werewolf", 1.0),
            _guess("seer", 1.0),
            Evidence(subject="P3", actor="P3", kind="message", text="hello", step=1),
            Evidence(subject="P2", actor="P2", kind="message", text="hi", step=2),
        ]
    )
    f = m.prompt_fields()
    assert [v["player"] for v in f["players"]] == ["P2", "P3"]
    p2 = f["players"][0]
    # alpha = (3, 1, 2): p = (1/2, 1/6, 1/3), listed most likely first.
    assert list(p2["probabilities"]) == ["werewolf", "seer", "villager"]
    assert p2["probabilities"]["werewolf"] == pytest.approx(0.5)
    # The likeliest role, but its odds only doubled (1 against 1/2): not yet named.
    assert p2["identity"] == "unsure"
    m3 = m.observe(_guess("werewolf", 1.0))  # alpha = (4, 1, 2): odds 4/3, x2.67
    m4 = m3.observe(_guess("werewolf", 1.0))  # alpha = (5, 1, 2): odds 5/3, x3.33
    assert m3.identity("P2") == "unsure" and m4.identity("P2") == "werewolf"
    assert f["players"][1]["identity"] == "unsure"  # uniform: nothing singles one out
    assert f["history"] == [{"step": 2, "speaker": "P2", "text": "hi", "subject": "P2", "kind": ""}]
    with pytest.raises(ValueError, match="P9"):
        m.observe(_guess("seer", 1.0, subject="P9"))


def test_compatibility_call_surface_of_fruit_trading():
    # games/fruit_trading/dialogue.py: make_opponent_model(name, hypotheses=FRUITS),
    # .observe(Evidence(subject=..., value=..., source=..., step=...)), .belief(name).most_likely().
    m = make_opponent_model("dirichlet", hypotheses=FRUITS)
    m = m.observe(Evidence(subject="Alice", value="oranges", source="llm_guess", step=1))
    assert m.belief("Alice").most_likely() == ("oranges",)


def test_prior_from_context_and_negative_facts():
    from gt_llm.opponents import OpponentContext

    hyps = ("werewolf", "villager", "seer")
    ctx = OpponentContext(
        players=("P1", "P2", "P3"),
        self_id="P1",
        hypotheses=hyps,
        prior={"werewolf": 2, "villager": 1, "seer": 1},
    )
    m = make_opponent_model("dirichlet", ctx)
    # alpha_0 = K * base rate = 3 * (1/2, 1/4, 1/4): the prior mean is the base rate.
    assert m.prior_alpha() == pytest.approx([1.5, 0.75, 0.75])
    assert m.belief("P2").distribution["werewolf"] == pytest.approx(0.5)
    assert m.prompt_fields(subjects=["P2"])["players"][0]["identity"] == "unsure"
    # One judgment adds 1, as under the uniform prior (total concentration K).
    m1 = m.observe(Evidence(subject="P2", value="seer", step=1))
    assert m1.belief("P2").distribution["seer"] == pytest.approx(1.75 / 4)
    # "Not a werewolf": that role drops to 0, the rest renormalise; nothing brings it back.
    m2 = m1.observe(Evidence(subject="P2", value="werewolf", certain=True, negated=True, step=2))
    m2 = m2.observe(Evidence(subject="P2", value="werewolf", weight=1.0, step=3))
    d = m2.belief("P2").distribution
    assert d["werewolf"] == 0.0
    assert d["seer"] == pytest.approx(1.75 / 2.5)
