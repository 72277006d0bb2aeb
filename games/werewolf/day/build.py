"""Batched building of Werewolf days: each day's expanded tree and game tree."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from games.engine import tree as engine_tree
from games.werewolf.day.roots import root_step
from games.werewolf.day.state import DayNode, DaySettings, DayState, DealChance
from games.werewolf.day.steps import DayLogic
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats

__all__ = [
    "DaySubgame",
    "InfosetFacts",
    "build_days",
    "day_tree_name",
]


# --- batched building (the solve command) ----------------------------------------


@dataclasses.dataclass(frozen=True)
class InfosetFacts:
    """What one information set of a day tree spans.

    Attributes:
      player: The seat deciding.
      role: Its role (the same at every node of the set: a seat knows its role).
      turn: The statements made before the decision.
      deals: The deals (root chance outcomes) its nodes are reached in.
    """

    player: int
    role: str
    turn: int
    deals: frozenset[int]


class DaySubgame(engine_tree.Subgame[DayNode]):
    """One day's expanded tree and its game tree (the root: the deals' chance node)."""

    @property
    def day_root(self) -> DealChance:
        state = self.root.state
        if not isinstance(state, DealChance):  # pragma: no cover - every day tree's root is
            raise TypeError("DaySubgame: the root is not the deals' chance node")
        return state

    @functools.cached_property
    def infosets(self) -> dict[int, InfosetFacts]:
        """Per information set of the game tree, its seat, role, turn and deals.

        Raises:
          ValueError: a set's nodes disagree on the seat's role (the information
            state would not hold what the seat knows).
        """
        logic = DayLogic(self.day_root.settings)
        index = self.tree.key_to_infoset
        seen: dict[int, tuple[int, str, int, set[int]]] = {}
        for state in self.states():
            if not isinstance(state, DayState) or state.is_terminal():
                continue
            player = state.speaker()
            s = index[logic.information_state(state, player)]
            role = state.root.role(player)
            entry = seen.setdefault(s, (player, role, len(state.statements), set()))
            if entry[1] != role or entry[0] != player:
                raise ValueError(
                    f"DaySubgame.infosets: information set {s} holds P{player} as "
                    f"{entry[1]} and as {role}"
                )
            entry[3].add(state.root.deal)
        return {
            s: InfosetFacts(player=p, role=r, turn=t, deals=frozenset(d))
            for s, (p, r, t, d) in sorted(seen.items())
        }

    def deals_per_infoset(self) -> dict[int, float]:
        """The mean number of deals an information set spans, per turn (0: the first speaker)."""
        by: dict[int, list[int]] = {}
        for f in self.infosets.values():
            by.setdefault(f.turn, []).append(len(f.deals))
        return {t: sum(v) / len(v) for t, v in sorted(by.items())}


def build_days(
    settings: DaySettings,
    seeds: Sequence[int],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[DaySubgame]:
    """Expands the trees of several days together (:func:`games.engine.tree.build_subgames`)."""
    return engine_tree.build_subgames(
        DayLogic(settings),
        [root_step(settings, s) for s in seeds],
        model,
        game_name=day_tree_name,
        subgame=DaySubgame,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )


def day_tree_name(state: DayNode) -> str:
    """A day tree's name: its root's label."""
    return state.label() if isinstance(state, DealChance) else state.root.label()
