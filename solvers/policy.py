"""Behaviour-strategy profiles on a :class:`~solvers.tree.GameTree`.

A behaviour strategy (Kuhn 1953) assigns each information set a probability
distribution over its legal actions. :class:`TreePolicy` stores a whole
profile (all players) as one ``float64[num_infosets, max_actions]`` array:
row ``s`` holds the probabilities of ``tree.infoset_actions[s]`` in that
order, columns past ``tree.infoset_num_actions[s]`` are zero.

Helpers build common profiles (:func:`uniform_policy`, :func:`pure_policy`,
:func:`policy_from_fn`, :func:`policy_from_dict`, :func:`merge_policies`) and
convert to and from OpenSpiel's ``TabularPolicy``
(:func:`to_tabular_policy`, :func:`from_tabular_policy`) through the
information-state strings stored in the tree.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from solvers.tree import GameTree

NORMALIZATION_ATOL = 1e-6
"""Tolerance on ``sum(row) == 1`` when validating policies."""


@dataclasses.dataclass(frozen=True, eq=False)
class TreePolicy:
    """A behaviour-strategy profile of every player on one tree.

    Attributes:
        probs: Read-only ``float64[num_infosets, max_actions]``; row ``s`` is
            the distribution over ``tree.infoset_actions[s]``.
    """

    probs: np.ndarray

    def __post_init__(self) -> None:
        probs = np.array(self.probs, dtype=np.float64, copy=True)
        if probs.ndim != 2:
            raise ValueError(
                f"TreePolicy: probs must be 2-D [num_infosets, max_actions], got shape {probs.shape}"
            )
        probs.setflags(write=False)
        object.__setattr__(self, "probs", probs)

    def __getstate__(self) -> dict:
        # The validation memo (a weak reference to a tree) is not pickled.
        state = dict(self.__dict__)
        state.pop(_CHECKED, None)
        return state

    def action_probabilities(self, tree: GameTree, key: str) -> dict[int, float]:
        """``{action id: probability}`` at the information set ``key``."""
        s = tree.key_to_infoset.get(key)
        if s is None:
            raise ValueError(
                f"TreePolicy.action_probabilities: {key!r} is not an information set of {tree!r}"
            )
        return {a: float(self.probs[s, j]) for j, a in enumerate(tree.legal_actions(s))}


_CHECKED = "_checked_for"
"""Attribute of a :class:`TreePolicy` remembering the tree it was validated for."""

TRUSTED_ATOL = 1e-12
"""Normalisation tolerance :func:`mark_checked` vouches for."""


def mark_checked(policy: TreePolicy, tree: GameTree, atol: float = TRUSTED_ATOL) -> TreePolicy:
    """Records that ``policy`` is valid for ``tree`` (rows normalised within ``atol``).

    :func:`check_policy` then returns the probabilities without checking them
    again: a :class:`TreePolicy` is immutable (its array is read-only), so a
    check stays true. The record is a weak reference, so it never keeps a
    tree alive, and it is not pickled. Returns ``policy``.
    """
    object.__setattr__(policy, _CHECKED, (weakref.ref(tree), float(atol)))
    return policy


def _was_checked(policy: TreePolicy, tree: GameTree, atol: float) -> bool:
    memo = policy.__dict__.get(_CHECKED)
    return memo is not None and memo[0]() is tree and memo[1] <= atol


PolicyLike = TreePolicy | np.ndarray
"""A profile on a tree: a :class:`TreePolicy` or its probability array. Functions
that take one also accept an OpenSpiel ``TabularPolicy`` (Python or C++), which
:func:`check_policy` converts with :func:`from_tabular_policy`."""


def _is_tabular(policy) -> bool:
    return not isinstance(policy, (TreePolicy, np.ndarray)) and (
        hasattr(policy, "state_lookup")
        or hasattr(policy, "policy_table")
        or hasattr(policy, "get_state_policy")
    )


def _legal_mask(tree: GameTree) -> np.ndarray:
    return np.arange(tree.max_actions)[None, :] < tree.infoset_num_actions[:, None]


def check_policy(
    tree: GameTree,
    policy: PolicyLike,
    *,
    caller: str = "check_policy",
    name: str = "policy",
    atol: float = NORMALIZATION_ATOL,
) -> np.ndarray:
    """Validates a profile against ``tree`` and returns its probability array.

    Args:
        tree: The tree.
        policy: A :class:`TreePolicy`, a ``[num_infosets, max_actions]``
            array, or an OpenSpiel ``TabularPolicy`` (converted with
            :func:`from_tabular_policy`).
        caller: Function name used in error messages.
        name: What the profile is to the caller (``"the baseline"``), named
            in error messages.
        atol: Tolerance on each row summing to one.

    Returns:
        A C-contiguous ``float64`` array (illegal columns set to zero).

    Raises:
        ValueError: If the shape does not match the tree, an entry is
            negative or not finite, probability sits on an illegal action, or
            a row does not sum to one.
    """
    if isinstance(policy, TreePolicy) and _was_checked(policy, tree, atol):
        # Validated before for this tree (or built valid by a solver): same result as below.
        return np.array(policy.probs, dtype=np.float64, order="C", copy=True)
    if _is_tabular(policy):
        try:
            policy = from_tabular_policy(tree, policy, atol=atol)
        except ValueError as error:
            raise ValueError(
                f"{caller}: {name} is an OpenSpiel policy that does not fit the tree ({error}); pass "
                "a policy of the game the tree was materialised from"
            ) from None
    if not isinstance(policy, (TreePolicy, np.ndarray, list, tuple)):
        raise ValueError(
            f"{caller}: {name} is a {type(policy).__name__}; pass a TreePolicy, a [num_infosets, "
            "max_actions] array or an OpenSpiel TabularPolicy"
        )
    probs = policy.probs if isinstance(policy, TreePolicy) else np.asarray(policy, dtype=np.float64)
    expected = (tree.num_infosets, tree.max_actions)
    if probs.shape != expected:
        raise ValueError(
            f"{caller}: {name} has shape {probs.shape} but the tree has {expected[0]} information sets and "
            f"{expected[1]} action columns, so {name} was built for another tree; build it for this tree "
            "(e.g. uniform_policy(tree) or from_tabular_policy(tree, tabular))"
        )
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise ValueError(
            f"{caller}: {name} has negative or non-finite probabilities; pass probabilities in [0, 1]"
        )
    mask = _legal_mask(tree)
    if (probs[~mask] != 0).any():
        raise ValueError(
            f"{caller}: {name} puts probability on padding columns beyond an information set's legal actions; "
            "zero columns j >= tree.infoset_num_actions[s]"
        )
    sums = probs.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if bad.size:
        keys = [tree.infoset_keys[int(s)] for s in bad[:3]]
        raise ValueError(
            f"{caller}: {name} has {bad.size} information sets that are not normalised (e.g. {keys!r} sum to "
            f"{[float(sums[s]) for s in bad[:3]]}); make each row sum to 1 over the legal actions, "
            "e.g. normalize_policy(tree, probs)"
        )
    if isinstance(policy, TreePolicy):
        mark_checked(policy, tree, atol)
    return np.array(probs, dtype=np.float64, order="C", copy=True)  # writable: one kernel signature


def normalize_policy(tree: GameTree, probs: np.ndarray) -> TreePolicy:
    """Normalises non-negative weights per information set (uniform if all zero)."""
    probs = np.where(_legal_mask(tree), np.asarray(probs, dtype=np.float64), 0.0)
    if (probs < 0).any() or not np.isfinite(probs).all():
        raise ValueError("normalize_policy: weights must be finite and >= 0")
    sums = probs.sum(axis=1, keepdims=True)
    uniform = _legal_mask(tree) / tree.infoset_num_actions[:, None]
    return TreePolicy(np.where(sums > 0, probs / np.where(sums > 0, sums, 1.0), uniform))


def uniform_policy(tree: GameTree) -> TreePolicy:
    """The profile playing every legal action with equal probability."""
    return TreePolicy(_legal_mask(tree) / tree.infoset_num_actions[:, None].astype(np.float64))


def pure_policy(tree: GameTree, choose: Callable[[str, tuple[int, ...]], int]) -> TreePolicy:
    """A pure profile: ``choose(infoset_key, legal_actions)`` returns the action id.

    Example: the CFR-Gain baseline of the chat games always plays tone
    ``ANY``: ``pure_policy(tree, lambda key, legal: ANY)``.

    Raises:
        ValueError: If ``choose`` returns an action that is not legal.
    """
    probs = np.zeros((tree.num_infosets, tree.max_actions))
    for s, key in enumerate(tree.infoset_keys):
        legal = tree.legal_actions(s)
        a = choose(key, legal)
        try:
            probs[s, legal.index(int(a))] = 1.0
        except ValueError:
            raise ValueError(
                f"pure_policy: choose returned action {a!r} at information set {key!r}, whose legal actions are "
                f"{legal}; return one of them"
            ) from None
    return TreePolicy(probs)


def policy_from_fn(
    tree: GameTree,
    fn: Callable[[str, tuple[int, ...]], Mapping[int, float] | Sequence[float] | np.ndarray],
    *,
    atol: float = NORMALIZATION_ATOL,
) -> TreePolicy:
    """Builds a profile from ``fn(infoset_key, legal_actions)``.

    ``fn`` returns either ``{action id: probability}`` (missing actions get 0)
    or a sequence (or array) of probabilities aligned with ``legal_actions``.

    Raises:
        ValueError: If a returned distribution is not normalised or names an
            illegal action.
    """
    probs = np.zeros((tree.num_infosets, tree.max_actions))
    for s, key in enumerate(tree.infoset_keys):
        legal = tree.legal_actions(s)
        out = fn(key, legal)
        if isinstance(out, Mapping):
            index = {a: j for j, a in enumerate(legal)}
            for a, p in out.items():
                if int(a) not in index:
                    if p == 0:
                        continue
                    raise ValueError(
                        f"policy_from_fn: action {a!r} is not legal at {key!r} (legal: {legal}); drop it or give it 0"
                    )
                probs[s, index[int(a)]] = float(p)
        else:
            row = np.asarray(out, dtype=np.float64)
            if row.shape != (len(legal),):
                raise ValueError(
                    f"policy_from_fn: got {row.shape[0] if row.ndim else 'a scalar'} probabilities at {key!r} for "
                    f"{len(legal)} legal actions; return one per legal action"
                )
            probs[s, : len(legal)] = row
    return TreePolicy(check_policy(tree, probs, caller="policy_from_fn", atol=atol))


def policy_from_dict(
    tree: GameTree,
    mapping: Mapping[str, Mapping[int, float]],
    *,
    default: TreePolicy | None = None,
    atol: float = NORMALIZATION_ATOL,
) -> TreePolicy:
    """Builds a profile from ``{infoset_key: {action: probability}}``.

    Args:
        tree: The tree.
        mapping: Distributions keyed by information-state string.
        default: Profile used for information sets missing from ``mapping``;
            if None, missing information sets raise.
        atol: Normalisation tolerance.

    Raises:
        ValueError: If information sets are missing (and no default), a key
            is unknown, or a distribution is not normalised.
    """
    unknown = [k for k in mapping if k not in tree.key_to_infoset]
    if unknown:
        raise ValueError(
            f"policy_from_dict: {len(unknown)} keys are not information sets of the tree (e.g. {unknown[:3]!r}); "
            "use the tree's infoset_keys"
        )
    missing = [k for k in tree.infoset_keys if k not in mapping]
    if missing and default is None:
        raise ValueError(
            f"policy_from_dict: {len(missing)} information sets are missing (e.g. {missing[:3]!r}); add them or "
            "pass default=uniform_policy(tree)"
        )
    base = default.probs if default is not None else np.zeros((tree.num_infosets, tree.max_actions))

    def fn(key: str, legal: tuple[int, ...]) -> Mapping[int, float] | np.ndarray:
        if key in mapping:
            return mapping[key]
        return base[tree.key_to_infoset[key], : len(legal)]

    return policy_from_fn(tree, fn, atol=atol)


def merge_policies(tree: GameTree, policies: Sequence[PolicyLike]) -> TreePolicy:
    """The profile in which player ``i`` plays ``policies[i]``.

    Raises:
        ValueError: If the number of policies is not ``tree.num_players``.
    """
    if len(policies) != tree.num_players:
        raise ValueError(
            f"merge_policies: got {len(policies)} policies for {tree.num_players} players; pass one per player"
        )
    arrays = [check_policy(tree, p, caller="merge_policies") for p in policies]
    owner = tree.infoset_player
    out = np.zeros((tree.num_infosets, tree.max_actions))
    for i, arr in enumerate(arrays):
        out[owner == i] = arr[owner == i]
    return TreePolicy(out)


def to_tabular_policy(tree: GameTree, policy: PolicyLike, game):
    """Converts a profile to an OpenSpiel ``TabularPolicy``.

    Args:
        tree: The tree the policy belongs to (materialised from ``game``).
        policy: The profile.
        game: The ``pyspiel.Game``, or an existing
            ``open_spiel.python.policy.TabularPolicy`` to copy and fill.

    Returns:
        A new ``TabularPolicy``; information states not in the tree keep the
        uniform distribution.

    Raises:
        ValueError: If an information set of the tree is not a state of the
            game's tabular policy.
    """
    from open_spiel.python import policy as os_policy

    probs = check_policy(tree, policy, caller="to_tabular_policy")
    if isinstance(game, os_policy.TabularPolicy):
        tabular = game.__copy__()
    else:
        tabular = os_policy.TabularPolicy(game)
    lookup = tabular.state_lookup
    rows = np.empty(tree.num_infosets, dtype=np.int64)
    for s, key in enumerate(tree.infoset_keys):
        row = lookup.get(key)
        if row is None:
            raise ValueError(
                f"to_tabular_policy: information set {key!r} is not a state of the game's TabularPolicy; "
                "pass the game the tree was materialised from"
            )
        rows[s] = row
    table = tabular.action_probability_array
    for s in range(tree.num_infosets):
        n = int(tree.infoset_num_actions[s])
        table[rows[s]] = 0.0
        table[rows[s], tree.infoset_actions[s, :n]] = probs[s, :n]
    return tabular


def from_tabular_policy(tree: GameTree, tabular, *, atol: float = NORMALIZATION_ATOL) -> TreePolicy:
    """Converts an OpenSpiel tabular policy to a :class:`TreePolicy`.

    Args:
        tree: The tree.
        tabular: An ``open_spiel.python.policy.TabularPolicy``, or a C++
            ``pyspiel`` policy (``policy_table()`` or ``get_state_policy(key)``,
            e.g. ``pyspiel.CFRSolver(game).average_policy()``).
        atol: Normalisation tolerance.

    Raises:
        ValueError: If an information set of the tree is missing from the
            tabular policy or its probabilities are not normalised.
    """
    probs = np.zeros((tree.num_infosets, tree.max_actions))
    if hasattr(tabular, "state_lookup"):
        lookup = tabular.state_lookup
        table = tabular.action_probability_array
        for s, key in enumerate(tree.infoset_keys):
            row = lookup.get(key)
            if row is None:
                raise ValueError(
                    f"from_tabular_policy: information set {key!r} is missing from the TabularPolicy; build the "
                    "policy for the game the tree was materialised from"
                )
            n = int(tree.infoset_num_actions[s])
            probs[s, :n] = table[row, tree.infoset_actions[s, :n]]
    elif hasattr(tabular, "policy_table") or hasattr(tabular, "get_state_policy"):
        table = tabular.policy_table() if hasattr(tabular, "policy_table") else None
        for s, key in enumerate(tree.infoset_keys):
            entries = table.get(key) if table is not None else tabular.get_state_policy(key)
            if not entries:
                raise ValueError(
                    f"from_tabular_policy: information set {key!r} is missing from the policy; build the "
                    "policy for the game the tree was materialised from"
                )
            index = {a: j for j, a in enumerate(tree.legal_actions(s))}
            for a, p in entries:
                if a in index:
                    probs[s, index[a]] = p
    else:
        raise ValueError(
            "from_tabular_policy: expected an open_spiel TabularPolicy (state_lookup) or a pyspiel.TabularPolicy "
            f"(policy_table), got {type(tabular).__name__}"
        )
    return TreePolicy(check_policy(tree, probs, caller="from_tabular_policy", atol=atol))
