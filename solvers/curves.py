"""Convergence curves: NashConv, CFR-Gain and their ratio at every CFR iteration.

For each tree, CFR (Zinkevich et al. 2007; variants of Tammelin 2014 and
Brown & Sandholm 2019, see :mod:`solvers.cfr`) runs for ``iterations``
iterations; after each scheduled iteration ``k`` the average policy
``sigma_k`` is evaluated:

* ``nash_conv[t, k] = NashConv(sigma_k)`` (:mod:`solvers.best_response`);
* ``cfr_gain[t, k] = CFR-Gain(sigma_k; baseline_t)`` (:mod:`solvers.cfr_gain`);
* ``ratio[t, k] = cfr_gain / nash_conv``.

**The ratio is NaN where NashConv is (numerically) zero.** It is undefined at
NashConv = 0 and explodes as NashConv approaches 0, so it is reported as NaN
whenever ``nash_conv <= ratio_rtol * payoff_scale`` (``payoff_scale`` = the
tree's largest absolute terminal return, at least 1). Means and standard
deviations of the ratio across trees ignore NaNs (``ratio_count`` tells how
many trees entered).

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

import contextlib
import csv
import dataclasses
import json
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from runs.atomic import atomic_path
from solvers import _kernels
from solvers.cfr import CFRVariant, resolve_variant
from solvers.game_tree import GameTree
from solvers.policy import PolicyLike, TreePolicy, check_policy
from solvers.pool import resolve_processes, run_spread

DEFAULT_RATIO_RTOL = 1e-9
"""Default relative threshold below which NashConv counts as zero for the ratio."""

_METRICS = ("nash_conv", "cfr_gain", "ratio")


def ratio_or_nan(
    cfr_gain: np.ndarray, nash_conv: np.ndarray, floor: float | np.ndarray
) -> np.ndarray:
    """``cfr_gain / nash_conv``, NaN where ``nash_conv <= floor``."""
    cfr_gain = np.asarray(cfr_gain, dtype=np.float64)
    nash_conv = np.asarray(nash_conv, dtype=np.float64)
    ok = nash_conv > floor
    out = np.full(np.broadcast(cfr_gain, nash_conv).shape, np.nan)
    np.divide(cfr_gain, nash_conv, out=out, where=ok)
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class Curves:
    """Per-tree metric curves of a CFR run (arrays are read-only).

    Attributes:
        iterations: ``int64[K]`` iteration numbers (1-based) of the columns.
        nash_conv: ``float64[T, K]``.
        cfr_gain: ``float64[T, K]``.
        ratio: ``float64[T, K]``, NaN where NashConv is ~0 (see module doc).
        nash_conv_per_player: ``float64[T, K, num_players]``.
        cfr_gain_per_player: ``float64[T, K, num_players]``.
        variant: Name of the CFR variant.
        tree_names: One label per tree.
        ratio_rtol: Threshold used for the NaN rule.
        average_policies: The average policy of every tree after the last
            iteration (``()`` if not recorded, e.g. loaded from CSV). Saved
            by :meth:`to_dict`/:meth:`to_json` (unless ``policies=False``);
            **not** written to CSV.
    """

    iterations: np.ndarray
    nash_conv: np.ndarray
    cfr_gain: np.ndarray
    ratio: np.ndarray
    nash_conv_per_player: np.ndarray
    cfr_gain_per_player: np.ndarray
    variant: str
    tree_names: tuple[str, ...]
    ratio_rtol: float = DEFAULT_RATIO_RTOL
    average_policies: tuple[TreePolicy, ...] = ()

    def __post_init__(self) -> None:
        for field in (
            "iterations",
            "nash_conv",
            "cfr_gain",
            "ratio",
            "nash_conv_per_player",
            "cfr_gain_per_player",
        ):
            arr = np.array(
                getattr(self, field), dtype=np.int64 if field == "iterations" else np.float64
            )
            arr.setflags(write=False)
            object.__setattr__(self, field, arr)
        object.__setattr__(self, "tree_names", tuple(self.tree_names))
        policies = tuple(
            p if isinstance(p, TreePolicy) else TreePolicy(p) for p in self.average_policies
        )
        if policies and len(policies) != len(self.tree_names):
            raise ValueError(
                f"Curves: {len(policies)} average_policies for {len(self.tree_names)} trees; "
                "pass one per tree or none"
            )
        object.__setattr__(self, "average_policies", policies)

    @property
    def num_trees(self) -> int:
        """Number of trees ``T``."""
        return int(self.nash_conv.shape[0])

    def mean(self, metric: str) -> np.ndarray:
        """Mean over trees of ``"nash_conv"``, ``"cfr_gain"`` or ``"ratio"`` (NaN-aware)."""
        values = self._metric(metric)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(values, axis=0) if metric == "ratio" else values.mean(axis=0)

    def std(self, metric: str, ddof: int = 0) -> np.ndarray:
        """Standard deviation over trees (``ddof`` as in NumPy; NaN-aware for the ratio)."""
        values = self._metric(metric)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return (
                np.nanstd(values, axis=0, ddof=ddof)
                if metric == "ratio"
                else values.std(axis=0, ddof=ddof)
            )

    @property
    def ratio_count(self) -> np.ndarray:
        """Number of trees with a defined (non-NaN) ratio, per column."""
        return np.sum(~np.isnan(self.ratio), axis=0)

    @property
    def nash_conv_mean(self) -> np.ndarray:
        """Mean NashConv over trees."""
        return self.mean("nash_conv")

    @property
    def nash_conv_std(self) -> np.ndarray:
        """Standard deviation (ddof=0) of NashConv over trees."""
        return self.std("nash_conv")

    @property
    def cfr_gain_mean(self) -> np.ndarray:
        """Mean CFR-Gain over trees."""
        return self.mean("cfr_gain")

    @property
    def cfr_gain_std(self) -> np.ndarray:
        """Standard deviation (ddof=0) of CFR-Gain over trees."""
        return self.std("cfr_gain")

    @property
    def ratio_mean(self) -> np.ndarray:
        """Mean ratio over the trees where it is defined (NaN if none)."""
        return self.mean("ratio")

    @property
    def ratio_std(self) -> np.ndarray:
        """Standard deviation (ddof=0) of the ratio over trees where it is defined."""
        return self.std("ratio")

    def _metric(self, metric: str) -> np.ndarray:
        if metric not in _METRICS:
            raise ValueError(f"Curves: unknown metric {metric!r}; use one of {_METRICS}")
        return getattr(self, metric)

    def summary(self) -> dict[str, np.ndarray]:
        """Column arrays: iteration, and mean/std of each metric, ratio_count."""
        out: dict[str, np.ndarray] = {"iteration": self.iterations}
        for metric in _METRICS:
            out[f"{metric}_mean"] = self.mean(metric)
            out[f"{metric}_std"] = self.std(metric)
        out["ratio_count"] = self.ratio_count
        return out

    def to_csv(
        self,
        path: str | os.PathLike,
        *,
        per_tree: bool = False,
        columns: Mapping[str, Any] | None = None,
    ) -> None:
        """Writes a CSV file (NaN written as empty cells; via a temporary file).

        The average policies are not part of the CSV; save them with
        :meth:`to_json`.

        Args:
            path: Output file.
            per_tree: False: one row per iteration with mean/std columns
                (:meth:`summary`). True: long format, one row per (tree,
                iteration) with ``tree, iteration, nash_conv, cfr_gain,
                ratio`` and per-player terms.
            columns: Constant columns appended to every row (e.g. the
                backend and model that produced the trees).
        """
        extra = dict(columns or {})
        with _atomic_writer(path) as handle:
            writer = csv.writer(handle)
            if not per_tree:
                summary = self.summary()
                writer.writerow(list(summary) + list(extra))
                for row in zip(*summary.values(), strict=True):
                    writer.writerow([_csv_cell(v) for v in row] + list(extra.values()))
                return
            n = self.nash_conv_per_player.shape[2]
            writer.writerow(
                ["tree", "iteration", "nash_conv", "cfr_gain", "ratio"]
                + [f"nash_conv_p{i}" for i in range(n)]
                + [f"cfr_gain_p{i}" for i in range(n)]
                + list(extra)
            )
            for t, name in enumerate(self.tree_names):
                for k, it in enumerate(self.iterations):
                    writer.writerow(
                        [name, int(it)]
                        + [
                            _csv_cell(self.nash_conv[t, k]),
                            _csv_cell(self.cfr_gain[t, k]),
                            _csv_cell(self.ratio[t, k]),
                        ]
                        + [_csv_cell(v) for v in self.nash_conv_per_player[t, k]]
                        + [_csv_cell(v) for v in self.cfr_gain_per_player[t, k]]
                        + list(extra.values())
                    )

    def to_dict(self, *, policies: bool = True) -> dict:
        """JSON-ready dictionary (NaN as None); inverse of :meth:`from_dict`.

        Args:
            policies: Include ``average_policies`` (one ``[num_infosets,
                max_actions]`` nested list per tree, rows in the tree's
                information-set order).
        """
        out = {
            "variant": self.variant,
            "tree_names": list(self.tree_names),
            "ratio_rtol": self.ratio_rtol,
            "iterations": self.iterations.tolist(),
            "nash_conv": _nan_to_none(self.nash_conv),
            "cfr_gain": _nan_to_none(self.cfr_gain),
            "ratio": _nan_to_none(self.ratio),
            "nash_conv_per_player": _nan_to_none(self.nash_conv_per_player),
            "cfr_gain_per_player": _nan_to_none(self.cfr_gain_per_player),
        }
        if policies and self.average_policies:
            out["average_policies"] = [p.probs.tolist() for p in self.average_policies]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Curves:
        """Rebuilds :class:`Curves` from :meth:`to_dict` output."""
        arrays = {
            key: np.array(data[key], dtype=np.float64)
            for key in (
                "nash_conv",
                "cfr_gain",
                "ratio",
                "nash_conv_per_player",
                "cfr_gain_per_player",
            )
        }
        return cls(
            iterations=np.array(data["iterations"], dtype=np.int64),
            variant=data["variant"],
            tree_names=tuple(data["tree_names"]),
            ratio_rtol=float(data.get("ratio_rtol", DEFAULT_RATIO_RTOL)),
            average_policies=tuple(
                TreePolicy(_policy_array(p)) for p in data.get("average_policies", ())
            ),
            **arrays,
        )

    def to_json(self, path: str | os.PathLike, *, policies: bool = True) -> None:
        """Writes :meth:`to_dict` as JSON (via a temporary file)."""
        with _atomic_writer(path) as handle:
            json.dump(self.to_dict(policies=policies), handle)

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> Curves:
        """Reads a file written by :meth:`to_json`."""
        return cls.from_dict(json.loads(Path(path).read_text()))


@contextlib.contextmanager
def _atomic_writer(path: str | os.PathLike) -> Iterator[Any]:
    """A text handle on a temporary sibling of ``path``, renamed into place on success."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        yield handle


def _csv_cell(value) -> str:
    value = float(value)
    if np.isnan(value):
        return ""
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _policy_array(rows) -> np.ndarray:
    arr = np.array(rows, dtype=np.float64)
    return arr if arr.ndim == 2 else arr.reshape(0, 1)  # a tree without information sets


def _nan_to_none(array: np.ndarray):
    obj = np.asarray(array, dtype=object)
    obj[np.isnan(np.asarray(array, dtype=np.float64))] = None
    return obj.tolist()


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


def _tree_curves(
    tree: GameTree, baseline: np.ndarray, iterations: int, record: np.ndarray, variant: CFRVariant
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    if callable(baselines) and not isinstance(baselines, Sequence):
        baselines = [baselines(tree) for tree in trees]
    baselines = list(baselines)
    if len(baselines) != len(trees):
        raise ValueError(
            f"cfr_curves: {len(baselines)} baselines for {len(trees)} trees; pass one baseline per tree"
        )
    base_arrays = [
        check_policy(tree, base, caller="cfr_curves", name=f"the baseline of tree {i}")
        for i, (tree, base) in enumerate(zip(trees, baselines, strict=True))
    ]
    resolved = resolve_variant(variant, alternating_updates, caller="cfr_curves")
    record = make_schedule(iterations, schedule)
    if tree_names is None:
        tree_names = [tree.game_name or str(i) for i, tree in enumerate(trees)]
    if len(tree_names) != len(trees):
        raise ValueError(f"cfr_curves: {len(tree_names)} tree_names for {len(trees)} trees")
    # Nodes actually walked; also builds each tree's collapsed form here, not in the workers.
    work = sum(tree.collapsed.num_nodes for tree in trees) * int(iterations)
    jobs = resolve_processes(processes, n_jobs, work, len(trees))

    results: list = [None] * len(trees)

    def done(i: int, result) -> None:
        results[i] = result
        if on_tree_done is not None:
            on_tree_done(i)

    # Until this process has run the kernels once, the first tree runs here: that loads
    # (or compiles and caches on disk) them before any worker would.
    first = 0 if getattr(_kernels.curves_run, "signatures", None) else 1
    for i in range(first):
        done(i, _tree_curves(trees[i], base_arrays[i], int(iterations), record, resolved))
    if jobs == 1 or len(trees) - first <= 1:
        for i in range(first, len(trees)):
            done(i, _tree_curves(trees[i], base_arrays[i], int(iterations), record, resolved))
    else:
        # Largest trees first, so that no worker is left with a big one at the end.
        pending = sorted(range(first, len(trees)), key=lambda i: -trees[i].collapsed.num_nodes)
        run_spread(
            pending,
            lambda i: _tree_curves(trees[i], base_arrays[i], int(iterations), record, resolved),
            jobs,
            done,
        )

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
