"""The study pipeline every engine game shares: build the trees, run CFR, write the curves.

:func:`build_and_solve` expands the trees below many roots with batched,
cached calls (:func:`games.engine.tree.build_subgames`), runs CFR on each tree
recording NashConv and CFR-Gain against a baseline profile at every iteration
(:func:`solvers.cfr_curves`; the CFR average policies come with the curves,
so nothing is solved twice), and writes ``curves_<slug>.csv`` and
``curves_<slug>_per_tree.csv`` into the results folder, tagged with the
backend and model that produced them. Fruit trading's experiment, the
Werewolf day study and the ultimatum example call it once per variant and
add their own reports.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic

from tqdm.auto import tqdm

from games.engine.protocol import GameLogic, S
from games.engine.resources import solver_kernels_cached
from games.engine.tree import SG, Subgame, beside, build_subgames
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats

if TYPE_CHECKING:
    from runs.results import ResultsDir
    from solvers import Curves, GameTree, TreePolicy
    from solvers.noise import NoiseSettings, StudyNoise, TreeNoise
    from solvers.policy import PolicyLike

__all__ = ["Solved", "build_and_solve"]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Solved(Generic[SG]):
    """The trees of one variant, solved.

    Attributes:
      subgames: One per root (expanded states and game tree).
      curves: NashConv, CFR-Gain and their ratio per iteration and tree.
      build_s: Seconds spent building the trees (LLM calls included).
      solve_s: Seconds spent in CFR.
      noise: Each tree's metrics beside their noise (:mod:`solvers.noise`), when asked.
      noise_s: Seconds spent on the noise checks (held-out trees included).
    """

    subgames: list[SG]
    curves: Curves
    build_s: float
    solve_s: float
    noise: StudyNoise | None = None
    noise_s: float = 0.0

    @property
    def trees(self) -> list[GameTree]:
        return [sg.tree for sg in self.subgames]

    @property
    def policies(self) -> list[TreePolicy]:
        """Each tree's CFR average policy after the last iteration."""
        return list(self.curves.average_policies)


def _status(message: str, progress: bool) -> None:
    # A line beside the progress bars (stderr), or a log line when they are off.
    if progress:
        tqdm.write(message, file=sys.stderr)
    else:
        logger.info(message)


def build_and_solve(
    game: GameLogic[S],
    root_steps: Sequence[Any],
    model: ChatModel,
    *,
    baseline: Callable[[GameTree], PolicyLike],
    iterations: int,
    tree_name: Callable[[SG], str] | None = None,
    cfr_variant: str = "cfr",
    # A TypeVar parameter cannot have a default (mypy issue 3737): without subgame= SG is Subgame.
    subgame: Callable[..., SG] = Subgame,  # type: ignore[assignment]
    game_name: str | Callable[[S], str] = "",
    run: ResultsDir | str | os.PathLike[str] | None = None,
    slug: str = "",
    tag: Mapping[str, Any] | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    processes: int | None = None,
    progress: bool = True,
    label: str = "",
    noise: NoiseSettings | None = None,
    eval_seeds: int = 0,
) -> Solved[SG]:
    """Builds the trees below ``root_steps``, solves each with CFR, writes the curves.

    Args:
      game: The game.
      root_steps: One step (or ready state) per root.
      model: The chat model (usually through the call cache).
      baseline: ``tree -> profile`` that CFR-Gain is measured against.
      iterations: CFR iterations per tree.
      tree_name: A subgame's label in the curves (e.g. ``"init3"``; default
        the tree's name or its index).
      cfr_variant: CFR variant (:mod:`solvers.cfr`).
      subgame: The game's :class:`~games.engine.tree.Subgame` class.
      game_name: The trees' name (or a function of the root state).
      run: The results folder to write ``curves_<slug>.csv`` and
        ``curves_<slug>_per_tree.csv`` into (a ``ResultsDir``, listed in its
        manifest, or a plain folder; each file written atomically); None
        writes nothing.
      slug: The variant's name in the file names.
      tag: Columns added to every row (default: the model's backend and name).
      stats: Parse counters to update.
      max_concurrency: Bound on concurrent LLM calls.
      processes: Worker threads for CFR (:func:`solvers.cfr_curves`) and the noise checks.
      progress: Show progress bars.
      label: Progress-bar label, e.g. ``"[tone]"``.
      noise: The resampling of the noise checks (None: no checks).
      eval_seeds: Fresh LLM seeds per decision of the held-out trees (0: none;
        needs ``noise``).
    """
    from solvers import cfr_curves

    t0 = time.perf_counter()
    subgames = build_subgames(
        game,
        root_steps,
        model,
        game_name=game_name,
        subgame=subgame,
        policy=ParsePolicy(),
        stats=stats if stats is not None else ParseStats(),
        max_concurrency=max_concurrency,
        progress=progress,
        label=f"{label} trees:".strip(),
    )
    build_s = time.perf_counter() - t0
    if solver_kernels_cached() is not True:
        # numba compiles the kernels on the first solve: ~30 s without output otherwise.
        _status("compiling solver kernels (first run only, about half a minute) ...", progress)
    t0 = time.perf_counter()
    with tqdm(
        total=len(subgames),
        desc=f"{label} CFR curves".strip(),
        unit="tree",
        disable=not progress,
    ) as bar:
        curves = cfr_curves(
            [sg.tree for sg in subgames],
            baseline,
            iterations,
            variant=cfr_variant,
            tree_names=None if tree_name is None else [tree_name(sg) for sg in subgames],
            processes=processes,
            on_tree_done=lambda _i: bar.update(1),
        )
    solve_s = time.perf_counter() - t0
    if run is not None:
        from runs.atomic import atomic_path

        columns = dict(tag) if tag is not None else {"backend": model.backend, "model": model.model}
        for name, per_tree in (
            (f"curves_{slug}.csv", False),
            (f"curves_{slug}_per_tree.csv", True),
        ):
            target = (
                run.atomic_path(name)
                if hasattr(run, "atomic_path")
                else atomic_path(Path(run) / name)
            )
            with target as tmp:
                curves.to_csv(tmp, per_tree=per_tree, columns=columns)
    study = None
    noise_s = 0.0
    if noise is not None:
        t0 = time.perf_counter()
        study = _noise(
            game,
            subgames,
            curves,
            model,
            baseline=baseline,
            iterations=iterations,
            cfr_variant=cfr_variant,
            settings=noise,
            eval_seeds=eval_seeds,
            stats=stats,
            max_concurrency=max_concurrency,
            processes=processes,
            progress=progress,
            label=label,
        )
        noise_s = time.perf_counter() - t0
    return Solved(
        subgames=subgames,
        curves=curves,
        build_s=build_s,
        solve_s=solve_s,
        noise=study,
        noise_s=noise_s,
    )


def _noise_threads(
    trees: Sequence[GameTree], iterations: int, settings: NoiseSettings, processes: int | None
) -> int:
    """Threads for the noise checks: ``processes`` if given, else decided from their work.

    The work is counted as :func:`solvers.cfr_curves` counts it (nodes walked):
    a label permutation walks the tree once, a bootstrap replicate re-solves it
    for ``iterations``. Small work stays on the calling thread
    (:func:`solvers.pool.resolve_processes`).
    """
    from solvers.pool import resolve_processes

    walks = settings.permutations + settings.bootstrap * iterations
    work = sum(t.collapsed.num_nodes for t in trees) * walks
    return resolve_processes(processes, None, work, len(trees))


def _noise(
    game: GameLogic[S],
    subgames: Sequence[Subgame[Any]],
    curves: Curves,
    model: ChatModel,
    *,
    baseline: Callable[[GameTree], PolicyLike],
    iterations: int,
    cfr_variant: str,
    settings: NoiseSettings,
    eval_seeds: int,
    stats: ParseStats | None,
    max_concurrency: int | None,
    processes: int | None,
    progress: bool,
    label: str,
) -> StudyNoise:
    """Each tree's label null, seed bootstrap and (with ``eval_seeds``) held-out gain.

    The trees are checked on :func:`_noise_threads` threads (the solver's kernels
    release the GIL, as in :func:`solvers.cfr_curves`), largest first; each
    tree's random streams come from its index, so the numbers do not depend on
    the threads or the order.

    On a remote backend the held-out trees are built in a thread while this one
    checks the trees' in-sample noise (:func:`~games.engine.tree.beside`): their
    calls wait on the server while the resampling keeps the cores busy. Every
    tree's random streams come from its index alone, so attaching each held-out
    gain afterwards (:func:`solvers.noise.tree_held_out`) gives the numbers of
    checking each tree with its held-out tree in one go.
    """
    from concurrent.futures import ThreadPoolExecutor

    from games.engine.heldout import eval_subgames
    from solvers.noise import study_noise, tree_held_out, tree_noise
    from solvers.pool import largest_first, run_spread

    def build_eval_trees() -> list[GameTree]:
        built = eval_subgames(
            game,
            [sg.state for sg in subgames],
            model,
            count=eval_seeds,
            stats=stats,
            max_concurrency=max_concurrency,
            progress=progress,
            label=f"{label} held-out trees:".strip(),
        )
        return [tree for _node, tree in built]

    policies = curves.average_policies
    trees = [sg.tree for sg in subgames]
    jobs = _noise_threads(trees, iterations, settings, processes)
    checked: list[TreeNoise | None] = [None] * len(subgames)
    with ThreadPoolExecutor(max_workers=1) as pool:
        eval_trees = beside(pool, model, build_eval_trees) if eval_seeds > 0 else None

        def check(i: int) -> TreeNoise | None:
            if eval_trees is not None and eval_trees.done() and eval_trees.exception():
                return None  # the held-out build failed: say so now, not after every tree
            return tree_noise(
                trees[i],
                policies[i],
                baseline,
                iterations=iterations,
                variant=cfr_variant,
                settings=settings,
                index=i,
                name=curves.tree_names[i],
            )

        with tqdm(
            total=len(subgames),
            desc=f"{label} noise checks".strip(),
            unit="tree",
            disable=not progress,
        ) as bar:

            def done(i: int, result: TreeNoise | None) -> None:
                checked[i] = result
                bar.update(1)

            run_spread(largest_first(trees, range(len(trees))), check, jobs, done)
        # A failed held-out build raises here; only then was any tree skipped.
        late = eval_trees.result() if eval_trees is not None else None
        out = [t for t in checked if t is not None]
        if late is not None:
            out = [
                dataclasses.replace(
                    t,
                    held_out=tree_held_out(
                        sg.tree, policy, late[i], baseline, settings=settings, index=i
                    ),
                )
                for i, (t, sg, policy) in enumerate(zip(out, subgames, policies, strict=True))
            ]
    return study_noise(out, settings)
