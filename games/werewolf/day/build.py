"""Batched building of Werewolf days: each day's expanded tree and game tree, and one tree
over all days (a uniform chance node, then each day).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from games.engine import tree as engine_tree
from games.engine.protocol import ExpandedNode
from games.werewolf.day.state import SHORT_NAME, DayRoot, DaySettings, DayState
from games.werewolf.day.steps import DayGame, root_step
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from solvers import GameTree

__all__ = [
    "DaySubgame",
    "build_days",
]


# --- batched building (the solve command) ----------------------------------------


@dataclasses.dataclass(frozen=True)
class DaySubgame:
    """One day's expanded tree and its game tree."""

    root: ExpandedNode[DayState]
    tree: GameTree

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
    """Expands the trees of several days together (batched, cached calls)."""
    game = DayGame(settings)
    nodes = engine_tree.expand_from_steps(
        game,
        [root_step(settings, s) for s in seeds],
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )
    return [
        DaySubgame(root=n, tree=engine_tree.subgame_tree(game, n, game_name=n.state.root.label()))
        for n in nodes
    ]


def whole_day_tree(subgames: Sequence[DaySubgame]) -> GameTree:
    """A uniform chance node over the days, then each day's tree."""
    game = DayGame(subgames[0].day_root.settings)
    return engine_tree.whole_game_tree(
        game, [sg.root for sg in subgames], game_name=f"{SHORT_NAME}(game_seed=-1)"
    )
