"""Materialising fruit-trading game trees with batched, cached LLM calls.

The tree of one initialisation (a *subgame*, Lindström et al. Fig. 4) is
expanded by the engine (:func:`games.engine.tree.expand`): breadth-first, at
every level each open node is stepped with each tone and each LLM seed, and
all the LLM calls of the level go out as concurrent, de-duplicated batches.
Through the persistent cache, the number of backend calls equals the number
of distinct requests, and a re-run makes none.

The result is a :class:`solvers.GameTree` whose information sets, actions
and chance outcomes are exactly those of the OpenSpiel game
``python_fruit_trading`` (the conformance suite checks that
``solvers.materialize`` of that game gives the same tree), plus every
dialogue state for the reports.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.engine import tree as engine_tree
from games.engine.calls import Step
from games.engine.protocol import ExpandedNode
from games.fruit_trading.dialogue import (
    Config,
    DialogueLogic,
    DialogueState,
    initial_state,
    opening_step,
)
from games.fruit_trading.rules import Scenario
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from solvers import GameTree

GAME_NAME = "python_fruit_trading"


class Subgame(engine_tree.Subgame[DialogueState]):
    """One initialisation's expanded negotiation and its game tree."""

    @property
    def scenario(self) -> Scenario:
        return self.root.state.scenario

    @property
    def config(self) -> Config:
        return self.root.state.config


def expand(
    scenarios: Sequence[Scenario],
    config: Config,
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[ExpandedNode[DialogueState]]:
    """Expands the negotiations of several initialisations together, opening first."""
    return engine_tree.expand_from_steps(
        DialogueLogic(config),
        [opening_step(initial_state(s, config)) for s in scenarios],
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )


def subgame_tree(node: ExpandedNode[DialogueState], config: Config) -> GameTree:
    """The game tree of one initialisation."""
    return engine_tree.subgame_tree(DialogueLogic(config), node, game_name=GAME_NAME)


def whole_game_tree(nodes: Sequence[ExpandedNode[DialogueState]], config: Config) -> GameTree:
    """The whole game: a chance node over the initialisations, then each negotiation.

    Information sets are keyed by the information-state strings, which hold a
    player's own private information, own tones and the dialogue -- never the
    opponent's private information. CFR on this tree therefore conditions on
    the opponent's type only as far as the dialogue reveals it (which it may:
    what the opponent asks for depends on its valuations). With the paper's
    random names (``Config.names == "random"``) the names in the state make
    every information set unique to its initialisation, so the whole game
    decomposes into the subgames; with ``names="fixed"`` initialisations that
    share a player's private information share its opening information sets.
    """
    return engine_tree.whole_game_tree(
        DialogueLogic(config), nodes, game_name=f"{GAME_NAME}(init=-1)"
    )


def root_steps(inits: Sequence[int], config: Config) -> list[Step[DialogueState]]:
    """The opening step of each initialisation (the roots of its subgame)."""
    return [opening_step(initial_state(config.scenario(i), config)) for i in inits]


def build_subgames(
    inits: Sequence[int],
    config: Config,
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[Subgame]:
    """Expands and materialises the subgame of each initialisation (:func:`games.engine.tree.build_subgames`).

    Args:
      inits: Initialisation indices.
      config: Game settings (variant, messages, seeds).
      model: The chat model (wrap it in the cache for resumable runs).
      policy: Re-ask policy for unparseable answers.
      stats: Parse counters (re-asks and fallbacks) to update.
      max_concurrency: Bound on concurrent LLM calls.
      progress: Show progress bars.
      label: Progress-bar label.
    """
    return engine_tree.build_subgames(
        DialogueLogic(config),
        root_steps(inits, config),
        model,
        game_name=GAME_NAME,
        subgame=Subgame,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )
