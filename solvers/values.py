"""Expected values of a behaviour-strategy profile on a materialised tree.

The expected return of player ``i`` under profile ``sigma`` is
``u_i(sigma) = sum_z pi^sigma(z) u_i(z)`` over terminal histories ``z``, where
``pi^sigma(z)`` is the product of the chance and action probabilities on the
path to ``z`` (Osborne & Rubinstein 1994, ch. 11; notation of Zinkevich et al.
2007). One forward pass over the breadth-first node arrays computes every
reach probability: O(num_nodes) time and memory. :func:`expected_values`
walks ``tree.collapsed`` (decision-free subtrees as single terminals, see
:mod:`solvers.collapse`): the same sum in another association, equal to
rounding.
"""

from __future__ import annotations

import numpy as np

from solvers import _kernels
from solvers.policy import PolicyLike, check_policy
from solvers.tree import GameTree


def reach_probabilities(tree: GameTree, policy: PolicyLike) -> np.ndarray:
    """Probability of reaching every node under ``policy`` (chance included).

    Args:
        tree: The tree.
        policy: A profile of all players.

    Returns:
        ``float64[num_nodes]``.

    Raises:
        ValueError: If ``policy`` does not fit the tree or is not normalised.
    """
    probs = check_policy(tree, policy, caller="reach_probabilities")
    reach = np.empty(tree.num_nodes)
    _kernels.profile_reach(tree.kernel_arrays, probs, reach)
    return reach


def expected_values(tree: GameTree, policy: PolicyLike) -> np.ndarray:
    """Expected return of every player when all play ``policy``.

    To evaluate a profile mixing per-player policies use
    ``expected_values(tree, merge_policies(tree, [pi_0, pi_1, ...]))``.

    Args:
        tree: The tree.
        policy: A profile of all players.

    Returns:
        ``float64[num_players]``.

    Raises:
        ValueError: If ``policy`` does not fit the tree or is not normalised.
    """
    probs = check_policy(tree, policy, caller="expected_values")
    out = np.zeros(tree.num_players)
    walked = tree.collapsed  # decision-free subtrees as single terminals (solvers.collapse)
    _kernels.expected_values(
        walked.kernel_arrays, tree.num_players, probs, np.empty(walked.num_nodes), out
    )
    return out
