"""Figures 6–8 of the belief-revision paper, drawn from one or more results folders.

Everything is read back from the files :mod:`games.fruit_trading.experiment`
writes (``summary.json``, ``fig6_agreements.csv``, ``curves_<variant>.csv``),
so figures can be redrawn without re-running anything. Every figure names the
model(s) that produced the data; the scripted stand-in is labelled as such.

Each figure function takes one folder or a sequence of folders (``runs``):
with several, every (run, variant) pair is one bar group member or one line,
which is what ``gt-llm fruit-trading compare`` draws.

* Fig. 6 — agreements per message (grouped bars).
* Fig. 7 — NashConv and CFR-Gain over iterations, in separate rows so that a
  small NashConv stays visible beside a large CFR-Gain; a zoomed column on
  the first ``short`` iterations only when the run has more than that.
* Fig. 8 — CFR-Gain / NashConv, with a panel below saying how many subgames
  enter the ratio at each iteration (those with NashConv = 0 are left out).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from runs.atomic import ResultsError, atomic_path, read_json, write_csv, write_text
from solvers.plots import (
    band_columns,
    plot_grouped_bars,
    plot_metric_panel,
    read_csv_rows,
    read_curves_csv,
    to_png,  # noqa: F401  (re-exported: notebooks display figures with it)
)

FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
_VARIANT_LABEL = {
    "tone": "tone (σ_CFR)",
    "tone+belief": "tone + belief (σ_CFR-B)",
    "tone+dirichlet": "tone + Dirichlet (σ_CFR-B)",
    "tone+gratr": "tone + GRATR",
}

Runs = str | Path | Sequence[str | Path]


def load_summary(out: str | Path) -> dict[str, Any]:
    """``summary.json`` of a results folder, its shape checked.

    Raises:
      runs.atomic.ResultsError: missing, not JSON, too large or too deep,
        or without the fields the figures read (``FILE: 'variants.tone.final'
        must be an object``), in one line.
    """
    path = Path(out) / "summary.json"
    data = read_json(path, rerun=f"`gt-llm fruit-trading run --out {out}`")
    check_summary(data, path)
    return data


def _need(value: Any, kind: type | tuple[type, ...], where: str, path: Path) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = {dict: "an object", list: "a list", str: "a string", int: "a whole number"}
        want = names.get(kind, "a number") if isinstance(kind, type) else "a number"
        raise ResultsError(
            f"{path}: {where!r} must be {want}, got {type(value).__name__}; re-run the command "
            "that wrote it"
        )
    return value


def check_summary(data: Any, path: Path) -> None:
    """Checks the fields of a fruit ``summary.json`` that the figures and tables read.

    Raises:
      runs.atomic.ResultsError: naming the file and the first wrong field.
    """
    _need(data, dict, "(top level)", path)
    _need(data.get("label"), str, "label", path)
    settings = _need(data.get("settings"), dict, "settings", path)
    for key in ("inits", "num_seeds"):
        _need(settings.get(key), int, f"settings.{key}", path)
    variants = _need(data.get("variants"), dict, "variants", path)
    for name, v in variants.items():
        _need(v, dict, f"variants.{name}", path)
        final = _need(v.get("final"), dict, f"variants.{name}.final", path)
        for key in ("nash_conv_mean", "cfr_gain_mean"):
            if final.get(key) is not None:
                _need(final.get(key), (int, float), f"variants.{name}.final.{key}", path)
        for key in ("ess_first_iteration", "agreements", "trees"):
            _need(v.get(key), list, f"variants.{name}.{key}", path)
        for i, row in enumerate(v["agreements"]):
            _need(row, dict, f"variants.{name}.agreements[{i}]", path)


def load_curves(out: str | Path, variant: str) -> dict[str, np.ndarray]:
    """Mean/std columns of ``curves_<variant>.csv`` as arrays."""
    return read_curves_csv(Path(out) / f"curves_{variant.replace('+', '_')}.csv")


def _runs(runs: Runs, labels: Sequence[str] | None = None) -> list[tuple[str, Path, dict]]:
    """(label, folder, summary) per run; labels only matter with several runs."""
    outs = [Path(runs)] if isinstance(runs, (str, Path)) else [Path(r) for r in runs]
    if not outs:
        raise ValueError("figures: give at least one results folder")
    if labels is not None and len(labels) != len(outs):
        raise ValueError(f"figures: {len(labels)} labels for {len(outs)} results folders")
    out = []
    for k, d in enumerate(outs):
        s = load_summary(d)
        out.append((labels[k] if labels else f"{d.name} [{s['model']}]", d, s))
    return out


def _series_label(run: str, variant: str, several: bool) -> str:
    lab = _VARIANT_LABEL.get(variant, variant)
    return f"{run}: {lab}" if several else lab


def _suptitle(fig, runs: list[tuple[str, Path, dict]], what: str) -> None:
    if len(runs) == 1:
        summary = runs[0][2]
        s = summary["settings"]
        detail = (
            f"model: {summary['label']} — {s['inits']} subgames, {s['num_seeds']} seeds, "
            f"{s['max_messages']} messages"
        )
    else:
        detail = "; ".join(f"{name}: {s['label']}" for name, _, s in runs)
    width = max(40, int(fig.get_figwidth() * 11))
    fig.suptitle(what + "\n" + "\n".join(textwrap.wrap(detail, width)), fontsize=9)


def fig6_agreements(out: Runs, *, labels: Sequence[str] | None = None):
    """Fig. 6: % agreements reached per message, per variant (and run)."""
    runs = _runs(out, labels)
    several = len(runs) > 1
    series: dict[str, list[float]] = {}
    messages: list[int] = []
    for name, d, _ in runs:
        rows = read_csv_rows(d / "fig6_agreements.csv")
        messages = sorted({int(r["message"]) for r in rows} | set(messages))
        for v in dict.fromkeys(r["variant"] for r in rows):
            by_m = {int(r["message"]): r for r in rows if r["variant"] == v}
            series[_series_label(name, v, several)] = [
                float(by_m[m]["percentage"] or "nan") if m in by_m else float("nan")
                for m in messages
            ]
    fig = Figure(figsize=(6.5 + (1.5 if several else 0), 4))
    ax = fig.subplots()
    plot_grouped_bars(ax, [str(m) for m in messages], series)
    ax.set_xlabel("message")
    ax.set_ylabel("agreements reached (%)")
    _suptitle(fig, runs, "Agreements reached per message")
    fig.tight_layout()
    return fig


def _last_iteration(runs) -> int:
    return max(int(load_curves(d, v)["iteration"][-1]) for _, d, s in runs for v in s["variants"])


def fig7_metrics(
    out: Runs,
    short: int = 50,
    *,
    labels: Sequence[str] | None = None,
    log_x: bool = False,
    log_y: bool = False,
):
    """Fig. 7: NashConv (top) and CFR-Gain (bottom) over iterations, mean with 95 % interval.

    The band is the mean's Student-t 95 % interval over the subgames; the
    CFR-Gain panels add, per series, the 5-95 % band of the mean CFR-Gain's
    label-shuffled null when the run computed it.

    Columns: iterations 1–``short`` and all of them; only the second when the
    run has no more than ``short`` iterations (no duplicate panels).
    ``log_y``: log scale for NashConv, symmetric log for CFR-Gain (it can be < 0).
    """
    runs = _runs(out, labels)
    several = len(runs) > 1
    nash, gain = {}, {}
    nulls: dict[str, tuple[float, float]] = {}
    band = ""
    for name, d, s in runs:
        for v in s["variants"]:
            c = load_curves(d, v)
            lab = _series_label(name, v, several)
            half_nc, band = band_columns(c, "nash_conv")
            half_gain, band = band_columns(c, "cfr_gain")
            nash[lab] = (c["iteration"], c["nash_conv_mean"], half_nc)
            gain[lab] = (c["iteration"], c["cfr_gain_mean"], half_gain)
            m = ((s["variants"][v].get("noise") or {}).get("mean_null_cfr_gain")) or None
            if m is not None:
                nulls[lab] = (m["q05"], m["q95"])
    last = _last_iteration(runs)
    windows = ([short] if last > short else []) + [None]
    fig = Figure(figsize=(6 * len(windows), 7))
    axes = np.asarray(fig.subplots(2, len(windows), squeeze=False))
    for col, xmax in enumerate(windows):
        span = f"iterations 1–{xmax if xmax else last}"
        for row, (metric, series) in enumerate((("NashConv", nash), ("CFR-Gain", gain))):
            ax = axes[row, col]
            plot_metric_panel(
                ax,
                series,
                xmax=xmax,
                ylabel=metric,
                title=f"{metric}, {span}\n({band} over subgames)",
                log_x=log_x,
            )
            if metric == "CFR-Gain":
                _null_bands(ax, nulls)
            if log_y:
                if metric == "NashConv":
                    ax.set_yscale("log")
                else:
                    ax.set_yscale("symlog", linthresh=1e-3)
            if metric == "CFR-Gain":
                ax.axhline(0.0, color="grey", linewidth=0.8, linestyle=":")
    _suptitle(fig, runs, "NashConv and CFR-Gain over CFR iterations")
    fig.tight_layout()
    return fig


def _null_bands(ax, nulls: Mapping[str, tuple[float, float]]) -> None:
    """The 5-95 % null of the mean CFR-Gain per series, a hatched horizontal band.

    The null is the final policy's mean CFR-Gain over subgames with the tone
    labels shuffled at every decision (:mod:`solvers.noise`); a curve inside
    its band is not above what relabelling alone gives.
    """
    colors = {line.get_label(): line.get_color() for line in ax.get_lines()}
    for lab, (lo, hi) in nulls.items():
        ax.axhspan(
            lo,
            hi,
            facecolor="none",
            edgecolor=colors.get(lab, "grey"),
            hatch="//",
            alpha=0.35,
            linewidth=0.6,
            label=f"{lab}: null 5-95 % (tones shuffled)",
        )
    if nulls:
        ax.legend(fontsize=7)


def fig8_ratio(
    out: Runs,
    short: int = 50,
    *,
    labels: Sequence[str] | None = None,
    log_x: bool = False,
):
    """Fig. 8: CFR-Gain / NashConv over iterations 1–``short``, mean with 95 % interval.

    The lower panel gives the number of subgames that enter the mean at each
    iteration: a subgame whose NashConv is 0 there has no ratio and is left out.
    """
    runs = _runs(out, labels)
    several = len(runs) > 1
    series, counts = {}, {}
    xmax = min(short, _last_iteration(runs))
    for name, d, s in runs:
        for v in s["variants"]:
            c = load_curves(d, v)
            keep = c["iteration"] <= xmax
            if not np.any(np.isfinite(c["ratio_mean"][keep])):
                continue  # nothing to draw: no subgame has a ratio (legends list drawn lines)
            lab = _series_label(name, v, several)
            series[lab] = (c["iteration"], c["ratio_mean"], band_columns(c, "ratio")[0])
            counts[lab] = (c["iteration"][keep], c["ratio_count"][keep], s["settings"]["inits"])
    fig = Figure(figsize=(6.5 + (1.5 if several else 0), 5.5))
    ax, ax_n = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    if series:
        plot_metric_panel(
            ax,
            series,
            xmax=xmax,
            ylabel="CFR-Gain / NashConv",
            title="ratio over subgames with NashConv > 0",
            log_x=log_x,
        )
    else:
        ax.set_title("no subgame has NashConv > 0: no ratio to draw", fontsize=10)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("")
    for lab, (it, n, total) in counts.items():
        ax_n.step(it, n, where="mid", label=f"{lab} (of {total})", linewidth=1.2)
    ax_n.set_ylabel("subgames in\nthe ratio", fontsize=8)
    ax_n.set_xlabel("CFR iteration")
    ax_n.grid(True, alpha=0.3)
    if log_x:
        ax_n.set_xscale("log")
    if counts:
        totals = {t for _, _, t in counts.values()}
        ax_n.set_ylim(0, max(totals) * 1.05)
    _suptitle(fig, runs, "CFR-Gain / NashConv over CFR iterations")
    fig.tight_layout()
    return fig


_FIGURES = (
    ("fig6_agreements", fig6_agreements, False),
    ("fig7_nashconv_cfrgain", fig7_metrics, True),
    ("fig8_ratio", fig8_ratio, True),
)


def draw_all(
    out: str | Path,
    *,
    runs: Sequence[str | Path] | None = None,
    labels: Sequence[str] | None = None,
    fmt: str = "png",
    log_x: bool = False,
    log_y: bool = False,
    prefix: str = "",
) -> list[Path]:
    """Draws Figs. 6–8 into ``out`` and returns their paths.

    Args:
      out: Folder to write to (and, without ``runs``, the results folder read).
      runs: Results folders to overlay (``compare``); default ``[out]``.
      labels: One label per run (default: folder name and model).
      fmt: ``png``, ``pdf`` or ``svg``.
      log_x: Log-scale iteration axes (Figs. 7 and 8).
      log_y: Log-scale value axes of Fig. 7.
      prefix: File-name prefix (``compare_`` for overlays).
    """
    if fmt not in FORMATS:
        raise ValueError(f"draw_all: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = Path(out)
    src = list(runs) if runs is not None else [out]
    paths = []
    for name, fn, has_x in _FIGURES:
        kw: dict[str, Any] = {"labels": labels}
        if has_x:
            kw["log_x"] = log_x
        if fn is fig7_metrics:
            kw["log_y"] = log_y
        fig = fn(src, **kw)
        path = out / f"{prefix}{name}.{fmt}"
        # Figure objects (no pyplot): no global backend state, nothing to close.
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120)
        paths.append(path)
    return paths


# --- comparing runs ------------------------------------------------------------------


def headline_rows(runs: Sequence[str | Path], labels: Sequence[str] | None = None) -> list[dict]:
    """The headline numbers of every (run, variant), one row each."""
    rows = []
    for name, _, s in _runs(runs, labels):
        for v, d in s["variants"].items():
            f = d["final"]
            ess = [x for x in d["ess_first_iteration"] if x is not None]
            agree = d["agreements"]
            hist = sum(r["histories"] for r in agree)
            deg = d.get("degeneracy", {})
            whole = d.get("whole_game", {})
            guesses = d.get("guesses", [])
            rows.append(
                {
                    "run": name,
                    "model": s["label"],
                    "seed": s["settings"].get("scenario_seed"),
                    "variant": v,
                    "subgames": len(d["trees"]),
                    "iterations": f["iteration"],
                    "nash_conv_mean": f["nash_conv_mean"],
                    "cfr_gain_mean": f["cfr_gain_mean"],
                    "gain_above_nashconv": len(ess),
                    "agreements_pct": 100.0 * sum(r["agreements"] for r in agree) / hist
                    if hist
                    else None,
                    "guess_pct_last": guesses[-1]["percentage"] if guesses else None,
                    "tone_changes_payoff": deg.get("decision_changes_outcome"),
                    "nashconv_any_positive": deg.get("baseline_nash_conv_positive"),
                    "whole_shared_infosets": whole.get("infosets_shared_across_subgames"),
                    "whole_nash_conv": whole.get("whole_game_cfr", {}).get("nash_conv"),
                }
            )
    return rows


def write_comparison(
    runs: Sequence[str | Path],
    out: str | Path,
    *,
    labels: Sequence[str] | None = None,
    fmt: str = "png",
    log_x: bool = False,
    log_y: bool = False,
) -> list[Path]:
    """``gt-llm fruit-trading compare``: overlaid Figs. 6–8 and a headline table.

    Writes ``compare_fig6_agreements.<fmt>``, ``compare_fig7_nashconv_cfrgain.<fmt>``,
    ``compare_fig8_ratio.<fmt>``, ``compare.csv`` and ``compare.md`` into ``out``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = draw_all(
        out, runs=runs, labels=labels, fmt=fmt, log_x=log_x, log_y=log_y, prefix="compare_"
    )
    rows = headline_rows(runs, labels)
    write_csv(out / "compare.csv", rows)
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [
            f"{r[c]:.4f}" if isinstance(r[c], float) else ("–" if r[c] is None else str(r[c]))
            for c in cols
        ]
        lines.append("| " + " | ".join(cells) + " |")
    write_text(out / "compare.md", "\n".join(lines) + "\n")
    return [*paths, out / "compare.csv", out / "compare.md"]


__all__ = [
    "FORMATS",
    "draw_all",
    "fig6_agreements",
    "fig7_metrics",
    "fig8_ratio",
    "headline_rows",
    "load_curves",
    "load_summary",
    "write_comparison",
]
