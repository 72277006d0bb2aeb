"""Eq. 9 feedback stays inside the evidence of the edge it joins (hole 13).

At every read an edge's sign is the sign of its observed evidence (Eq. 4 over
D(p_i, p_j) alone), and its size is at most the evidence's: decisions may
weaken an edge, never flip it and never grow it. The two minimal cases are
the ones that broke the earlier, decision-time guard; the random streams mix
observed intents, decisions and clock ticks with node trusts of both signs
from 0.001 to 0.99 as Eq. 9's divisors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from opponent_fixtures import werewolf_context

from gt_llm.opponents import Evidence, GratrModel, make_opponent_model
from gt_llm.opponents.gratr_equations import evidence_bounded_sum, merge_edge_trust

DIVISOR_TRUSTS = (0.001, 0.01, 0.1, 0.5, 0.99)


def p(i: int) -> str:
    return f"Player {i}"


def intent(actor: str, target: str, c: float, step: int) -> Evidence:
    return Evidence(
        subject=target, value="Intent", kind="intent", actor=actor, credibility=c, step=step
    )


def tick(m: GratrModel, step: int, subjects: list[str]) -> GratrModel:
    msg = Evidence(subject=p(2), kind="message", actor=p(3), text="...", step=step)
    return m.observe(msg).decide(subjects)


def fresh() -> GratrModel:
    m = make_opponent_model("gratr", werewolf_context())
    assert isinstance(m, GratrModel)
    return m


def evidence_alone(m: GratrModel, a: str, b: str) -> float:
    ev = m.edge_evidence(a, b)
    return merge_edge_trust([e.credibility for e in ev], m.params.rho, steps=[e.step for e in ev])


def bound_violations(m: GratrModel) -> tuple[int, int, int]:
    """(edges read, reads whose sign opposes their evidence, reads grown beyond it)."""
    flipped = grown = 0
    edges = m.edges()
    for a, b, state in edges:
        alone = evidence_alone(m, a, b)
        if alone * state.trust < 0 or (alone == 0.0 and state.trust != 0.0):
            flipped += 1
        if abs(state.trust) > abs(alone) + 1e-12:
            grown += 1
    return len(edges), flipped, grown


def test_bounded_sum_by_hand():
    assert evidence_bounded_sum(-0.352, 0.5, 0.5) == pytest.approx(-0.176)  # at most half off
    assert evidence_bounded_sum(-0.352, 0.1, 0.5) == pytest.approx(-0.252)  # within: kept
    assert evidence_bounded_sum(-0.352, -0.4, 0.5) == pytest.approx(-0.352)  # never grown
    assert evidence_bounded_sum(0.0, 0.3, 0.5) == 0.0  # no evidence, no edge
    assert evidence_bounded_sum(0.2, -0.3, 0.5) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="share"):
        evidence_bounded_sum(0.2, 0.1, 1.0)


def test_a_later_accusation_of_a_defended_player_reads_as_an_accusation():
    # P4 defends the trusted P3 (+0.6), eight steps pass with a decision each (their
    # feedback on (P4, P3) is positive), then P4 accuses P3 (-0.75): the evidence sums
    # to 0.6 * 0.95**8 - 0.75 = -0.352, so the edge must read negative.
    m = fresh().observe_all([intent(p(1), p(3), 0.9, 0), intent(p(4), p(3), 0.6, 0)])
    for step in range(1, 9):
        m = tick(m, step, [p(4)])
    assert sum(f.credibility for f in m.edge_feedback(p(4), p(3))) > 0  # feedback was given
    m = m.observe(intent(p(4), p(3), -0.75, 8))
    e_sum = 0.6 * 0.95**8 - 0.75
    assert e_sum == pytest.approx(-0.352, abs=1e-3)
    t = m.edge_trust(p(4), p(3))
    assert math.tanh(e_sum) <= t < 0.0
    for step in range(9, 40):  # and stays so whatever decisions follow
        m = tick(m, step, [p(4)])
        assert 0.0 > m.edge_trust(p(4), p(3)) >= evidence_alone(m, p(4), p(3))


def test_feedback_alone_never_grows_an_edge():
    # A single -0.3 intent: its evidence decays (-0.3 * 0.95**k); a hundred decisions
    # that agree with it must not make the edge read stronger than that.
    m = fresh().observe_all([intent(p(1), p(3), 0.9, 0), intent(p(3), p(4), -0.3, 0)])
    for step in range(1, 101):
        m = tick(m, step, [p(3), p(4)])
        alone = evidence_alone(m, p(3), p(4))
        assert alone == pytest.approx(math.tanh(-0.3))  # evidence alone: its own last step
        assert alone <= m.edge_trust(p(3), p(4)) <= math.tanh(-0.3 * 0.95**step) + 1e-12 < 0
    assert m.floor_count.feedback > 0


def random_stream(seed: int, decisions: int) -> tuple[int, int, int]:
    """One random stream; the summed (reads, flipped, grown) over every read after each move."""
    rng = np.random.default_rng(seed)
    players = [p(i) for i in range(1, 9)]
    m = fresh()
    # The observer's own intents set node trusts (Eq. 9's divisors) of both signs.
    for q in players[1:]:
        t = float(rng.choice(DIVISOR_TRUSTS)) * float(rng.choice([-1.0, 1.0]))
        m = m.observe(intent(p(1), q, t, 0))
    step = 0
    totals = np.zeros(3, dtype=int)
    for _ in range(decisions):
        move = rng.random()
        if move < 0.35:  # an observed intent between two other players
            a, b = rng.choice(len(players) - 1, size=2, replace=False) + 1
            c = float(np.round(rng.uniform(-1.0, 1.0), 3))
            m = m.observe(intent(players[a], players[b], c, step))
        elif move < 0.55:
            step += 1
        who = [players[i] for i in rng.choice(range(1, 8), size=3, replace=False)]
        m = tick(m, step, who) if move >= 0.55 else m.decide(who)
        totals += bound_violations(m)
    return int(totals[0]), int(totals[1]), int(totals[2])


def streams_hold(seeds: range) -> None:
    reads = flipped = grown = 0
    for seed in seeds:
        r, f, g = random_stream(seed, 500)
        reads, flipped, grown = reads + r, flipped + f, grown + g
    assert reads > len(seeds) * 500  # every stream has edges to read
    assert (flipped, grown) == (0, 0)


def test_random_streams_never_flip_or_grow_an_edge():
    streams_hold(range(8))  # 8 streams of 500 moves, each followed by a decision


@pytest.mark.slow
def test_two_hundred_random_streams_never_flip_or_grow_an_edge():
    streams_hold(range(200))  # about 40 s on one core
