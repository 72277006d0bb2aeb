"""``gt-llm werewolf solve``: the Werewolf day trees solved by CFR, per opponent model.

The command's options; :mod:`games.werewolf.day.solve` describes the run and its files.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from games.engine.cli_options import (
    add_common_options,
    attach_cache,
    check_backend,
    check_local_run,
    open_results_dir,
    prepare_model,
    result_settings,
    say,
)
from games.engine.noise_options import add_noise_options, eval_seed_count
from games.werewolf import rules
from games.werewolf.day.abstraction import DEFAULT_ACTS, DEFAULT_TONES, Abstraction
from games.werewolf.day.roots import day_roots
from games.werewolf.day.state import _MAX_DEALS, _MAX_SEEDS, _MAX_SPEAKERS, EXTRACTION, ORDERS
from games.werewolf.day.summary import report_lines
from games.werewolf.estimate import CALL_SHAPE, check_solve, estimate_solve
from gt_llm.argtypes import MAX_SIZE, add_check, bounded_int, refuse_repeated

__all__ = [
    "add_solve_parser",
]

#: Days (rule-based games) solved: the bound of python_werewolf_day's num_games.
MAX_DAYS = 10_000
#: The latest day every preset reaches before its round limit (the day tree's bound).
MAX_DAY = min(c.max_rounds for c in rules.PRESETS.values())


# --- the command -------------------------------------------------------------------


def _names(text: str, *, known: Sequence[str], what: str) -> tuple[str, ...]:
    names = tuple(x.strip() for x in text.replace("/", ",").split(",") if x.strip())
    bad = [x for x in names if x not in known]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(bad) or '(none)'}; choose from {', '.join(known)}"
        )
    return refuse_repeated(names, what)


def _models(text: str) -> tuple[str, ...]:
    return _names(text, known=sorted(EXTRACTION), what="opponent model(s)")


def _tones(text: str) -> tuple[str, ...]:
    tones = _names(text, known=rules.TONES, what="tone(s)")
    if "any" not in tones:
        # The baseline every CFR-Gain is measured against is tone any, act nothing.
        raise argparse.ArgumentTypeError(f"add the tone any (the baseline's); got {text!r}")
    return tones


def _acts(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.replace("/", ",").split(",") if x.strip())


def _check_acts(args: argparse.Namespace) -> None:
    """``--acts`` after parsing (it depends on ``--preset``), as a refusal naming the flag.

    Each token's form, no token twice, the baseline's act ``nothing`` among
    them, and every claimed role or check result one the preset has.
    """
    acts = tuple(args.acts)
    try:
        abstraction = Abstraction(tones=args.tones, acts=acts)
        if "nothing" not in acts:
            raise ValueError("add the act nothing (the baseline's)")
        abstraction.check(rules.preset(args.preset))
    except ValueError as exc:
        detail = str(exc).removeprefix("Abstraction: ")
        raise ValueError(
            f"argument --acts: {detail} (got {','.join(acts) or 'none'}; --preset {args.preset})"
        ) from None


def _run(args: argparse.Namespace) -> int:
    # Imported here: the solver and its figures (matplotlib) would slow every command's start.
    from games.werewolf.day.solve import SolveSettings, run_solve

    check_backend(args)  # fail fast, before any work, on an unknown backend
    settings = SolveSettings(
        preset=args.preset,
        days=args.days,
        day=args.day,
        speakers=args.speakers,
        order=args.order,
        models=args.models,
        tones=args.tones,
        acts=args.acts,
        num_seeds=args.num_seeds,
        deals=args.deals,
        iterations=args.iterations,
        first_seed=args.seed,
        backend=args.backend,
        out=args.out,
        cache=args.cache,
        cfr_variant=args.cfr,
        max_concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        timeout=args.timeout,
        retry_budget=args.retry_budget,
        max_answer_bytes=args.max_answer_bytes,
        progress=not args.no_progress,
        structured=args.structured == "on",
        eval_seeds=eval_seed_count(args.eval_seeds, specs=[args.backend], num_seeds=args.num_seeds),
        permutations=args.permutations,
        bootstrap=args.bootstrap,
        fdr_q=args.fdr_q,
    )
    # The game's precondition (enough games reach the day), the backend, key and cache,
    # all before the folder is touched; then the manifest (complete: false), refusal of a
    # folder with other settings (--force clears only its listed files), then the run.
    check_solve(days=args.days, models=len(settings.models), iterations=args.iterations)
    config = rules.preset(args.preset)
    estimate = estimate_solve(
        days=args.days,
        models=tuple(settings.models),
        actions=len(settings.tones) * len(settings.acts),
        seeds=args.num_seeds,
        deals=max(args.deals, 1),
        players=config.num_players,
        earlier_statements=(args.day - 1) * config.debate_turns,
        speakers=args.speakers,
        living=max(config.num_players - args.day, 1),
        iterations=args.iterations,
        eval_seeds=settings.eval_seeds,
        bootstrap=settings.bootstrap,
    )
    if not args.no_progress:
        sys.stderr.write(estimate.describe() + "\n")
    day_roots(settings.day_settings(settings.models[0]), settings.days, first_seed=args.seed)
    model = prepare_model(args)
    check_local_run(args, model, estimate, CALL_SHAPE)
    run = None
    try:
        run = open_results_dir(
            args,
            {
                "command": "werewolf solve",
                **result_settings(args, also_ignore=("werewolf_command",)),
            },
            model,
        )
        model = attach_cache(args, model)
        result = run_solve(settings, model=model, results=run)
        run.finish()
    finally:
        if run is not None:
            run.close()  # the folder's lock, also when the run failed
        model.close()
    for line in report_lines(result.summary, result.out):
        say(line)
    return 0


def add_solve_parser(subparsers: argparse._SubParsersAction) -> None:
    """Adds ``solve`` to the ``gt-llm werewolf`` command group."""
    p = subparsers.add_parser(
        "solve",
        help="solve Werewolf days as trees of tone and speech-act decisions (CFR, per opponent model)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument(
        "--preset",
        choices=sorted(rules.PRESETS),
        default="arena",
        help="rules preset (default arena)",
    )
    p.add_argument(
        "--days",
        type=bounded_int(1, MAX_DAYS),
        default=30,
        help=f"days (rule-based games) to solve (default 30, at most {MAX_DAYS})",
    )
    p.add_argument(
        "--day",
        type=bounded_int(1, MAX_DAY),
        default=1,
        help=f"which day of each game (default 1, at most {MAX_DAY})",
    )
    p.add_argument(
        "--speakers",
        type=bounded_int(1, _MAX_SPEAKERS),
        default=2,
        help=f"speaking turns K per day (default 2, at most {_MAX_SPEAKERS})",
    )
    p.add_argument("--order", choices=ORDERS, default="bids", help="speaking order (default bids)")
    p.add_argument(
        "--models",
        type=_models,
        default=("none", "dirichlet", "gratr"),
        help="comma-separated listeners' opponent models (default none,dirichlet,gratr)",
    )
    p.add_argument(
        "--tones",
        type=_tones,
        default=DEFAULT_TONES,
        help="comma-separated tones, any among them (default all four)",
    )
    p.add_argument(
        "--acts",
        type=_acts,
        default=DEFAULT_ACTS,
        help="comma-separated act tokens, nothing among them: nothing, claim:ROLE, "
        "accuse:SLOT, defend:SLOT, check:SLOT:RESULT with SLOT most, most2, least, least2 "
        f"(default {','.join(DEFAULT_ACTS)})",
    )
    p.add_argument(
        "--num-seeds",
        type=bounded_int(1, _MAX_SEEDS),
        default=1,
        help=f"LLM seeds per statement (default 1, at most {_MAX_SEEDS})",
    )
    p.add_argument(
        "--deals",
        type=bounded_int(0, _MAX_DEALS),
        default=4,
        help="the most deals (role assignments consistent with the public history) each day's "
        "root chance node is over: all of them when fewer, else drawn (default 4, at most "
        f"{_MAX_DEALS}); 0 keeps only the seeded game's own deal, a clairvoyant tree",
    )
    p.add_argument(
        "--iterations",
        type=bounded_int(1, MAX_SIZE),
        default=1000,
        help="CFR iterations (default 1000; refused when the curves cannot fit in memory)",
    )
    p.add_argument(
        "--cfr", choices=("cfr", "cfr+", "linear"), default="cfr", help="CFR variant (default cfr)"
    )
    add_common_options(
        p, out="results/werewolf_day", seed_help="seed of the first rule-based game (default 0)"
    )
    add_noise_options(p)
    add_check(p, _check_acts)
    p.set_defaults(func=_run)
