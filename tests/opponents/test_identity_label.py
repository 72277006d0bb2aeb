"""The identity label: the likeliest role, named when its odds grew by the stated ratio."""

from __future__ import annotations

import pytest
from opponent_fixtures import werewolf_context

from gt_llm.opponents import (
    IDENTITY_ODDS_RATIO,
    UNSURE,
    Evidence,
    identity_label,
    make_opponent_model,
)


def odds(p: float) -> float:
    return p / (1.0 - p)


def p_at_ratio(prior: float, ratio: float) -> float:
    """The probability whose odds are ``ratio`` times ``prior``'s."""
    o = ratio * odds(prior)
    return o / (1.0 + o)


@pytest.mark.parametrize("prior", [0.05, 0.2, 0.43])
def test_a_rare_and_a_common_role_need_the_same_bayes_factor(prior):
    rest = ["a", "b"]
    ref = {"r": prior, "a": (1 - prior) / 2, "b": (1 - prior) / 2}

    def read(p: float) -> dict[str, float]:
        return {"r": p, **{h: (1 - p) / 2 for h in rest}}

    at = p_at_ratio(prior, IDENTITY_ODDS_RATIO)
    if at > (1 - at) / 2:  # r is the likeliest there: named at the ratio, not below it
        assert identity_label(read(at), ref) == "r"
        assert identity_label(read(p_at_ratio(prior, 0.97 * IDENTITY_ODDS_RATIO)), ref) == UNSURE
    # A rise of 0.1 in probability (the old additive margin) is a factor 3.4 at 0.05
    # and 1.5 at 0.43: named for the rare role only where that factor reaches 3.
    bumped = read(min(prior + 0.1, 0.99))
    expected = "r" if odds(prior + 0.1) / odds(prior) >= IDENTITY_ODDS_RATIO else UNSURE
    if max(bumped.values()) == bumped["r"]:
        assert identity_label(bumped, ref) == expected


def test_a_role_that_rose_but_is_not_the_likeliest_is_never_named():
    ref = {"werewolf": 0.357, "villager": 0.429, "seer": 0.071, "doctor": 0.143}
    # A seer that rose fourfold, with werewolf still likelier: unsure, never "seer".
    assert (
        identity_label({"werewolf": 0.36, "villager": 0.3, "seer": 0.286, "doctor": 0.054}, ref)
        == UNSURE
    )
    # Villager 0.34 beside doctor 0.31: the likeliest (villager) fell, so unsure, never "doctor".
    assert (
        identity_label({"werewolf": 0.25, "villager": 0.34, "seer": 0.1, "doctor": 0.31}, ref)
        == UNSURE
    )


def test_no_evidence_ties_and_facts():
    ref = {"werewolf": 3 / 7, "villager": 2 / 7, "seer": 2 / 7}
    assert identity_label(ref, ref) == UNSURE  # never the prior's argmax
    assert identity_label({"werewolf": 0.45, "villager": 0.45, "seer": 0.1}, ref) == UNSURE
    assert identity_label({"werewolf": 1.0, "villager": 0.0, "seer": 0.0}, ref) == "werewolf"
    assert identity_label({}, ref) == UNSURE
    with pytest.raises(ValueError, match="odds_ratio"):
        identity_label(ref, ref, odds_ratio=0.5)


@pytest.mark.parametrize("name", ["dirichlet", "gratr", "none"])
def test_every_model_labels_through_the_same_rule(name):
    # One "seer" judgment of full confidence: each model's label is identity_label of its
    # own reading against its own reference.
    m = make_opponent_model(name, werewolf_context())
    e = Evidence(subject="Player 3", value="seer", source="llm_guess", step=1, weight=1.0)
    m = m.observe(e)
    b = m.belief("Player 3")
    assert m.identity("Player 3") == identity_label(b.distribution, m.reference("Player 3"))
    top = b.most_likely()
    assert m.identity("Player 3") in (UNSURE, *top)
