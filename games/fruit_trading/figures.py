"""Figures 6–8 of the belief-revision paper, drawn from a results folder.

Everything is read back from the files :mod:`games.fruit_trading.experiment`
writes (``summary.json``, ``fig6_agreements.csv``, ``curves_<variant>.csv``),
so figures can be redrawn without re-running anything. Every figure names the
model that produced the data; the scripted stand-in is labelled as such.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from solvers.plots import (
    plot_grouped_bars,
    plot_metric_panel,
    read_csv_rows,
    read_curves_csv,
    to_png,  # noqa: F401  (re-exported: notebooks display figures with it)
)
from solvers.results import atomic_path

_VARIANT_LABEL = {"tone": "tone (σ_CFR)", "tone+belief": "tone + belief (σ_CFR-B)"}


def load_summary(out: str | Path) -> dict[str, Any]:
    return json.loads((Path(out) / "summary.json").read_text())


def load_curves(out: str | Path, variant: str) -> dict[str, np.ndarray]:
    """Mean/std columns of ``curves_<variant>.csv`` as arrays."""
    return read_curves_csv(Path(out) / f"curves_{variant.replace('+', '_')}.csv")


def _suptitle(fig, summary: dict[str, Any], what: str) -> None:
    s = summary["settings"]
    detail = (
        f"model: {summary['label']} — {s['inits']} subgames, {s['num_seeds']} seeds, "
        f"{s['max_messages']} messages"
    )
    width = max(40, int(fig.get_figwidth() * 11))
    fig.suptitle(what + "\n" + "\n".join(textwrap.wrap(detail, width)), fontsize=9)


def fig6_agreements(out: str | Path):
    """Fig. 6: % agreements reached per message, per variant (grouped bars)."""
    out = Path(out)
    summary = load_summary(out)
    rows = read_csv_rows(out / "fig6_agreements.csv")
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    messages = sorted({int(r["message"]) for r in rows})
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    plot_grouped_bars(
        ax,
        [str(m) for m in messages],
        {v: [float(r["percentage"] or "nan") for r in rows if r["variant"] == v] for v in variants},
    )
    ax.set_xlabel("message")
    ax.set_ylabel("agreements reached (%)")
    _suptitle(fig, summary, "Agreements reached per message")
    fig.tight_layout()
    return fig


def fig7_metrics(out: str | Path, short: int = 50):
    """Fig. 7: mean ± std of NashConv and CFR-Gain, iterations 1–``short`` and all."""
    out = Path(out)
    summary = load_summary(out)
    fig = Figure(figsize=(12, 4.5))
    axes = fig.subplots(1, 2)
    series = {}
    for v in summary["variants"]:
        c = load_curves(out, v)
        lab = _VARIANT_LABEL.get(v, v)
        series[f"NashConv, {lab}"] = (c["iteration"], c["nash_conv_mean"], c["nash_conv_std"])
        series[f"CFR-Gain, {lab}"] = (c["iteration"], c["cfr_gain_mean"], c["cfr_gain_std"])
    last = int(max(s[0][-1] for s in series.values()))
    plot_metric_panel(
        axes[0],
        series,
        xmax=short,
        ylabel="value (mean ± std over subgames)",
        title=f"iterations 1–{min(short, last)}",
    )
    plot_metric_panel(axes[1], series, xmax=None, title=f"iterations 1–{last}")
    _suptitle(fig, summary, "NashConv and CFR-Gain over CFR iterations")
    fig.tight_layout()
    return fig


def fig8_ratio(out: str | Path, short: int = 50):
    """Fig. 8: mean ± std of CFR-Gain / NashConv over iterations 1–``short``."""
    out = Path(out)
    summary = load_summary(out)
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    series = {}
    for v in summary["variants"]:
        c = load_curves(out, v)
        series[_VARIANT_LABEL.get(v, v)] = (c["iteration"], c["ratio_mean"], c["ratio_std"])
    plot_metric_panel(
        ax,
        series,
        xmax=short,
        ylabel="CFR-Gain / NashConv",
        title="ratio (NaN where NashConv = 0 is left out)",
    )
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    _suptitle(fig, summary, "CFR-Gain / NashConv over CFR iterations")
    fig.tight_layout()
    return fig


def draw_all(out: str | Path) -> list[Path]:
    """Draws Figs. 6–8 into ``out`` as PNG files and returns their paths."""
    out = Path(out)
    paths = []
    for name, fn in (
        ("fig6_agreements.png", fig6_agreements),
        ("fig7_nashconv_cfrgain.png", fig7_metrics),
        ("fig8_ratio.png", fig8_ratio),
    ):
        fig = fn(out)
        # Figure objects (no pyplot): no global backend state, nothing to close.
        with atomic_path(out / name) as tmp:
            fig.savefig(tmp, dpi=120)
        paths.append(out / name)
    return paths
