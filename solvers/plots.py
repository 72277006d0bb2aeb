"""Plots of solver curves (NashConv, CFR-Gain, their ratio) over CFR iterations.

Drawn from arrays (usually loaded from the CSV files an experiment writes,
:func:`read_curves_csv`), with matplotlib's object API so callers choose the
figure and axes: :func:`plot_band` and :func:`plot_metric_panel` for curves (a mean with its
95 % interval band, :func:`band_columns`),
:func:`plot_grouped_bars` for per-category rates, :func:`to_png` for notebooks.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def plot_band(
    ax,
    iterations: np.ndarray,
    mean: np.ndarray,
    half: np.ndarray,
    *,
    label: str,
    xmax: int | None = None,
    color: str | None = None,
    linestyle: str = "-",
) -> None:
    """A mean line with a band of +- ``half`` (e.g. a 95 % interval's half-width), cut at ``xmax``."""
    it = np.asarray(iterations)
    keep = it <= xmax if xmax is not None else np.ones_like(it, dtype=bool)
    m = np.asarray(mean, dtype=float)[keep]
    h = np.asarray(half, dtype=float)[keep]
    (line,) = ax.plot(it[keep], m, label=label, color=color, linestyle=linestyle, linewidth=1.5)
    ax.fill_between(it[keep], m - h, m + h, color=line.get_color(), alpha=0.15, linewidth=0)


def band_columns(c: Mapping[str, np.ndarray], metric: str) -> tuple[np.ndarray, str]:
    """A curves table's band for ``metric``: its 95 % half-width, or its std in older tables.

    Returns:
      ``(half_width, what)``; ``what`` names the band for an axis label.
    """
    if f"{metric}_ci95_half" in c:
        return c[f"{metric}_ci95_half"], "mean, 95 % t-interval"
    return c[f"{metric}_std"], "mean ± std (a results folder from before intervals)"


def plot_metric_panel(
    ax,
    series: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    xmax: int | None = None,
    ylabel: str = "",
    title: str = "",
    log_x: bool = False,
) -> None:
    """Several labelled (iterations, mean, band half-width) series on one axes."""
    styles = ["-", "--", "-.", ":"]
    for k, (label, (it, mean, half)) in enumerate(series.items()):
        plot_band(
            ax, it, mean, half, label=label, xmax=xmax, linestyle=styles[(k // 2) % len(styles)]
        )
    ax.set_xlabel("CFR iteration")
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    if log_x:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def read_csv_rows(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The rows of a CSV file as dicts of strings, each with exactly the header's columns.

    Raises:
      ResultsError: ``FILE:LINE: ...`` for a missing or oversized file, anything but a
        regular file (a folder, a FIFO, a device), or a row with more or fewer cells
        than the header (a truncated or damaged table).
    """
    from runs.atomic import MAX_READ_BYTES, ResultsError, read_regular_bytes

    p = Path(path)
    try:
        # A regular file only (a FIFO or a device would block or never end), of bounded size.
        raw = read_regular_bytes(
            p, MAX_READ_BYTES, what="a result table", fix="re-run the command that wrote it"
        )
    except FileNotFoundError:
        raise ResultsError(f"{p}: no such table; run the command that writes it") from None
    with io.StringIO(raw.decode("utf-8", errors="replace"), newline="") as fh:
        reader = csv.DictReader(fh)
        rows = []
        for row in reader:
            if None in row or any(v is None for v in row.values()):
                raise ResultsError(
                    f"{p}:{reader.line_num}: a row whose cells do not match the header "
                    "(truncated or damaged table); re-run the command that wrote it"
                )
            rows.append(row)
    return rows


def csv_column(rows: Sequence[Mapping[str, str]], name: str, *, where: str = "table") -> np.ndarray:
    """A numeric column of CSV rows; empty cells as NaN.

    Raises:
      ResultsError: the column is missing or a cell is not a number (names ``where``).
    """
    from runs.atomic import ResultsError

    values = []
    for i, r in enumerate(rows, start=2):  # line 1 is the header
        cell = r.get(name)
        if cell is None:
            raise ResultsError(f"{where}: no column {name!r}")
        try:
            values.append(float(cell) if cell != "" else np.nan)
        except ValueError:
            raise ResultsError(
                f"{where}:{i}: column {name!r} holds {cell[:40]!r}, not a number"
            ) from None
    return np.array(values)


def read_curves_csv(
    path: str | os.PathLike[str], *, drop: Sequence[str] = ("backend", "model")
) -> dict[str, np.ndarray]:
    """The numeric columns of a curves CSV (:meth:`solvers.Curves.to_csv`) as arrays.

    Raises:
      ResultsError: an empty or damaged table (``FILE:LINE: ...``).
    """
    from runs.atomic import ResultsError

    rows = read_csv_rows(path)
    if not rows:
        raise ResultsError(f"{path}: no rows (empty or header only); re-run the command")
    return {k: csv_column(rows, k, where=str(path)) for k in rows[0] if k not in drop}


def plot_grouped_bars(
    ax,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    fmt: str = "%.1f",
    value_labels: bool | None = None,
    intervals: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
) -> None:
    """One group of bars per category, one bar per series, each labelled with its value.

    ``value_labels``: write each bar's value on it (default: up to 4 series,
    beyond which the numbers would overlap).
    ``intervals``: per series, the (lower, upper) ends of each bar's interval
    (e.g. a 95 % confidence interval), drawn as error bars; NaN draws none.
    """
    width = 0.8 / max(1, len(series))
    if value_labels is None:
        value_labels = len(series) <= 4
    for k, (label, vals) in enumerate(series.items()):
        xs = np.arange(len(categories)) + (k - (len(series) - 1) / 2) * width
        yerr = None
        if intervals is not None and label in intervals:
            v = np.asarray(vals, dtype=float)
            lo, hi = (np.asarray(x, dtype=float) for x in intervals[label])
            # Error bars are distances from the bar's top, never negative.
            yerr = np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])
        bars = ax.bar(
            xs, list(vals), width, label=label, yerr=yerr, capsize=3 if yerr is not None else 0
        )
        if value_labels:
            ax.bar_label(bars, fmt=fmt, fontsize=7)
    ax.set_xticks(np.arange(len(categories)), list(categories))
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)


def to_png(fig, dpi: int = 100) -> bytes:
    """A matplotlib figure as PNG bytes (for ``IPython.display.Image``)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
