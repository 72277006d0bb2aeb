"""Intervals and multiple-testing control for the numbers the studies report.

Every mean a study shows comes with one of these, and with its n:

* :func:`mean_ci95`: the mean and its Student-t 95 % interval,
  mean +- t(0.975, n - 1) * sd / sqrt(n), sd with n - 1 in the divisor
  (no interval for n < 2; with few items t is much wider than 1.96: 4.30 for
  n = 3, 2.26 for n = 10);
* :func:`wilson_interval`: a binomial proportion's Wilson score interval
  (Wilson 1927), which stays inside [0, 1] and is usable at 0 or n successes;
* :func:`percentile_interval`: the 2.5 and 97.5 percentiles of bootstrap
  replicates (Efron and Tibshirani 1993, ch. 13);
* :func:`permutation_p_value`: a one-sided permutation p-value,
  (1 + #{null >= observed}) / (1 + B), which is valid (never below its
  nominal level under the null) for any number B of random permutations
  (Phipson and Smyth 2010);
* :func:`benjamini_hochberg`: which of m p-values are discoveries at a false
  discovery rate q (Benjamini and Hochberg 1995): sort them, find the largest
  k with p_(k) <= k q / m, reject the k smallest.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "Interval",
    "benjamini_hochberg",
    "mean_ci95",
    "percentile_interval",
    "permutation_p_value",
    "t_quantile",
    "welch_half_width",
    "wilson_interval",
]

#: A closed interval; ``(None, None)`` when there is too little data for one.
Interval = tuple[float | None, float | None]

#: Values of a null replicate within this of the observed one count as "as large":
#: permuted and observed statistics that are equal in exact arithmetic may differ in
#: the last bits of a floating-point sum.
TIE_TOLERANCE = 1e-9


@functools.lru_cache(maxsize=256)
def t_quantile(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom."""
    # scipy.stats costs most of a second to import: only where an interval is drawn.
    from scipy import stats  # type: ignore[import-untyped]

    return float(stats.t.ppf(0.975, df))


def welch_half_width(var_a: float, n_a: int, var_b: float, n_b: int) -> tuple[float, float] | None:
    """Welch's 95 % interval for a difference of two means: its half-width and df.

    Args:
      var_a, var_b: Each sample's variance (``ddof=1``).
      n_a, n_b: Each sample's size.

    Returns:
      ``(half_width, df)``; a zero width (df ``n_a + n_b - 2``) when both samples
      are constant; None when either has fewer than two values.
    """
    if n_a < 2 or n_b < 2:
        return None
    va, vb = var_a / n_a, var_b / n_b
    se2 = va + vb
    if se2 == 0.0:
        return 0.0, float(n_a + n_b - 2)
    df = se2**2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    return t_quantile(df) * math.sqrt(se2), df


def mean_ci95(values: Sequence[float] | np.ndarray) -> tuple[float, Interval]:
    """The mean and its Student-t 95 % interval (None with fewer than two values).

    The interval is mean +- t(0.975, n - 1) * sd / sqrt(n), sd with ddof = 1.

    Raises:
      ValueError: No values.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("mean_ci95: no values; pass at least one")
    mean = float(x.mean())
    if len(x) < 2:
        return mean, (None, None)
    half = t_quantile(len(x) - 1) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return mean, (mean - half, mean + half)


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95 % by default).

    Raises:
      ValueError: ``n`` below 1 or ``successes`` outside [0, n].
    """
    if n <= 0:
        raise ValueError(f"wilson_interval: n must be >= 1, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: successes must be in [0, {n}], got {successes}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile_interval(replicates: Sequence[float] | np.ndarray) -> Interval:
    """The 2.5 and 97.5 percentiles of bootstrap replicates (None without any)."""
    x = np.asarray(replicates, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None, None
    lo, hi = np.percentile(x, [2.5, 97.5])
    return float(lo), float(hi)


def permutation_p_value(observed: float, null: Sequence[float] | np.ndarray) -> float:
    """One-sided p-value of ``observed`` against permutation replicates: large is extreme.

    ``(1 + #{null >= observed}) / (1 + B)``: the observed labelling counts as
    one of the permutations, so the p-value is never 0 and the test keeps its
    level with any number B of random permutations.

    Raises:
      ValueError: No replicates.
    """
    x = np.asarray(null, dtype=float)
    if x.size == 0:
        raise ValueError("permutation_p_value: no null replicates; pass at least one")
    hits = int(np.count_nonzero(x >= observed - TIE_TOLERANCE))
    return (1 + hits) / (1 + x.size)


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray, q: float) -> np.ndarray:
    """Which p-values are discoveries at false-discovery rate ``q`` (step-up rule).

    Returns:
      A boolean array in the order of ``p_values``.

    Raises:
      ValueError: ``q`` outside (0, 1) or a p-value outside [0, 1].
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"benjamini_hochberg: q must be in (0, 1), got {q}")
    p = np.asarray(p_values, dtype=float)
    if p.size and (np.any(~np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0):
        raise ValueError("benjamini_hochberg: p-values must be in [0, 1]")
    m = p.size
    out = np.zeros(m, dtype=bool)
    if m == 0:
        return out
    order = np.argsort(p, kind="stable")
    below = p[order] <= q * np.arange(1, m + 1) / m
    if below.any():
        k = int(np.nonzero(below)[0].max())  # the largest rank under its line
        out[order[: k + 1]] = True
    return out
