"""Benchmark: `solvers` against OpenSpiel C++ and LiteEFG, printed as ratios.

Every number comes from this process, with interleaved repeats and medians;
``os.getloadavg()`` is printed beside each table because the ratios (and
above all the parallel speed-up and the bandwidth ratio) are pessimistic
on a loaded machine. Sections:

1. **Per-iteration loop** on one 877-node fruit-shaped tree (fixed first
   message, three decision levels alternating players with 4 actions, each
   followed by a 2-outcome chance node; general-sum payoffs): CFR with
   NashConv and CFR-Gain of the average policy at every iteration, as
   ``cfr_curves`` (one compiled call), as the README loop
   (``CFRSolver.step``), as the four-call loop (``run(1)``,
   ``average_policy``, ``nash_conv``, ``cfr_gain``), and LiteEFG's CFR
   update + exploitability (optional: skipped with a line if LiteEFG is not
   installed) and pyspiel's ``CFRSolver`` + ``nash_conv`` on the same tree
   (exported to ``.efg``).
2. **Throughput and memory bandwidth**: node-iterations/s of ``cfr_curves``
   with both metrics every iteration from 1e3 to 4e6 nodes (7e6 in the full
   run), against the bound ``read bandwidth / bytes streamed per
   node-iteration``; the bandwidth is measured here (``numpy`` sum over a
   512 MiB array) and the bytes are the distinct elements each pass reads
   or writes, counted on the tree (``streamed_bytes``). Rates and bytes count the nodes the solver walks
   (``GameTree.collapsed``: policy-free subtrees as single leaves), printed
   beside the tree's own count, so that collapsing does not inflate them.
3. **Parallel workers**: ``cfr_curves(processes=2)`` against ``processes=1``
   on the paper-size run (30 fruit-shaped trees x 1000 iterations) and on
   smaller work, to place the pool threshold.
4. **Build memory**: peak traced memory (``tracemalloc``) of
   ``solvers.materialize`` and ``GameTree.from_arrays`` against the bytes
   the tree stores, and what is still held after the call.
5. **Against OpenSpiel** on the batch workload (30 fruit trees, Kuhn, Leduc):
   our curves against pyspiel's C++ CFR + NashConv (+ expected returns for
   CFR-Gain), the tuned C++ setup and the Python reference (extrapolated
   from a prefix, ``*``), with the largest difference of the curves.

The timers, the OpenSpiel references and the bandwidth model live in
``benchmarks/_solver_cases.py``; this script holds the sections and the
summary of goals.

Usage::

    python benchmarks/solvers.py            # full run (10-15 minutes on 2 cores)
    python benchmarks/solvers.py --quick    # a few minutes: smaller sizes, fewer repeats
    python benchmarks/solvers.py --cold     # also pay numba's compile cost
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
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
    parser.add_argument("--repeats", type=int, default=7, help="interleaved repeats per timing")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, a few minutes")
    parser.add_argument(
        "--cold", action="store_true", help="empty numba cache: include compile time"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only",
        default="1,2,3,4,5",
        help="comma-separated sections to run (1 loop, 2 throughput, 3 workers, 4 memory, 5 OpenSpiel)",
    )
    parser.add_argument(
        "--processes", type=int, default=2, help="workers for the parallel table (default 2)"
    )
    parser.add_argument(
        "--memory-games",
        nargs="*",
        default=["kuhn_poker", "leduc_poker", "leduc_poker(players=3)"],
        help="OpenSpiel games whose materialise peak memory is measured (none: skip)",
    )
    args = parser.parse_args()
    if args.quick:
        args.iterations, args.python_tree_iterations = 300, 20
        args.kuhn_iterations, args.leduc_iterations = 100, 10
        args.repeats = min(args.repeats, 5)
        args.memory_games = [g for g in args.memory_games if "players=3" not in g]
    return args


ARGS = _parse_args()
if ARGS.cold and __name__ == "__main__":
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="solvers-numba-cold-")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# _solver_cases, also when imported; after the root, so `solvers` stays the package.
sys.path.append(str(Path(__file__).resolve().parent))

_T_IMPORT = time.perf_counter()
import numpy as np  # noqa: E402

import solvers  # noqa: E402
from solvers.synthetic import fruit_shaped_tree, layered_columns, layered_tree  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - _T_IMPORT

import pyspiel  # noqa: E402
from _solver_cases import (  # noqa: E402
    first_action,
    interleaved,
    load,
    read_bandwidth,
    rss_mib,
    run_workload,
    streamed_bytes,
    timed,
    traced,
)

try:  # optional reference, never a project dependency
    import LiteEFG as leg  # noqa: E402
    from LiteEFG.baselines import CFR as leg_cfr  # noqa: E402
except ImportError:
    leg = None

GOALS: list[tuple[str, str, bool]] = []
"""(goal, measured, met) rows of the summary."""


def goal(text: str, measured: str, met: bool) -> None:
    GOALS.append((text, measured, met))


# --------------------------------------------------------------------------- 1. the loop
def loop_section() -> None:
    tree = fruit_shaped_tree(ARGS.seed)
    baseline = solvers.pure_policy(tree, first_action)
    n_it = ARGS.iterations
    solvers.cfr_curves([tree], [baseline], 2, processes=1)  # kernels loaded
    solvers.CFRSolver(tree).step(baseline)

    def curves():
        solvers.cfr_curves([tree], [baseline], n_it, processes=1)

    def step_loop():
        solver = solvers.CFRSolver(tree)
        for _ in range(n_it):
            solver.step(baseline)

    def four_calls():
        solver = solvers.CFRSolver(tree)
        for _ in range(n_it):
            solver.run(1)
            avg = solver.average_policy()
            solvers.nash_conv(tree, avg)
            solvers.cfr_gain(tree, avg, baseline)

    fns = {"cfr_curves": curves, "step": step_loop, "four calls": four_calls}
    game = pyspiel.load_efg_game(solvers.to_efg(tree))
    if leg is not None:
        with contextlib.redirect_stdout(io.StringIO()):  # LiteEFG prints its graph set-up
            env = leg.OpenSpielEnv(game, traverse_type="Enumerate", regenerate=False)
            graph = leg_cfr.graph()
            env.set_graph(graph)

        def lite():
            for _ in range(n_it):
                graph.update_graph(env)
                env.update_strategy(graph.current_strategy(), update_best=False)
                sum(env.exploitability(graph.current_strategy(), "avg-iterate"))

        fns["LiteEFG"] = lite
    cpp_its = max(10, n_it // 20)
    cpp_solver = pyspiel.CFRSolver(game)

    def cpp():
        for _ in range(cpp_its):
            cpp_solver.evaluate_and_update_policy()
            pyspiel.nash_conv(game, cpp_solver.average_policy())

    fns["pyspiel C++"] = cpp
    med = interleaved(fns, ARGS.repeats)
    per = {name: med[name] / (cpp_its if name == "pyspiel C++" else n_it) * 1e6 for name in med}
    print()
    print(
        f"1. Per-iteration loop, one {tree.num_nodes}-node fruit-shaped tree ({tree.collapsed.num_nodes}"
        " walked), CFR + NashConv"
    )
    print(f"   + CFR-Gain of the average every iteration ({n_it} iterations; CPU time, median of")
    print(f"   {ARGS.repeats} interleaved repeats; {load()})")
    print(f"   {'loop':<44} {'us/iter':>8} {'vs step':>8}")
    labels = {
        "cfr_curves": "cfr_curves (one compiled call)",
        "step": "README loop: solver.step(baseline)",
        "four calls": "run(1)+average_policy+nash_conv+cfr_gain",
        "LiteEFG": "LiteEFG 1.0 CFR update + exploitability",
        "pyspiel C++": f"pyspiel CFRSolver + nash_conv ({cpp_its} its)",
    }
    for name, us in per.items():
        print(f"   {labels[name]:<44} {us:>8.2f} {us / per['step']:>7.2f}x")
    if leg is None:
        print("   LiteEFG: not installed, skipped (pip install LiteEFG to compare)")
    print("   LiteEFG and pyspiel compute NashConv only (no CFR-Gain): less work than ours.")
    ratio = per["step"] / per["cfr_curves"]
    goal("README loop <= 2x cfr_curves per iteration", f"{ratio:.2f}x", ratio <= 2.0)
    if leg is not None:
        vs = per["LiteEFG"] / per["step"]
        goal("README loop >= 5x LiteEFG update + exploitability", f"{vs:.2f}x", vs >= 5.0)


# --------------------------------------------------------------------------- 2. throughput


def throughput_section() -> None:
    shapes = [
        ("fruit", None),
        ("layered (0,1,0) 6x3", ((0, 1, 0), 6, 3)),
        ("layered (0,1,0,1) 5x3", ((0, 1, 0, 1), 5, 3)),
        ("layered (0,1,0,1,0) 5x3", ((0, 1, 0, 1, 0), 5, 3)),
    ]
    # The bandwidth goal needs a tree that walks >= 1e6 nodes after collapsing.
    if ARGS.quick:
        shapes.append(("layered (0,1,0,1,0,1) 4x3", ((0, 1, 0, 1, 0, 1), 4, 3)))
    else:
        shapes.append(("layered (0,1,0,1,0,1,0) 3x3", ((0, 1, 0, 1, 0, 1, 0), 3, 3)))
    bandwidth = read_bandwidth()
    print()
    print(
        "2. Throughput (CPU time), CFR + NashConv + CFR-Gain every iteration (cfr_curves, one worker),"
    )
    print(
        f"   against the read-bandwidth bound; measured read bandwidth {bandwidth / 1e9:.1f} GB/s"
    )
    print(f"   (numpy sum over 512 MiB); {load()}")
    print(
        f"   {'tree':<30} {'nodes':>9} {'walked':>9} {'iters':>6} {'node-it/s':>10} "
        f"{'B/node-it':>9} {'bound':>9} {'bound ratio':>11}"
    )
    in_cache, big, setups = [], [], []
    for label, shape in shapes:
        rng = np.random.default_rng(ARGS.seed)
        if shape is None:
            tree = fruit_shaped_tree(ARGS.seed)
        else:
            players, actions, outcomes = shape
            tree = layered_tree(rng, players=players, num_actions=actions, num_outcomes=outcomes)
        base = solvers.uniform_policy(tree)
        # Rates count the nodes the solver walks (policy-free subtrees collapsed), not the
        # tree's nodes: collapsing must not inflate them.
        walked = tree.collapsed
        budget = 1e7 if ARGS.quick else 4e7
        # At least 60 iterations where >= 1e6 nodes are walked: the bound is about the
        # per-iteration loop, and the call's one-off cost (buffers' first touch, the
        # baseline's values; printed below) must not pass for it.
        fewest = 60 if walked.num_nodes >= 1e6 else 3
        iterations = max(fewest, int(budget // walked.num_nodes))
        repeats = 3 if walked.num_nodes > 1e6 else ARGS.repeats
        med = interleaved(
            {
                "run": lambda t=tree, b=base, i=iterations: solvers.cfr_curves(
                    [t], [b], i, processes=1
                )
            },
            repeats,
        )
        rate = walked.num_nodes * iterations / med["run"]
        per = streamed_bytes(walked)
        bound = bandwidth / per
        print(
            f"   {label:<30} {tree.num_nodes:>9} {walked.num_nodes:>9} {iterations:>6} "
            f"{rate:>10.3g} {per:>9.0f} {bound:>9.3g} {bound / rate:>10.2f}x"
        )
        if walked.num_nodes >= 1e6:
            big.append((walked.num_nodes, rate, bound / rate))
            one = interleaved(
                {"one": lambda t=tree, b=base: solvers.cfr_curves([t], [b], 1, processes=1)}, 3
            )
            setups.append((label, one["one"] - med["run"] / iterations))
        elif walked.num_nodes <= 1e5:
            in_cache.append((walked.num_nodes, rate, bound / rate))
        del tree, walked, base
        gc.collect()
    print(
        "   walked = nodes after collapsing policy-free subtrees (GameTree.collapsed); node-it/s,"
    )
    print(
        "   B/node-it and the bound count walked nodes. bound = bandwidth / B/node-it; bound ratio"
    )
    print("   = bound / achieved (1.0 = at the bound; below 1 in cache, where the bound does not")
    print("   apply). B/node-it: the distinct elements each of the 2p + 1 passes reads or writes,")
    print(
        "   counted on the tree as the kernels visit them; a write counts once (see streamed_bytes)."
    )
    for label, seconds in setups:
        print(f"   one-off cost of a cfr_curves call on {label}: {seconds * 1e3:.1f} ms")
    later = read_bandwidth()
    if later > bandwidth * 1.05:
        print(
            f"   the read rate rose to {later / 1e9:.1f} GB/s after the rows: ratios x{later / bandwidth:.2f}"
        )
        big = [(n, r, ratio * later / bandwidth) for n, r, ratio in big]
    small = [r for _, r, _ in in_cache]
    goal(
        ">= 6e7 node-iterations/s in cache (<= 1e5 walked nodes), both metrics",
        "min " + f"{min(small):.3g}",
        min(small) >= 6e7,
    )
    worst = max(ratio for _, _, ratio in big)
    goal(">= 1e6 walked nodes within 1.3x of the bandwidth bound", f"{worst:.2f}x", worst <= 1.3)


# --------------------------------------------------------------------------- 3. parallel
def parallel_section() -> None:
    trees = [fruit_shaped_tree(ARGS.seed + s) for s in range(ARGS.trees)]
    baselines = [solvers.pure_policy(t, first_action) for t in trees]
    workers = ARGS.processes
    start_s, _ = timed(
        lambda: solvers.cfr_curves(trees[:2], baselines[:2], 1, processes=workers),
        clock=time.perf_counter,
    )
    print()
    print(f"3. Parallel workers: cfr_curves(processes={workers}) against processes=1 (this thread")
    print("   and kept threads, the kernels release the GIL; same curves; wall time, needs an idle")
    print(f"   machine); first pool call {start_s * 1e3:.1f} ms")
    rows = [(ARGS.trees, ARGS.iterations)]
    # Growing work on two trees (MIN_POOL_WORK), then many small trees (MIN_TREE_WORK).
    rows += [(2, its) for its in (10, 25, 50, 200)] + [(ARGS.trees, its) for its in (3, 10, 30)]
    print(
        f"   {'trees x iters':>13} {'walked n-it':>11} {'1 worker s':>11} {f'{workers} workers s':>11} {'speed-up':>9}  load  default"
    )
    speedups = {}
    for num, its in rows:
        sub, subb = trees[:num], baselines[:num]
        med = interleaved(
            {
                "serial": lambda s=sub, b=subb, i=its: solvers.cfr_curves(s, b, i, processes=1),
                "pool": lambda s=sub, b=subb, i=its: solvers.cfr_curves(s, b, i, processes=workers),
            },
            # The paper-size run takes ~0.1 s a pair: nine pairs keep one slow moment of a
            # shared machine out of the median.
            ARGS.repeats if num * its < 1e4 else max(9, ARGS.repeats),
            clock=time.perf_counter,
        )
        work = sum(t.collapsed.num_nodes for t in sub) * its  # nodes walked
        speedups[(num, its)] = med["serial"] / med["pool"]
        # What processes=None would choose for this call (on this machine's cores).
        default = solvers.pool.resolve_processes(None, None, work, num)
        print(
            f"   {f'{num}x{its}':>13} {work:>11.3g} {med['serial']:>11.4f} {med['pool']:>11.4f} "
            f"{speedups[(num, its)]:>8.2f}x  {os.getloadavg()[0]:.2f}  "
            f"{'pool' if default > 1 else 'one thread'}"
        )
    pooled = solvers.cfr_curves(trees, baselines, 20, processes=workers)
    serial = solvers.cfr_curves(trees, baselines, 20, processes=1)
    same = np.array_equal(pooled.nash_conv, serial.nash_conv) and np.array_equal(
        pooled.cfr_gain, serial.cfr_gain
    )
    print(
        f"   pooled curves identical to serial: {same}\n   default: what processes=None picks; it pools from "
        f"MIN_POOL_WORK = {solvers.pool.MIN_POOL_WORK:.3g} node-iterations in all and "
        f"MIN_TREE_WORK = {solvers.pool.MIN_TREE_WORK:.3g} per tree"
    )
    s = speedups[(ARGS.trees, ARGS.iterations)]
    goal(
        f"{workers}-worker speed-up on {ARGS.trees} fruit trees x {ARGS.iterations} its >= 1.7x (idle machine)",
        f"{s:.2f}x at {load()}",
        s >= 1.7,
    )


# --------------------------------------------------------------------------- 4. memory


def memory_section() -> None:
    print()
    print("4. Build memory: peak traced memory (tracemalloc) / bytes the tree stores;")
    print("   held = traced memory still allocated after the call, minus the tree itself;")
    print("   RSS held = growth of resident memory across the call, minus the tree (Linux)")
    print(
        f"   {'build':<40} {'nodes':>9} {'stored MiB':>10} {'peak/stored':>11} {'held MiB':>9} "
        f"{'RSS held':>9} {'s':>6}"
    )
    solvers.materialize(pyspiel.load_game("kuhn_poker"))  # one-off imports and caches
    worst = []

    def row(label, fn):
        gc.collect()
        rss_before = rss_mib()
        tree, peak, current, seconds = traced(fn)
        rss_held = rss_mib() - rss_before - tree.nbytes / 2**20
        ratio = peak / tree.nbytes
        held = (current - tree.nbytes) / 2**20
        worst.append((tree.num_nodes, ratio, held, tree.nbytes))
        print(
            f"   {label:<40} {tree.num_nodes:>9} {tree.nbytes / 2**20:>10.1f} {ratio:>10.2f}x "
            f"{held:>9.1f} {rss_held:>9.1f} {seconds:>6.1f}"
        )

    for name in ARGS.memory_games:
        game = pyspiel.load_game(name)
        row(f"materialize {name}", lambda g=game: solvers.materialize(g))
    shapes = [((0, 1, 0, 1, 0), 5, 3)]
    if not ARGS.quick:
        shapes.append(((0, 1, 0, 1, 0, 1, 0), 3, 3))
    for players, actions, outcomes in shapes:
        columns = layered_columns(
            np.random.default_rng(ARGS.seed),
            players=players,
            num_actions=actions,
            num_outcomes=outcomes,
        )
        row(
            f"from_arrays layered {''.join(map(str, players))} {actions}x{outcomes}",
            lambda c=columns: solvers.GameTree.from_arrays(**c),
        )
        del columns
        gc.collect()
    sized = [w for w in worst if w[3] >= 2**20]  # below 1 MiB fixed overheads dominate
    top = max(sized, key=lambda w: w[1])
    largest = max(w[0] for w in sized)
    goal(
        f"build peak <= 2x stored, trees of 1 MiB .. {largest:.3g} nodes",
        f"worst {top[1]:.2f}x ({top[0]:.3g} nodes)",
        top[1] <= 2.0,
    )
    held = max(w[2] for w in worst)
    goal("nothing held after the build", f"max {held:.1f} MiB", held < 1.0)


# --------------------------------------------------------------------------- 5. OpenSpiel


def openspiel_section() -> None:
    rows: list = []
    checks: list = []
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
    )
    run_workload(
        "kuhn_poker",
        [pyspiel.load_game("kuhn_poker")],
        ARGS.kuhn_iterations,
        ARGS.python_tree_iterations,
        rows,
        checks,
    )
    run_workload(
        "leduc_poker",
        [pyspiel.load_game("leduc_poker")],
        ARGS.leduc_iterations,
        min(ARGS.python_tree_iterations, 10),
        rows,
        checks,
    )
    print()
    print(
        "5. Against OpenSpiel: CFR + NashConv + CFR-Gain every iteration (CPU seconds, one worker;"
    )
    print(f"   {load()})")
    header = (
        f"   {'workload':<14} {'trees x iters':>13} {'nodes':>6} {'ours':>7} {'C++ ref':>8} "
        f"{'speedup':>8} {'C++ NC-only':>11} {'speedup':>8} {'C++ tuned':>9} {'speedup':>8} "
        f"{'Python ref':>11} {'speedup':>8}"
    )
    print(header)
    for label, work, nodes, ours, cpp, cpp_nc, tuned, py, extrapolated in rows:
        mark = "*" if extrapolated else " "
        print(
            f"   {label:<14} {work:>13} {nodes:>6} {ours:>7.3f} {cpp:>8.2f} {cpp / ours:>7.1f}x "
            f"{cpp_nc:>11.2f} {cpp_nc / ours:>7.1f}x {tuned:>9.2f} {tuned / ours:>7.1f}x "
            f"{py:>10.1f}{mark} {py / ours:>7.0f}x"
        )
    print(
        "   ours: materialize + baselines + cfr_curves. C++ ref: pyspiel cached tree + CFRSolver +"
    )
    print("   nash_conv + expected_returns; NC-only: without the CFR-Gain part; tuned: best")
    print("   responders built once (set_policy). * extrapolated from a prefix.")
    print("   max |ours - reference| over all recorded NashConv / CFR-Gain values:")
    for label, err in checks:
        print(f"     {label:<28} {err:.2e}")


def main() -> None:
    mode = "quick" if ARGS.quick else "full"
    print(
        f"solvers benchmark ({mode}; numba {'yes' if solvers._kernels.HAVE_NUMBA else 'NO'}; "
        f"{'cold: compile time included' if ARGS.cold else 'warm numba cache'}; {load()})"
    )
    print(f"import solvers + numba: {IMPORT_SECONDS:.2f}s")
    only = {s.strip() for s in ARGS.only.split(",")}
    sections = {
        "1": loop_section,
        "2": throughput_section,
        "3": parallel_section,
        "4": memory_section,
        "5": openspiel_section,
    }
    for key, section in sections.items():
        if key in only:
            section()
    print()
    print(f"Goals ({load()}):")
    for text, measured, met in GOALS:
        print(f"  [{'met' if met else 'NOT met'}] {text}: {measured}")


if __name__ == "__main__":
    main()
