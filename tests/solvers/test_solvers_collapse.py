"""Collapsed policy-free subtrees (solvers.collapse): the solvers' results equal the full walk's.

The reference is always the compiled kernels run on the *full* tree's arrays
(``tree.kernel_arrays``); the public functions walk ``tree.collapsed``.
Backward-pass results (CFR iterates, regrets, average policies, best-response
values and actions) must be bit-for-bit equal; sums over terminals (expected
values, the fused NashConv / CFR-Gain pass) equal to 1e-12 of the payoff scale.
"""

import pickle

import numpy as np
import pyspiel
import pytest

import solvers
from solvers import _kernels
from solvers.collapse import collapse_policy_free, has_decision_below
from solvers.synthetic import fruit_shaped_tree, layered_tree
from solvers.tree import CHANCE, DECISION, TERMINAL, GameTree


def first_action(key, legal):
    return legal[0]


def random_policy(tree, seed):
    rng = np.random.default_rng(seed)
    return solvers.normalize_policy(tree, rng.random((tree.num_infosets, tree.max_actions)))


def registered_trees():
    """The trees of every registered game's conformance instances (small, materialised)."""
    from games.engine.registry import registered_game_specs  # loads the games

    return {
        string: solvers.materialize(pyspiel.load_game(string))
        for spec in registered_game_specs()
        for string in spec.conformance.tree_game_strings
    }


SYNTHETIC = {
    "fruit0": lambda: fruit_shaped_tree(0),
    "fruit3": lambda: fruit_shaped_tree(3),
    "layered3p": lambda: layered_tree(
        np.random.default_rng(5), players=(0, 1, 2, 0), num_actions=3, num_outcomes=2
    ),
    "layered_deep_chance": lambda: layered_tree(
        np.random.default_rng(11), players=(1, 0), num_actions=2, num_outcomes=3
    ),
    "layered_fixed_chance": lambda: layered_tree(
        np.random.default_rng(2), players=(0, 1, 1, 0), num_actions=2, random_chance=False
    ),
    "leduc": lambda: solvers.materialize(pyspiel.load_game("leduc_poker")),
    "kuhn3": lambda: solvers.materialize(pyspiel.load_game("kuhn_poker(players=3)")),
}


@pytest.fixture(scope="module")
def all_trees():
    trees = {name: build() for name, build in SYNTHETIC.items()}
    trees.update(registered_trees())
    return trees


def full_metrics(tree, probs, base):
    """(values, best-response values, deviation values) from the fused kernels on the full tree."""
    n, p, k = tree.num_nodes, tree.num_players, tree.num_infosets * tree.max_actions
    tt, tval = tree.kernel_arrays, tree.returns_by_player
    ev, br, dev = np.zeros(p), np.zeros(p), np.zeros(p)
    chance_reach, seq = np.empty(n), np.empty((n, p), dtype=np.int64)
    iset_parent, qb = np.empty(tree.num_infosets, dtype=np.int64), np.empty(k + p)
    reach = np.empty((n, p))
    _kernels.metric_rows(tt, p, tval, base, True, chance_reach, seq, iset_parent, reach, qb)
    _kernels.policy_metrics(
        tt,
        p,
        tval,
        probs,
        True,
        chance_reach,
        seq,
        iset_parent,
        qb,
        reach,
        np.empty(k),
        np.empty(k),
        np.empty(tree.num_infosets, dtype=np.int64),
        ev,
        br,
        dev,
    )
    return ev, br, dev


def full_cfr(tree, iterations, variant):
    """(current, regret, cumulative) after ``iterations`` of CFR on the full tree's arrays."""
    shape = (tree.num_infosets, tree.max_actions)
    current, regret, cumulative = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    _kernels.regret_matching(regret, tree.infoset_num_actions, tree.infoset_player, -1, current)
    _kernels.cfr_run(
        tree.kernel_arrays,
        tree.num_players,
        0,
        iterations,
        current,
        regret,
        cumulative,
        *solvers.cfr.resolve_variant(variant).kernel_args(),
    )
    return current, regret, cumulative


def test_fixtures_cover_collapsed_and_unchanged_trees(all_trees):
    shrunk = {name for name, tree in all_trees.items() if tree.collapsed is not tree}
    assert {"fruit0", "fruit3", "layered3p"} <= shrunk
    assert "python_ultimatum" in set(all_trees) - shrunk  # nothing to collapse there
    assert any(name.startswith("python_fruit_trading") for name in shrunk)
    assert any(name.startswith("python_werewolf_day") for name in shrunk)


def test_fruit_tree_keeps_365_of_877_nodes():
    tree = fruit_shaped_tree(0)
    walked = tree.collapsed
    assert (tree.num_nodes, walked.num_nodes) == (877, 365)
    assert walked.num_terminals == 256 and walked.num_infosets == tree.num_infosets
    assert walked.collapsed is walked and tree.collapsed is walked  # cached, idempotent


def test_collapsed_tree_is_canonical_and_keeps_the_infosets(all_trees):
    for name, tree in all_trees.items():
        walked = tree.collapsed
        # Policy-free subtrees are gone: every internal node has a decision below it.
        internal = walked.kind != TERMINAL
        assert has_decision_below(walked)[internal].all(), name
        # The canonical construction of the same nodes gives the very same arrays (layout,
        # best-response orders, information-set numbering).
        rebuilt = GameTree.from_arrays(
            num_players=walked.num_players,
            parent=walked.parent,
            kind=walked.kind,
            action=walked.action,
            player=walked.player,
            chance_prob=walked.chance_prob,
            infoset=walked.infoset,
            returns=walked.returns,
            infoset_keys=walked.infoset_keys,
            infoset_actions=[walked.legal_actions(s) for s in range(walked.num_infosets)],
        )
        for field, value in vars(rebuilt).items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(walked, field)), (name, field)
        assert rebuilt.infoset_keys == tree.infoset_keys, name
        assert np.array_equal(walked.infoset_actions, tree.infoset_actions), name
        # Decision nodes are kept in order, with their information sets.
        assert np.array_equal(
            walked.infoset[walked.kind == DECISION], tree.infoset[tree.kind == DECISION]
        ), name


def test_collapsed_returns_are_the_subtrees_expected_returns():
    tree = fruit_shaped_tree(1)
    walked = tree.collapsed
    live = has_decision_below(tree)

    def value(h):  # plain recursion over the full tree
        if tree.kind[h] == TERMINAL:
            return tree.returns[h]
        fc, nc = tree.first_child[h], tree.num_children[h]
        return sum(tree.chance_prob[fc + j] * value(fc + j) for j in range(nc))

    roots = [h for h in range(1, tree.num_nodes) if not live[h] and live[tree.parent[h]]]
    assert len(roots) == walked.num_terminals
    for new, old in zip(walked.terminals, roots, strict=True):
        assert tree.kind[old] in (CHANCE, TERMINAL)
        np.testing.assert_allclose(walked.returns[new], value(old), rtol=0, atol=1e-12)


@pytest.mark.parametrize("variant", ["cfr", "cfr+", "dcfr"])
def test_cfr_is_bit_for_bit_the_full_walk(all_trees, variant):
    for name, tree in all_trees.items():
        solver = solvers.CFRSolver(tree, variant=variant).run(25)
        current, regret, cumulative = full_cfr(tree, 25, variant)
        assert np.array_equal(solver.cumulative_regret(), regret), name
        assert np.array_equal(solver.current_policy().probs, current), name
        expected = np.zeros_like(cumulative)
        _kernels.normalize_rows(cumulative, tree.infoset_num_actions, expected)
        assert np.array_equal(solver.average_policy().probs, expected), name


def test_simultaneous_updates_are_bit_for_bit_the_full_walk():
    tree = fruit_shaped_tree(2)
    variant = solvers.CFRVariant("sim", alternating_updates=False)
    solver = solvers.CFRSolver(tree, variant=variant).run(20)
    _, regret, _ = full_cfr(tree, 20, variant)
    assert np.array_equal(solver.cumulative_regret(), regret)


def test_metrics_equal_the_full_walk(all_trees):
    for name, tree in all_trees.items():
        scale = 1e-12 * tree.payoff_scale
        base = solvers.check_policy(tree, solvers.pure_policy(tree, first_action))
        for seed in range(2):
            probs = solvers.check_policy(tree, random_policy(tree, seed))
            ev, br, dev = full_metrics(tree, probs, base)
            nc = solvers.nash_conv(tree, probs)
            np.testing.assert_allclose(nc.policy_values, ev, rtol=0, atol=scale, err_msg=name)
            np.testing.assert_allclose(nc.best_response_values, br, rtol=0, atol=scale)
            gain = solvers.cfr_gain(tree, probs, base)
            np.testing.assert_allclose(gain.deviation_values, dev, rtol=0, atol=scale)
            np.testing.assert_allclose(
                solvers.expected_values(tree, probs), ev, rtol=0, atol=scale, err_msg=name
            )
            # Per-node outputs stay those of the full tree.
            reach = np.empty(tree.num_nodes)
            _kernels.profile_reach(tree.kernel_arrays, probs, reach)
            assert np.array_equal(solvers.reach_probabilities(tree, probs), reach), name
            # Best responses come from a backward pass: identical bits and actions.
            for player in range(tree.num_players):
                choice = np.empty(tree.num_infosets, dtype=np.int64)
                value = _kernels.best_response_value(
                    tree.kernel_arrays,
                    probs,
                    player,
                    np.empty(tree.num_nodes),
                    np.empty(tree.num_nodes),
                    choice,
                )
                got, got_choice = solvers.best_response._br(tree, probs, player)
                assert got == value, name
                assert np.array_equal(got_choice, choice), name
                expected = probs.copy()
                rows = tree.infosets_of(player)
                expected[rows] = 0.0
                expected[rows, choice[rows]] = 1.0
                assert np.array_equal(
                    solvers.best_response_policy(tree, probs, player).probs, expected
                ), name


def test_step_and_curves_equal_the_full_walk(all_trees):
    for name in ("fruit0", "layered3p", "python_fruit_trading(init=1,max_messages=3)"):
        tree = all_trees[name]
        scale = 1e-12 * tree.payoff_scale
        base = solvers.check_policy(tree, solvers.pure_policy(tree, first_action))
        solver = solvers.CFRSolver(tree, variant="cfr+")
        steps = [solver.step(base) for _ in range(10)]
        curves = solvers.cfr_curves([tree], [base], 10, variant="cfr+", processes=1)
        _, _, cumulative = full_cfr(tree, 10, "cfr+")
        average = np.zeros_like(cumulative)
        _kernels.normalize_rows(cumulative, tree.infoset_num_actions, average)
        assert np.array_equal(curves.average_policies[0].probs, average), name
        assert np.array_equal(solver.average_policy().probs, average), name
        ev, br, dev = full_metrics(tree, average, base)
        base_ev, _, _ = full_metrics(tree, base, base)
        full_nc = float((br - ev).sum())
        full_gain = float((dev - base_ev).sum())
        for got in (steps[-1].nash_conv, curves.nash_conv[0, -1]):
            assert abs(got - full_nc) <= 2 * scale, name
        for got in (steps[-1].cfr_gain, curves.cfr_gain[0, -1]):
            assert abs(got - full_gain) <= 2 * scale, name


def test_tree_without_policy_free_subtrees_is_unchanged():
    for string in ("kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"):
        tree = solvers.materialize(pyspiel.load_game(string))
        assert collapse_policy_free(tree) is tree
        assert tree.collapsed is tree


def policy_free_tree():
    """Chance only: a root chance node over a chance node (two leaves) and a leaf."""
    return GameTree.from_arrays(
        num_players=2,
        parent=[-1, 0, 0, 1, 1],
        kind=[CHANCE, CHANCE, TERMINAL, TERMINAL, TERMINAL],
        action=[-1, 0, 1, 0, 1],
        player=[-1] * 5,
        chance_prob=[1.0, 0.3, 0.7, 0.25, 0.75],
        infoset=[-1] * 5,
        returns=[[0, 0], [0, 0], [1, -1], [2, -2], [6, -6]],
        infoset_keys=[],
        infoset_actions=[],
    )


def test_whole_policy_free_tree_collapses_to_one_terminal():
    tree = policy_free_tree()
    walked = tree.collapsed
    assert walked.num_nodes == 1 and walked.kind[0] == TERMINAL
    value = 0.3 * (0.25 * 2 + 0.75 * 6) + 0.7 * 1  # 2.2
    np.testing.assert_allclose(walked.returns[0], [value, -value], rtol=0, atol=1e-15)
    policy = solvers.uniform_policy(tree)
    np.testing.assert_allclose(solvers.expected_values(tree, policy), [value, -value], atol=1e-15)
    assert solvers.nash_conv(tree, policy).nash_conv == 0.0
    metrics = solvers.CFRSolver(tree).step(policy)
    assert metrics.nash_conv == 0.0 and metrics.cfr_gain == 0.0
    curves = solvers.cfr_curves([tree], [policy], 3, processes=1)
    assert np.array_equal(curves.nash_conv, np.zeros((1, 3)))
    # Per-node outputs are still over the five original nodes.
    np.testing.assert_allclose(
        solvers.reach_probabilities(tree, policy), [1.0, 0.3, 0.7, 0.075, 0.225], atol=1e-15
    )


def test_collapsed_tree_is_not_pickled():
    tree = fruit_shaped_tree(0)
    assert tree.collapsed.num_nodes == 365
    state = tree.__getstate__()
    assert "collapsed" not in state and "kernel_arrays" not in state
    copy = pickle.loads(pickle.dumps(tree))
    assert "collapsed" not in vars(copy)
    assert copy.collapsed.num_nodes == 365
    policy = random_policy(tree, 0)
    assert solvers.nash_conv(copy, policy).nash_conv == solvers.nash_conv(tree, policy).nash_conv


def test_internal_end_is_one_past_the_last_non_terminal(all_trees):
    trees = list(all_trees.values()) + [policy_free_tree()]
    for tree in trees + [tree.collapsed for tree in trees]:
        interior = np.flatnonzero(tree.kind != TERMINAL)
        expected = int(interior[-1]) + 1 if interior.size else 1
        assert _kernels.internal_end(tree.kind, tree.parent) == expected
        assert (tree.kind[expected:] == TERMINAL).all()
