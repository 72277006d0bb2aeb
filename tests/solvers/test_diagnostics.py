"""Degeneracy checks on small hand-built trees, where every answer is known."""

from __future__ import annotations

import pytest

import solvers
from solvers.diagnostics import degeneracy_counts, tree_degeneracy


def _one_decision(payoffs: list[list[float]]) -> solvers.GameTree:
    """Player 0 picks one of len(payoffs) actions; each leads to a terminal."""
    b = solvers.TreeBuilder(num_players=2)
    d = b.add_decision(0, "root", list(range(len(payoffs))))
    for a, pay in enumerate(payoffs):
        b.add_terminal(pay, parent=d, action=a)
    return b.build()


def _decision_then_coin(per_action: list[tuple[list[float], list[float]]]) -> solvers.GameTree:
    """Player 0 picks an action; a fair coin then picks one of two payoffs."""
    b = solvers.TreeBuilder(num_players=2)
    d = b.add_decision(0, "root", list(range(len(per_action))))
    for a, (heads, tails) in enumerate(per_action):
        c = b.add_chance(parent=d, action=a)
        b.add_terminal(heads, parent=c, action=0, prob=0.5)
        b.add_terminal(tails, parent=c, action=1, prob=0.5)
    return b.build()


def _pure(tree: solvers.GameTree, action: int) -> solvers.TreePolicy:
    return solvers.pure_policy(tree, lambda key, legal: action)


def test_constant_payoff_tree_is_degenerate_in_every_check():
    tree = _one_decision([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    d = tree_degeneracy(tree, _pure(tree, 2))
    assert d.constant_payoff
    assert not d.decision_changes_outcome and not d.deviation_changes_value
    assert d.baseline_nash_conv == 0.0
    assert d.decision_nodes == 1


def test_a_choice_that_changes_payoff_is_found_and_the_baseline_is_exploitable():
    tree = _one_decision([[3.0, 0.0], [1.0, 0.0]])
    # Baseline plays the worse action 1: player 0 gains 2 by switching.
    d = tree_degeneracy(tree, _pure(tree, 1))
    assert not d.constant_payoff
    assert d.outcome_decisions == 1 and d.value_decisions == 1
    assert d.baseline_nash_conv == pytest.approx(2.0)
    # Baseline already plays the best action: the choice matters, but NashConv is 0.
    best = tree_degeneracy(tree, _pure(tree, 0))
    assert best.decision_changes_outcome and best.baseline_nash_conv == 0.0


def test_payoff_differences_from_chance_alone_do_not_count():
    # Both actions lead to the same coin flip: leaves differ, the decision does not matter.
    tree = _decision_then_coin([([4.0, 0.0], [0.0, 4.0]), ([4.0, 0.0], [0.0, 4.0])])
    d = tree_degeneracy(tree, _pure(tree, 0))
    assert not d.constant_payoff
    assert not d.decision_changes_outcome and not d.deviation_changes_value
    assert d.baseline_nash_conv == 0.0


def test_same_expected_value_but_different_outcomes():
    # Action 0: a sure 1; action 1: 0 or 2 on a coin. Same expectation, other outcomes.
    tree = _decision_then_coin([([1.0, 1.0], [1.0, 1.0]), ([0.0, 0.0], [2.0, 2.0])])
    d = tree_degeneracy(tree, _pure(tree, 0))
    assert d.decision_changes_outcome
    assert not d.deviation_changes_value
    assert d.baseline_nash_conv == pytest.approx(0.0, abs=1e-12)


def test_deviation_value_uses_the_baseline_below_the_node():
    # Player 0 then player 1. Player 1's choice matters only after player 0's action 1.
    b = solvers.TreeBuilder(num_players=2)
    root = b.add_decision(0, "p0", [0, 1])
    left = b.add_decision(1, "p1 after 0", [0, 1], parent=root, action=0)
    b.add_terminal([0.0, 0.0], parent=left, action=0)
    b.add_terminal([0.0, 0.0], parent=left, action=1)
    right = b.add_decision(1, "p1 after 1", [0, 1], parent=root, action=1)
    b.add_terminal([0.0, 0.0], parent=right, action=0)
    b.add_terminal([5.0, -1.0], parent=right, action=1)
    tree = b.build()
    # Baseline: everyone plays action 0. Below the root the baseline pays (0, 0) either
    # way, so only player 1's node "after 1" changes a value; the root's outcome sets differ.
    d = tree_degeneracy(tree, _pure(tree, 0))
    assert d.outcome_decisions == 2  # root and "p1 after 1"
    assert d.value_decisions == 1
    # Player 1 would not deviate (it loses 1); player 0 cannot gain without player 1.
    assert d.baseline_nash_conv == 0.0
    # Under "everyone plays 1" player 1 gains 1 by deviating at "after 1".
    assert tree_degeneracy(tree, _pure(tree, 1)).baseline_nash_conv == pytest.approx(1.0)


def test_counts_over_trees_and_errors():
    trees = [
        _one_decision([[1.0, 1.0], [1.0, 1.0]]),
        _one_decision([[2.0, 0.0], [0.0, 0.0]]),
        _decision_then_coin([([1.0, 0.0], [0.0, 1.0]), ([1.0, 0.0], [0.0, 1.0])]),
    ]
    counts = degeneracy_counts(trees, baseline_action=1)
    assert counts.trees == 3
    assert counts.constant_payoff == 1
    assert counts.decision_changes_outcome == 1
    assert counts.deviation_changes_value == 1
    assert counts.baseline_nash_conv_positive == 1
    assert counts.to_dict()["baseline_nash_conv_positive"] == 1
    assert [d.decision_changes_outcome for d in counts.per_tree] == [False, True, False]
    # A baseline given as a function agrees with the same baseline given as an action.
    same = degeneracy_counts(trees, baseline=lambda t: _pure(t, 1))
    assert same.to_dict() == counts.to_dict()
    with pytest.raises(ValueError, match="exactly one of baseline_action"):
        degeneracy_counts(trees)
    with pytest.raises(ValueError, match="baseline_action=7 is not legal"):
        degeneracy_counts(trees, baseline_action=7)
