"""Text of the noise checks (:mod:`solvers.noise`) for end-of-run lines and tables.

Every game's report shows a study's numbers the same way: a mean with its
95 % interval and n (``0.123 [0.045, 0.201], n=30``), the held-out CFR-Gain
beside the in-sample one, and "above noise in X of N (BH q = ...)" with the
mean's permutation p-value. The functions read the dictionaries that
``summary.json`` stores (:meth:`solvers.noise.StudyNoise.to_dict` and
:func:`solvers.studies.final_metrics`), so a report redrawn from a results
folder reads exactly what the run wrote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["interval_text", "metric_text", "noise_lines", "noise_table"]


def interval_text(mean: float, ci: Sequence[float | None] | None, n: int | None = None) -> str:
    """``mean [lo, hi]`` (with ``, n=N``), or ``mean [no interval]`` without one."""
    lo, hi = (None, None) if ci is None else (ci[0], ci[1])
    body = (
        f"{mean:.4g} [{lo:.4g}, {hi:.4g}]"
        if lo is not None and hi is not None
        else (f"{mean:.4g} [no interval]")
    )
    return f"{body}, n={n}" if n is not None else body


def metric_text(final: Mapping[str, Any], metric: str) -> str:
    """A metric of :func:`solvers.studies.final_metrics` as mean, 95 % interval and n."""
    return interval_text(final[f"{metric}_mean"], final.get(f"{metric}_ci95"), final.get("n"))


def _entry(e: Mapping[str, Any] | None) -> str:
    return "n/a" if e is None else interval_text(e["mean"], e["ci95"], e["n"])


def noise_lines(noise: Mapping[str, Any] | None, *, indent: str = "  ") -> list[str]:
    """The end-of-run lines of a study's noise checks (none when they were off)."""
    if noise is None:
        return []
    out = []
    if noise.get("held_out_cfr_gain") is not None:
        out.append(
            f"{indent}held-out CFR-Gain {_entry(noise['held_out_cfr_gain'])} (same policy "
            f"in-sample {_entry(noise['in_sample_mapped_cfr_gain'])})"
        )
    a = noise.get("above_noise")
    if a is not None and noise.get("null_degenerate"):
        out.append(
            f"{indent}label null: relabelling actions does not change this baseline (e.g. "
            "uniform), so the permutation test cannot tell CFR-Gain from noise (p = 1)"
        )
    elif a is not None:
        m = noise["mean_null_cfr_gain"]
        out.append(
            f"{indent}above noise in {a['count']} of {a['of']} trees (label permutations "
            f"{noise['permutations']}, BH q = {a['q']}); mean CFR-Gain p = "
            f"{noise['mean_cfr_gain_p_value']:.3g}, its null 5-95 % "
            f"[{m['q05']:.4g}, {m['q95']:.4g}]"
        )
    if noise.get("bootstrap"):
        widths = [
            t["cfr_gain_ci95"][1] - t["cfr_gain_ci95"][0]
            for t in noise["per_tree"]
            if t["cfr_gain_ci95"][0] is not None
        ]
        if not widths:
            out.append(
                f"{indent}seed bootstrap: no chance node with two or more equally likely "
                "outcomes (one seed per decision): nothing to redraw, no interval"
            )
        else:
            out.append(
                f"{indent}seed bootstrap ({noise['bootstrap']} re-solved replicates per tree): "
                f"median width of a tree's CFR-Gain interval {sorted(widths)[len(widths) // 2]:.4g}"
            )
    return out


def noise_table(rows: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """A markdown table, one row per study (variant, opponent model) with noise checks.

    Columns: CFR-Gain and NashConv (mean, 95 % t-interval over trees, n), the
    held-out CFR-Gain and the same policy in-sample, the trees above noise
    (Benjamini-Hochberg) and the mean CFR-Gain's permutation p-value.
    """
    out = [
        "| study | CFR-Gain | NashConv | held-out CFR-Gain | same policy in-sample "
        "| above noise | mean CFR-Gain p |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, noise in rows.items():
        if noise is None:
            continue
        a = noise.get("above_noise")
        above = f"{a['count']} of {a['of']} (q = {a['q']})" if a is not None else "n/a"
        p = noise.get("mean_cfr_gain_p_value")
        out.append(
            f"| {name} | {_entry(noise['cfr_gain'])} | {_entry(noise['nash_conv'])} "
            f"| {_entry(noise.get('held_out_cfr_gain'))} "
            f"| {_entry(noise.get('in_sample_mapped_cfr_gain'))} | {above} "
            f"| {'n/a' if p is None else f'{p:.3g}'} |"
        )
    return out
