"""Figures of a Werewolf day solve, drawn from the files it wrote."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from games.werewolf.day.summary import GROUPS, DaySolveSummary, load_summary
from runs.atomic import atomic_path
from solvers.plots import (
    band_columns,
    plot_grouped_bars,
    plot_metric_panel,
    read_csv_rows,
    read_curves_csv,
)

__all__ = [
    "draw_all",
]


# --- figures (drawn from the files) -------------------------------------------------


def _title(fig: Figure, summary: DaySolveSummary, what: str) -> None:
    s = summary.settings
    fig.suptitle(
        f"{what}\nmodel: {summary.label} — {s['preset']}, day {s['day']}, {s['days']} days, "
        f"K={s['speakers']} speakers",
        fontsize=9,
    )


def fig_curves(out: Path) -> Figure:
    """NashConv and CFR-Gain (mean with 95 % interval over days) per opponent model."""
    summary = load_summary(out)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    series = {}
    for m in summary.models:
        c = read_curves_csv(out / f"curves_{m}.csv")
        half_nc, band = band_columns(c, "nash_conv")
        series[f"NashConv, {m}"] = (c["iteration"], c["nash_conv_mean"], half_nc)
        series[f"CFR-Gain, {m}"] = (
            c["iteration"],
            c["cfr_gain_mean"],
            band_columns(c, "cfr_gain")[0],
        )
    plot_metric_panel(ax, series, ylabel=f"value ({band} over days)", log_x=True)
    _title(fig, summary, "NashConv and CFR-Gain over CFR iterations")
    fig.tight_layout()
    return fig


def fig_side_gain(out: Path) -> Figure:
    """Final CFR-Gain of each side per opponent model (deals with a werewolf speaker).

    The summary's ``side_gain_werewolf_days``: per day the sides' gains over the
    deals in which a werewolf speaks, then the mean over the days that have one.
    """
    summary = load_summary(out)
    models = list(summary.models)
    series: dict[str, list[float]] = {"werewolf side": [], "village side": []}
    for m in models:
        sides = summary.models[m].side_gain_werewolf_days
        for name, x in (("werewolf side", sides.werewolf), ("village side", sides.village)):
            series[name].append(float(x.mean) if x.mean is not None else np.nan)
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    plot_grouped_bars(ax, models, series, fmt="%.2f")
    ax.set_ylabel("CFR-Gain at the last iteration (mean over days)")
    if all(np.isnan(v) for vals in series.values() for v in vals):
        # Say why the panel is empty rather than draw a blank chart.
        ax.text(
            0.5,
            0.5,
            "no day with a werewolf among the speakers\n(more --days, or --order seats)",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    _title(fig, summary, "CFR-Gain per side, deals with a werewolf speaker")
    fig.tight_layout()
    return fig


def fig_strategies(out: Path) -> Figure:
    """The CFR act distribution per role group and opponent model."""
    summary = load_summary(out)
    rows = [
        r
        for r in read_csv_rows(out / "strategies.csv")
        if r["kind"] == "act" and r["decisions"] == "decisive"
    ]
    acts = list(dict.fromkeys(r["name"] for r in rows))
    series = {}
    for m in summary.models:
        for g in GROUPS:
            vals = [r["probability"] for r in rows if r["opponent_model"] == m and r["group"] == g]
            series[f"{g}, {m}"] = [float(v) if v != "" else np.nan for v in vals]
    fig = Figure(figsize=(9, 4.5))
    ax = fig.subplots()
    plot_grouped_bars(ax, acts, series, fmt="%.2f")
    ax.set_ylabel("reach-weighted probability under CFR")
    _title(fig, summary, "CFR speech acts by role group (decisive decisions)")
    fig.tight_layout()
    return fig


#: The figures :func:`draw_all` writes, by file name.
FIGURES = ("fig_nashconv_cfrgain.png", "fig_side_gain.png", "fig_strategies.png")


def draw_all(out: str | Path) -> list[Path]:
    """Draws the figures into ``out`` as PNG files (:data:`FIGURES`); returns their paths."""
    out = Path(out)
    paths = []
    for name, fn in zip(FIGURES, (fig_curves, fig_side_gain, fig_strategies), strict=True):
        fig = fn(out)
        with atomic_path(out / name) as tmp:
            fig.savefig(tmp, dpi=120)
        paths.append(out / name)
    return paths
