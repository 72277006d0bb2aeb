"""CFR-Gain: what each player gains by deviating from a baseline to CFR.

For a baseline profile ``sigma_base`` (in the chat games: always the tone
"any") and a CFR profile ``sigma_CFR`` (usually the CFR average policy),

    CFR-Gain = sum_i [ u_i(sigma_CFR,i, sigma_base,-i) - u_i(sigma_base) ],

the sum over players of the value of unilaterally switching from the baseline
to the CFR strategy while everybody else keeps the baseline. It is a
unilateral-deviation gain like NashConv (Lanctot et al. 2017), with the CFR
strategy in place of a best response, so ``CFR-Gain <= NashConv(sigma_base)``.
All players' deviation values come from sums over sequences: one forward
pass over the node arrays (:func:`solvers._kernels.metric_rows`) adds, at each
terminal, the baseline's counterfactual value to every player's last
sequence; ``u_i(sigma_CFR,i, sigma_base,-i)`` is then the sum of those values
weighted by player ``i``'s reach of each sequence under ``sigma_CFR``
(:func:`solvers._kernels.policy_metrics`): O(num_nodes * num_players) once
per baseline, O(num_infosets) per evaluated profile after that.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from solvers.best_response import MetricBuffers
from solvers.policy import PolicyLike, check_policy
from solvers.tree import GameTree


@dataclasses.dataclass(frozen=True, eq=False)
class CFRGainResult:
    """CFR-Gain with its per-player terms.

    Attributes:
        cfr_gain: ``sum(per_player)``.
        per_player: ``deviation_values - baseline_values``.
        deviation_values: ``u_i(sigma_CFR,i, sigma_base,-i)`` per player.
        baseline_values: ``u_i(sigma_base)`` per player.
    """

    cfr_gain: float
    per_player: np.ndarray
    deviation_values: np.ndarray
    baseline_values: np.ndarray


def deviation_values(tree: GameTree, policy: PolicyLike, baseline: PolicyLike) -> np.ndarray:
    """``u_i(policy_i, baseline_-i)`` for every player ``i``.

    Raises:
        ValueError: If a profile does not fit the tree or is not normalised.
    """
    probs = check_policy(tree, policy, caller="deviation_values")
    base = check_policy(tree, baseline, caller="deviation_values", name="the baseline")
    return _deviation_values(tree, probs, base)


def _deviation_values(tree: GameTree, probs: np.ndarray, base: np.ndarray) -> np.ndarray:
    return MetricBuffers(tree).run(tree, probs, base).dev.copy()


def cfr_gain(tree: GameTree, policy: PolicyLike, baseline: PolicyLike) -> CFRGainResult:
    """CFR-Gain of ``policy`` against ``baseline`` (see the module docstring).

    Args:
        tree: The tree.
        policy: The CFR profile (e.g. ``CFRSolver.average_policy()``); a
            :class:`~solvers.policy.TreePolicy`, an array or an OpenSpiel
            ``TabularPolicy``.
        baseline: The baseline profile (e.g. ``pure_policy(tree, ...)``),
            same types.

    Returns:
        A :class:`CFRGainResult`.

    Raises:
        ValueError: If a profile does not fit the tree or is not normalised.
    """
    probs = check_policy(tree, policy, caller="cfr_gain")
    base = check_policy(tree, baseline, caller="cfr_gain", name="the baseline")
    buffers = MetricBuffers(tree)
    dev = buffers.run(tree, probs, base).dev.copy()
    base_values = buffers.run(tree, base).ev.copy()
    per_player = dev - base_values
    return CFRGainResult(
        cfr_gain=float(per_player.sum()),
        per_player=per_player,
        deviation_values=dev,
        baseline_values=base_values,
    )
