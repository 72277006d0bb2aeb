"""The :class:`Curves` type: per-tree convergence curves, their summaries and files.

A :class:`Curves` holds, for ``T`` trees and ``K`` recorded iterations, the
NashConv, CFR-Gain and ratio arrays :func:`solvers.curves.cfr_curves`
computes (see that module for the metrics), the per-player terms and each
tree's final average policy. It summarises them across trees (NaN-aware for
the ratio) and writes them as CSV (summary or one row per tree and
iteration) and JSON, through a temporary file renamed into place.

**The ratio is NaN where NashConv is (numerically) zero.** It is undefined at
NashConv = 0 and explodes as NashConv approaches 0, so it is reported as NaN
whenever ``nash_conv <= ratio_rtol * payoff_scale`` (``payoff_scale`` = the
tree's largest absolute terminal return, at least 1). Means and standard
deviations of the ratio across trees ignore NaNs (``ratio_count`` tells how
many trees entered).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import os
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from runs.atomic import atomic_path, read_regular_bytes
from solvers.policy import TreePolicy

__all__ = ["DEFAULT_RATIO_RTOL", "Curves", "ratio_or_nan"]

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
        ratio: ``float64[T, K]``, NaN where NashConv is ~0 (see the module docstring).
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

    def ci95_half(self, metric: str) -> np.ndarray:
        """Half-width of the mean's Student-t 95 % interval over trees, per column.

        ``t(0.975, n - 1) * sd / sqrt(n)`` with sd over ``n`` trees (ddof 1; for
        the ratio, ``n`` is the trees where it is defined); NaN where ``n`` < 2.
        """
        n = (
            self.ratio_count.astype(float)
            if metric == "ratio"
            else np.full(self.iterations.shape, float(self.num_trees))
        )
        # Imported here: scipy.stats costs half a second of every command's start-up.
        from scipy import stats  # type: ignore[import-untyped]

        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            sd = self.std(metric, ddof=1)
            t = np.where(n >= 2, stats.t.ppf(0.975, np.maximum(n - 1, 1)), np.nan)
            return np.where(n >= 2, t * sd / np.sqrt(n), np.nan)

    def summary(self) -> dict[str, np.ndarray]:
        """Column arrays: iteration; each metric's mean, std and 95 % half-width; ratio_count."""
        out: dict[str, np.ndarray] = {"iteration": self.iterations}
        for metric in _METRICS:
            out[f"{metric}_mean"] = self.mean(metric)
            out[f"{metric}_std"] = self.std(metric)
            out[f"{metric}_ci95_half"] = self.ci95_half(metric)
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
        """Reads a file written by :meth:`to_json` (NaN ratios included).

        Raises:
          runs.atomic.ResultsError: the file is not a regular file (a FIFO, a
            device) or is larger than :data:`runs.atomic.MAX_READ_BYTES`.
          FileNotFoundError: the file is missing.
        """
        raw = read_regular_bytes(path, what="a curves file", fix="re-run the command that wrote it")
        return cls.from_dict(json.loads(raw))


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
