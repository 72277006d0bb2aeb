"""``gt-llm <game> solve``: the engine's solve command, which owns the shared options.

A game that only needs "build the trees below these roots, run CFR, write the
curves and a summary" adds the command with :func:`add_solve_command` and
gives two small functions:

* ``add_options(parser)`` — the game's own options (sizes, iterations);
* ``plan(args, options) -> SolvePlan`` — the game logic, its roots and the
  CFR-Gain baseline for these options. ``options`` (:class:`RunOptions`) holds
  what the shared flags mean for the game: the master seed, structured
  answers, the bound on concurrent calls, progress bars.

Everything else is the engine's, in the order every writing command follows
(:mod:`games.engine.cli_options`): the backend is checked, ``plan`` runs (the
game's own checks: nothing is paid for yet), the model is prepared (key,
cache file), ``--out`` is opened with *every* parsed result option as its
settings (:func:`~games.engine.cli_options.result_settings`, so ``--seed`` or
``--structured`` of another value is another run and a folder of other
settings is refused), the trees are built with ``--concurrency`` and solved
(:func:`~games.engine.pipeline.build_and_solve`), and ``summary.json`` names
the model, the settings, the final NashConv and CFR-Gain, the parse
counters and the answer quality (:mod:`games.engine.quality`), which the
closing lines print too. A game cannot offer one of the shared options and ignore it: the
engine passes them all, and the command test
(``tests/games/engine/test_commands.py``) checks for every registered command that
``--seed`` and ``--structured`` change the requests it sends.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from games.engine import cli_options as cli
from games.engine.noise_options import add_noise_options
from games.engine.protocol import GameLogic

if TYPE_CHECKING:
    from solvers import GameTree
    from solvers.policy import PolicyLike

__all__ = ["RunOptions", "SolvePlan", "add_solve_command", "run_solve_command"]


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """What the shared options of :func:`~games.engine.cli_options.add_common_options` ask for.

    Attributes:
      seed: ``--seed``: the master seed (what it seeds is the game's to say in
        ``seed_help``).
      structured: ``--structured on``: every request asks for its task's JSON
        answer and carries the schema.
      max_concurrency: ``--concurrency``: bound on concurrent model calls (None:
        the backend's).
      progress: Progress bars (``--no-progress`` turns them off).
    """

    seed: int
    structured: bool
    max_concurrency: int | None
    progress: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options of a command parsed with the shared options."""
        return cls(
            seed=int(args.seed),
            structured=args.structured == "on",
            max_concurrency=args.concurrency,
            progress=not args.no_progress,
        )


@dataclasses.dataclass(frozen=True)
class SolvePlan:
    """What a game's ``plan`` gives the engine's solve command.

    Attributes:
      logic: The game logic (a :class:`~games.engine.protocol.GameLogic`).
      roots: One root step (or ready state) per tree.
      baseline: ``tree -> profile`` that CFR-Gain is measured against.
      iterations: CFR iterations per tree.
      slug: The trees' name in ``curves_<slug>.csv``.
      summary: ``summary(solved) -> fields`` added to ``summary.json`` (optional).
      num_seeds: LLM seeds per decision of the trees (the held-out trees' default
        count on a language model, ``--eval-seeds``).
    """

    logic: GameLogic[Any]
    roots: Sequence[Any]
    baseline: Callable[[GameTree], PolicyLike]
    iterations: int
    slug: str
    summary: Callable[[Any], Mapping[str, Any]] | None = None
    num_seeds: int = 1


#: ``plan(args, options)``: a game's trees for the parsed options (may raise ValueError).
Planner = Callable[[argparse.Namespace, RunOptions], SolvePlan]


def run_solve_command(args: argparse.Namespace, plan: Planner, *, game: str) -> int:
    """Runs ``gt-llm <game> solve`` (see the module docstring); returns the exit code.

    Args:
      args: The parsed options (the shared ones and the game's).
      plan: The game's planner.
      game: The command's game name, for the summary and the closing line.
    """
    from games.engine.noise_options import eval_seed_count, noise_settings
    from games.engine.noise_report import metric_text, noise_lines
    from games.engine.pipeline import Solved, build_and_solve
    from games.engine.quality import answer_quality, quality_lines
    from games.engine.results import model_label
    from gt_llm.parsing import ParseStats
    from solvers import studies

    cli.check_backend(args)
    options = RunOptions.from_args(args)
    job = plan(args, options)  # the game's own checks, before anything is paid for
    settings = {"command": f"{game} solve", **cli.result_settings(args)}
    model = cli.prepare_model(args)
    try:
        with cli.results_folder(args, settings, model) as run:
            model = cli.attach_cache(args, model)
            label = model_label(model)
            stats = ParseStats()
            solved: Solved[Any] = build_and_solve(
                job.logic,
                job.roots,
                model,
                baseline=job.baseline,
                iterations=job.iterations,
                run=run,
                slug=job.slug,
                stats=stats,
                max_concurrency=options.max_concurrency,
                progress=options.progress,
                noise=noise_settings(args),
                eval_seeds=eval_seed_count(
                    args.eval_seeds, specs=[args.backend], num_seeds=job.num_seeds
                ),
            )
            curves = solved.curves
            # Each tree's value after the last iteration (rows: trees, columns: iterations).
            final = {m: [float(x) for x in getattr(curves, m)[:, -1]] for m in _METRICS}
            summary = {
                **label.to_json(),
                "settings": settings,
                "trees": len(solved.subgames),
                "nodes": [int(t.num_nodes) for t in solved.trees],
                "nash_conv": final["nash_conv"],
                "cfr_gain": final["cfr_gain"],
                "final": studies.final_metrics(curves),
                "noise": solved.noise.to_dict() if solved.noise is not None else None,
                "parse": stats.to_dict(),
                # Answer quality beside the parse counts: copied answers per task.
                "quality": answer_quality(stats.to_dict()),
                **(job.summary(solved) if job.summary is not None else {}),
            }
            run.write_json("summary.json", summary)
    finally:
        model.close()
    f = summary["final"]
    cli.say(
        f"{game} results in {args.out}  (model: {label.label}): NashConv "
        f"{metric_text(f, 'nash_conv')}, CFR-Gain {metric_text(f, 'cfr_gain')} after "
        f"{job.iterations} iterations ({len(solved.subgames)} trees); parse fallbacks "
        f"{stats.to_dict()['total_fallbacks']}"
    )
    for line in noise_lines(summary["noise"]):
        cli.say(line)
    for line in quality_lines(summary["quality"]):
        cli.say(line)
    return 0


_METRICS = ("nash_conv", "cfr_gain")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def add_solve_command(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    *,
    game: str,
    help: str,
    add_options: Callable[[argparse.ArgumentParser], None],
    plan: Planner,
    seed_help: str,
) -> argparse.ArgumentParser:
    """Adds ``gt-llm <game> solve`` run by :func:`run_solve_command`.

    Args:
      subparsers: The game's command group.
      game: The game's command name (``gt-llm <game> ...``).
      help: One line for the help: what the command does. The engine appends
        "Writes the curves and summary.json to --out." to the description, so
        the line should not say it again.
      add_options: Adds the game's own options.
      plan: The game's planner.
      seed_help: What ``--seed`` seeds in this game.

    Returns:
      The command's parser.
    """
    p: argparse.ArgumentParser = subparsers.add_parser(
        "solve", help=help, description=f"{help}. Writes the curves and summary.json to --out."
    )
    cli.add_common_options(p, out=f"results/{game}", seed_help=seed_help)
    add_options(p)
    add_noise_options(p)
    p.set_defaults(func=lambda args: run_solve_command(args, plan, game=game))
    return p
