"""Best responses and NashConv on a materialised tree.

A best response of player ``i`` to ``sigma_-i`` maximises
``u_i(sigma'_i, sigma_-i)``. Under perfect recall it is computed by one
bottom-up pass: at an information set ``I`` of ``i`` choose the action
maximising the counterfactual value ``sum_{h in I} pi_-i(h) v_i(h a)``, where
``v_i`` already uses the best response below ``I`` (Johanson, Waugh, Bowling &
Zinkevich 2011, "Accelerating Best Response Calculation in Large Extensive
Games", IJCAI). :func:`best_response_policy` visits nodes in ``tree.br_order[:, i]``, which
puts all descendants of an information set's histories before any of them.
The values (:func:`best_response_values`, :func:`nash_conv`) come from the
fused pass of :func:`solvers._kernels.policy_metrics`: one forward pass adds
each terminal's counterfactual value to its player's last sequence, then
information sets are maximised from the last to the first (the
sequence-form best response; all players at once). The expected values are
the same sequence values weighted by each player's own reach of the
sequence.

NashConv (Lanctot et al. 2017, "A Unified Game-Theoretic Approach to
Multiagent Reinforcement Learning", NeurIPS) is

    NashConv(sigma) = sum_i [ max_{sigma'_i} u_i(sigma'_i, sigma_-i) - u_i(sigma) ],

zero exactly at a Nash equilibrium; it is defined for any number of players
and general-sum payoffs. Cost: O(num_nodes) per player.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from solvers import _kernels
from solvers.policy import PolicyLike, TreePolicy, check_policy
from solvers.tree import GameTree


@dataclasses.dataclass(frozen=True, eq=False)
class NashConvResult:
    """NashConv of a profile with its per-player terms.

    Attributes:
        nash_conv: ``sum(per_player)``.
        best_response_values: ``max_{sigma'_i} u_i(sigma'_i, sigma_-i)`` per
            player.
        policy_values: ``u_i(sigma)`` per player.
        per_player: ``best_response_values - policy_values``, each >= 0 up
            to rounding.
    """

    nash_conv: float
    best_response_values: np.ndarray
    policy_values: np.ndarray
    per_player: np.ndarray

    @property
    def exploitability(self) -> float:
        """``nash_conv / num_players`` (OpenSpiel's convention)."""
        return self.nash_conv / len(self.per_player)


class MetricBuffers:
    """Scratch arrays of the fused metric pass :func:`solvers._kernels.policy_metrics` (internal).

    Allocated once per tree by whoever evaluates repeatedly (a
    :class:`~solvers.cfr.CFRSolver`, a ``cfr_curves`` worker), so that an
    evaluation allocates nothing. After :meth:`run`: ``ev`` (values of the
    profile), ``br`` (best-response values), ``dev`` (values of deviating to
    the profile from the baseline) and ``choice`` (best-response actions).
    """

    def __init__(self, tree: GameTree) -> None:
        walked, p = tree.collapsed, tree.num_players
        # Rows below the end of the interior only: the kernels never touch the trailing leaves'.
        n = _kernels.internal_end(walked.kind, walked.parent)
        k = tree.num_infosets * tree.max_actions
        self.reach = np.empty((n, p))
        self.chance_reach = np.empty(n)
        self.seq = np.empty((n, p), dtype=np.int64)
        self.q = np.empty(k)
        self.rw = np.empty(k)
        self.qb = np.empty(k + p)
        self.iset_parent = np.empty(tree.num_infosets, dtype=np.int64)
        self.choice = np.empty(tree.num_infosets, dtype=np.int64)
        self.ev = np.zeros(p)
        self.br = np.zeros(p)
        self.dev = np.zeros(p)

    def run(
        self, tree: GameTree, probs: np.ndarray, baseline: np.ndarray | None = None
    ) -> MetricBuffers:
        """Fills the outputs for ``probs`` (and deviations to it from ``baseline``); returns self."""
        walked = tree.collapsed
        tval = walked.returns_by_player
        want_dev = baseline is not None
        _kernels.metric_rows(
            walked.kernel_arrays,
            tree.num_players,
            tval,
            baseline if want_dev else probs,
            want_dev,
            self.chance_reach,
            self.seq,
            self.iset_parent,
            self.reach,
            self.qb,
        )
        _kernels.policy_metrics(
            walked.kernel_arrays,
            tree.num_players,
            tval,
            probs,
            want_dev,
            self.chance_reach,
            self.seq,
            self.iset_parent,
            self.qb,
            self.reach,
            self.q,
            self.rw,
            self.choice,
            self.ev,
            self.br,
            self.dev,
        )
        return self


def _br(tree: GameTree, probs: np.ndarray, player: int) -> tuple[float, np.ndarray]:
    choice = np.empty(tree.num_infosets, dtype=np.int64)
    walked = tree.collapsed  # same values bit for bit: see solvers.collapse
    value = _kernels.best_response_value(
        walked.kernel_arrays,
        probs,
        player,
        np.empty(walked.num_nodes),
        np.empty(walked.num_nodes),
        choice,
    )
    return float(value), choice


def best_response_values(tree: GameTree, policy: PolicyLike) -> np.ndarray:
    """Value of each player's best response to the others' part of ``policy``.

    Args:
        tree: The tree.
        policy: A profile of all players.

    Returns:
        ``float64[num_players]``.

    Raises:
        ValueError: If ``policy`` does not fit the tree or is not normalised.
    """
    probs = check_policy(tree, policy, caller="best_response_values")
    return MetricBuffers(tree).run(tree, probs).br.copy()


def best_response_policy(tree: GameTree, policy: PolicyLike, player: int) -> TreePolicy:
    """``policy`` with ``player``'s rows replaced by a pure best response.

    Ties (including unreachable information sets) go to the first legal
    action.

    Raises:
        ValueError: If ``player`` is out of range or ``policy`` is invalid.
    """
    if not 0 <= int(player) < tree.num_players:
        raise ValueError(f"best_response_policy: player={player} is not in [0, {tree.num_players})")
    probs = check_policy(tree, policy, caller="best_response_policy")
    _, choice = _br(tree, probs, int(player))
    out = probs.copy()
    rows = tree.infosets_of(int(player))
    out[rows] = 0.0
    out[rows, choice[rows]] = 1.0
    return TreePolicy(out)


def nash_conv(tree: GameTree, policy: PolicyLike) -> NashConvResult:
    """NashConv of ``policy`` (see the module docstring).

    Args:
        tree: The tree.
        policy: A profile of all players: a
            :class:`~solvers.policy.TreePolicy`, an array or an OpenSpiel
            ``TabularPolicy`` (converted with
            :func:`~solvers.policy.from_tabular_policy`).

    Returns:
        A :class:`NashConvResult`.

    Raises:
        ValueError: If ``policy`` does not fit the tree or is not normalised.
    """
    probs = check_policy(tree, policy, caller="nash_conv")
    metrics = MetricBuffers(tree).run(tree, probs)
    return nash_conv_result(metrics.ev, metrics.br)


def nash_conv_result(values: np.ndarray, br: np.ndarray) -> NashConvResult:
    """:class:`NashConvResult` from policy values and best-response values (copied)."""
    values = np.array(values)
    br = np.array(br)
    per_player = br - values
    return NashConvResult(
        nash_conv=float(per_player.sum()),
        best_response_values=br,
        policy_values=values,
        per_player=per_player,
    )
