"""The fast paths: the fused metric pass, CFRSolver.step/evaluate and trusted policies."""

import pickle

import numpy as np
import pyspiel
import pytest

import solvers
from solvers import _kernels
from solvers.best_response import MetricBuffers
from solvers.synthetic import fruit_shaped_tree, layered_tree


def random_policy(tree, seed):
    rng = np.random.default_rng(seed)
    return solvers.normalize_policy(tree, rng.random((tree.num_infosets, tree.max_actions)))


def first_action(key, legal):
    return legal[0]


TREES = {
    "kuhn": lambda: solvers.materialize(pyspiel.load_game("kuhn_poker")),
    "leduc": lambda: solvers.materialize(pyspiel.load_game("leduc_poker")),
    "kuhn3": lambda: solvers.materialize(pyspiel.load_game("kuhn_poker(players=3)")),
    "fruit": lambda: fruit_shaped_tree(3),
    "layered3p": lambda: layered_tree(
        np.random.default_rng(5), players=(0, 1, 2, 0), num_actions=3, num_outcomes=2
    ),
}


def separate_metrics(tree, probs, base):
    """Values, best-response values and deviation values from the one-metric kernels."""
    tt, n = tree.kernel_arrays, tree.num_players
    ev = np.zeros(n)
    _kernels.expected_values(tt, n, probs, np.empty(tree.num_nodes), ev)
    choice = np.empty(tree.num_infosets, dtype=np.int64)
    br = np.array(
        [
            _kernels.best_response_value(
                tt, probs, i, np.empty(tree.num_nodes), np.empty(tree.num_nodes), choice
            )
            for i in range(n)
        ]
    )
    dev = np.zeros(n)
    _kernels.deviation_values(tt, n, probs, base, np.empty((tree.num_nodes, n)), dev)
    return ev, br, dev


@pytest.mark.parametrize("name", sorted(TREES))
def test_fused_pass_equals_the_separate_passes(name):
    tree = TREES[name]()
    base = solvers.check_policy(tree, solvers.pure_policy(tree, first_action))
    for seed in range(3):
        probs = solvers.check_policy(tree, random_policy(tree, seed))
        fused = MetricBuffers(tree).run(tree, probs, base)
        ev, br, dev = separate_metrics(tree, probs, base)
        np.testing.assert_allclose(fused.ev, ev, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fused.br, br, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fused.dev, dev, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["kuhn", "leduc", "fruit"])
def test_two_player_kernel_gives_the_general_kernels_bits(name):
    tree = TREES[name]()
    probs = solvers.check_policy(tree, random_policy(tree, 7))
    base = solvers.check_policy(tree, random_policy(tree, 8))  # mixed: products' order shows
    two, general = MetricBuffers(tree), MetricBuffers(tree)
    two.run(tree, probs, base)
    general.run(tree, probs, base)
    # The general bodies over the same buffers: the rows and the baseline sums, then the
    # terminal sums; every array must come out with the two-player bodies' bits.
    walked = tree.collapsed
    _kernels._metric_rows_any(
        walked.kernel_arrays,
        2,
        walked.returns_by_player,
        base,
        True,
        general.chance_reach,
        general.seq,
        general.iset_parent,
        general.reach,
        general.qb,
    )
    interior = _kernels.internal_end(walked.kind, walked.parent)
    live = walked.kind[:interior] != _kernels.TERMINAL  # terminal rows are never written
    assert np.array_equal(two.chance_reach[:interior][live], general.chance_reach[:interior][live])
    assert np.array_equal(two.seq[:interior][live], general.seq[:interior][live])
    assert np.array_equal(two.iset_parent, general.iset_parent)
    assert np.array_equal(two.qb, general.qb)
    general.q[:] = 0.0
    general.br[:] = 0.0
    _kernels._policy_metrics_any(
        tree.collapsed.kernel_arrays,  # the arrays MetricBuffers walks (and is sized for)
        2,
        tree.collapsed.returns_by_player,
        probs,
        general.chance_reach,
        general.seq,
        general.reach,
        general.q,
        general.br,
    )
    _kernels._sequence_values(
        tree.infoset_player,
        tree.infoset_num_actions,
        tree.max_actions,
        probs,
        general.iset_parent,
        general.q,
        general.qb,
        True,
        general.rw,
        general.ev,
        general.br,
        general.dev,
    )
    _kernels._best_response_sets(
        tree.infoset_player,
        tree.infoset_num_actions,
        tree.max_actions,
        general.q,
        general.iset_parent,
        general.choice,
        general.br,
    )
    for a, b in ((two.ev, general.ev), (two.br, general.br), (two.dev, general.dev)):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("variant", ["cfr", "cfr+", "dcfr"])
@pytest.mark.parametrize("name", ["kuhn", "kuhn3", "fruit"])
def test_step_equals_run_then_separate_metrics(name, variant):
    tree = TREES[name]()
    baseline = solvers.pure_policy(tree, first_action)
    stepped = solvers.CFRSolver(tree, variant=variant)
    plain = solvers.CFRSolver(tree, variant=variant)
    for t in range(1, 31):
        m = stepped.step(baseline)
        plain.run(1)
        avg = plain.average_policy()
        nc = solvers.nash_conv(tree, np.array(avg.probs))  # an array: the validated path
        gain = solvers.cfr_gain(tree, np.array(avg.probs), np.array(baseline.probs))
        assert m.iteration == t
        assert m.nash_conv == pytest.approx(nc.nash_conv, abs=1e-12)
        assert m.cfr_gain == pytest.approx(gain.cfr_gain, abs=1e-12)
        np.testing.assert_allclose(m.nash_conv_per_player, nc.per_player, atol=1e-12)
        np.testing.assert_allclose(m.cfr_gain_per_player, gain.per_player, atol=1e-12)
        np.testing.assert_allclose(m.policy_values, nc.policy_values, atol=1e-12)
    # Evaluating never changes the iterates.
    assert np.array_equal(stepped.average_policy().probs, plain.average_policy().probs)
    assert np.array_equal(stepped.current_policy().probs, plain.current_policy().probs)


def test_step_results_are_their_own_copies():
    """A step's record is not the solver's buffer: later steps leave it alone."""
    tree = TREES["kuhn3"]()
    baseline = solvers.pure_policy(tree, first_action)
    solver = solvers.CFRSolver(tree)
    first = solver.step(baseline)
    kept = first.record.copy()
    later = [solver.step(baseline) for _ in range(5)]
    assert np.array_equal(first.record, kept)
    assert not np.array_equal(later[-1].record, kept)
    assert first.num_players == 3
    assert first.nash_conv == pytest.approx(first.nash_conv_per_player.sum(), abs=1e-12)
    assert first.cfr_gain == pytest.approx(first.cfr_gain_per_player.sum(), abs=1e-12)
    assert first.policy_values.shape == (3,)


def test_evaluate_without_baseline_and_baseline_change():
    tree = TREES["kuhn"]()
    solver = solvers.CFRSolver(tree).run(20)
    m = solver.evaluate()
    assert np.isnan(m.cfr_gain) and np.isnan(m.cfr_gain_per_player).all()
    assert m.nash_conv == pytest.approx(
        solvers.nash_conv(tree, solver.average_policy()).nash_conv, abs=1e-12
    )
    for choose in (first_action, lambda key, legal: legal[-1]):
        baseline = solvers.pure_policy(tree, choose)
        expected = solvers.cfr_gain(tree, solver.average_policy(), baseline).cfr_gain
        assert solver.evaluate(baseline).cfr_gain == pytest.approx(expected, abs=1e-12)
    assert solver.iteration == 20


def test_step_rejects_a_baseline_of_another_tree():
    kuhn, leduc = TREES["kuhn"](), TREES["leduc"]()
    with pytest.raises(ValueError, match="CFRSolver.step: the baseline has shape"):
        solvers.CFRSolver(kuhn).step(solvers.uniform_policy(leduc))


def test_kuhn_cfr_value_through_step():
    tree = TREES["kuhn"]()
    solver = solvers.CFRSolver(tree, variant="cfr+")
    for _ in range(1000):
        m = solver.step()
    assert m.policy_values[0] == pytest.approx(-1 / 18, abs=2e-3)
    assert m.nash_conv < 2e-3


def test_trusted_policy_gives_the_validated_result():
    tree = TREES["leduc"]()
    avg = solvers.CFRSolver(tree).run(10).average_policy()
    fresh = solvers.TreePolicy(np.array(avg.probs))  # never validated
    trusted = solvers.check_policy(tree, avg)
    validated = solvers.check_policy(tree, fresh)
    assert np.array_equal(trusted, validated)
    assert trusted.flags.writeable and trusted.flags.c_contiguous
    base = solvers.pure_policy(tree, first_action)
    a = solvers.nash_conv(tree, avg)
    b = solvers.nash_conv(tree, np.array(avg.probs))
    assert a.nash_conv == b.nash_conv
    assert np.array_equal(a.best_response_values, b.best_response_values)
    assert solvers.cfr_gain(tree, avg, base).cfr_gain == (
        solvers.cfr_gain(tree, np.array(avg.probs), np.array(base.probs)).cfr_gain
    )


def test_trust_is_per_tree_and_not_pickled():
    kuhn, leduc = TREES["kuhn"](), TREES["leduc"]()
    policy = solvers.uniform_policy(kuhn)
    solvers.check_policy(kuhn, policy)  # remembered for kuhn only
    with pytest.raises(ValueError, match="shape"):
        solvers.check_policy(leduc, policy)
    other_kuhn = TREES["kuhn"]()
    assert np.array_equal(solvers.check_policy(other_kuhn, policy), policy.probs)
    copy = pickle.loads(pickle.dumps(policy))
    assert "_checked_for" not in copy.__dict__
    assert np.array_equal(copy.probs, policy.probs)


def test_a_stricter_tolerance_revalidates():
    tree = TREES["kuhn"]()
    probs = solvers.uniform_policy(tree).probs.copy()
    probs[0, 0] += 1e-8
    policy = solvers.TreePolicy(probs)
    solvers.check_policy(tree, policy)  # passes at the default 1e-6
    with pytest.raises(ValueError, match="not normalised"):
        solvers.check_policy(tree, policy, atol=1e-10)


def test_solver_calls_the_compiled_overload_directly():
    tree = TREES["fruit"]()
    baseline = solvers.pure_policy(tree, first_action)
    solver = solvers.CFRSolver(tree)
    solver.run(2)
    solver.step(baseline)
    solver.step(None)
    assert set(solver._calls) == {(True, True), (True, False)}  # the evaluation reset them
    solver.run(1)
    assert solver.iteration == int(solver._istate[0]) == 5
    if _kernels.HAVE_NUMBA:
        compiled = [c.entry_point for c in _kernels.cfr_step.overloads.values()]
        assert all(entry in compiled for entry, _ in solver._calls.values())
    # A new baseline object is validated and gets its own arguments.
    other = solvers.pure_policy(tree, lambda key, legal: legal[-1])
    m = solver.step(other)
    assert set(solver._calls) == {(True, True)}
    assert solver._calls[(True, True)][1][-1] is solver._baseline_probs
    expected = solvers.cfr_gain(tree, solver.average_policy(), other)
    assert m.cfr_gain == pytest.approx(expected.cfr_gain, abs=1e-12)
    np.testing.assert_allclose(
        m.policy_values, solvers.expected_values(tree, solver.average_policy()), atol=1e-12
    )


def test_solver_buffers_are_views_of_the_packed_state():
    tree = TREES["kuhn3"]()
    for alternating in (True, False):
        solver = solvers.CFRSolver(tree, alternating_updates=alternating)
        for _ in range(4):
            metrics = solver.step(None)
        expected = solvers.nash_conv(tree, solver.average_policy())
        assert metrics.nash_conv == pytest.approx(expected.nash_conv, abs=1e-12)
        np.testing.assert_allclose(metrics.policy_values, expected.policy_values, atol=1e-12)
        for name in ("_current", "_regret", "_cumulative", "_average"):
            assert np.shares_memory(getattr(solver, name), solver._fstate), name
        assert np.shares_memory(solver._out, solver._mbuf)
        # Packed sizes cover exactly the views the kernel slices.
        n, ni, na, p = solver._sizes
        size = _kernels.solver_state_size(n, ni, na, p, alternating)
        assert solver._fstate.size == size
        views = solvers.cfr._python(_kernels.solver_state)(
            solver._fstate, n, ni, na, p, alternating
        )
        assert sum(v.size for v in views) == size
        metrics = solvers.cfr._python(_kernels.solver_metrics)(
            solver._mbuf, solver._ibuf, n, ni, na, p
        )
        assert sum(v.size for v in metrics if v.dtype == np.float64) == solver._mbuf.size
        assert sum(v.size for v in metrics if v.dtype == np.int64) == solver._ibuf.size


def test_compiled_entry_passes_plain_functions_through():
    def plain(x):
        return x + 1

    assert solvers.cfr.compiled_entry(plain, (1,)) is plain


@pytest.mark.parametrize("alternating", [True, False])
def test_pickled_solver_continues_the_same_run(alternating):
    tree = TREES["fruit"]()
    baseline = solvers.pure_policy(tree, first_action)
    solver = solvers.CFRSolver(tree, variant="cfr+", alternating_updates=alternating)
    for _ in range(5):
        solver.step(baseline)
    copy = pickle.loads(pickle.dumps(solver))
    fresh = pickle.loads(pickle.dumps(solvers.CFRSolver(tree)))  # never evaluated
    assert fresh.step(None).iteration == 1
    for _ in range(5):
        a, b = solver.step(baseline), copy.step(copy._baseline)
        assert (a.iteration, a.nash_conv, a.cfr_gain) == (b.iteration, b.nash_conv, b.cfr_gain)
    copy.run(3)
    solver.run(3)
    assert np.array_equal(copy.average_policy().probs, solver.average_policy().probs)
    assert np.array_equal(copy.cumulative_regret(), solver.cumulative_regret())
    assert copy.iteration == int(copy._istate[0]) == 13


@pytest.mark.parametrize("name", ["kuhn", "kuhn3", "fruit", "layered3p"])
def test_reach_ends_are_one_past_each_players_last_decision(name):
    tree = TREES[name]().collapsed
    ends = np.empty(tree.num_players, dtype=np.int64)
    _kernels.reach_ends(tree.kernel_arrays, tree.num_players, ends)
    decisions = np.flatnonzero(tree.kind == _kernels.DECISION)
    for p in range(tree.num_players):
        mine = decisions[tree.player[decisions] == p]
        assert ends[p] == (mine.max() + 1 if mine.size else 1), p


def test_reach_ends_of_a_player_without_decisions_is_one():
    # Player 1 never moves: only player 0 decides, at two levels.
    tree = layered_tree(np.random.default_rng(2), players=(0, 0), num_actions=3, num_outcomes=2)
    ends = np.full(2, -7, dtype=np.int64)
    _kernels.reach_ends(tree.kernel_arrays, 2, ends)
    last = np.flatnonzero(tree.kind == _kernels.DECISION).max()
    assert ends[0] == last + 1 > 1 and ends[1] == 1


@pytest.mark.parametrize("name", ["fruit", "layered3p", "leduc"])
def test_forward_pass_stopping_at_the_reach_end_changes_no_bit(name):
    # Past a player's last decision node no reach is read, so stopping there is exact.
    tree = TREES[name]().collapsed
    tt, p = tree.kernel_arrays, tree.num_players
    ends = np.empty(p, dtype=np.int64)
    _kernels.reach_ends(tt, p, ends)
    m = _kernels.internal_end(tree.kind, tree.parent)
    assert (ends <= m).all()
    probs = random_policy(tree, 3).probs
    results = []
    for stop in (ends, np.full(p, m)):
        regret = np.zeros_like(probs)
        cumulative = np.zeros_like(probs)
        val = np.empty(p * tree.num_nodes)
        _kernels.prefill_terminal_values(tt, p, val)
        own, cf = np.empty(tree.num_nodes), np.empty(tree.num_nodes)
        sreach = np.zeros(tree.num_infosets)
        for player in range(p):
            _kernels.cfr_pass_alternating(
                tt, probs, regret, cumulative, player, 1.0, own, cf, val, stop[player], sreach
            )
            assert not sreach.any()  # the per-infoset reach sums are scratch, zero between passes
        assert cumulative.sum() > 0
        results.append((regret, cumulative, val))
    for got, full in zip(*results, strict=True):
        assert np.array_equal(got, full)


@pytest.mark.parametrize("name", ["kuhn", "kuhn3", "layered3p"])
def test_solver_rewrites_its_baseline_rows_when_the_baseline_changes(name):
    # The solver writes the metric pass's policy-independent rows once per baseline:
    # every evaluation after a switch must give the bits of a fresh standalone evaluation.
    tree = TREES[name]()
    solver = solvers.CFRSolver(tree).run(7)
    first = solvers.pure_policy(tree, first_action)
    last = solvers.pure_policy(tree, lambda key, legal: legal[-1])
    mixed = random_policy(tree, 11)
    for baseline in (first, last, None, mixed, first, None, last):
        got = solver.evaluate(baseline)
        avg = solver.average_policy()
        assert got.nash_conv == solvers.nash_conv(tree, avg).nash_conv
        if baseline is None:
            assert np.isnan(got.cfr_gain)
        else:
            expected = solvers.cfr_gain(tree, avg, baseline)
            assert np.array_equal(got.cfr_gain_per_player, expected.per_player)
    stepped = solver.step(mixed)
    assert np.array_equal(
        stepped.cfr_gain_per_player,
        solvers.cfr_gain(tree, solver.average_policy(), mixed).per_player,
    )
