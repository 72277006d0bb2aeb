"""Batched building of Werewolf days: each day's expanded tree and game tree."""

from __future__ import annotations

from collections.abc import Sequence

from games.engine import tree as engine_tree
from games.werewolf.day.roots import root_step
from games.werewolf.day.state import DayRoot, DaySettings, DayState
from games.werewolf.day.steps import DayLogic
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats

__all__ = [
    "DaySubgame",
    "build_days",
    "day_tree_name",
]


# --- batched building (the solve command) ----------------------------------------


class DaySubgame(engine_tree.Subgame[DayState]):
    """One day's expanded tree and its game tree."""

    @property
    def day_root(self) -> DayRoot:
        return self.root.state.root


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


def day_tree_name(state: DayState) -> str:
    """A day tree's name: its root's label."""
    return state.root.label()
