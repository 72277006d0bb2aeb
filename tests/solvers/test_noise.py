"""The noise checks of a solved tree: label null, seed bootstrap, held-out gain, intervals."""

from __future__ import annotations

import numpy as np
import pytest

import solvers
from runs.intervals import (
    benjamini_hochberg,
    mean_ci95,
    percentile_interval,
    permutation_p_value,
    wilson_interval,
)
from solvers.held_out import held_out_gain, path_keys
from solvers.noise import (
    NoiseSettings,
    label_permutation_test,
    permuted_baseline,
    relabel_actions,
    study_noise,
    tree_noise,
)
from solvers.resampling import bootstrap_tree
from solvers.synthetic import layered_tree, planted_action_cost
from solvers.tree import CHANCE, TreeBuilder


def first_action(tree: solvers.GameTree) -> solvers.TreePolicy:
    """The baseline of these tests: the first legal action everywhere (the chat games' "any")."""
    return solvers.pure_policy(tree, lambda _key, legal: legal[0])


def exchangeable_tree(rng: np.random.Generator) -> solvers.GameTree:
    """A tree whose payoffs are i.i.d. per leaf: action labels carry no information."""
    return layered_tree(rng, players=(0, 1, 0), num_actions=4, num_outcomes=2, random_chance=False)


def planted_tree(rng: np.random.Generator, effect: float) -> solvers.GameTree:
    """An exchangeable tree where the first action costs its player ``effect`` at every decision."""
    return planted_action_cost(exchangeable_tree(rng), 0, effect)


def test_cfr_resolved_on_a_relabelled_tree_plays_the_relabelled_policy():
    # The label null's shortcut: re-solving after relabelling = scoring against a permuted baseline.
    rng = np.random.default_rng(3)
    tree = exchangeable_tree(rng)
    perms = {s: rng.permutation(4) for s in range(tree.num_infosets)}
    moved = relabel_actions(tree, [perms[s] for s in range(tree.num_infosets)])
    pol = solvers.CFRSolver(tree).run(300).average_policy().probs
    pol_moved = solvers.CFRSolver(moved).run(300).average_policy().probs
    for s in range(tree.num_infosets):
        s2 = moved.infoset_keys.index(tree.infoset_keys[s])
        np.testing.assert_allclose(pol_moved[s2, perms[s]], pol[s], atol=1e-9)
    # The baseline "first legal action" on the relabelled tree is action perms^-1(0) here.
    inverse = np.zeros((tree.num_infosets, 4))
    for s in range(tree.num_infosets):
        inverse[s, int(np.argsort(perms[s])[0])] = 1.0
    gain_moved = solvers.cfr_gain(moved, pol_moved, first_action(moved)).cfr_gain
    gain_permuted = solvers.cfr_gain(tree, pol, inverse).cfr_gain
    assert gain_moved == pytest.approx(gain_permuted, abs=1e-9)


def test_permuted_baseline_keeps_each_row_a_permutation_of_legal_actions():
    rng = np.random.default_rng(0)
    tree = exchangeable_tree(rng)
    base = np.asarray(first_action(tree).probs)
    out = permuted_baseline(tree, base, rng)
    assert out.shape == base.shape
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    assert set(np.argmax(out, axis=1)) == {0, 1, 2, 3}  # the pure choice moves


def test_label_null_rejects_about_the_nominal_share_of_exchangeable_trees():
    rng = np.random.default_rng(2026)
    n, alpha = 200, 0.05
    rejections = 0
    for _ in range(n):
        tree = exchangeable_tree(rng)
        pol = solvers.CFRSolver(tree).run(100).average_policy()
        _, _, p = label_permutation_test(tree, pol, first_action(tree), permutations=99, rng=rng)
        rejections += p <= alpha
    # Within two binomial standard errors of the level (valid tests may be conservative).
    se = (alpha * (1 - alpha) / n) ** 0.5
    assert rejections / n <= alpha + 2 * se
    assert rejections / n >= alpha - 2 * se


def test_label_null_finds_a_planted_tone_effect():
    rng = np.random.default_rng(7)
    found = 0
    for _ in range(40):
        tree = planted_tree(rng, effect=1.0)
        pol = solvers.CFRSolver(tree).run(200).average_policy()
        _, _, p = label_permutation_test(tree, pol, first_action(tree), permutations=99, rng=rng)
        found += p <= 0.05
    assert found >= 36  # power >= 0.9 at this effect


def test_bootstrap_tree_redraws_equal_chance_nodes_and_keeps_stated_probabilities():
    rng = np.random.default_rng(1)
    uniform = exchangeable_tree(rng)
    rep = bootstrap_tree(uniform, rng)
    chance = np.nonzero(uniform.kind == CHANCE)[0]
    changed = 0
    for c in chance:
        a, k = int(uniform.first_child[c]), int(uniform.num_children[c])
        p = rep.chance_prob[a : a + k]
        assert p.sum() == pytest.approx(1.0)
        assert np.all(np.isin(np.round(p * k), np.arange(k + 1)))  # counts / k
        changed += not np.allclose(p, 1.0 / k)
    assert changed > 0
    stated = layered_tree(rng, players=(0, 1), num_actions=2, num_outcomes=3, random_chance=True)
    np.testing.assert_array_equal(bootstrap_tree(stated, rng).chance_prob, stated.chance_prob)


def test_tree_noise_intervals_cover_the_in_sample_values_of_a_planted_tree():
    rng = np.random.default_rng(11)
    tree = planted_tree(rng, effect=1.0)
    pol = solvers.CFRSolver(tree).run(200).average_policy()
    settings = NoiseSettings(permutations=99, bootstrap=40, seed=5)
    tn = tree_noise(tree, pol, first_action, iterations=200, settings=settings, name="t")
    lo, hi = tn.cfr_gain_ci95
    assert lo is not None and hi is not None and lo < hi
    assert lo > 0.0  # a one-unit effect: every replicate gains
    assert tn.p_value is not None and tn.p_value <= 0.05
    again = tree_noise(tree, pol, first_action, iterations=200, settings=settings, name="t")
    assert again.to_dict() == tn.to_dict()  # seeded: the same numbers twice


def test_held_out_on_the_solved_samples_equals_the_mapped_in_sample_gain():
    rng = np.random.default_rng(4)
    tree = planted_tree(rng, effect=0.5)
    pol = solvers.CFRSolver(tree).run(200).average_policy()
    h = held_out_gain(tree, pol, tree, first_action, replicates=0, rng=rng)
    assert h.cfr_gain == pytest.approx(h.in_sample_mapped)
    assert h.unmatched == 0


def test_held_out_on_fresh_exchangeable_samples_is_near_zero_on_average():
    # Payoffs independent of the actions: a policy fitted to one sample gains nothing on another.
    rng = np.random.default_rng(8)
    fitted, fresh = [], []
    for _ in range(60):
        tree, other = exchangeable_tree(rng), exchangeable_tree(rng)
        pol = solvers.CFRSolver(tree).run(200).average_policy()
        h = held_out_gain(tree, pol, other, first_action, replicates=0, rng=rng)
        fitted.append(h.in_sample_mapped)
        fresh.append(h.cfr_gain)
    assert np.mean(fitted) > 0.05
    _, (lo, hi) = mean_ci95(fresh)
    assert lo is not None and hi is not None and lo < 0.0 < hi


def test_path_keys_name_the_player_level_and_own_earlier_actions():
    b = TreeBuilder(2)
    root = b.add_decision(0, "r", [0, 1])
    for a in (0, 1):
        n = b.add_decision(1, "o", [0, 1], parent=root, action=a)
        for a2 in (0, 1):
            m = b.add_decision(0, f"r{a}{a2}", [0, 1], parent=n, action=a2)
            for a3 in (0, 1):
                b.add_terminal([a3, -a3], parent=m, action=a3)
    tree = b.build()
    keys = dict(zip(tree.infoset_keys, path_keys(tree), strict=True))
    assert keys["r"] == (0, 0, ())
    assert keys["o"] == (1, 1, ())
    assert keys["r10"] == (0, 2, (1,))  # player 0 remembers its own 1, not player 1's 0


def test_study_noise_counts_discoveries_with_benjamini_hochberg():
    rng = np.random.default_rng(9)
    settings = NoiseSettings(permutations=199, bootstrap=0, q=0.1, seed=1)
    out = []
    for i, effect in enumerate([1.5, 1.5, 0.0, 0.0]):
        tree = planted_tree(rng, effect)
        pol = solvers.CFRSolver(tree).run(200).average_policy()
        out.append(tree_noise(tree, pol, first_action, iterations=200, settings=settings, index=i))
    study = study_noise(out, settings)
    d = study.to_dict()
    assert d["above_noise"]["of"] == 4
    expected = benjamini_hochberg([t.p_value for t in out], 0.1)
    assert d["above_noise"]["count"] == int(expected.sum())
    assert bool(study.above_noise[0]) and bool(study.above_noise[1])
    assert d["cfr_gain"]["n"] == 4 and d["cfr_gain"]["ci95"][0] is not None
    assert d["mean_cfr_gain_p_value"] is not None


def test_student_t_interval_of_three_values_by_hand():
    mean, (lo, hi) = mean_ci95([1.0, 2.0, 3.0])
    # sd = 1, t(0.975, 2) = 4.302653, half = 4.302653 / sqrt(3)
    assert mean == 2.0
    assert hi - mean == pytest.approx(4.302653 / 3**0.5, rel=1e-6)
    assert mean - lo == pytest.approx(hi - mean)
    assert mean_ci95([5.0]) == (5.0, (None, None))


def test_wilson_interval_by_hand_and_at_the_ends():
    lo, hi = wilson_interval(5, 10)
    assert (lo, hi) == pytest.approx((0.236593, 0.763407), abs=1e-6)
    assert wilson_interval(0, 4)[0] == 0.0
    assert wilson_interval(4, 4)[1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="wilson_interval"):
        wilson_interval(5, 4)


def test_benjamini_hochberg_by_hand():
    # Thresholds k q / m = 0.01, 0.02, 0.03, 0.04, 0.05: the four smallest pass.
    p = [0.04, 0.01, 0.2, 0.03, 0.02]
    assert benjamini_hochberg(p, 0.05).tolist() == [True, True, False, True, True]
    # Step-up: p_(3) = 0.029 <= 0.03 carries p_(2) = 0.025 > 0.02 with it.
    assert benjamini_hochberg([0.001, 0.025, 0.029, 0.5, 0.9], 0.05).sum() == 3
    with pytest.raises(ValueError, match="benjamini_hochberg"):
        benjamini_hochberg([0.1], 1.5)


def test_permutation_p_value_counts_the_observed_labelling():
    assert permutation_p_value(3.0, [1.0, 2.0, 3.0, 4.0]) == pytest.approx(3 / 5)
    assert permutation_p_value(9.0, [1.0, 2.0]) == pytest.approx(1 / 3)
    assert percentile_interval([]) == (None, None)
