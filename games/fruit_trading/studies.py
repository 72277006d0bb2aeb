"""The fruit-trading studies beyond the paper: generalisation and the whole game.

(1) Generalisation — each subgame's CFR strategy, mapped to a tone
distribution per decision level (reach-weighted under that strategy), is
played in every other subgame and its CFR-Gain there is reported
(:func:`generalisation_study`). (2) The whole game — the initialisation becomes
a chance node over all subgames (so private information stays private); CFR
solves it, and its NashConv and CFR-Gain are compared with the per-subgame
solutions assembled into a legal whole-game profile, together with how much
the per-subgame solutions gain from knowing the subgame (the leak;
:func:`whole_game_study`, :func:`legal_assembly`). The baseline of every
CFR-Gain is sigma_LLM, always the tone "any" (:func:`any_baseline`).
:func:`games.fruit_trading.experiment.run_experiment` runs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from games.fruit_trading.rules import TONES
from games.fruit_trading.tree import Subgame, whole_game_tree
from solvers import (
    DECISION,
    GameTree,
    TreePolicy,
    cfr_gain,
    expected_values,
    nash_conv,
    pure_policy,
    reach_probabilities,
    studies,
)

#: The tone "any"'s action index: sigma_LLM's action, and the default of a mapped policy.
ANY = TONES.index("any")


def any_baseline(tree: GameTree) -> TreePolicy:
    """sigma_LLM: always the tone "any"."""
    return pure_policy(tree, lambda key, legal: ANY)


def generalisation_study(
    trees: Sequence[GameTree], policies: Sequence[TreePolicy]
) -> dict[str, Any]:
    """CFR-Gain of each subgame's strategy on its own and on every other subgame.

    Strategies are mapped to other subgames by decision level
    (:func:`solvers.studies.generalisation_study`); missing levels play "any".
    """
    return studies.generalisation_study(
        trees, policies, any_baseline, default_action=ANY, num_actions=len(TONES)
    ).to_dict()


def whole_game_study(
    subgames: Sequence[Subgame], policies: Sequence[TreePolicy], iterations: int, cfr_variant: str
) -> dict[str, Any]:
    """Solves the whole game and compares it with the per-subgame solutions.

    Beyond :func:`solvers.studies.whole_game_study` (whole-game CFR against the
    per-subgame policies assembled first-come at shared information sets), the
    ``per_subgame_in_whole_game`` entry measures the per-subgame strategies as
    a legal whole-game strategy: at an information set several subgames share,
    a player cannot know which subgame it is in, so it plays the mixture of
    their policies weighted by how likely each subgame is to reach that
    information set (each subgame's reach under its own CFR profile; uniform
    where none reaches it). Reported:

    * ``nash_conv`` and ``cfr_gain`` of that legal profile in the whole game;
    * ``oracle_value`` — each player's expected payoff when every subgame plays
      its own CFR policy (a profile that may condition on the opponent's
      private information through the subgame), ``value`` — the same for the
      legal mixture, and ``leak = oracle_value - value``: what the per-subgame
      strategies gain from knowing what they should not;
    * ``policy_disagreement`` — at shared information sets, the reach-weighted
      mean total-variation distance between a subgame's policy and the mixture.
    """
    config = subgames[0].config
    tree = whole_game_tree([sg.root for sg in subgames], config)
    sub_trees = [sg.tree for sg in subgames]
    out = studies.whole_game_study(
        tree, sub_trees, policies, any_baseline, iterations=iterations, cfr_variant=cfr_variant
    ).to_dict()
    out["names"] = config.names
    out["pools"] = config.pools
    out["per_subgame_in_whole_game"] = legal_assembly(tree, sub_trees, policies)
    return out


def legal_assembly(
    whole: GameTree, sub_trees: Sequence[GameTree], policies: Sequence[TreePolicy]
) -> dict[str, Any]:
    """The per-subgame policies as one legal whole-game profile, and the leak.

    See :func:`whole_game_study` for what is measured.
    """
    mass = np.zeros(whole.num_infosets)
    mixed = np.zeros((whole.num_infosets, whole.max_actions))
    members: list[list[tuple[float, np.ndarray]]] = [[] for _ in range(whole.num_infosets)]
    oracle = np.zeros(whole.num_players)
    for tree, pol in zip(sub_trees, policies, strict=True):
        oracle += expected_values(tree, pol) / len(sub_trees)
        reach = reach_probabilities(tree, pol)
        dec = np.flatnonzero(tree.kind == DECISION)
        r = np.bincount(tree.infoset[dec], weights=reach[dec], minlength=tree.num_infosets)
        index = whole.key_to_infoset
        for s, key in enumerate(tree.infoset_keys):
            w = index[key]
            members[w].append((float(r[s]), pol.probs[s]))
    shared = 0
    disagreement_num = disagreement_den = 0.0
    for w, group in enumerate(members):
        weights = np.array([g[0] for g in group])
        rows = np.stack([g[1] for g in group])
        if weights.sum() <= 0:
            weights = np.ones(len(group))
        mixed[w] = weights @ rows / weights.sum()
        mass[w] = weights.sum()
        if len(group) > 1:
            shared += 1
            tv = 0.5 * np.abs(rows - mixed[w]).sum(axis=1)
            disagreement_num += float(weights @ tv)
            disagreement_den += float(weights.sum())
    legal = TreePolicy(mixed)
    value = expected_values(whole, legal)
    return {
        "shared_infosets": shared,
        "nash_conv": nash_conv(whole, legal).nash_conv,
        "cfr_gain": cfr_gain(whole, legal, any_baseline(whole)).cfr_gain,
        "oracle_value": oracle.tolist(),
        "value": value.tolist(),
        "leak": (oracle - value).tolist(),
        "policy_disagreement": (
            disagreement_num / disagreement_den if disagreement_den > 0 else 0.0
        ),
    }


__all__ = [
    "ANY",
    "any_baseline",
    "generalisation_study",
    "legal_assembly",
    "whole_game_study",
]
