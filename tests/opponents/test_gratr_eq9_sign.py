"""Eq. 9 never flips the sign of an edge it adds to (hole 13).

The worked example of ``docs/gratr.md`` (hole 13): Player 4 accuses Player 2
(credibility -0.8, T(4, 2) = tanh(-0.8) = -0.664) and defends the trusted
Player 3 (T(3) = 0.9, credibility 0.9); T(2) is set by the observer's own
intent of credibility T(B). Before the fix, T(B) = 0.01 read +0.197 after one
decision (increment 0.1 x 0.319 / 0.01 = 3.19, clamped to 1.0).
"""

from __future__ import annotations

import math

import pytest
from opponent_fixtures import werewolf_context

from gt_llm.opponents import Evidence, GratrModel, make_opponent_model
from gt_llm.opponents.gratr_equations import (
    backward_increment,
    backward_update,
    merge_edge_trust,
    sign_safe_increment,
)


def p(i: int) -> str:
    return f"Player {i}"


def intent(actor: str, target: str, c: float, step: int) -> Evidence:
    return Evidence(
        subject=target, value="Intent", kind="intent", actor=actor, credibility=c, step=step
    )


def accusation(t_b: float) -> GratrModel:
    m = make_opponent_model("gratr", werewolf_context())
    assert isinstance(m, GratrModel)
    return m.observe_all(
        [
            intent(p(1), p(2), t_b, 1),  # Eqs. 2-3: T(P2) = 1 * t_b
            intent(p(1), p(3), 0.9, 1),  # T(P3) = 0.9
            intent(p(4), p(2), -0.8, 1),  # the accusation
            intent(p(4), p(3), 0.9, 1),  # the defence of a trusted player
        ]
    )


def tick(m: GratrModel, step: int) -> GratrModel:
    """A message at ``step`` (moves the clock only), then a decision about Player 4."""
    msg = Evidence(subject=p(5), kind="message", actor=p(6), text="...", step=step)
    return m.observe(msg).decide([p(4)])


def test_worked_example_first_decisions_by_hand():
    m = accusation(0.01)
    assert m.trust(p(2)) == pytest.approx(0.01) and m.trust(p(3)) == pytest.approx(0.9)
    assert m.edge_trust(p(4), p(2)) == pytest.approx(math.tanh(-0.8))
    # Eq. 8 over the two floored chains P3 <- P4 and P2 <- P4 (equal weights 0.001).
    t4 = (0.9 * math.tanh(0.9) + 0.01 * math.tanh(-0.8)) / 2
    assert m.retrieve(p(4)).trust_after == pytest.approx(t4)  # 0.319014
    assert t4 == pytest.approx(0.319014, abs=1e-6)
    # The paper's increment 0.1 * 0.319 / 0.01 = 3.19 reads as a trust, 1: gamma * 1.
    assert backward_increment(t4, 0.01) == pytest.approx(0.1)
    d1 = tick(m, 1)
    assert d1.edge_trust(p(4), p(2)) == pytest.approx(math.tanh(-0.7))  # -0.604368
    # One step later the sum -0.7 decays to -0.665 before the new item: tanh(-0.565).
    d2 = tick(d1, 2)
    t4b = d1.retrieve(p(4)).trust_after
    inc = 0.1 * min(1.0, t4b / 0.01)
    assert d2.edge_trust(p(4), p(2)) == pytest.approx(math.tanh(0.95 * -0.7 + inc))


@pytest.mark.parametrize("t_b", [0.01, 0.1, 0.5])
def test_an_accusation_stays_negative_for_any_number_of_decisions(t_b):
    d = accusation(t_b)
    for step in range(1, 201):
        d = tick(d, step)
        assert d.edge_trust(p(4), p(2)) < 0.0, (t_b, step)
        # Deciding again at the same step replaces the step's feedback: still negative.
        assert d.decide([p(4)]).edge_trust(p(4), p(2)) < 0.0
    # The guard did bind (without it the positive increments would flip the sum).
    assert d.floor_count.limited > 0
    # Every increment stays within gamma in size.
    assert all(abs(f.credibility) <= 0.1 + 1e-12 for f in d.edge_feedback(p(4), p(2)))


def test_sign_safe_increment_and_the_literal_form():
    assert sign_safe_increment(0.3, -0.8) == pytest.approx(0.3)  # within half of 0.8
    assert sign_safe_increment(0.6, -0.8) == pytest.approx(0.4)  # cut to half
    assert sign_safe_increment(-0.6, -0.8) == pytest.approx(-0.6)  # same sign: kept
    assert sign_safe_increment(0.6, 0.0) == pytest.approx(0.6)  # no sign to keep
    with pytest.raises(ValueError, match="share"):
        sign_safe_increment(0.1, 0.2, share=1.0)
    # Eq. 9 on the trust, repeated: T(B) = 0.01 and T(A) = 0.319 every time.
    t = math.tanh(-0.8)
    for _ in range(50):
        t = backward_update(t, 0.319, 0.01)
        assert t < 0.0
    # Same-sign increments are kept (and clamped by the trust range).
    assert backward_update(-0.95, -0.9, 0.1) == pytest.approx(-1.0)


def test_a_new_observed_defence_flips_the_edge_and_feedback_stays_inside_it():
    # Observed evidence changes the edge freely; the step-1 feedback (+0.1, which now
    # agrees with the evidence) cannot grow the edge beyond the evidence's own sum.
    m = tick(accusation(0.01), 1).observe(intent(p(4), p(2), 1.0, 2))
    assert [f.credibility for f in m.edge_feedback(p(4), p(2))] == pytest.approx([0.1])
    evidence_only = merge_edge_trust([-0.8, 1.0], steps=[1, 2])  # tanh(0.95 * -0.8 + 1)
    assert m.edge_trust(p(4), p(2)) == pytest.approx(evidence_only)
    assert m.edge_trust(p(4), p(2)) > 0.0
