"""Every decision point of the solved days, for readers (``decisions.json``).

``werewolf solve`` keeps per-group aggregates in ``summary.json``; this file
keeps the decisions themselves, one record per decision node of every day
tree and opponent model: the deal (the root chance outcome), who speaks (seat,
role), what was said before (tone, act and text of each earlier statement), the
probability that CFR's average profile reaches the node (chance: the deals and
the uniform LLM seeds), its information set, and CFR's probability of each
(tone, act) pair — ``None`` where the act is not legal there. Nodes of one
information set (one per deal the seat cannot tell apart, and per unseen
word) share their probabilities. ``features`` is the decision's key for a
full-game CFR agent (:func:`games.werewolf.day.features.decision_features`). ``werewolf view`` draws it (:mod:`games.werewolf.view.solve`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from games.engine.results import ModelLabel
from games.werewolf.day.build import DaySubgame
from games.werewolf.day.features import decision_features
from games.werewolf.day.state import DealChance
from games.werewolf.day.steps import DayLogic
from solvers import TreePolicy

__all__ = ["FORMAT", "decision_points", "decisions_document"]

FORMAT = "gt-llm.werewolf.day_decisions/2"


def decision_points(subgame: DaySubgame, policy: TreePolicy) -> Iterator[dict[str, Any]]:
    """The decision records of one solved day, parents before children.

    Args:
      subgame: The day's expanded tree and game tree.
      policy: CFR's average policy on ``subgame.tree``.
    """
    root = subgame.day_root
    game = DayLogic(root.settings)
    ab = root.settings.abstraction
    tree = subgame.tree
    index = tree.key_to_infoset

    def walk(node, reach: float) -> Iterator[dict[str, Any]]:
        state = node.state
        if isinstance(state, DealChance):
            for (deal, _), child in sorted(node.children.items(), key=lambda kv: kv[0]):
                yield from walk(child, reach * dict(state.probabilities())[deal])
            return
        if game.is_terminal(state) or not node.children:
            return
        player = game.current_player(state)
        s = index[game.information_state(state, player)]
        legal = [int(a) for a in tree.legal_actions(s)]
        probs = {a: float(policy.probs[s, r]) for r, a in enumerate(legal)}
        grid: list[list[float | None]] = [[None] * len(ab.acts) for _ in ab.tones]
        concrete: dict[str, str] = {}
        for a, p in probs.items():
            tone, token = ab.decode(a)
            grid[ab.tones.index(tone)][ab.acts.index(token)] = p
            act = state.options[a]
            if act is not None:
                concrete[token] = act.describe()
        partners = [q for q in state.root.werewolves() if q != player]
        today = [(st.speaker, st.act) for st in state.statements]
        yield {
            "deal": state.root.deal,
            "features": decision_features(state.root.role(player), player, partners, today),
            "infoset": s,
            "speaker": player,
            "role": state.root.role(player),
            "turn": len(state.statements),
            "reach": reach,
            "history": [
                {
                    "speaker": st.speaker,
                    "tone": st.act.tone,
                    "act": st.act.describe(),
                    "text": st.text,
                }
                for st in state.statements
            ],
            "probs": grid,
            "acts": concrete,
        }
        seeds = dict(game.seed_outcomes(state, 0))
        for (action, outcome), child in sorted(node.children.items(), key=lambda kv: kv[0]):
            p = probs.get(int(action), 0.0) * seeds.get(outcome if outcome is not None else 0, 1.0)
            yield from walk(child, reach * p)

    yield from walk(subgame.root, 1.0)


def decisions_document(
    per_model: Sequence[tuple[str, Sequence[DaySubgame], Sequence[TreePolicy]]],
    *,
    label: ModelLabel,
) -> dict[str, Any]:
    """``decisions.json``: every day's decision points per opponent model.

    Args:
      per_model: ``(opponent model, days, CFR policies)`` per listeners' model.
      label: The model label (:func:`games.engine.results.model_label`).
    """
    days = []
    tones: Sequence[str] = ()
    acts: Sequence[str] = ()
    for model, subgames, policies in per_model:
        for sg, pol in zip(subgames, policies, strict=True):
            ab = sg.day_root.settings.abstraction
            tones, acts = ab.tones, ab.acts
            days.append(
                {
                    "opponent_model": model,
                    **sg.day_root.to_dict(),
                    "decisions": list(decision_points(sg, pol)),
                }
            )
    return {
        "format": FORMAT,
        "backend": label.backend,
        "model": label.model,
        "label": label.label,
        "tones": list(tones),
        "acts": list(acts),
        "days": days,
    }
