"""The measuring parts of ``benchmarks/solvers.py``: timers, references, bandwidth model.

* timing: :func:`interleaved` (medians of interleaved repeats, CPU time by
  default), :func:`timed`, :func:`load` (the load average printed beside
  every table);
* the OpenSpiel references the solvers are compared with, each computing
  NashConv and CFR-Gain every iteration: pyspiel's C++ CFR
  (:func:`cpp_reference`, :func:`cpp_tuned_reference`) and the Python one
  (:func:`python_reference`), and :func:`run_workload`, which times ours
  against them on one workload and records the largest difference;
* the memory model: :func:`read_bandwidth` (measured) and
  :func:`streamed_bytes` (bytes an iteration streams per node);
* memory probes for the build table: :func:`rss_mib`, :func:`traced`.

It imports :mod:`solvers`, so the script imports it only after choosing
numba's cache folder. Not a benchmark itself (no ``main``).
"""

from __future__ import annotations

import gc
import os
import time

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr as os_cfr
from open_spiel.python.algorithms import expected_game_score, exploitability

import solvers


def load() -> str:
    """The load average, printed beside every table (ratios are pessimistic under load)."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} CPUs"


def interleaved(fns: dict, repeats: int, *, clock=time.process_time) -> dict[str, float]:
    """Median seconds of each callable, run in turn ``repeats`` times.

    The default clock is this process's CPU time: on a machine shared with
    other jobs it is far closer to the idle-machine time than wall time.
    Parallel runs are timed with ``clock=time.perf_counter`` (wall).
    """
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = clock()
            fn()
            times[name].append(clock() - start)
    return {name: float(np.median(values)) for name, values in times.items()}


def first_action(key: str, legal: tuple[int, ...]) -> int:
    """The baseline policy of the benchmarks: always the first legal action."""
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
    start = time.process_time()
    cached = pyspiel.convert_to_cached_tree(game)
    base = os_policy.python_policy_to_pyspiel_policy(
        solvers.to_tabular_policy(tree, baseline, game)
    )
    root = cached.new_initial_state()
    solver = pyspiel.CFRSolver(cached)
    gain_s = time.process_time()
    base_values = pyspiel.expected_returns(root, base, -1, True)
    gain_s = time.process_time() - gain_s
    nash, gain = np.zeros(iterations), np.zeros(iterations)
    for k in range(iterations):
        solver.evaluate_and_update_policy()
        avg = solver.average_policy()
        nash[k] = pyspiel.nash_conv(cached, avg)
        t0 = time.process_time()
        gain[k] = _pyspiel_cfr_gain(root, avg, base, base_values)
        gain_s += time.process_time() - t0
    return nash, gain, time.process_time() - start - gain_s


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


def timed(fn, *args, clock=time.process_time):
    """(seconds, result) of one call; CPU time unless ``clock`` says otherwise."""
    start = clock()
    out = fn(*args)
    return clock() - start, out


def read_bandwidth(repeats: int = 9) -> float:
    """Bytes/s of a numpy sum over a 512 MiB array: the fastest of ``repeats`` (CPU time).

    512 MiB, four times the largest benchmark tree's working set, so that the
    last-level cache does not help (over 128 MiB this machine read at 15 to
    18 GB/s from run to run, over 512 MiB and more at a steady 18). The
    fastest, not the median: on a shared machine the read rate swings, and a
    bound taken from a slow moment would flatter every ratio against it.
    """
    data = np.ones(1 << 26)
    data.sum()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        data.sum()
        times.append(time.process_time() - start)
    return data.nbytes / float(np.min(times))


def streamed_bytes(tree) -> float:
    """Bytes one ``cfr_curves`` iteration streams, per walked node: the passes' distinct elements.

    The model: each pass streams every element it reads or writes once
    (a write counts once, the STREAM convention; no write-allocate), and
    nothing survives in cache from one pass to the next. An iteration is
    ``2 p + 1`` passes: a forward and a backward CFR pass per player
    (:func:`solvers._kernels.cfr_pass_alternating`) and the fused metric
    pass (:func:`solvers._kernels.policy_metrics`; the rows no policy
    changes, :func:`solvers._kernels.metric_rows`, are written once per
    run). The element sets are counted on the tree itself, as the kernels
    visit them, so a sparse read (a chance probability, a reach read at one
    player's nodes only) is not billed for the nodes it skips. Information-set arrays (policies, regrets) are small
    and not counted. Pass the tree the kernels walk (``tree.collapsed``).
    """
    kind, player, parent = tree.kind, tree.player, tree.parent
    num_children = tree.num_children
    p = tree.num_players
    n = tree.num_nodes
    m = solvers._kernels.internal_end(kind, parent)
    ends = np.empty(p, dtype=np.int64)
    solvers._kernels.reach_ends(tree.kernel_arrays, p, ends)
    interior = np.flatnonzero(kind[:m] != solvers._kernels.TERMINAL)
    decision = interior[kind[interior] == solvers._kernels.DECISION]
    chance = interior[kind[interior] == solvers._kernels.CHANCE]
    chance_children = int(num_children[chance].sum())
    parent_kind = np.full(n, -1)
    parent_kind[1:] = kind[parent[1:]]
    i1, i4, f8 = 1, 4, 8
    # Structure of a node visited as a parent: first_child, num_children (+ infoset, player).
    as_parent = 2 * i4 * interior.size + 2 * i4 * decision.size
    total = 0
    for pl in range(p):
        end = int(ends[pl])
        # Forward over [1, end): parent; child_rank at decision children, chance_prob at
        # chance children; kind (+ infoset, player) of the distinct parents; own, cf written
        # (the root's too).
        kids = slice(1, end)
        parents = np.unique(parent[kids])
        forward = (
            i4 * (end - 1)
            + i4 * int((parent_kind[kids] == solvers._kernels.DECISION).sum())
            + f8 * int((parent_kind[kids] == solvers._kernels.CHANCE).sum())
            + i1 * parents.size
            + 2 * i4 * int((kind[parents] == solvers._kernels.DECISION).sum())
            + 2 * f8 * end
        )
        # Backward over [0, m): kind; the parents' structure; own, cf at the player's nodes;
        # the player's value block over every node (children read, interior written);
        # chance probabilities of chance children.
        own_nodes = int((player[decision] == pl).sum())
        backward = i1 * m + as_parent + 2 * f8 * own_nodes + f8 * n + f8 * chance_children
        total += forward + backward
    # Metric pass over [0, m): kind of every node (parents and children); the parents'
    # structure; the rows no policy changes (chance reach, p int32 sequences) read and the
    # p policy reaches (written for interior children, read as parents) of interior nodes;
    # chance probabilities of chance children; p returns at every terminal. (metric_rows
    # runs once per run, not per iteration.)
    terminals = tree.num_terminals
    metrics = (
        i1 * n
        + as_parent
        + (f8 + i4 * p + f8 * p) * interior.size
        + f8 * chance_children
        + f8 * p * terminals
    )
    return float(total + metrics) / n


def rss_mib() -> float:
    """Resident memory of this process (Linux; NaN elsewhere)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def traced(fn):
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        tree = fn()
        seconds = time.perf_counter() - start
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return tree, peak, current, seconds


def run_workload(label, games, iterations, python_tree_iterations, rows, checks) -> None:
    """Times ours and the references on ``games``; appends a table row and the differences.

    ``rows`` gets (label, work, nodes, ours s, C++ s, C++ NashConv-only s,
    C++ tuned s, Python s, extrapolated?); ``checks`` gets (label, largest
    difference of the curves). The Python reference runs at most
    ``python_tree_iterations`` tree-iterations and is extrapolated.
    """
    start = time.process_time()
    trees = [solvers.materialize(g) for g in games]
    baselines = [solvers.pure_policy(t, first_action) for t in trees]
    curves = solvers.cfr_curves(trees, baselines, iterations, processes=1)
    ours_s = time.process_time() - start

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
