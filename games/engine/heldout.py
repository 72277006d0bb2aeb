"""Held-out samples: the same decisions expanded again with LLM seeds not used for solving.

A game's seed node after an action has outcomes ``0 .. k-1``, each the LLM
seed (or the index a game turns into one) of the call that realises the
action. :class:`FreshSeeds` wraps a game so that the node has ``count`` other
outcomes, ``k .. k+count-1``, equally likely: the same decision structure,
answered by fresh samples. :func:`eval_subgames` expands those trees below the
roots a study already built (the roots themselves are not resampled), so the
solved policy can be scored on answers it never saw
(:func:`solvers.held_out.held_out_gain`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Generic

from games.engine.calls import Step
from games.engine.protocol import ExpandedNode, GameLogic, Outcomes, S
from games.engine.tree import expand, subgame_tree
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats

__all__ = ["FreshSeeds", "eval_subgames"]


@dataclasses.dataclass(frozen=True)
class FreshSeeds(Generic[S]):
    """``game`` with every seed node's outcomes replaced by ``count`` unused seeds.

    Attributes:
      game: The game.
      count: Seeds per seed node (each with probability ``1 / count``).
    """

    game: GameLogic[S]
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"FreshSeeds: count must be >= 1, got {self.count}")

    @property
    def num_players(self) -> int:
        return self.game.num_players

    def is_terminal(self, state: S) -> bool:
        return self.game.is_terminal(state)

    def current_player(self, state: S) -> int:
        return self.game.current_player(state)

    def legal_actions(self, state: S) -> Sequence[int]:
        return self.game.legal_actions(state)

    def chance_outcomes(self, state: S) -> Outcomes:
        return self.game.chance_outcomes(state)

    def seed_outcomes(self, state: S, action: int) -> Outcomes:
        used = self.game.seed_outcomes(state, action)
        if not used:
            return []
        first = max(int(o) for o, _ in used) + 1  # past every seed the study used
        return [(first + j, 1.0 / self.count) for j in range(self.count)]

    def step(self, state: S, action: int, outcome: int | None) -> Step[S] | S:
        return self.game.step(state, action, outcome)

    def information_state(self, state: S, player: int) -> str:
        return self.game.information_state(state, player)

    def returns(self, state: S) -> Sequence[float]:
        return self.game.returns(state)

    def action_to_string(self, state: S, action: int) -> str:
        return self.game.action_to_string(state, action)


def eval_subgames(
    game: GameLogic[S],
    roots: Sequence[S],
    model: ChatModel,
    *,
    count: int,
    game_name: str = "",
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[tuple[ExpandedNode[S], Any]]:
    """The held-out tree below each root: expanded with ``count`` fresh seeds per decision.

    Returns:
      ``(expanded root, game tree)`` per root, in order.
    """
    fresh: FreshSeeds[S] = FreshSeeds(game, count)
    nodes = expand(
        fresh,
        roots,
        model,
        policy=ParsePolicy(),
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )
    return [(n, subgame_tree(fresh, n, game_name=game_name)) for n in nodes]
