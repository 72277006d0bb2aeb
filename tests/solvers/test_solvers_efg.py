"""Gambit .efg export and the pyspiel.load_efg_game round trip."""

import numpy as np
import pyspiel
import pytest

import solvers
from solvers.synthetic import fruit_shaped_tree


def round_trip(tree):
    text = solvers.to_efg(tree)
    game = pyspiel.load_efg_game(text)
    return game, solvers.materialize(game)


def assert_same_values(tree, back, seed=0):
    assert back.num_nodes == tree.num_nodes
    assert back.num_infosets == tree.num_infosets
    assert back.num_players == tree.num_players
    rng = np.random.default_rng(seed)
    for _ in range(2):
        probs = rng.random((tree.num_infosets, tree.max_actions))
        policy = solvers.normalize_policy(tree, probs)
        # Information sets and actions come back in the same order (preorder, legal order).
        back_policy = solvers.TreePolicy(policy.probs)
        np.testing.assert_allclose(
            solvers.expected_values(back, back_policy),
            solvers.expected_values(tree, policy),
            atol=1e-12,
        )
        np.testing.assert_allclose(
            solvers.nash_conv(back, back_policy).per_player,
            solvers.nash_conv(tree, policy).per_player,
            atol=1e-12,
        )


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"])
def test_round_trip_openspiel_games(name):
    game = pyspiel.load_game(name)
    tree = solvers.materialize(game)
    efg_game, back = round_trip(tree)
    assert_same_values(tree, back)
    uniform = solvers.uniform_policy(back)
    from open_spiel.python import policy as os_policy

    expected = pyspiel.nash_conv(
        efg_game,
        os_policy.python_policy_to_pyspiel_policy(
            solvers.to_tabular_policy(back, uniform, efg_game)
        ),
    )
    assert solvers.nash_conv(tree, solvers.uniform_policy(tree)).nash_conv == pytest.approx(
        expected, abs=1e-9
    )


def test_round_trip_fruit_shaped_and_cfr():
    tree = fruit_shaped_tree(3)
    _, back = round_trip(tree)
    assert_same_values(tree, back)
    a = solvers.CFRSolver(tree).run(20).average_policy()
    b = solvers.CFRSolver(back).run(20).average_policy()
    np.testing.assert_allclose(a.probs, b.probs, atol=1e-12)


def test_round_trip_with_conflicting_action_labels():
    # Action ids 3,5 then 4,5: plain labels would be misnumbered by OpenSpiel's parser.
    b = solvers.TreeBuilder(2)
    root = b.add_chance()
    x = b.add_decision(0, "x", [3, 5], parent=root, action=9, prob=0.3)
    y = b.add_decision(1, "y", [4, 5], parent=root, action=2, prob=0.7)
    b.add_terminal([1, -1], parent=x, action=3)
    b.add_terminal([2, -3], parent=x, action=5)
    b.add_terminal([-1, 4], parent=y, action=4)
    b.add_terminal([0.125, 1e-7], parent=y, action=5)
    tree = b.build()
    text = solvers.to_efg(tree)
    assert text.startswith("EFG 2 R")
    _, back = round_trip(tree)
    assert_same_values(tree, back)
    np.testing.assert_allclose(back.chance_prob[1:3], tree.chance_prob[1:3])
