"""Materialising fruit-trading game trees with batched, cached LLM calls.

The tree of one initialisation (a *subgame*, Lindström et al. Fig. 4) is
expanded breadth-first: at every level, each open node is stepped with each
tone and each LLM seed, and all the LLM calls of the level go out as
concurrent, de-duplicated batches (:func:`games.engine.calls.run_batched`).
Through the persistent cache, the number of backend calls equals the number
of distinct requests, and a re-run makes none.

The result is a :class:`solvers.GameTree` whose information sets, actions
and chance outcomes are exactly those of the OpenSpiel game
``python_fruit_trading`` (tests check that ``solvers.materialize`` of that
game gives the same tree), plus every dialogue state for the reports.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from tqdm.auto import tqdm

from games.engine.calls import run_batched
from games.fruit_trading.dialogue import (
    Config,
    DialogueState,
    initial_state,
    opening_step,
    step,
)
from games.fruit_trading.rules import TONES, Scenario, make_scenario
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from solvers import GameTree, TreeBuilder

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ExpandedNode:
    """A dialogue state and its children by (tone, seed)."""

    state: DialogueState
    children: dict[tuple[int, int], ExpandedNode]


@dataclasses.dataclass(frozen=True)
class Subgame:
    """One initialisation's expanded negotiation and its game tree."""

    scenario: Scenario
    config: Config
    root: ExpandedNode
    tree: GameTree

    def states(self) -> list[DialogueState]:
        """Every dialogue state after a message, root first, breadth-first."""
        out, queue = [], [self.root]
        while queue:
            node = queue.pop(0)
            out.append(node.state)
            queue.extend(node.children[k] for k in sorted(node.children))
        return out


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
) -> list[ExpandedNode]:
    """Expands the negotiations of several initialisations together, level by level."""
    stats = stats if stats is not None else ParseStats()
    roots_state = run_batched(
        [opening_step(initial_state(s, config)) for s in scenarios],
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
    )
    roots = [ExpandedNode(s, {}) for s in roots_state]
    frontier = list(roots)
    level = 1
    while frontier:
        jobs = [
            (node, t, seed)
            for node in frontier
            if not node.state.is_terminal()
            for t in range(len(TONES))
            for seed in range(config.num_seeds)
        ]
        if not jobs:
            break
        with tqdm(
            total=len(jobs),
            desc=f"{label} message {level + 1}".strip(),
            unit="branch",
            disable=not progress,
            leave=False,
        ) as bar:
            # Steps are advanced in chunks so the bar moves on long levels.
            chunk = max(1, min(len(jobs), 2048))
            children: list[DialogueState] = []
            for a in range(0, len(jobs), chunk):
                part = jobs[a : a + chunk]
                children.extend(
                    run_batched(
                        [step(n.state, TONES[t], seed) for n, t, seed in part],
                        model,
                        policy=policy,
                        stats=stats,
                        max_concurrency=max_concurrency,
                    )
                )
                bar.update(len(part))
        frontier = []
        for (node, t, seed), child_state in zip(jobs, children, strict=True):
            child = ExpandedNode(child_state, {})
            node.children[(t, seed)] = child
            frontier.append(child)
        level += 1
    return roots


def add_to_builder(
    builder: TreeBuilder,
    node: ExpandedNode,
    num_seeds: int,
    *,
    parent: int | None = None,
    action: int | None = None,
    prob: float | None = None,
) -> None:
    """Adds a negotiation below ``parent``: decision (tone) -> chance (seed) -> ..."""
    # Iterative, breadth-first: (expanded node, parent id, edge action, edge prob).
    queue = [(node, parent, action, prob)]
    while queue:
        nxt = []
        for n, par, act, pr in queue:
            state = n.state
            if state.is_terminal() or not n.children:
                builder.add_terminal(list(state.returns()), parent=par, action=act, prob=pr)
                continue
            player = state.next_speaker()
            d = builder.add_decision(
                player,
                state.information_state(player),
                list(range(len(TONES))),
                parent=par,
                action=act,
                prob=pr,
            )
            for t in range(len(TONES)):
                c = builder.add_chance(parent=d, action=t)
                for seed in range(num_seeds):
                    nxt.append((n.children[(t, seed)], c, seed, 1.0 / num_seeds))
        queue = nxt


def subgame_tree(node: ExpandedNode, config: Config) -> GameTree:
    """The game tree of one initialisation."""
    b = TreeBuilder(num_players=2, game_name="python_fruit_trading")
    add_to_builder(b, node, config.num_seeds)
    return b.build()


def whole_game_tree(nodes: Sequence[ExpandedNode], config: Config) -> GameTree:
    """The whole game: a chance node over the initialisations, then each negotiation.

    Private information stays private: a player's information sets are keyed
    by its own information only, so CFR cannot condition on the opponent's type.
    """
    b = TreeBuilder(num_players=2, game_name="python_fruit_trading(init=-1)")
    root = b.add_chance()
    for i, n in enumerate(nodes):
        add_to_builder(b, n, config.num_seeds, parent=root, action=i, prob=1.0 / len(nodes))
    return b.build()


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
    """Expands and materialises the subgame of each initialisation.

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
    scenarios = [make_scenario(i, seed=config.scenario_seed) for i in inits]
    roots = expand(
        scenarios,
        config,
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )
    return [
        Subgame(scenario=s, config=config, root=r, tree=subgame_tree(r, config))
        for s, r in zip(scenarios, roots, strict=True)
    ]
