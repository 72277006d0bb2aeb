"""Compiled inner loops of the solvers (numba), over :class:`GameTree` arrays.

These are the per-node loops behind :mod:`solvers.cfr` (Zinkevich et al.
2007; Tammelin 2014; Brown & Sandholm 2019), :mod:`solvers.best_response`,
:mod:`solvers.values`, :mod:`solvers.cfr_gain` and :mod:`solvers.curves`; the
algorithms are documented there. By job: :mod:`.cfr` (regret matching, the
CFR passes, the iteration entry points), :mod:`.metrics` (reach, expected
values, best responses, deviation values, the fused :func:`policy_metrics`),
:mod:`.curves` (:func:`curves_run`, a whole tree in one call) and
:mod:`.common` (the jit decorator, node kinds).

Kernels call kernels of other files, which numba's on-disk cache does not
track; :mod:`._cache_guard` flushes the cache of all of them when any of
these files changes, before the first kernel runs (below).

Every kernel takes the tree as the tuple ``GameTree.kernel_arrays`` (``tt``).
Nodes are in breadth-first order, so a loop ``for h in range(1, N)`` visits
parents before children and ``range(N - 1, -1, -1)`` children before parents.

Without numba the same functions run as (very slow) plain Python.
"""

from __future__ import annotations

from solvers._kernels import cfr, common, curves, metrics
from solvers._kernels._cache_guard import guard_cache
from solvers._kernels.cfr import (
    cfr_iteration,
    cfr_pass_alternating,
    cfr_pass_simultaneous,
    cfr_run,
    cfr_step,
    normalize_rows,
    post_update_regrets,
    prefill_terminal_values,
    reach_ends,
    regret_matching,
    solver_istate_size,
    solver_metrics,
    solver_metrics_size,
    solver_state,
    solver_state_size,
)
from solvers._kernels.common import CHANCE, DECISION, HAVE_NUMBA, TERMINAL, internal_end
from solvers._kernels.curves import curves_run
from solvers._kernels.metrics import (
    best_response_value,
    deviation_values,
    expected_values,
    metric_rows,
    policy_metrics,
    profile_reach,
)

__all__ = [
    "CHANCE",
    "DECISION",
    "HAVE_NUMBA",
    "MODULES",
    "TERMINAL",
    "best_response_value",
    "cfr_iteration",
    "cfr_pass_alternating",
    "cfr_pass_simultaneous",
    "cfr_run",
    "cfr_step",
    "curves_run",
    "deviation_values",
    "expected_values",
    "internal_end",
    "normalize_rows",
    "metric_rows",
    "policy_metrics",
    "post_update_regrets",
    "prefill_terminal_values",
    "profile_reach",
    "reach_ends",
    "regret_matching",
    "solver_istate_size",
    "solver_metrics",
    "solver_metrics_size",
    "solver_state",
    "solver_state_size",
]

# The private bodies of policy_metrics, for the tests that compare them bit for bit.
_best_response_sets = metrics._best_response_sets
_policy_metrics_2p = metrics._policy_metrics_2p
_policy_metrics_any = metrics._policy_metrics_any
_sequence_values = metrics._sequence_values
_metric_rows_any = metrics._metric_rows_any

#: Every module a kernel's machine code depends on (one cache-consistency group).
MODULES = (common, cfr, metrics, curves)

# Before any kernel runs: drop cached machine code compiled against an older file of the group.
guard_cache(MODULES, name="solvers._kernels")
