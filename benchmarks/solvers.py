"""Benchmark: `solvers` curves against OpenSpiel's CFR + NashConv references.

Workload: CFR run for N iterations on each tree, with NashConv of the average
policy and its CFR-Gain against a baseline (always the first legal action, the
analogue of the chat games' tone "any") evaluated at **every** iteration.

* ours: ``solvers.cfr_curves`` (compiled kernels; the first call in this
  process includes loading -- or, with ``--cold``, compiling -- them);
* C++ reference: ``pyspiel.convert_to_cached_tree`` + ``pyspiel.CFRSolver`` +
  ``pyspiel.nash_conv`` + ``pyspiel.expected_returns`` (for CFR-Gain);
* C++ tuned: the same work done the fastest way we found in pyspiel (CFR on
  the game itself, ``TabularBestResponse`` built once per player and updated
  with ``set_policy``), so the speedup is not measured against a strawman;
* Python reference: ``open_spiel.python.algorithms.cfr.CFRSolver`` +
  ``exploitability.nash_conv`` + ``expected_game_score.policy_value``; it is
  slow, so it runs on a prefix of the work and is extrapolated linearly
  (marked ``*``).

Trees: 30 random fruit-trading-shaped trees (fixed first message, three
decision levels alternating players with 4 actions, each followed by a
2-outcome chance node: 877 nodes, 512 leaves, general-sum payoffs), exported
to ``.efg`` and loaded with ``pyspiel.load_efg_game`` so that all
implementations solve the same game; Kuhn and Leduc poker. The script also
checks that our curves equal the C++ reference and prints how the cost grows
with tree size (nodes/s at about 10^3 .. 10^6 nodes).

Two more tables: the speed-up of ``cfr_curves(..., processes=os.cpu_count())``
over one process on the same workloads (with its ratio against the C++
references), and the peak memory of :func:`solvers.materialize`
(``tracemalloc``) against the size of the tree it stores.

Usage::

    python benchmarks/solvers.py            # full run (several minutes)
    python benchmarks/solvers.py --quick    # small smoke run
    python benchmarks/solvers.py --cold     # also pay numba's compile cost
    python benchmarks/solvers.py --memory-games kuhn_poker leduc_poker "leduc_poker(players=3)"
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=30, help="number of fruit-shaped trees")
    parser.add_argument(
        "--iterations", type=int, default=1000, help="CFR iterations on the fruit-shaped trees"
    )
    parser.add_argument(
        "--python-tree-iterations",
        type=int,
        default=1000,
        help="tree-iterations the Python reference really runs (then extrapolated)",
    )
    parser.add_argument("--kuhn-iterations", type=int, default=1000)
    parser.add_argument("--leduc-iterations", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke test")
    parser.add_argument(
        "--cold", action="store_true", help="empty numba cache: include compile time"
    )
    parser.add_argument(
        "--no-scaling", action="store_true", help="skip the tree-size scaling table"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--processes",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes for the parallel table (default: all cores)",
    )
    parser.add_argument(
        "--memory-games",
        nargs="*",
        default=["kuhn_poker", "leduc_poker", "leduc_poker(players=3)"],
        help="OpenSpiel games whose materialise peak memory is measured (none: skip)",
    )
    args = parser.parse_args()
    if args.quick:
        args.trees, args.iterations, args.python_tree_iterations = 3, 50, 20
        args.kuhn_iterations, args.leduc_iterations = 50, 5
        args.memory_games = [g for g in args.memory_games if "players=3" not in g]
    return args


ARGS = _parse_args()
if ARGS.cold and __name__ == "__main__":  # worker processes share the parent's cache
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="solvers-numba-cold-")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_T_IMPORT = time.perf_counter()
import numpy as np  # noqa: E402

import solvers  # noqa: E402
from solvers.synthetic import fruit_shaped_tree, layered_tree  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - _T_IMPORT

import pyspiel  # noqa: E402
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import cfr as os_cfr  # noqa: E402
from open_spiel.python.algorithms import expected_game_score, exploitability  # noqa: E402


def first_action(key: str, legal: tuple[int, ...]) -> int:
    return legal[0]


def _pyspiel_cfr_gain(root, avg, base, base_values) -> float:
    """Sum over players i of u_i(avg_i, base_-i) - u_i(base), with pyspiel.expected_returns."""
    n = len(base_values)
    gain = 0.0
    for i in range(n):
        profile = [avg if j == i else base for j in range(n)]
        gain += pyspiel.expected_returns(root, profile, -1, True)[i] - base_values[i]
    return gain


def cpp_reference(game, tree, baseline, iterations: int):
    """pyspiel cached tree + CFRSolver + nash_conv + expected_returns, every iteration.

    Returns (nash_conv, cfr_gain, seconds spent outside the CFR-Gain evaluation).
    """
    start = time.perf_counter()
    cached = pyspiel.convert_to_cached_tree(game)
    base = os_policy.python_policy_to_pyspiel_policy(
        solvers.to_tabular_policy(tree, baseline, game)
    )
    root = cached.new_initial_state()
    solver = pyspiel.CFRSolver(cached)
    gain_s = time.perf_counter()
    base_values = pyspiel.expected_returns(root, base, -1, True)
    gain_s = time.perf_counter() - gain_s
    nash, gain = np.zeros(iterations), np.zeros(iterations)
    for k in range(iterations):
        solver.evaluate_and_update_policy()
        avg = solver.average_policy()
        nash[k] = pyspiel.nash_conv(cached, avg)
        t0 = time.perf_counter()
        gain[k] = _pyspiel_cfr_gain(root, avg, base, base_values)
        gain_s += time.perf_counter() - t0
    return nash, gain, time.perf_counter() - start - gain_s


def cpp_tuned_reference(game, tree, baseline, iterations: int):
    """The fastest pyspiel setup we found: no cached tree, best responders built once.

    ``pyspiel.TabularBestResponse`` objects are created once per player and
    only ``set_policy`` is called each iteration (``pyspiel.nash_conv``
    rebuilds them every call); NashConv = sum of best-response values minus
    ``expected_returns`` of the profile. Returns (nash_conv, cfr_gain).
    """
    n = game.num_players()
    base = os_policy.python_policy_to_pyspiel_policy(
        solvers.to_tabular_policy(tree, baseline, game)
    )
    root = game.new_initial_state()
    solver = pyspiel.CFRSolver(game)
    base_values = pyspiel.expected_returns(root, base, -1, True)
    responders = None
    nash, gain = np.zeros(iterations), np.zeros(iterations)
    for k in range(iterations):
        solver.evaluate_and_update_policy()
        avg = solver.average_policy()
        if responders is None:
            responders = [pyspiel.TabularBestResponse(game, i, avg) for i in range(n)]
        else:
            for br in responders:
                br.set_policy(avg)
        values = pyspiel.expected_returns(root, avg, -1, True)
        nash[k] = sum(br.value_from_state(root) for br in responders) - sum(values)
        gain[k] = _pyspiel_cfr_gain(root, avg, base, base_values)
    return nash, gain


def python_reference(game, tree, baseline, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """open_spiel.python CFRSolver + exploitability.nash_conv + policy_value, every iteration."""
    n = game.num_players()
    base = solvers.to_tabular_policy(tree, baseline, game)
    root = game.new_initial_state()
    base_values = expected_game_score.policy_value(root, [base] * n)
    solver = os_cfr.CFRSolver(game)
    nash, gain = np.zeros(iterations), np.zeros(iterations)
    for k in range(iterations):
        solver.evaluate_and_update_policy()
        avg = solver.average_policy()
        nash[k] = exploitability.nash_conv(game, avg)
        for i in range(n):
            profile = [avg if j == i else base for j in range(n)]
            gain[k] += expected_game_score.policy_value(root, profile)[i] - base_values[i]
    return nash, gain


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def run_workload(
    label, games, iterations, python_tree_iterations, rows, checks, first_call, parallel
):
    start = time.perf_counter()
    trees = [solvers.materialize(g) for g in games]
    baselines = [solvers.pure_policy(t, first_action) for t in trees]
    curves = solvers.cfr_curves(trees, baselines, iterations, processes=1)
    ours_s = time.perf_counter() - start
    if first_call:
        ours_s += IMPORT_SECONDS

    def max_error(nash, gain, t):
        return max(
            float(np.abs(nash - curves.nash_conv[t]).max()),
            float(np.abs(gain - curves.cfr_gain[t]).max()),
        )

    cpp_s = cpp_nash_only_s = tuned_s = 0.0
    err = tuned_err = 0.0
    for t, (game, tree, base) in enumerate(zip(games, trees, baselines, strict=True)):
        dt, (nash, gain, nash_only) = timed(cpp_reference, game, tree, base, iterations)
        cpp_s += dt
        cpp_nash_only_s += nash_only
        err = max(err, max_error(nash, gain, t))
        dt, (nash, gain) = timed(cpp_tuned_reference, game, tree, base, iterations)
        tuned_s += dt
        tuned_err = max(tuned_err, max_error(nash, gain, t))
    checks.append((label, err))
    checks.append((label + " (C++ tuned)", tuned_err))
    # Python reference on a prefix of the tree-iterations, extrapolated linearly.
    total = len(games) * iterations
    budget = max(1, min(python_tree_iterations, total))
    py_s, done = 0.0, 0
    for game, tree, base in zip(games, trees, baselines, strict=True):
        its = min(iterations, budget - done)
        if its <= 0:
            break
        dt, (nash, _) = timed(python_reference, game, tree, base, its)
        py_s += dt
        done += its
        err_py = float(np.abs(nash - curves.nash_conv[trees.index(tree), :its]).max())
        checks.append((label + " (Python ref)", err_py))
    py_total = py_s * total / done
    rows.append(
        (
            label,
            f"{len(games)}x{iterations}",
            trees[0].num_nodes,
            ours_s,
            cpp_s,
            cpp_nash_only_s,
            tuned_s,
            py_total,
            done < total,
        )
    )
    parallel_s, pooled = timed(
        lambda: solvers.cfr_curves(trees, baselines, iterations, processes=ARGS.processes)
    )
    serial_s, _ = timed(lambda: solvers.cfr_curves(trees, baselines, iterations, processes=1))
    checks.append(
        (label + " (processes)", float(np.abs(pooled.nash_conv - curves.nash_conv).max()))
    )
    parallel.append((label, f"{len(games)}x{iterations}", serial_s, parallel_s, cpp_s, tuned_s))
    return curves


def larger_parallel_row(seed: int, quick: bool, parallel: list) -> None:
    """More work per tree (8 layered trees of ~10^4 nodes): what the pool is for."""
    rng = np.random.default_rng(seed)
    trees = [
        layered_tree(rng, players=(0, 1, 0, 1), num_actions=5, num_outcomes=3)
        for _ in range(4 if quick else 8)
    ]
    baselines = [solvers.pure_policy(t, first_action) for t in trees]
    iterations = 20 if quick else 200
    serial_s, serial = timed(lambda: solvers.cfr_curves(trees, baselines, iterations, processes=1))
    parallel_s, pooled = timed(
        lambda: solvers.cfr_curves(trees, baselines, iterations, processes=ARGS.processes)
    )
    if not np.array_equal(pooled.nash_conv, serial.nash_conv):
        raise AssertionError("cfr_curves: pooled curves differ from the serial ones")
    parallel.append(
        (
            f"layered {trees[0].num_nodes}",
            f"{len(trees)}x{iterations}",
            serial_s,
            parallel_s,
            None,
            None,
        )
    )


def memory_rows(names: list[str]) -> list[tuple]:
    """Peak traced memory of materialize against the tree's own size."""
    import tracemalloc

    solvers.materialize(pyspiel.load_game("kuhn_poker"))  # one-off imports and caches
    out = []
    for name in names:
        game = pyspiel.load_game(name)
        tracemalloc.start()
        start = time.perf_counter()
        try:
            tree = solvers.materialize(game)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        seconds = time.perf_counter() - start
        n = tree.num_nodes
        out.append((name, n, tree.nbytes / n, peak / n, peak / tree.nbytes, seconds))
    return out


def scaling_rows(seed: int, quick: bool):
    shapes = [((0, 1, 0), 4, 2), ((0, 1, 0), 6, 3), ((0, 1, 0, 1), 5, 3), ((0, 1, 0, 1, 0), 5, 3)]
    if quick:
        shapes = shapes[:2]
    out = []
    for players, actions, outcomes in shapes:
        rng = np.random.default_rng(seed)
        build_s, tree = timed(
            lambda: layered_tree(rng, players=players, num_actions=actions, num_outcomes=outcomes)  # noqa: B023
        )
        iterations = max(3, int((2e6 if quick else 2e7) // tree.num_nodes))
        base = solvers.uniform_policy(tree)
        run_s, _ = timed(solvers.cfr_curves, [tree], [base], iterations)
        nbytes = sum(a.nbytes for a in tree.kernel_arrays) + tree.action.nbytes + tree.depth.nbytes
        out.append(
            (
                tree.num_nodes,
                iterations,
                build_s,
                run_s,
                tree.num_nodes * iterations / run_s,
                nbytes / tree.num_nodes,
            )
        )
    return out


def main() -> None:
    rows: list = []
    checks: list = []
    parallel: list = []
    print(
        f"solvers benchmark (numba {'yes' if solvers._kernels.HAVE_NUMBA else 'NO'}, "
        f"{'cold: numba cache emptied, compile time included' if ARGS.cold else 'warm: numba on-disk cache used'}, "
        f"{os.cpu_count()} CPUs)"
    )
    print(f"import solvers + numba: {IMPORT_SECONDS:.2f}s (added to the first 'ours' time)")
    warm = [fruit_shaped_tree(0), fruit_shaped_tree(1)]
    solvers.cfr_curves(warm, solvers.uniform_policy, 1, processes=1)  # kernels loaded here first
    pool_s, _ = timed(
        lambda: solvers.cfr_curves(warm, solvers.uniform_policy, 1, processes=ARGS.processes)
    )
    print(
        f"worker pool start-up ({ARGS.processes} spawned processes, kept for every later call): "
        f"{pool_s:.2f}s (not in the parallel times below)"
    )
    fruit_games = [
        pyspiel.load_efg_game(solvers.to_efg(fruit_shaped_tree(ARGS.seed + s)))
        for s in range(ARGS.trees)
    ]
    run_workload(
        "fruit-shaped",
        fruit_games,
        ARGS.iterations,
        ARGS.python_tree_iterations,
        rows,
        checks,
        True,
        parallel,
    )
    run_workload(
        "kuhn_poker",
        [pyspiel.load_game("kuhn_poker")],
        ARGS.kuhn_iterations,
        ARGS.python_tree_iterations,
        rows,
        checks,
        False,
        parallel,
    )
    run_workload(
        "leduc_poker",
        [pyspiel.load_game("leduc_poker")],
        ARGS.leduc_iterations,
        min(ARGS.python_tree_iterations, 10),
        rows,
        checks,
        False,
        parallel,
    )

    print()
    print(
        "Curves: CFR + NashConv + CFR-Gain at every iteration (seconds, one process: processes=1)"
    )
    header = (
        f"{'workload':<14} {'trees x iters':>13} {'nodes':>6} {'ours':>7} {'C++ ref':>8} "
        f"{'speedup':>8} {'C++ NC-only':>11} {'speedup':>8} {'C++ tuned':>9} {'speedup':>8} "
        f"{'Python ref':>11} {'speedup':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, work, nodes, ours, cpp, cpp_nc, tuned, py, extrapolated in rows:
        mark = "*" if extrapolated else " "
        print(
            f"{label:<14} {work:>13} {nodes:>6} {ours:>7.3f} {cpp:>8.2f} {cpp / ours:>7.1f}x "
            f"{cpp_nc:>11.2f} {cpp_nc / ours:>7.1f}x {tuned:>9.2f} {tuned / ours:>7.1f}x "
            f"{py:>10.1f}{mark} {py / ours:>7.0f}x"
        )
    print(
        "ours: import + materialize + baselines + cfr_curves (first call loads/compiles kernels)."
    )
    print("C++ NC-only: the C++ reference without its CFR-Gain evaluation (CFR + nash_conv only).")
    print(
        "C++ tuned: pyspiel on the game itself, best responders built once and re-pointed with "
        "set_policy (same work, less rebuilding)."
    )
    print("* Python reference extrapolated linearly from a prefix of the tree-iterations.")
    larger_parallel_row(ARGS.seed, ARGS.quick, parallel)
    print()
    print(
        f"Parallel: cfr_curves(processes={ARGS.processes}) against processes=1 "
        "(same curves; warm pool)"
    )
    header = (
        f"{'workload':<14} {'trees x iters':>13} {'1 proc s':>9} {f'{ARGS.processes} procs s':>10} "
        f"{'speed-up':>9} {'C++ ref':>8} {'vs ours':>8} {'C++ tuned':>9} {'vs ours':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, work, serial_s, parallel_s, cpp, tuned in parallel:
        ref = (
            f"{cpp:>8.2f} {cpp / parallel_s:>7.1f}x {tuned:>9.2f} {tuned / parallel_s:>7.1f}x"
            if cpp is not None
            else f"{'-':>8} {'-':>8} {'-':>9} {'-':>8}"
        )
        print(
            f"{label:<14} {work:>13} {serial_s:>9.3f} {parallel_s:>10.3f} "
            f"{serial_s / parallel_s:>8.2f}x {ref}"
        )
    print(
        "vs ours: C++ seconds / ours with the pool (the one-process ratios are in the table above)."
    )

    if ARGS.memory_games:
        print()
        print("Materialise memory: peak traced memory (tracemalloc) / bytes the tree stores")
        print(
            f"{'game':<24} {'nodes':>9} {'stored B/node':>14} {'peak B/node':>12} "
            f"{'peak/stored':>12} {'seconds':>8}"
        )
        for name, n, stored, peak, ratio, seconds in memory_rows(ARGS.memory_games):
            print(
                f"{name:<24} {n:>9} {stored:>14.1f} {peak:>12.1f} {ratio:>11.2f}x {seconds:>8.1f}"
            )

    print()
    print("max |ours - reference| over all recorded NashConv / CFR-Gain values:")
    for label, err in checks:
        print(f"  {label:<28} {err:.2e}")

    if not ARGS.no_scaling:
        print()
        print("Scaling (one tree, CFR + NashConv + CFR-Gain every iteration):")
        print(
            f"{'nodes':>9} {'iters':>6} {'build s':>8} {'run s':>7} {'node-iters/s':>13} {'bytes/node':>11}"
        )
        for nodes, iterations, build_s, run_s, rate, per_node in scaling_rows(
            ARGS.seed, ARGS.quick
        ):
            print(
                f"{nodes:>9} {iterations:>6} {build_s:>8.2f} {run_s:>7.2f} {rate:>13.3g} {per_node:>11.0f}"
            )


if __name__ == "__main__":
    main()
