"""``gt-llm fruit-trading ...``: the belief-revision experiment from the command line.

``gt-llm fruit-trading run`` builds the subgame trees, solves them and writes
tables, CSVs, exports and figures; ``gt-llm fruit-trading figures`` redraws the
figures of an existing results folder; ``gt-llm fruit-trading compare DIR
[DIR ...] --out DIR`` overlays several runs.
"""

from __future__ import annotations

import argparse
import logging

from games.engine.cli_options import add_common_options, check_backend
from gt_llm.cli import positive_int

logger = logging.getLogger(__name__)


def _variants(text: str) -> tuple[str, ...]:
    from games.fruit_trading.experiment import known_variants, variant_model

    names = tuple(v.strip() for v in text.split(",") if v.strip())
    bad = []
    for v in names:
        try:
            variant_model(v)
        except ValueError:
            bad.append(v)
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown variant(s) {', '.join(bad) or '(none)'}; "
            f"choose from {', '.join(known_variants())}"
        )
    return names


def _run(args: argparse.Namespace) -> int:
    from games.fruit_trading.experiment import ExperimentSettings, run_experiment

    check_backend(args)  # fail fast, before any work, on an unknown backend
    settings = ExperimentSettings(
        inits=args.inits,
        iterations=args.iterations,
        variants=args.variants,
        backend=args.backend,
        out=args.out,
        cache=args.cache,
        max_messages=args.max_messages,
        num_seeds=args.num_seeds,
        scenario_seed=args.seed,
        payoff=args.payoff,
        cfr_variant=args.cfr,
        max_concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        timeout=args.timeout,
        generalisation=not args.no_generalisation,
        whole_game=not args.no_whole_game,
        progress=not args.no_progress,
        processes=args.processes,
        names=args.names,
        pools=args.pools,
    )
    result = run_experiment(settings)
    s = result.summary
    lines = [f"fruit trading results in {result.out}  (model: {s['label']})"]
    for variant, v in s["variants"].items():
        f = v["final"]
        ess = [x for x in v["ess_first_iteration"] if x is not None]
        lines.append(
            f"  {variant:14s} NashConv {f['nash_conv_mean']:.4f} ± {f['nash_conv_std']:.4f}   "
            f"CFR-Gain {f['cfr_gain_mean']:.4f} ± {f['cfr_gain_std']:.4f}   "
            f"CFR-Gain > NashConv in {len(ess)}/{len(v['ess_first_iteration'])} subgames   "
            f"parse fallbacks {v['fallbacks']}"
        )
        d = v["degeneracy"]
        lines.append(
            f"  {'':14s} degeneracy: a tone choice changes some payoff in "
            f"{d['decision_changes_outcome']}/{d['trees']} subgames, NashConv(always any) > 0 "
            f"in {d['baseline_nash_conv_positive']}/{d['trees']}, constant payoff in "
            f"{d['constant_payoff']}/{d['trees']}"
        )
    if "llm_calls" in s:
        c = s["llm_calls"]
        lines.append(f"  LLM calls: {c['misses']} made, {c['hits']} from the cache")
    print("\n".join(lines))  # noqa: T201 - the command's output
    return 0


def _figures(args: argparse.Namespace) -> int:
    from pathlib import Path

    from games.fruit_trading.figures import draw_all

    if not (Path(args.out) / "summary.json").exists():
        raise ValueError(
            f"no summary.json in {args.out!r}; run `gt-llm fruit-trading run --out {args.out}` first"
        )
    for p in draw_all(args.out, fmt=args.format, log_x=args.log_x, log_y=args.log_y):
        print(p)  # noqa: T201 - the command's output
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from games.fruit_trading.figures import write_comparison

    missing = [d for d in args.dirs if not (Path(d) / "summary.json").exists()]
    if missing:
        raise ValueError(
            f"compare: no summary.json in {', '.join(map(repr, missing))}; give folders "
            "written by `gt-llm fruit-trading run`"
        )
    labels = [x.strip() for x in args.labels.split(",")] if args.labels else None
    if labels is not None and len(labels) != len(args.dirs):
        raise ValueError(
            f"compare: --labels has {len(labels)} names for {len(args.dirs)} folders; "
            "give one per folder"
        )
    for p in write_comparison(
        args.dirs, args.out, labels=labels, fmt=args.format, log_x=args.log_x, log_y=args.log_y
    ):
        print(p)  # noqa: T201 - the command's output
    return 0


def _add_figure_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("png", "pdf", "svg"), default="png", help="file format (png)"
    )
    parser.add_argument("--log-x", action="store_true", help="log-scale iteration axes")
    parser.add_argument(
        "--log-y", action="store_true", help="log-scale NashConv (symlog CFR-Gain) in Fig. 7"
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``fruit-trading`` command group to the gt-llm CLI."""
    group = subparsers.add_parser(
        "fruit-trading",
        help="fruit-trading negotiation: the belief-revision experiment",
        description=__doc__,
    )
    sub = group.add_subparsers(dest="fruit_command", metavar="COMMAND", parser_class=type(group))
    run = sub.add_parser(
        "run",
        help="build, solve and report the experiment (defaults match the paper)",
        description="Builds the subgame trees (LLM calls cached), solves each with CFR, and "
        "writes summary.json, CSV tables and figures to --out.",
    )
    run.add_argument("--inits", type=positive_int, default=30, help="initialisations (default 30)")
    run.add_argument(
        "--iterations", type=positive_int, default=1000, help="CFR iterations (default 1000)"
    )
    run.add_argument(
        "--variants",
        type=_variants,
        default=("tone", "tone+belief"),
        help="comma-separated: tone, tone+dirichlet, tone+gratr or tone+MODEL for any "
        "registered opponent model (tone+belief = tone+dirichlet; default tone,tone+belief)",
    )
    add_common_options(
        run, out="results/fruit", seed_help="master seed of the initialisations (default 0)"
    )
    run.add_argument(
        "--max-messages", type=positive_int, default=4, help="messages per negotiation (default 4)"
    )
    run.add_argument(
        "--num-seeds", type=positive_int, default=2, help="LLM seeds per message (default 2)"
    )
    run.add_argument(
        "--payoff",
        choices=("llm", "exact"),
        default="llm",
        help="payoffs from the LLM calls (paper) or exact",
    )
    run.add_argument("--cfr", default="cfr", help="CFR variant: cfr, cfr+, linear (default cfr)")
    run.add_argument(
        "--no-generalisation", action="store_true", help="skip the cross-subgame study"
    )
    run.add_argument("--no-whole-game", action="store_true", help="skip solving the whole game")
    run.add_argument(
        "--names",
        choices=("random", "fixed"),
        default="random",
        help="player names: random per initialisation (the paper) or fixed (the whole-game "
        "study always uses fixed names)",
    )
    run.add_argument(
        "--pools",
        choices=("per_init", "shared"),
        default="per_init",
        help="endowment/valuation pools drawn per initialisation or once for all (the "
        "whole-game study always uses shared pools)",
    )
    run.add_argument(
        "--processes",
        type=positive_int,
        default=None,
        help="worker processes for the CFR solves (default: all cores when worth it; 1 = none)",
    )
    run.set_defaults(func=_run)
    fig = sub.add_parser("figures", help="redraw the figures of a results folder")
    fig.add_argument(
        "--out", default="results/fruit", help="results folder (default results/fruit)"
    )
    _add_figure_options(fig)
    fig.set_defaults(func=_figures)
    cmp = sub.add_parser(
        "compare",
        help="overlay several results folders (Figs. 6-8, one line per run, and a table)",
    )
    cmp.add_argument("dirs", nargs="+", metavar="DIR", help="results folders of `run`")
    cmp.add_argument("--out", required=True, help="folder for the comparison")
    cmp.add_argument("--labels", default=None, help="comma-separated run labels, one per DIR")
    _add_figure_options(cmp)
    cmp.set_defaults(func=_compare)
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])
