"""Plots of solver curves (NashConv, CFR-Gain, their ratio) over CFR iterations.

Drawn from arrays (usually loaded from the CSV files an experiment writes),
with matplotlib's object API so callers choose the figure and axes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def plot_band(
    ax,
    iterations: np.ndarray,
    mean: np.ndarray,
    std: np.ndarray,
    *,
    label: str,
    xmax: int | None = None,
    color: str | None = None,
    linestyle: str = "-",
) -> None:
    """A mean line with a ±1 std band, cut at ``xmax`` iterations."""
    it = np.asarray(iterations)
    keep = it <= xmax if xmax is not None else np.ones_like(it, dtype=bool)
    m = np.asarray(mean, dtype=float)[keep]
    s = np.asarray(std, dtype=float)[keep]
    (line,) = ax.plot(it[keep], m, label=label, color=color, linestyle=linestyle, linewidth=1.5)
    ax.fill_between(it[keep], m - s, m + s, color=line.get_color(), alpha=0.15, linewidth=0)


def plot_metric_panel(
    ax,
    series: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    xmax: int | None = None,
    ylabel: str = "",
    title: str = "",
    log_x: bool = False,
) -> None:
    """Several labelled (iterations, mean, std) series on one axes."""
    styles = ["-", "--", "-.", ":"]
    for k, (label, (it, mean, std)) in enumerate(series.items()):
        plot_band(
            ax, it, mean, std, label=label, xmax=xmax, linestyle=styles[(k // 2) % len(styles)]
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
