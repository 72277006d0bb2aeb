"""cfr_curves: vectorised curves, ratio NaN rule, schedules, CSV/JSON."""

import csv
import math
import threading
import time

import numpy as np
import pyspiel
import pytest

import solvers
from solvers.synthetic import fruit_shaped_tree


def first_action(key, legal):
    return legal[0]


@pytest.fixture(scope="module")
def fruit_trees():
    return [fruit_shaped_tree(seed) for seed in range(3)]


@pytest.mark.parametrize("variant", ["cfr", "cfr+", "linear"])
def test_curves_equal_per_tree_evaluation(fruit_trees, variant):
    baselines = [solvers.pure_policy(t, first_action) for t in fruit_trees]
    curves = solvers.cfr_curves(fruit_trees, baselines, 25, variant=variant)
    assert curves.nash_conv.shape == (3, 25) and curves.nash_conv_per_player.shape == (3, 25, 2)
    np.testing.assert_array_equal(curves.iterations, np.arange(1, 26))
    for t, (tree, base) in enumerate(zip(fruit_trees, baselines, strict=True)):
        solver = solvers.CFRSolver(tree, variant=variant)
        for k in range(25):
            solver.evaluate_and_update_policy()
            avg = solver.average_policy()
            nc = solvers.nash_conv(tree, avg)
            gain = solvers.cfr_gain(tree, avg, base)
            assert curves.nash_conv[t, k] == pytest.approx(nc.nash_conv, abs=1e-12)
            assert curves.cfr_gain[t, k] == pytest.approx(gain.cfr_gain, abs=1e-12)
            np.testing.assert_allclose(curves.nash_conv_per_player[t, k], nc.per_player, atol=1e-12)
            np.testing.assert_allclose(
                curves.cfr_gain_per_player[t, k], gain.per_player, atol=1e-12
            )
        # The final average policy comes out of the same compiled run, bit for bit.
        np.testing.assert_array_equal(
            curves.average_policies[t].probs, solver.average_policy().probs
        )
    np.testing.assert_allclose(curves.ratio, curves.cfr_gain / curves.nash_conv)
    np.testing.assert_allclose(curves.nash_conv_mean, curves.nash_conv.mean(axis=0))
    np.testing.assert_allclose(curves.cfr_gain_std, curves.cfr_gain.std(axis=0))
    serial = solvers.cfr_curves(fruit_trees, baselines, 25, variant=variant, n_jobs=1)
    np.testing.assert_array_equal(serial.nash_conv, curves.nash_conv)


def test_curves_match_openspiel_kuhn():
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import cfr as os_cfr

    game = pyspiel.load_game("kuhn_poker")
    tree = solvers.materialize(game)
    curves = solvers.cfr_curves(
        [tree], lambda t: solvers.pure_policy(t, first_action), 20, schedule=[1, 5, 20]
    )
    reference = os_cfr.CFRSolver(game)
    for k in range(1, 21):
        reference.evaluate_and_update_policy()
        if k in (1, 5, 20):
            expected = pyspiel.nash_conv(
                game, os_policy.python_policy_to_pyspiel_policy(reference.average_policy())
            )
            col = list(curves.iterations).index(k)
            assert curves.nash_conv[0, col] == pytest.approx(expected, abs=1e-9)
    assert curves.nash_conv[0, 0] == pytest.approx(11 / 12)


def forced_tree():
    """Every information set has one action: NashConv and CFR-Gain are always 0."""
    b = solvers.TreeBuilder(2)
    root = b.add_chance()
    for outcome, prob in ((0, 0.4), (1, 0.6)):
        d = b.add_decision(outcome, f"p{outcome}", [0], parent=root, action=outcome, prob=prob)
        b.add_terminal([1.0, -2.0], parent=d, action=0)
    return b.build()


def test_ratio_is_nan_where_nash_conv_is_zero(fruit_trees):
    forced = forced_tree()
    trees = [forced, fruit_trees[0]]
    curves = solvers.cfr_curves(trees, lambda t: solvers.uniform_policy(t), 10)
    assert (curves.nash_conv[0] == 0).all()
    assert np.isnan(curves.ratio[0]).all()
    assert not np.isnan(curves.ratio[1]).any()
    np.testing.assert_allclose(curves.ratio_mean, curves.ratio[1])  # NaN-aware mean
    np.testing.assert_array_equal(curves.ratio_count, np.ones(10))
    np.testing.assert_allclose(curves.ratio_std, 0.0)
    only_forced = solvers.cfr_curves([forced], [solvers.uniform_policy(forced)], 3)
    assert np.isnan(only_forced.ratio_mean).all()


def test_ratio_or_nan():
    out = solvers.ratio_or_nan(
        np.array([1.0, 2.0, 3.0, 1.0]), np.array([0.0, 4.0, 1e-14, -1e-17]), 1e-12
    )
    assert math.isnan(out[0]) and out[1] == 0.5 and math.isnan(out[2]) and math.isnan(out[3])


def test_schedules():
    np.testing.assert_array_equal(solvers.make_schedule(10, 4), [4, 8, 10])
    np.testing.assert_array_equal(solvers.make_schedule(10, [10, 1, 1]), [1, 10])
    with pytest.raises(ValueError, match="schedule"):
        solvers.make_schedule(10, [0, 3])
    with pytest.raises(ValueError, match="iterations"):
        solvers.make_schedule(0)


def test_save_and_load(tmp_path, fruit_trees):
    trees = [forced_tree(), fruit_trees[1]]
    curves = solvers.cfr_curves(
        trees, lambda t: solvers.uniform_policy(t), 12, schedule=3, variant="cfr+"
    )
    path = tmp_path / "curves.json"
    curves.to_json(path)
    back = solvers.Curves.from_json(path)
    np.testing.assert_array_equal(back.iterations, [3, 6, 9, 12])
    np.testing.assert_array_equal(back.nash_conv, curves.nash_conv)
    np.testing.assert_array_equal(np.isnan(back.ratio), np.isnan(curves.ratio))
    np.testing.assert_array_equal(back.cfr_gain_per_player, curves.cfr_gain_per_player)
    assert back.variant == "cfr+" and back.tree_names == curves.tree_names
    assert len(back.average_policies) == 2
    for a, b in zip(back.average_policies, curves.average_policies, strict=True):
        np.testing.assert_array_equal(a.probs, b.probs)
    curves.to_json(path, policies=False)
    assert solvers.Curves.from_json(path).average_policies == ()
    assert not list(tmp_path.glob(".*.tmp"))  # written via a temporary file, renamed
    summary_csv = tmp_path / "summary.csv"
    curves.to_csv(summary_csv)
    rows = list(csv.DictReader(summary_csv.open()))
    assert [int(r["iteration"]) for r in rows] == [3, 6, 9, 12]
    assert float(rows[-1]["nash_conv_mean"]) == pytest.approx(curves.nash_conv_mean[-1])
    long_csv = tmp_path / "long.csv"
    curves.to_csv(long_csv, per_tree=True)
    rows = list(csv.DictReader(long_csv.open()))
    assert len(rows) == 8 and rows[0]["ratio"] == ""  # forced tree: NaN ratio written empty
    assert float(rows[-1]["cfr_gain_p1"]) == pytest.approx(curves.cfr_gain_per_player[1, -1, 1])
    tagged = tmp_path / "tagged.csv"
    curves.to_csv(tagged, per_tree=True, columns={"backend": "scripted", "model": "m"})
    rows = list(csv.DictReader(tagged.open()))
    assert len(rows) == 8 and {(r["backend"], r["model"]) for r in rows} == {("scripted", "m")}
    curves.to_csv(tagged, columns={"backend": "groq"})
    rows = list(csv.DictReader(tagged.open()))
    assert [r["backend"] for r in rows] == ["groq"] * 4 and rows[0]["iteration"] == "3"


def test_bad_inputs(fruit_trees):
    three = solvers.materialize(pyspiel.load_game("kuhn_poker(players=3)"))
    with pytest.raises(ValueError, match="numbers of players"):
        solvers.cfr_curves([fruit_trees[0], three], solvers.uniform_policy, 2)
    with pytest.raises(ValueError, match="one baseline per tree"):
        solvers.cfr_curves(fruit_trees, [solvers.uniform_policy(fruit_trees[0])], 2)
    with pytest.raises(ValueError, match="the baseline of tree 0"):
        solvers.cfr_curves([fruit_trees[0]], [solvers.uniform_policy(three)], 2)
    with pytest.raises(ValueError, match="no trees"):
        solvers.cfr_curves([], [], 2)
    with pytest.raises(ValueError, match="unknown variant"):
        solvers.cfr_curves([fruit_trees[0]], solvers.uniform_policy, 2, variant="nope")
    with pytest.raises(ValueError, match="unknown metric"):
        solvers.cfr_curves([fruit_trees[0]], solvers.uniform_policy, 2).mean("gain")


def test_on_tree_done_reports_each_tree_once(fruit_trees):
    done = []
    solvers.cfr_curves(
        fruit_trees,
        lambda t: solvers.pure_policy(t, first_action),
        5,
        n_jobs=1,  # the deprecated alias still works; the pool's reports are checked below
        on_tree_done=done.append,
    )
    assert sorted(done) == list(range(len(fruit_trees)))


def test_process_pool_equals_serial_in_input_order(fruit_trees):
    trees = [fruit_trees[2], forced_tree(), fruit_trees[0], fruit_trees[1]]
    baselines = lambda t: solvers.pure_policy(t, first_action)  # noqa: E731
    serial = solvers.cfr_curves(trees, baselines, 15, variant="cfr+", processes=1)
    done = []
    pooled = solvers.cfr_curves(
        trees, baselines, 15, variant="cfr+", processes=2, on_tree_done=done.append
    )
    assert sorted(done) == [0, 1, 2, 3]
    assert pooled.tree_names == serial.tree_names
    np.testing.assert_array_equal(pooled.nash_conv_per_player, serial.nash_conv_per_player)
    np.testing.assert_array_equal(pooled.cfr_gain_per_player, serial.cfr_gain_per_player)
    for a, b in zip(pooled.average_policies, serial.average_policies, strict=True):
        np.testing.assert_array_equal(a.probs, b.probs)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_bad_processes(fruit_trees, bad):
    with pytest.raises(ValueError, match="cfr_curves: processes="):
        solvers.cfr_curves(fruit_trees, solvers.uniform_policy, 2, processes=bad)


def test_processes_and_n_jobs_conflict(fruit_trees):
    with pytest.raises(ValueError, match="not both"):
        solvers.cfr_curves(fruit_trees, solvers.uniform_policy, 2, processes=1, n_jobs=1)


def test_default_workers_follow_both_thresholds(monkeypatch):
    """processes=None pools only when the work is large in all and per tree."""
    from solvers.pool import MIN_POOL_WORK, MIN_TREE_WORK, resolve_processes

    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert resolve_processes(None, None, MIN_POOL_WORK - 1, 1) == 1
    assert resolve_processes(None, None, MIN_POOL_WORK, 2) == 4
    # The same total spread over trees too small to be worth a worker each.
    many = MIN_POOL_WORK // MIN_TREE_WORK + 1
    assert resolve_processes(None, None, MIN_POOL_WORK, many) == 1
    assert resolve_processes(None, None, MIN_TREE_WORK * many, many) == 4
    # An explicit choice is kept whatever the work.
    assert resolve_processes(3, None, 1, 1000) == 3
    assert resolve_processes(None, 2, 1, 1000) == 2


def test_run_spread_runs_each_task_once_and_reports_in_the_calling_thread():
    from solvers.pool import run_spread

    caller = threading.get_ident()
    ran_in, reported = {}, []

    def fn(i):
        time.sleep(0.002)  # sleeping releases the GIL: both threads take tasks
        ran_in[i] = threading.get_ident()
        return i * i

    def done(i, result):
        assert threading.get_ident() == caller
        reported.append((i, result))

    run_spread(range(20), fn, 2, done)
    assert sorted(reported) == [(i, i * i) for i in range(20)]
    assert len(set(ran_in.values())) == 2  # the calling thread and one helper


@pytest.mark.parametrize("where", ["helper", "caller"])
def test_run_spread_raises_the_first_failure_and_stays_usable(where):
    from solvers.pool import run_spread

    caller = threading.get_ident()

    def fn(i):
        time.sleep(0.002)
        if (threading.get_ident() == caller) == (where == "caller"):
            raise RuntimeError(f"task {i} failed")
        return i

    with pytest.raises(RuntimeError, match="failed"):
        run_spread(range(20), fn, 2, lambda i, r: None)
    got = []
    run_spread(range(6), lambda i: i, 2, lambda i, r: got.append(r))  # the kept pool still works
    assert sorted(got) == list(range(6))
