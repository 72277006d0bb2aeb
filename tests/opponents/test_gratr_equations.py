"""GRATR's equations (gt_llm.opponents.gratr_equations) against numbers worked by hand."""

from __future__ import annotations

import math
import pathlib
import re

import pytest

from gt_llm.opponents.gratr_equations import (
    backward_increment,
    backward_update,
    chain_tree,
    chain_uncertainty,
    chain_value,
    combine_chains,
    merge_edge_trust,
    node_trust_update,
    search_order,
)
from gt_llm.opponents.gratr_types import EdgeState, NodeState

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_node_trust_update_eqs_2_3():
    # u = 0.8 * -0.5 = -0.4; |u| = 0.4 > |0.3|, so T becomes -0.4.
    assert node_trust_update(0.8, -0.5, 0.3) == pytest.approx(-0.4)
    # u = 0.5 * 0.4 = 0.2; |0.2| <= |-0.3|, so T stays -0.3.
    assert node_trust_update(0.5, 0.4, -0.3) == pytest.approx(-0.3)
    # A tie |u| = |T| keeps T (Eq. 3 replaces only when strictly stronger).
    assert node_trust_update(0.5, 0.6, -0.3) == pytest.approx(-0.3)
    # A distrusted source flips the sign: -0.9 * 0.7 = -0.63.
    assert node_trust_update(-0.9, 0.7, 0.1) == pytest.approx(-0.63)
    # Out-of-range inputs are clamped first: 1 * 1 = 1.
    assert node_trust_update(3.0, 2.0, 0.0) == 1.0


def test_merge_edge_trust_eq_4_with_decay():
    # rho = 0.9, list oldest first (0.5, -0.2, 0.8):
    # 0.9^2 * 0.5 + 0.9^1 * -0.2 + 0.9^0 * 0.8 = 0.405 - 0.18 + 0.8 = 1.025.
    assert merge_edge_trust([0.5, -0.2, 0.8], rho=0.9) == pytest.approx(math.tanh(1.025))
    assert math.tanh(1.025) == pytest.approx(0.771895, abs=1e-6)  # (e^2.05 - 1)/(e^2.05 + 1)
    # Decay by time step, steps (1, 1, 3): exponents 2, 2, 0:
    # 0.81 * 0.5 + 0.81 * -0.2 + 0.8 = 0.405 - 0.162 + 0.8 = 1.043.
    assert merge_edge_trust([0.5, -0.2, 0.8], rho=0.9, steps=[1, 1, 3]) == pytest.approx(
        math.tanh(1.043)
    )
    # Consecutive steps are the paper's index rule.
    assert merge_edge_trust([0.5, -0.2, 0.8], rho=0.9, steps=[4, 5, 6]) == pytest.approx(
        merge_edge_trust([0.5, -0.2, 0.8], rho=0.9)
    )
    # Order matters: the newest evidence weighs most.
    assert merge_edge_trust([0.8, -0.2, 0.5], rho=0.9) != pytest.approx(math.tanh(1.025))
    assert merge_edge_trust([], rho=0.9) == 0.0
    # Bounded even with much evidence.
    assert -1.0 < merge_edge_trust([1.0] * 200, rho=1.0) <= 1.0
    with pytest.raises(ValueError, match="rho"):
        merge_edge_trust([0.1], rho=0.0)
    with pytest.raises(ValueError, match="time order"):
        merge_edge_trust([0.1, 0.2], steps=[3, 1])


def test_chain_value_two_hop_eqs_5_7():
    # p_1 <- p_2 <- p_3; T(p1)=0.9, T(p2)=0.5, T(p3)=-0.4; T(p2,p1)=0.6, T(p3,p2)=-0.5.
    # V = T(p2) T(p2,p1) + T(p3) T(p3,p2) = 0.3 + 0.2 = 0.5.
    # u = T(p1) * 0.6 * -0.5 = -0.27.
    # H = -|u| log2 |u| = 0.27 * 1.888969 = 0.510022 (log2(0.27) = -1.888969).
    v, u, h = chain_value([0.9, 0.5, -0.4], [0.6, -0.5])
    assert v == pytest.approx(0.5)
    assert u == pytest.approx(-0.27)
    assert h == pytest.approx(0.510022, abs=1e-6)
    # One hop: V = T(p2) T(p2,p1) = 0 for an unknown target, u = 1 * -0.5.
    assert chain_value([1.0, 0.0], [-0.5]) == pytest.approx((0.0, -0.5, 0.5))
    with pytest.raises(ValueError):
        chain_value([1.0], [])
    with pytest.raises(ValueError):
        chain_value([1.0, 0.5], [0.1, 0.2])


def test_uncertainty_is_log2_and_defined_everywhere():
    assert chain_uncertainty(0.5) == pytest.approx(0.5)  # -0.5 log2 0.5 (ln would give 0.3466)
    assert chain_uncertainty(0.25) == pytest.approx(0.5)
    assert chain_uncertainty(-0.25) == chain_uncertainty(0.25)  # hole: H of a negative u
    assert chain_uncertainty(0.0) == 0.0
    assert chain_uncertainty(1.0) == 0.0


def test_combine_chains_eq_8():
    # Chain A: V=1.0, u=0.5, H=0.5 -> w=0.5; chain B: V=0.75, u=-0.25, H=0.5 -> w=0.25.
    # T = (0.5 * 0.5 + 0.25 * -0.25) / 0.75 = 0.1875 / 0.75 = 0.25.
    assert combine_chains([(1.0, 0.5, 0.5), (0.75, -0.25, 0.5)]) == pytest.approx(0.25)
    # A single chain gives its u.
    assert combine_chains([(0.9, -0.6, 0.44)]) == pytest.approx(-0.6)
    with pytest.raises(ValueError):
        combine_chains([])


def test_combine_chains_holes_negative_and_zero_weights():
    # V - H = 0.2 - 0.5 = -0.3 and 0 - 0.5 = -0.5: the paper's formula would give
    # (-0.3 * 0.5 + -0.5 * -0.25) / -0.8 = 0.03125, a sign flipped by negative weights.
    # Both weights are floored at the same epsilon, so T is the plain mean of u: 0.125.
    assert combine_chains([(0.2, 0.5, 0.5), (0.0, -0.25, 0.5)]) == pytest.approx(0.125)
    # Weights +0.3 and -0.3 would make the paper divide by zero; the floored ones
    # (0.3 and 0.001) give (0.3 * 0.8 + 0.001 * -0.8) / 0.301.
    t = combine_chains([(0.8, 0.8, 0.5), (0.2, -0.8, 0.5)])
    assert t == pytest.approx((0.3 * 0.8 - 0.001 * 0.8) / 0.301)
    # Always a convex combination: within [min u, max u].
    assert -0.8 <= t <= 0.8
    with pytest.raises(ValueError):
        combine_chains([(1.0, 0.5, 0.5)], weight_floor=0.0)


def test_backward_update_eq_9():
    # 0.1 * 0.3 / 0.5 + 0.2 = 0.06 + 0.2 = 0.26.
    assert backward_update(0.2, 0.3, 0.5) == pytest.approx(0.26)
    # The quotient 0.6 / 0.5 = 1.2 is read as a trust, 1 (hole 13): 0.1 + 0.2, not 0.32.
    assert backward_update(0.2, 0.6, 0.5) == pytest.approx(0.3)
    # 0.1 * 0.2 / -0.25 + 0 = -0.08 (an edge at 0 has no sign to keep).
    assert backward_update(0.0, 0.2, -0.25) == pytest.approx(-0.08)
    # 0.5 / -0.25 = -2 reads as -1: 0.1 * -1 + 0 = -0.1 (the paper's -0.2).
    assert backward_update(0.0, 0.5, -0.25) == pytest.approx(-0.1)
    # gamma = 0.5: the paper's 0.5 * -0.4 / 0.8 + 0.1 = -0.25 + 0.1 = -0.15 would flip the
    # edge's sign; hole 13 lets an opposing increment take at most half of it: 0.1 - 0.05.
    assert backward_update(0.1, -0.4, 0.8, gamma=0.5) == pytest.approx(0.05)


def test_backward_update_holes_zero_trust_and_clamp():
    # Hole 4: T(p_{o-1}) = 0 (or below eps) gives no update at all: the edge keeps
    # its value and, above all, its sign (an accusation stays an accusation).
    assert backward_increment(0.6, 0.0) is None
    assert backward_increment(0.6, -1e-9) is None
    assert backward_update(-0.664, 0.6, 0.0) == -0.664
    assert backward_update(0.2, -0.6, 0.0) == 0.2
    # With a larger eps the threshold moves: |0.3| < 0.5, no update.
    assert backward_update(0.2, 0.05, 0.3, eps=0.5) == 0.2
    # Above eps, the quotient is read as a trust (hole 13): 0.6 / 0.002 = 300 -> 1, so the
    # increment is gamma = 0.1 (the paper's 30 was clamped to 1.0 before).
    assert backward_increment(0.6, 0.002) == pytest.approx(0.1)
    assert backward_increment(0.6, -0.002) == pytest.approx(-0.1)
    for args in [(1.0, 1.0, 0.01), (-1.0, -1.0, 0.01), (0.9, 1.0, 1.0)]:
        assert -1.0 <= backward_update(*args) <= 1.0
    with pytest.raises(ValueError, match="eps"):
        backward_increment(0.5, 0.5, eps=0.0)


def test_search_order_best_first_ties_by_name_and_chain_tree_eqs_5_6():
    # Edges into "t" from "a" (T 0.2) and "b" (T 0.2), into "a" from "c" (T 0.9).
    nodes = {n: NodeState(trust=t) for n, t in {"t": 0.5, "a": 0.2, "b": 0.2, "c": 0.9}.items()}
    incoming = {
        "t": {"b": EdgeState(trust=0.4), "a": EdgeState(trust=-0.5)},
        "a": {"c": EdgeState(trust=0.8)},
    }
    parent, order = search_order(nodes, incoming, "t", None)
    # a and b tie on trust: a (by name) is popped first, so c is found before b's subtree.
    assert order == ["t", "b", "a", "c"]
    assert parent == {"t": None, "b": "t", "a": "t", "c": "a"}
    assert search_order(nodes, incoming, "t", 1)[1] == ["t", "b", "a"]
    players, nts, ets, v, u = chain_tree("t", 0.5, parent, order, nodes, incoming)["c"]
    assert players == ("t", "a", "c") and nts == (0.5, 0.2, 0.9) and ets == (-0.5, 0.8)
    # Eq. 5: V = T(a) T(a, t) + T(c) T(c, a); Eq. 6: u = T(t) T(a, t) T(c, a).
    assert v == pytest.approx(0.2 * -0.5 + 0.9 * 0.8)
    assert u == pytest.approx(0.5 * -0.5 * 0.8)
    assert (v, u) == pytest.approx(chain_value([0.5, 0.2, 0.9], [-0.5, 0.8])[:2])


def test_every_hole_the_code_cites_is_listed_in_the_doc():
    doc = (ROOT / "docs" / "gratr.md").read_text(encoding="utf-8")
    listed = {int(n) for n in re.findall(r"^(\d+)\. \*\*", doc, re.M)}
    assert listed == set(range(1, 14))
    cited = set()
    for path in (ROOT / "gt_llm" / "opponents").glob("gratr*.py"):
        cited |= {int(n) for n in re.findall(r"\bholes? (\d+)", path.read_text(encoding="utf-8"))}
    assert cited and cited <= listed
