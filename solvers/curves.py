"""Convergence curves: NashConv, CFR-Gain and their ratio at every CFR iteration.

For each tree, CFR (Zinkevich et al. 2007; variants of Tammelin 2014 and
Brown & Sandholm 2019, see :mod:`solvers.cfr`) runs for ``iterations``
iterations; after each scheduled iteration ``k`` the average policy
``sigma_k`` is evaluated:

* ``nash_conv[t, k] = NashConv(sigma_k)`` (:mod:`solvers.best_response`);
* ``cfr_gain[t, k] = CFR-Gain(sigma_k; baseline_t)`` (:mod:`solvers.cfr_gain`);
* ``ratio[t, k] = cfr_gain / nash_conv``, NaN where NashConv is (numerically)
  zero (see :mod:`solvers.curve_data`, home of the :class:`Curves` type these
  land in, re-exported here).

The whole loop (iterations x metrics) runs in one compiled call per tree,
which also returns the final average policy (``Curves.average_policies``),
so callers need not run CFR again. Subgames are independent: trees are spread
over a kept pool of worker threads (``processes``): the compiled kernels
release the GIL (numba ``nogil``), so threads run in parallel without
starting interpreters or copying trees; results are identical to a serial
run and in input order. Cost per tree:
O(iterations * num_nodes * num_players) time for the CFR updates and
O(len(schedule) * num_nodes * num_players) for the metrics; memory
O(num_nodes * num_players + len(schedule) * num_players).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import cast

import numpy as np

from solvers import _kernels
from solvers.cfr import CFRVariant, resolve_variant
from solvers.curve_data import DEFAULT_RATIO_RTOL, Curves, ratio_or_nan
from solvers.game_tree import GameTree
from solvers.policy import PolicyLike, TreePolicy, check_policy
from solvers.pool import largest_first, resolve_processes, run_spread

__all__ = ["DEFAULT_RATIO_RTOL", "Curves", "cfr_curves", "make_schedule", "ratio_or_nan"]


def make_schedule(iterations: int, schedule: int | Sequence[int] | None = None) -> np.ndarray:
    """Iterations at which metrics are recorded.

    Args:
        iterations: Total number of CFR iterations.
        schedule: None: every iteration ``1..iterations``; an int ``s``:
            every ``s``-th iteration plus the last; a sequence: those
            iterations (sorted, deduplicated).

    Raises:
        ValueError: If an entry lies outside ``[1, iterations]``.
    """
    iterations = int(iterations)
    if iterations < 1:
        raise ValueError(f"cfr_curves: iterations={iterations}; run at least 1 iteration")
    if schedule is None:
        return np.arange(1, iterations + 1, dtype=np.int64)
    if isinstance(schedule, (int, np.integer)):
        step = int(schedule)
        if step < 1:
            raise ValueError(f"cfr_curves: schedule step {step} must be >= 1")
        return np.unique(np.append(np.arange(step, iterations + 1, step), iterations)).astype(
            np.int64
        )
    points = np.unique(np.asarray(schedule, dtype=np.int64))
    if points.size == 0 or points[0] < 1 or points[-1] > iterations:
        raise ValueError(
            f"cfr_curves: schedule must be a non-empty list of iterations in [1, {iterations}], got "
            f"{list(np.asarray(schedule).ravel()[:5])}..."
        )
    return points


_TreeCurves = tuple[np.ndarray, np.ndarray, np.ndarray]
"""NashConv per player, CFR-Gain per player (``[K, num_players]`` each), final average policy."""


def _tree_curves(
    tree: GameTree, baseline: np.ndarray, iterations: int, record: np.ndarray, variant: CFRVariant
) -> _TreeCurves:
    """(NashConv per player, CFR-Gain per player, final average policy) of one tree."""
    k = record.shape[0]
    n = tree.num_players
    out_ev = np.zeros((k, n))
    out_br = np.zeros((k, n))
    out_dev = np.zeros((k, n))
    out_policy = np.zeros((tree.num_infosets, tree.max_actions))
    walked = tree.collapsed  # decision-free subtrees as single terminals (solvers.collapse)
    _kernels.curves_run(
        walked.kernel_arrays,
        n,
        baseline,
        iterations,
        record,
        *variant.kernel_args(),
        out_ev,
        out_br,
        out_dev,
        out_policy,
    )
    base_values = np.zeros(n)
    _kernels.expected_values(
        walked.kernel_arrays, n, baseline, np.empty(walked.num_nodes), base_values
    )
    return out_br - out_ev, out_dev - base_values[None, :], out_policy


def cfr_curves(
    trees: Sequence[GameTree],
    baselines: Sequence[PolicyLike] | Callable[[GameTree], PolicyLike],
    iterations: int,
    *,
    variant: str | CFRVariant = "cfr",
    schedule: int | Sequence[int] | None = None,
    alternating_updates: bool | None = None,
    ratio_rtol: float = DEFAULT_RATIO_RTOL,
    processes: int | None = None,
    n_jobs: int | None = None,
    tree_names: Sequence[str] | None = None,
    on_tree_done: Callable[[int], None] | None = None,
) -> Curves:
    """Runs CFR on every tree and records NashConv, CFR-Gain and their ratio.

    Args:
        trees: Materialised games, all with the same number of players.
        baselines: One baseline profile per tree (a :class:`TreePolicy`, an
            array or an OpenSpiel ``TabularPolicy``), or a function
            ``tree -> profile`` (e.g. ``lambda t: pure_policy(t, choose)``).
        iterations: Number of CFR iterations per tree.
        variant: CFR variant (see :mod:`solvers.cfr`).
        schedule: Iterations to record (see :func:`make_schedule`); default
            every iteration.
        alternating_updates: Overrides the variant's update scheme.
        ratio_rtol: The ratio is NaN where ``nash_conv <= ratio_rtol *
            tree.payoff_scale``.
        processes: Parallel workers: this thread and threads of this
            process (the compiled kernels release the GIL), kept for later
            calls (:func:`solvers.shutdown_pool` stops them). ``1`` solves in the calling
            thread; ``None`` (default) uses ``os.cpu_count()`` workers when
            the work (nodes walked, ``tree.collapsed.num_nodes``, times
            iterations) is at least :data:`solvers.pool.MIN_POOL_WORK` in
            all and :data:`solvers.pool.MIN_TREE_WORK` per tree, else the
            calling thread. In the first call
            of a process the first tree runs in the calling thread (it loads
            the compiled kernels before any worker does). Results are
            identical whatever the number of workers.
        n_jobs: Deprecated alias of ``processes``.
        tree_names: Labels for the output (default ``tree.game_name`` or the
            index).
        on_tree_done: Called in this process with a tree's index when its
            curves are done (e.g. to advance a progress bar), in completion
            order.

    Returns:
        :class:`Curves` with ``[num_trees, len(schedule)]`` arrays and the
        final average policy of every tree (``average_policies``), in input
        order.

    Raises:
        ValueError: For empty input, mismatched lengths or player counts,
            bad schedules, unknown variants, invalid baselines or an invalid
            ``processes``.
    """
    trees = list(trees)
    _check_trees(trees)
    base_arrays = _baseline_arrays(trees, baselines)
    resolved = resolve_variant(variant, alternating_updates, caller="cfr_curves")
    record = make_schedule(iterations, schedule)
    if tree_names is None:
        tree_names = [tree.game_name or str(i) for i, tree in enumerate(trees)]
    if len(tree_names) != len(trees):
        raise ValueError(f"cfr_curves: {len(tree_names)} tree_names for {len(trees)} trees")
    # Nodes actually walked; also builds each tree's collapsed form here, not in the workers.
    work = sum(tree.collapsed.num_nodes for tree in trees) * int(iterations)
    jobs = resolve_processes(processes, n_jobs, work, len(trees))

    def solve(i: int) -> _TreeCurves:
        return _tree_curves(trees[i], base_arrays[i], int(iterations), record, resolved)

    results = _solve_all(trees, solve, jobs, on_tree_done)
    nc_pp = np.stack([r[0] for r in results])
    gain_pp = np.stack([r[1] for r in results])
    nash = nc_pp.sum(axis=2)
    gain = gain_pp.sum(axis=2)
    floors = np.array([ratio_rtol * tree.payoff_scale for tree in trees])[:, None]
    return Curves(
        iterations=record,
        nash_conv=nash,
        cfr_gain=gain,
        ratio=ratio_or_nan(gain, nash, floors),
        nash_conv_per_player=nc_pp,
        cfr_gain_per_player=gain_pp,
        variant=resolved.name,
        tree_names=tuple(tree_names),
        ratio_rtol=float(ratio_rtol),
        average_policies=tuple(TreePolicy(r[2]) for r in results),
    )


def _check_trees(trees: Sequence[GameTree]) -> None:
    """At least one tree; every one a :class:`GameTree` the kernels can number; one player count."""
    if not trees:
        raise ValueError("cfr_curves: no trees given; pass a non-empty list of GameTree")
    for i, tree in enumerate(trees):
        if not isinstance(tree, GameTree):
            raise ValueError(
                f"cfr_curves: trees[{i}] is a {type(tree).__name__}, not a GameTree; build it with solvers.materialize"
            )
        if tree.num_infosets * tree.max_actions >= 2**31:  # the metric pass numbers them in int32
            raise ValueError(
                f"cfr_curves: trees[{i}] has {tree.num_infosets * tree.max_actions:,} sequences "
                "(infosets x actions), more than 2**31 - 1; solve smaller subgames"
            )
    players = {tree.num_players for tree in trees}
    if len(players) != 1:
        raise ValueError(
            f"cfr_curves: trees have different numbers of players {sorted(players)}; call cfr_curves once per player count"
        )


def _baseline_arrays(
    trees: Sequence[GameTree],
    baselines: Sequence[PolicyLike] | Callable[[GameTree], PolicyLike],
) -> list[np.ndarray]:
    """One checked baseline probability array per tree."""
    if callable(baselines) and not isinstance(baselines, Sequence):
        baselines = [baselines(tree) for tree in trees]
    baselines = list(baselines)
    if len(baselines) != len(trees):
        raise ValueError(
            f"cfr_curves: {len(baselines)} baselines for {len(trees)} trees; pass one baseline per tree"
        )
    return [
        check_policy(tree, base, caller="cfr_curves", name=f"the baseline of tree {i}")
        for i, (tree, base) in enumerate(zip(trees, baselines, strict=True))
    ]


def _solve_all(
    trees: Sequence[GameTree],
    solve: Callable[[int], _TreeCurves],
    jobs: int,
    on_tree_done: Callable[[int], None] | None,
) -> list[_TreeCurves]:
    """``solve(i)`` for every tree, on ``jobs`` workers; results in input order."""
    results: list[_TreeCurves | None] = [None] * len(trees)

    def done(i: int, result: _TreeCurves) -> None:
        results[i] = result
        if on_tree_done is not None:
            on_tree_done(i)

    # Until this process has run the kernels once, the first tree runs here: that loads
    # (or compiles and caches on disk) them before any worker would.
    first = 0 if getattr(_kernels.curves_run, "signatures", None) else 1
    for i in range(first):
        done(i, solve(i))
    pending: Iterable[int] = range(first, len(trees))
    if jobs == 1 or len(trees) - first <= 1:
        jobs = 1  # in index order, on this thread
    else:
        pending = largest_first(trees, pending)
    run_spread(pending, solve, jobs, done)
    return cast(list[_TreeCurves], results)  # every index was done
