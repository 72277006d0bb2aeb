"""Game trees over LLM calls: expansion with concurrent, de-duplicated, cached calls.

:func:`expand` grows the trees below several root states together: each open
state is stepped with each action (and each seed outcome) its game allows.
Two schedulers do it, with the same trees, cache keys and parse counts:

* ``levels`` -- level by level: all LLM calls of a level go out as
  concurrent, de-duplicated batches (:func:`games.engine.calls.run_batched`),
  and each batch waits for its slowest call. Used for in-process models
  (the scripted stand-in, the local model, whose batches it keeps);
* ``frontier`` -- a work queue (:class:`games.engine.frontier.Frontier`): a
  state's children start as soon as the state exists, and up to
  ``max_concurrency`` calls stay in flight. Used for remote models, whose
  calls are bound by latency.

:func:`scheduler` picks one for a block (``auto``, the default, chooses by
:attr:`~gt_llm.chat.ChatModel.remote`). A state's children are keyed and
ordered by its branches whichever state finishes first. Through a persistent
cache the number of backend calls equals the number of distinct requests, and
a re-run makes none.

:func:`subgame_tree` turns one expanded root into a :class:`solvers.GameTree`
(decision -> optional seed chance -> ...), :func:`build_subgames` does both
for many roots at once (every game's tree builder: fruit trading's
initialisations, Werewolf days, the ultimatum example), and
:func:`whole_game_tree` puts a uniform chance node over several roots first (so each player's information
sets are keyed by its own information only: private information stays
private). The trees match what ``solvers.materialize`` walks from the game's
OpenSpiel adapter (:mod:`games.engine.spiel`); the conformance suite checks it.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from tqdm.auto import tqdm

from games.engine.calls import run_batched
from games.engine.frontier import Frontier
from games.engine.protocol import CHANCE, ExpandedNode, GameLogic, S
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats

if TYPE_CHECKING:  # solvers (numba) loads when a tree is first built, not with every game
    from solvers import GameTree, TreeBuilder

__all__ = [
    "Subgame",
    "add_to_builder",
    "beside",
    "build_subgames",
    "expand",
    "expand_from_steps",
    "run_steps",
    "scheduler",
    "subgame_tree",
    "whole_game_tree",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Steps advanced per batch on a level, so progress bars move on long levels.
CHUNK = 2048

#: How :func:`expand` schedules its calls (see the module docstring).
Scheduler = Literal["auto", "levels", "frontier"]
_SCHEDULER: contextvars.ContextVar[Scheduler] = contextvars.ContextVar(
    "gt_llm_tree_scheduler", default="auto"
)


@contextlib.contextmanager
def scheduler(name: Scheduler) -> Iterator[None]:
    """A block in which :func:`expand` uses the scheduler ``name`` (benchmarks, tests).

    Raises:
      ValueError: an unknown name.
    """
    if name not in ("auto", "levels", "frontier"):
        raise ValueError(f"scheduler: {name!r} is none of auto, levels, frontier")
    token = _SCHEDULER.set(name)
    try:
        yield
    finally:
        _SCHEDULER.reset(token)


def _use_frontier(model: ChatModel) -> bool:
    name = _SCHEDULER.get()
    return name == "frontier" or (name == "auto" and bool(model.remote))


def beside(pool: ThreadPoolExecutor, model: ChatModel, work: Callable[[], T]) -> Future[T]:
    """``work()`` started in ``pool`` when ``model`` is remote, else done here before returning.

    Against a served model the work's calls wait on the server while this
    thread goes on (solving, resampling); an in-process model answers on this
    machine's cores anyway, so its work is simply done first. The work runs in
    a copy of this thread's context, so a :func:`scheduler` set here holds there.
    Every call is a pure function of its request: the work returns the same
    either way.
    """
    if model.remote:
        return pool.submit(contextvars.copy_context().run, work)
    done: Future[T] = Future()
    done.set_result(work())
    return done


def run_steps(
    steps: Sequence[Any],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    chunk: int = CHUNK,
    on_done: Callable[[int], None] | None = None,
) -> list[Any]:
    """Runs independent steps with the scheduler :func:`expand` would use; results in order.

    Level by level, the steps run in batches of ``chunk``
    (:func:`~games.engine.calls.run_batched`, each batch waiting for its slowest
    call); on the frontier (a remote model, or :func:`scheduler` ``frontier``),
    all of them at once with up to ``max_concurrency`` calls in flight. Either
    way each step returns what it returns alone (module docstring of
    :mod:`games.engine.frontier`).

    Args:
      steps: Step generators (a value that is not a generator is its own result).
      model: The chat model (usually cached).
      policy: Re-ask policy for parse errors.
      stats: Parse counters to update.
      max_concurrency: Bound on concurrent calls.
      chunk: Steps per batch, level by level.
      on_done: Called with a number of steps as they finish (progress).
    """
    steps = list(steps)
    if not _use_frontier(model):
        out: list[Any] = []
        for start in range(0, len(steps), chunk):
            part = steps[start : start + chunk]
            out += run_batched(
                part, model, policy=policy, stats=stats, max_concurrency=max_concurrency
            )
            if on_done is not None:
                on_done(len(part))
        return out
    frontier = Frontier(model, policy=policy, stats=stats, max_concurrency=max_concurrency)
    results: list[Any] = [None] * len(steps)

    def done(i: int, value: Any) -> None:
        results[i] = value
        if on_done is not None:
            on_done(1)

    for i, step in enumerate(steps):
        frontier.start(step, functools.partial(done, i))
    frontier.run()
    return results


def _branches(game: GameLogic[S], state: S) -> list[tuple[int, int | None]]:
    """The (action, outcome) keys of a non-terminal state's children, in tree order."""
    if game.current_player(state) == CHANCE:
        return [(int(o), None) for o, _ in game.chance_outcomes(state)]
    out: list[tuple[int, int | None]] = []
    for a in game.legal_actions(state):
        seeds = game.seed_outcomes(state, a)
        if seeds:
            out.extend((int(a), int(o)) for o, _ in seeds)
        else:
            out.append((int(a), None))
    return out


def expand(
    game: GameLogic[S],
    roots: Sequence[S],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
    max_depth: int | None = None,
) -> list[ExpandedNode[S]]:
    """Expands the trees below ``roots`` together.

    Args:
      game: The game (its protocol gives actions, outcomes and steps).
      roots: Root states (already computed, e.g. after a fixed opening).
      model: The chat model (wrap it in the cache for resumable runs).
      policy: Re-ask policy for unparseable answers.
      stats: Parse counters to update.
      max_concurrency: Bound on concurrent LLM calls.
      progress: Show a progress bar (per level with the ``levels`` scheduler).
      label: Progress-bar label.
      max_depth: Stop after this many levels (default: until every leaf is terminal).

    Returns:
      One :class:`ExpandedNode` per root, children filled.
    """
    build = _expand_frontier if _use_frontier(model) else _expand_levels
    return build(
        game,
        roots,
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
        max_depth=max_depth,
    )


def _expand_levels(
    game: GameLogic[S],
    roots: Sequence[S],
    model: ChatModel,
    *,
    policy: ParsePolicy | None,
    stats: ParseStats | None,
    max_concurrency: int | None,
    progress: bool,
    label: str,
    max_depth: int | None,
) -> list[ExpandedNode[S]]:
    """:func:`expand` level by level (each level's calls in batches)."""
    stats = stats if stats is not None else ParseStats()
    nodes = [ExpandedNode(s, {}) for s in roots]
    frontier = list(nodes)
    level = 1
    while frontier and (max_depth is None or level <= max_depth):
        jobs = [
            (node, key)
            for node in frontier
            if not game.is_terminal(node.state)
            for key in _branches(game, node.state)
        ]
        if not jobs:
            break
        with tqdm(
            total=len(jobs),
            desc=f"{label} level {level + 1}".strip(),
            unit="branch",
            disable=not progress,
            leave=False,
        ) as bar:
            children: list[Any] = []
            for a in range(0, len(jobs), CHUNK):
                part = jobs[a : a + CHUNK]
                children.extend(
                    run_batched(
                        [game.step(n.state, act, out) for n, (act, out) in part],
                        model,
                        policy=policy,
                        stats=stats,
                        max_concurrency=max_concurrency,
                    )
                )
                bar.update(len(part))
        frontier = []
        for (node, key), child_state in zip(jobs, children, strict=True):
            child = ExpandedNode(child_state, {})
            node.children[key] = child
            frontier.append(child)
        level += 1
    return nodes


def _expand_frontier(
    game: GameLogic[S],
    roots: Sequence[Any],
    model: ChatModel,
    *,
    policy: ParsePolicy | None,
    stats: ParseStats | None,
    max_concurrency: int | None,
    progress: bool,
    label: str,
    max_depth: int | None,
) -> list[ExpandedNode[S]]:
    """:func:`expand` with calls kept in flight (:class:`~games.engine.frontier.Frontier`).

    ``roots`` may also be the steps that compute the roots (any value that is
    not a generator is a ready state): a root's tree starts as soon as the root exists.
    """
    frontier = Frontier(model, policy=policy, stats=stats, max_concurrency=max_concurrency)
    nodes: list[ExpandedNode[S] | None] = [None] * len(roots)
    with tqdm(
        total=0,
        desc=f"{label} branches".strip(),
        unit="branch",
        disable=not progress,
        leave=False,
    ) as bar:

        def grow(node: ExpandedNode[S], level: int) -> None:
            """Starts the steps to ``node``'s children (``level``: their depth)."""
            if (max_depth is not None and level > max_depth) or game.is_terminal(node.state):
                return
            keys = _branches(game, node.state)
            if not keys:
                return
            children: list[ExpandedNode[S] | None] = [None] * len(keys)
            waiting = [len(keys)]
            bar.total += len(keys)
            bar.refresh()

            def child_done(i: int, state: S) -> None:
                child = children[i] = ExpandedNode(state, {})
                waiting[0] -= 1
                bar.update(1)
                if waiting[0] == 0:
                    # In branch order, whichever child finished first (as level by level).
                    for key, c in zip(keys, children, strict=True):
                        assert c is not None
                        node.children[key] = c
                grow(child, level + 1)

            for i, (act, out) in enumerate(keys):
                frontier.start(game.step(node.state, act, out), functools.partial(child_done, i))

        def root_done(i: int, state: S) -> None:
            node = nodes[i] = ExpandedNode(state, {})
            grow(node, 1)

        for i, root in enumerate(roots):
            frontier.start(root, functools.partial(root_done, i))
        frontier.run()
    logger.debug(
        "%s: %d model calls, at most %d in flight (bound %d)",
        label or "expand",
        frontier.calls,
        frontier.peak,
        frontier.limit,
    )
    return [n for n in nodes if n is not None]


def expand_from_steps(
    game: GameLogic[S],
    root_steps: Sequence[Any],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
    max_depth: int | None = None,
) -> list[ExpandedNode[S]]:
    """Runs the steps that compute the roots (batched together), then :func:`expand`.

    Games whose roots themselves need LLM calls (fruit trading's opening
    message, a Werewolf day replayed to its debate) start here.
    """
    stats = stats if stats is not None else ParseStats()
    if _use_frontier(model):
        # The roots' calls and their trees' calls share one frontier: no barrier between.
        return _expand_frontier(
            game,
            list(root_steps),
            model,
            policy=policy,
            stats=stats,
            max_concurrency=max_concurrency,
            progress=progress,
            label=label,
            max_depth=max_depth,
        )
    roots = run_batched(
        list(root_steps), model, policy=policy, stats=stats, max_concurrency=max_concurrency
    )
    return expand(
        game,
        roots,
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
        max_depth=max_depth,
    )


def add_to_builder(
    builder: TreeBuilder,
    game: GameLogic[S],
    node: ExpandedNode[S],
    *,
    parent: int | None = None,
    action: int | None = None,
    prob: float | None = None,
) -> None:
    """Adds the expanded tree below ``node`` to ``builder`` (breadth-first).

    A leaf that is not terminal (expansion stopped early) is added as a
    terminal with the game's returns there.
    """
    queue: list[tuple[ExpandedNode[S], int | None, int | None, float | None]] = [
        (node, parent, action, prob)
    ]
    while queue:
        nxt: list[tuple[ExpandedNode[S], int | None, int | None, float | None]] = []
        for n, par, act, pr in queue:
            state = n.state
            if game.is_terminal(state) or not n.children:
                builder.add_terminal(list(game.returns(state)), parent=par, action=act, prob=pr)
                continue
            player = game.current_player(state)
            if player == CHANCE:
                c = builder.add_chance(parent=par, action=act, prob=pr)
                for o, p in game.chance_outcomes(state):
                    nxt.append((n.children[(int(o), None)], c, int(o), float(p)))
                continue
            legal = [int(a) for a in game.legal_actions(state)]
            d = builder.add_decision(
                player,
                game.information_state(state, player),
                legal,
                parent=par,
                action=act,
                prob=pr,
            )
            for a in legal:
                seeds = game.seed_outcomes(state, a)
                if not seeds:
                    nxt.append((n.children[(a, None)], d, a, None))
                    continue
                c = builder.add_chance(parent=d, action=a)
                for o, p in seeds:
                    nxt.append((n.children[(a, int(o))], c, int(o), float(p)))
        queue = nxt


def subgame_tree(game: GameLogic[S], node: ExpandedNode[S], *, game_name: str = "") -> GameTree:
    """The game tree below one expanded root."""
    from solvers import TreeBuilder

    b = TreeBuilder(num_players=game.num_players, game_name=game_name)
    add_to_builder(b, game, node)
    return b.build()


def whole_game_tree(
    game: GameLogic[S], nodes: Sequence[ExpandedNode[S]], *, game_name: str = ""
) -> GameTree:
    """A uniform chance node over the roots, then each root's tree."""
    from solvers import TreeBuilder

    b = TreeBuilder(num_players=game.num_players, game_name=game_name)
    root = b.add_chance()
    for i, n in enumerate(nodes):
        add_to_builder(b, game, n, parent=root, action=i, prob=1.0 / len(nodes))
    return b.build()


@dataclasses.dataclass(frozen=True)
class Subgame(Generic[S]):
    """One root's expanded tree (every game state, for reports) and its game tree.

    Games subclass it to name what their root holds (fruit trading's
    scenario, a Werewolf day's root) as properties of ``root.state``.
    """

    root: ExpandedNode[S]
    tree: GameTree

    @property
    def state(self) -> S:
        """The root state."""
        return self.root.state

    def states(self) -> list[S]:
        """Every state below and including the root, breadth-first."""
        return self.root.states()


SG = TypeVar("SG", bound=Subgame[Any])


# Without ``subgame=`` the results are plain Subgames; with it, whatever it makes (a
# TypeVar parameter cannot have a default, hence the two overloads).
@overload
def build_subgames(
    game: GameLogic[S],
    root_steps: Sequence[Any],
    model: ChatModel,
    *,
    game_name: str | Callable[[S], str] = "",
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[Subgame[S]]: ...


@overload
def build_subgames(
    game: GameLogic[S],
    root_steps: Sequence[Any],
    model: ChatModel,
    *,
    game_name: str | Callable[[S], str] = "",
    subgame: Callable[..., SG],
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[SG]: ...


def build_subgames(
    game: GameLogic[S],
    root_steps: Sequence[Any],
    model: ChatModel,
    *,
    game_name: str | Callable[[S], str] = "",
    subgame: Callable[..., Subgame[Any]] = Subgame,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    progress: bool = True,
    label: str = "",
) -> list[Any]:
    """Expands the trees below several roots together and builds each one's game tree.

    Args:
      game: The game.
      root_steps: One step (or ready state) per root; their calls go out together.
      model: The chat model (wrap it in the cache for resumable runs).
      game_name: The trees' name, or a function of the root state giving it.
      subgame: The class of the results (a :class:`Subgame` subclass), called
        with ``root=`` and ``tree=``.
      policy: Re-ask policy for unparseable answers.
      stats: Parse counters (re-asks and fallbacks) to update.
      max_concurrency: Bound on concurrent LLM calls.
      progress: Show progress bars.
      label: Progress-bar label.

    Returns:
      One subgame per root, in the order of ``root_steps``.
    """
    nodes = expand_from_steps(
        game,
        root_steps,
        model,
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
        progress=progress,
        label=label,
    )
    return [
        subgame(
            root=n,
            tree=subgame_tree(
                game, n, game_name=game_name(n.state) if callable(game_name) else game_name
            ),
        )
        for n in nodes
    ]
