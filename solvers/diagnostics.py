"""How degenerate a materialised game tree is: do its decisions change payoffs?

A tree built from LLM (or stand-in) answers can be degenerate: the decisions
exist, but what is said does not change what is paid, and then every profile
is an equilibrium and NashConv and CFR-Gain are zero for reasons that have
nothing to do with strategy. Three checks, each a pure function of the tree,
from weakest to strongest claim of *non*-degeneracy:

* **constant payoff** -- every terminal pays the same vector. Then no
  decision and no chance outcome changes anything.
* **a decision changes the outcome** (``decision_changes_outcome``) -- there is
  a decision node ``h`` with two legal actions ``a``, ``b`` such that the *set
  of distinct payoff vectors* at the terminals below ``h a`` differs from the
  set below ``h b``. This holds whatever the players do later and whatever
  chance draws: the outcomes that one choice makes possible are not those
  the other does. (Payoff differences caused only by chance do not count.)
* **a one-shot deviation from the baseline changes a value**
  (``deviation_changes_value``) -- there is a decision node ``h`` and two
  actions whose conditional expected payoff vectors differ by more than
  ``atol`` when every later decision follows the baseline profile and chance
  its probabilities. This is the "switch the tone here, keep the rest"
  question that CFR-Gain asks, node by node.

and the baseline's **NashConv** (:func:`solvers.nash_conv`): above 0 exactly
when some player gains by leaving the baseline, i.e. when a solver has
anything to find.

A tree whose decisions change no outcome has baseline NashConv 0; the
converse does not hold (a player may be indifferent between outcomes that
differ only in the other player's payoff), which is why both are counted.
Cost: O(nodes) array passes plus one Python pass over the nodes for the
outcome sets (kept as bit masks over the distinct payoff vectors).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from solvers.best_response import nash_conv
from solvers.policy import PolicyLike, check_policy, pure_policy
from solvers.tree import DECISION, TERMINAL, GameTree

DEFAULT_ATOL = 1e-9
"""Tolerance below which payoff differences and NashConv count as zero."""


@dataclasses.dataclass(frozen=True)
class TreeDegeneracy:
    """The degeneracy checks of one tree (see the module docstring).

    Attributes:
      constant_payoff: Every terminal pays the same vector.
      outcome_decisions: Decision nodes where two actions reach different sets
        of payoff vectors.
      value_decisions: Decision nodes where a one-shot deviation from the
        baseline changes the expected payoff vector.
      decision_nodes: Decision nodes in the tree.
      baseline_nash_conv: NashConv of the baseline profile.
    """

    constant_payoff: bool
    outcome_decisions: int
    value_decisions: int
    decision_nodes: int
    baseline_nash_conv: float

    @property
    def decision_changes_outcome(self) -> bool:
        """Some decision changes which payoffs are possible."""
        return self.outcome_decisions > 0

    @property
    def deviation_changes_value(self) -> bool:
        """Some one-shot deviation from the baseline changes an expected payoff."""
        return self.value_decisions > 0


@dataclasses.dataclass(frozen=True)
class DegeneracyCounts:
    """How many of several trees pass each check.

    Attributes:
      trees: Number of trees.
      constant_payoff: Trees whose terminals all pay the same vector.
      decision_changes_outcome: Trees where some decision changes the set of
        reachable payoff vectors.
      deviation_changes_value: Trees where some one-shot deviation from the
        baseline changes an expected payoff.
      baseline_nash_conv_positive: Trees where the baseline's NashConv > atol.
      per_tree: The checks of each tree, in input order.
    """

    trees: int
    constant_payoff: int
    decision_changes_outcome: int
    deviation_changes_value: int
    baseline_nash_conv_positive: int
    per_tree: tuple[TreeDegeneracy, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready counts (without the per-tree details)."""
        return {
            "trees": self.trees,
            "constant_payoff": self.constant_payoff,
            "decision_changes_outcome": self.decision_changes_outcome,
            "deviation_changes_value": self.deviation_changes_value,
            "baseline_nash_conv_positive": self.baseline_nash_conv_positive,
        }


def _outcome_masks(tree: GameTree) -> list[int]:
    """Per node, a bit mask of the distinct payoff vectors at the terminals below it."""
    _, ids = np.unique(tree.returns[tree.terminals], axis=0, return_inverse=True)
    masks = [0] * tree.num_nodes
    for t, i in zip(tree.terminals.tolist(), np.ravel(ids).tolist(), strict=True):
        masks[t] = 1 << i
    parent = tree.parent.tolist()
    for n in range(tree.num_nodes - 1, 0, -1):  # children after parents (breadth-first)
        masks[parent[n]] |= masks[n]
    return masks


def _conditional_values(tree: GameTree, probs: np.ndarray) -> np.ndarray:
    """``[num_nodes, num_players]`` expected returns below each node under ``probs``."""
    val = np.where((tree.kind == TERMINAL)[:, None], tree.returns, 0.0)
    weight = tree.chance_prob.copy()
    child = np.arange(1, tree.num_nodes)
    par = tree.parent[child]
    dec = tree.kind[par] == DECISION
    weight[child[dec]] = probs[tree.infoset[par[dec]], tree.child_rank[child[dec]]]
    for d in range(int(tree.depth.max()), 0, -1):
        nodes = np.flatnonzero(tree.depth == d)
        np.add.at(val, tree.parent[nodes], weight[nodes, None] * val[nodes])
    return val


def _children(tree: GameTree, node: int) -> range:
    first = int(tree.first_child[node])
    return range(first, first + int(tree.num_children[node]))


def tree_degeneracy(
    tree: GameTree, baseline: PolicyLike, *, atol: float = DEFAULT_ATOL
) -> TreeDegeneracy:
    """The degeneracy checks of one tree against a baseline profile.

    Args:
      tree: The tree.
      baseline: The reference profile (e.g. always the tone "any").
      atol: Differences at most this count as zero.

    Raises:
      ValueError: ``baseline`` does not fit the tree.
    """
    probs = check_policy(tree, baseline, caller="tree_degeneracy")
    term = tree.returns[tree.terminals]
    constant = bool(term.shape[0] == 0 or np.all(np.abs(term - term[0]) <= atol))
    masks = _outcome_masks(tree)
    values = _conditional_values(tree, probs)
    decisions = np.flatnonzero(tree.kind == DECISION)
    outcome = value = 0
    for h in decisions.tolist():
        kids = _children(tree, h)
        outcome += len({masks[c] for c in kids}) > 1
        v = values[list(kids)]
        value += bool(np.any(np.abs(v - v[0]) > atol))
    nc = nash_conv(tree, probs).nash_conv
    return TreeDegeneracy(
        constant_payoff=constant,
        outcome_decisions=int(outcome),
        value_decisions=int(value),
        decision_nodes=int(decisions.size),
        baseline_nash_conv=float(nc),
    )


def degeneracy_counts(
    trees: Sequence[GameTree],
    *,
    baseline_action: int | None = None,
    baseline: Callable[[GameTree], PolicyLike] | None = None,
    atol: float = DEFAULT_ATOL,
) -> DegeneracyCounts:
    """Counts the trees that pass each degeneracy check.

    Args:
      trees: Materialised trees (e.g. the subgames of one experiment variant).
      baseline_action: The action id the baseline plays at every information
        set (e.g. the tone "any"); give this or ``baseline``.
      baseline: ``baseline(tree) -> profile``, for baselines that are not one
        action everywhere.
      atol: Differences and NashConv at most this count as zero.

    Raises:
      ValueError: neither or both of ``baseline_action`` and ``baseline``, or
        ``baseline_action`` is not legal at some information set.
    """
    if (baseline_action is None) == (baseline is None):
        raise ValueError(
            "degeneracy_counts: pass exactly one of baseline_action= (an action id played "
            "everywhere) and baseline= (a function tree -> profile)"
        )
    if baseline is None:
        action = int(baseline_action)  # type: ignore[arg-type]

        def baseline(tree: GameTree) -> PolicyLike:
            try:
                return pure_policy(tree, lambda key, legal: action)
            except ValueError as err:
                raise ValueError(
                    f"degeneracy_counts: baseline_action={action} is not legal everywhere "
                    f"({err}); pass an action every information set allows, or baseline="
                ) from None

    per_tree = tuple(tree_degeneracy(t, baseline(t), atol=atol) for t in trees)
    return DegeneracyCounts(
        trees=len(per_tree),
        constant_payoff=sum(d.constant_payoff for d in per_tree),
        decision_changes_outcome=sum(d.decision_changes_outcome for d in per_tree),
        deviation_changes_value=sum(d.deviation_changes_value for d in per_tree),
        baseline_nash_conv_positive=sum(d.baseline_nash_conv > atol for d in per_tree),
        per_tree=per_tree,
    )


__all__ = [
    "DEFAULT_ATOL",
    "DegeneracyCounts",
    "TreeDegeneracy",
    "degeneracy_counts",
    "tree_degeneracy",
]
