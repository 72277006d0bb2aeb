"""Best response, NashConv, expected values and CFR-Gain."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import expected_game_score, exploitability

import solvers
from solvers.synthetic import layered_tree


def random_policy(tree, seed):
    rng = np.random.default_rng(seed)
    return solvers.normalize_policy(tree, rng.random((tree.num_infosets, tree.max_actions)))


def test_kuhn_uniform_nash_conv_is_eleven_twelfths():
    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    result = solvers.nash_conv(tree, solvers.uniform_policy(tree))
    assert result.nash_conv == pytest.approx(11 / 12, abs=1e-12)
    np.testing.assert_allclose(result.policy_values, [0.125, -0.125], atol=1e-12)
    np.testing.assert_allclose(
        result.per_player, result.best_response_values - result.policy_values
    )
    assert result.exploitability == pytest.approx(11 / 24)


def test_leduc_nash_conv_equals_pyspiel():
    game = pyspiel.load_game("leduc_poker")
    tree = solvers.materialize(game)
    for seed in (0, 1):
        policy = random_policy(tree, seed)
        tabular = solvers.to_tabular_policy(tree, policy, game)
        expected = pyspiel.nash_conv(game, os_policy.python_policy_to_pyspiel_policy(tabular))
        assert solvers.nash_conv(tree, policy).nash_conv == pytest.approx(expected, abs=1e-9)


def test_three_player_kuhn_against_pyspiel():
    game = pyspiel.load_game("kuhn_poker(players=3)")
    tree = solvers.materialize(game)
    policy = random_policy(tree, 3)
    tabular = solvers.to_tabular_policy(tree, policy, game)
    expected = pyspiel.nash_conv(game, os_policy.python_policy_to_pyspiel_policy(tabular))
    assert solvers.nash_conv(tree, policy).nash_conv == pytest.approx(expected, abs=1e-9)
    values = expected_game_score.policy_value(game.new_initial_state(), [tabular] * 3)
    np.testing.assert_allclose(solvers.expected_values(tree, policy), values, atol=1e-12)


def test_general_sum_three_players_with_chance_against_python_best_response():
    tree0 = layered_tree(
        np.random.default_rng(7), players=(0, 1, 2, 0), num_actions=2, num_outcomes=2
    )
    game = pyspiel.load_efg_game(solvers.to_efg(tree0))
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    tree = solvers.materialize(game)
    for seed in (0, 1):
        policy = random_policy(tree, seed)
        tabular = solvers.to_tabular_policy(tree, policy, game)
        expected = exploitability.nash_conv(game, tabular, return_only_nash_conv=False)
        ours = solvers.nash_conv(tree, policy)
        assert ours.nash_conv == pytest.approx(expected.nash_conv, abs=1e-9)
        np.testing.assert_allclose(ours.per_player, expected.player_improvements, atol=1e-9)
        # Same numbers on the tree we built directly (before the EFG round trip).
        direct = solvers.nash_conv(tree0, solvers.TreePolicy(policy.probs))
        assert direct.nash_conv == pytest.approx(expected.nash_conv, abs=1e-9)


def test_best_response_policy_attains_best_response_value():
    tree = solvers.materialize(pyspiel.load_game("kuhn_poker(players=3)"))
    policy = random_policy(tree, 5)
    br_values = solvers.best_response_values(tree, policy)
    for player in range(3):
        br = solvers.best_response_policy(tree, policy, player)
        assert solvers.expected_values(tree, br)[player] == pytest.approx(
            br_values[player], abs=1e-12
        )
        rows = tree.infosets_of(player)
        assert set(np.unique(br.probs[rows])) <= {0.0, 1.0}
        others = np.setdiff1d(np.arange(tree.num_infosets), rows)
        np.testing.assert_array_equal(br.probs[others], policy.probs[others])


def tiny_game():
    """P0 picks L/R, P1 picks l/r without seeing it. Payoffs are general-sum."""
    b = solvers.TreeBuilder(2)
    root = b.add_decision(0, "p0", [0, 1])
    payoffs = {(0, 0): (3.0, 1.0), (0, 1): (0.0, 0.0), (1, 0): (1.0, 2.0), (1, 1): (2.0, 5.0)}
    for a in (0, 1):
        d = b.add_decision(1, "p1", [0, 1], parent=root, action=a)
        for c in (0, 1):
            b.add_terminal(payoffs[(a, c)], parent=d, action=c)
    return b.build()


def test_cfr_gain_hand_worked():
    tree = tiny_game()
    baseline = solvers.pure_policy(tree, lambda key, legal: legal[0])  # (L, l): values (3, 1)
    policy = solvers.policy_from_dict(tree, {"p0": {0: 0.5, 1: 0.5}, "p1": {0: 0.25, 1: 0.75}})
    result = solvers.cfr_gain(tree, policy, baseline)
    # u_0(sigma_0, l) = 0.5*3 + 0.5*1 = 2; u_1(L, sigma_1) = 0.25*1 + 0.75*0 = 0.25.
    np.testing.assert_allclose(result.baseline_values, [3.0, 1.0])
    np.testing.assert_allclose(result.deviation_values, [2.0, 0.25])
    np.testing.assert_allclose(result.per_player, [-1.0, -0.75])
    assert result.cfr_gain == pytest.approx(-1.75)
    # Expected values of the mixed profile and of a merged profile.
    np.testing.assert_allclose(
        solvers.expected_values(tree, policy),
        [0.5 * (0.25 * 3) + 0.5 * (0.25 * 1 + 0.75 * 2), 0.5 * 0.25 + 0.5 * (0.25 * 2 + 0.75 * 5)],
    )
    merged = solvers.merge_policies(tree, [policy, baseline])
    np.testing.assert_allclose(solvers.expected_values(tree, merged), [2.0, 1.5])
    # NashConv of the baseline: P0 is happy (3 >= 1); P1 would switch to r? u_1(L,r)=0 < 1: no.
    assert solvers.nash_conv(tree, baseline).nash_conv == pytest.approx(0.0)
    # CFR-Gain of a best response against the baseline is at most NashConv(baseline).
    br = solvers.merge_policies(
        tree, [solvers.best_response_policy(tree, baseline, i) for i in range(2)]
    )
    assert solvers.cfr_gain(tree, br, baseline).cfr_gain == pytest.approx(0.0)


def test_pure_policy_and_policy_helpers_validate():
    tree = tiny_game()
    with pytest.raises(ValueError, match="legal actions"):
        solvers.pure_policy(tree, lambda key, legal: 9)
    with pytest.raises(ValueError, match="missing"):
        solvers.policy_from_dict(tree, {"p0": {0: 1.0}})
    filled = solvers.policy_from_dict(tree, {"p0": {0: 1.0}}, default=solvers.uniform_policy(tree))
    np.testing.assert_allclose(filled.probs[tree.key_to_infoset["p1"]], [0.5, 0.5])
    with pytest.raises(ValueError, match="not information sets"):
        solvers.policy_from_dict(tree, {"nope": {0: 1.0}}, default=solvers.uniform_policy(tree))
    with pytest.raises(ValueError, match="not legal"):
        solvers.policy_from_fn(tree, lambda key, legal: {7: 1.0})
    assert solvers.uniform_policy(tree).action_probabilities(tree, "p1") == {0: 0.5, 1: 0.5}


def test_bad_policies_raise_value_errors():
    tree = tiny_game()
    good = solvers.uniform_policy(tree).probs
    with pytest.raises(ValueError, match=r"nash_conv: .*not normalised"):
        solvers.nash_conv(tree, good * 0.5)
    with pytest.raises(ValueError, match=r"nash_conv: .*shape"):
        solvers.nash_conv(tree, good[:1])
    bad = good.copy()
    bad[0] = [1.5, -0.5]
    with pytest.raises(ValueError, match="negative"):
        solvers.expected_values(tree, bad)
    with pytest.raises(ValueError, match="cfr_gain"):
        solvers.cfr_gain(tree, good, good * 2)
    game = pyspiel.load_game("kuhn_poker")
    kuhn = solvers.materialize(game)
    tabular = os_policy.TabularPolicy(game)
    del tabular.state_lookup["0"]
    with pytest.raises(ValueError, match="missing"):
        solvers.from_tabular_policy(kuhn, tabular)
    with pytest.raises(ValueError, match="not a state"):
        solvers.to_tabular_policy(tree, solvers.uniform_policy(tree), game)


def test_openspiel_tabular_policies_are_accepted():
    game = pyspiel.load_game("kuhn_poker")
    tree = solvers.materialize(game)
    ours = random_policy(tree, 3)
    base = solvers.pure_policy(tree, lambda key, legal: legal[0])
    tabular = solvers.to_tabular_policy(tree, ours, game)  # Python TabularPolicy
    tabular_base = solvers.to_tabular_policy(tree, base, game)
    assert solvers.nash_conv(tree, tabular).nash_conv == pytest.approx(
        solvers.nash_conv(tree, ours).nash_conv, abs=1e-12
    )
    assert solvers.nash_conv(tree, tabular).nash_conv == pytest.approx(
        exploitability.nash_conv(game, tabular), abs=1e-9
    )
    expected = solvers.cfr_gain(tree, ours, base).cfr_gain
    assert solvers.cfr_gain(tree, tabular, tabular_base).cfr_gain == pytest.approx(expected)
    # A C++ pyspiel policy too.
    cpp = os_policy.python_policy_to_pyspiel_policy(tabular)
    assert solvers.cfr_gain(tree, cpp, base).cfr_gain == pytest.approx(expected, abs=1e-12)
    curves = solvers.cfr_curves([tree], [tabular_base], 3, processes=1)
    assert curves.cfr_gain.shape == (1, 3)


def test_wrong_tree_baseline_is_named_the_baseline():
    kuhn = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    other = layered_tree(np.random.default_rng(0), players=(0, 1))
    with pytest.raises(ValueError, match=r"cfr_gain: the baseline has shape .* another tree"):
        solvers.cfr_gain(kuhn, solvers.uniform_policy(kuhn), solvers.uniform_policy(other))
    with pytest.raises(ValueError, match=r"cfr_gain: policy has shape"):
        solvers.cfr_gain(kuhn, solvers.uniform_policy(other), solvers.uniform_policy(kuhn))
    leduc_game = pyspiel.load_game("leduc_poker")
    leduc = solvers.materialize(leduc_game)
    wrong = solvers.to_tabular_policy(leduc, solvers.uniform_policy(leduc), leduc_game)
    with pytest.raises(
        ValueError, match="cfr_gain: the baseline is an OpenSpiel policy that does not fit"
    ):
        solvers.cfr_gain(kuhn, solvers.uniform_policy(kuhn), wrong)
    with pytest.raises(ValueError, match="nash_conv: policy is a str"):
        solvers.nash_conv(kuhn, "uniform")


@pytest.mark.parametrize("source", ["leduc", "layered3", "kuhn3"])
def test_expected_values_equal_reach_then_sum_bit_for_bit(source):
    # expected_values accumulates terminal children during its pass over the parents;
    # the reference is the plain definition: reach of every node, then a sum over the
    # terminals in node order, on the tree the kernels walk (decision-free subtrees
    # collapsed). Zeros in the policy exercise the skipped terms.
    if source == "leduc":
        tree = solvers.materialize(pyspiel.load_game("leduc_poker"))
    elif source == "kuhn3":
        tree = solvers.materialize(pyspiel.load_game("kuhn_poker(players=3)"))
    else:
        tree = layered_tree(np.random.default_rng(5), players=(0, 1, 2, 0), num_actions=3)
    for seed in (0, 1):
        raw = np.random.default_rng(seed).random((tree.num_infosets, tree.max_actions))
        raw[raw < 0.25] = 0.0
        policy = solvers.normalize_policy(tree, raw)
        walked = tree.collapsed
        reach = solvers.reach_probabilities(walked, policy)
        expected = np.zeros(tree.num_players)
        for z in walked.terminals:
            if reach[z] != 0.0:
                expected += reach[z] * walked.returns[z]
        got = solvers.expected_values(tree, policy)
        assert np.array_equal(got, expected), (source, seed, got - expected)
        assert (tree.returns[tree.terminals] != 0).any()
