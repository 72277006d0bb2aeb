"""``gt-llm fruit-trading ...``: the belief-revision experiment from the command line.

``gt-llm fruit-trading run`` builds the subgame trees, solves them and writes
tables, CSVs, exports and figures; ``gt-llm fruit-trading figures`` redraws the
figures of an existing results folder; ``gt-llm fruit-trading compare DIR
[DIR ...] --out DIR`` overlays several runs; ``gt-llm fruit-trading view DIR
--variant tone --init 3`` writes one subgame's dialogue tree as an HTML page.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from games.engine.cli_options import (
    add_common_options,
    attach_caches,
    check_backend,
    check_local_run,
    check_out,
    prepare_models,
    results_folder,
    say,
)
from games.engine.noise_options import add_noise_options
from games.engine.noise_report import metric_text, noise_lines
from games.engine.quality import quality_lines
from games.fruit_trading.seats import player_routed_model
from gt_llm.argtypes import (
    MAX_SIZE,
    MAX_WORKERS,
    bounded_int,
    distinct_names,
    non_empty,
    refuse_repeated,
)
from solvers.cfr import VARIANTS as CFR_VARIANTS

if TYPE_CHECKING:
    from games.fruit_trading.settings import ExperimentSettings
    from gt_llm.chat import ChatModel

logger = logging.getLogger(__name__)

#: Messages per negotiation: at least an offer and its answer; the dialogue view's bound above.
MIN_MESSAGES, MAX_MESSAGES = 2, 100
#: LLM seeds per message (the OpenSpiel game's bound, python_fruit_trading num_seeds).
MAX_SEEDS = 16


def _variants(text: str) -> tuple[str, ...]:
    from games.fruit_trading.settings import known_variants, variant_model

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
    return refuse_repeated(names, "variant(s)")


def _labels(text: str) -> str:
    """``--labels``: comma-separated run labels, none empty, none repeated (kept as given)."""
    distinct_names(text)  # the curves of two runs of one label would be drawn as one
    return text


def settings_from_args(args: argparse.Namespace) -> ExperimentSettings:
    """The experiment ``fruit-trading run`` runs for these parsed options."""
    from games.engine.noise_options import eval_seed_count
    from games.fruit_trading.settings import ExperimentSettings

    players = player_specs(args)
    return ExperimentSettings(
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
        structured=args.structured == "on",
        player_backends=players,
        eval_seeds=eval_seed_count(
            args.eval_seeds, specs=[args.backend, *(players or ())], num_seeds=args.num_seeds
        ),
        permutations=args.permutations,
        bootstrap=args.bootstrap,
        fdr_q=args.fdr_q,
    )


def player_specs(args: argparse.Namespace) -> tuple[str, str] | None:
    """``--player-backends A,B``: the two players' backend specs, checked (no call made).

    Raises:
      ValueError: not two specs, or a spec the registry refuses (naming the flag).
    """
    from gt_llm.registry import check_spec, split_spec_list

    if getattr(args, "player_backends", None) is None:
        return None
    # A comma in a URL's password or query stays in its spec (never shown as one).
    specs = tuple(split_spec_list(str(args.player_backends)))
    if "" in specs:
        raise ValueError(
            f"fruit-trading run: --player-backends entry {specs.index('') + 1} of {len(specs)} "
            "is empty; give two backend specs, the first player's and the second's, "
            "separated by one comma"
        )
    if len(specs) != 2:
        raise ValueError(
            "fruit-trading run: --player-backends needs two backend specs, the first player's "
            f"and the second's, comma-separated; got {len(specs)}"
        )
    for i, spec in enumerate(specs):
        try:
            check_spec(spec)
        except ValueError as exc:
            raise ValueError(f"fruit-trading run: --player-backends player {i}: {exc}") from None
    return specs[0], specs[1]


def _run(args: argparse.Namespace) -> int:
    from games.fruit_trading.estimate import CALL_SHAPE, check_fits, estimate_work
    from games.fruit_trading.experiment import run_experiment
    from games.fruit_trading.judge_check import expected_calls, judge_lines
    from games.fruit_trading.report import payoff_disagreement_text

    # Every check before the first model call: flags (argparse types), backend, folder, size.
    check_backend(args)
    check_out(args)
    settings = settings_from_args(args)
    estimate = estimate_work(
        inits=settings.inits,
        iterations=settings.iterations,
        variants=len(settings.variants),
        max_messages=settings.max_messages,
        num_seeds=settings.num_seeds,
        whole_game=settings.whole_game,
        eval_seeds=settings.eval_seeds,
        bootstrap=settings.bootstrap,
        judge_calls=expected_calls(),
    )
    check_fits(estimate, inits=settings.inits, iterations=settings.iterations)
    if not args.no_progress:
        sys.stderr.write(estimate.describe() + "\n")
    # Backend, key and cache checked before --out is touched (--force clears only then);
    # with --player-backends one model per distinct spec, each behind the same cache file.
    specs = list(dict.fromkeys([args.backend, *(settings.player_backends or ())]))
    models = prepare_models(args, specs)
    try:
        for m in models.values():
            check_local_run(args, m, estimate, CALL_SHAPE)
        with results_folder(args, settings.results_settings(), models[args.backend]) as run:
            attach_caches(args, models)
            model: ChatModel = models[args.backend]
            if settings.player_backends is not None:
                model = player_routed_model(models, settings.player_backends, args.backend)
            result = run_experiment(settings, model=model, results=run)
    finally:
        for m in models.values():
            m.close()
    s = result.summary
    lines = [f"fruit trading results in {result.out}  (model: {s['label']})"]
    for variant, v in s["variants"].items():
        f = v["final"]
        ess = [x for x in v["ess_first_iteration"] if x is not None]
        lines.append(
            f"  {variant:14s} NashConv {metric_text(f, 'nash_conv')}   "
            f"CFR-Gain {metric_text(f, 'cfr_gain')}   "
            f"CFR-Gain > NashConv in {len(ess)}/{len(v['ess_first_iteration'])} subgames   "
            f"parse fallbacks {v['fallbacks']}"
        )
        lines.extend(noise_lines(v.get("noise"), indent=f"  {'':14s} "))
        d = v["degeneracy"]
        lines.append(
            f"  {'':14s} degeneracy: a tone choice changes some payoff in "
            f"{d['decision_changes_outcome']}/{d['trees']} subgames, NashConv(always any) > 0 "
            f"in {d['baseline_nash_conv_positive']}/{d['trees']}, constant payoff in "
            f"{d['constant_payoff']}/{d['trees']}"
        )
        lines.extend(quality_lines(v["quality"], indent=f"  {'':14s} "))
        lines.append(
            f"  {'':14s} "
            + payoff_disagreement_text(v["payoff_disagreements"], s["settings"]["payoff"])
        )
    if "llm_calls" in s:
        c = s["llm_calls"]
        lines.append(f"  LLM calls: {c['misses']} made, {c['hits']} from the cache")
    if "calls_in_flight" in s:
        f = s["calls_in_flight"]
        lines.append(
            f"  calls in flight: mean {f['mean']:.1f}, peak {f['peak']} "
            f"({f['calls']} remote calls in {f['seconds']:.1f} s)"
        )
    if "judge" in s:
        lines.extend(judge_lines(s["judge"]))
    for line in lines:
        say(line)
    return 0


def _figures(args: argparse.Namespace) -> int:
    from pathlib import Path

    from games.fruit_trading.figures import draw_all
    from runs.atomic import read_json
    from runs.results import require_complete, warn_if_incomplete

    check_out(args)
    rerun = f"`gt-llm fruit-trading run --out {args.out}`"
    # Names the file (and the fix) when it is missing or not valid JSON.
    read_json(Path(args.out) / "summary.json", rerun=rerun)
    if args.allow_incomplete:
        warn_if_incomplete(args.out, rerun=rerun)
    else:
        require_complete(args.out, rerun=rerun)
    for p in draw_all(args.out, fmt=args.format, log_x=args.log_x, log_y=args.log_y):
        say(str(p))
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from games.fruit_trading.figures import write_comparison
    from runs.atomic import read_json
    from runs.results import warn_if_incomplete

    check_out(args)  # an empty --out would write into the current folder
    missing = [d for d in args.dirs if not (Path(d) / "summary.json").exists()]
    if missing:
        raise ValueError(
            f"compare: no summary.json in {', '.join(map(repr, missing))}; give folders "
            "written by `gt-llm fruit-trading run`"
        )
    for d in args.dirs:
        rerun = f"`gt-llm fruit-trading run --out {d}`"
        read_json(Path(d) / "summary.json", rerun=rerun)  # names a broken file
        warn_if_incomplete(d, rerun=rerun)  # an unfinished run is overlaid, with a warning
    labels = [x.strip() for x in args.labels.split(",")] if args.labels else None
    if labels is not None and len(labels) != len(args.dirs):
        raise ValueError(
            f"compare: --labels has {len(labels)} names for {len(args.dirs)} folders; "
            "give one per folder"
        )
    for p in write_comparison(
        args.dirs, args.out, labels=labels, fmt=args.format, log_x=args.log_x, log_y=args.log_y
    ):
        say(str(p))
    return 0


def _view(args: argparse.Namespace) -> int:
    from pathlib import Path

    from games.fruit_trading.view import write_fruit_page
    from runs.results import warn_if_incomplete

    if not Path(args.dir).is_dir():
        raise ValueError(
            f"fruit-trading view: no folder {args.dir}; give a folder written by "
            "`gt-llm fruit-trading run`"
        )
    out = args.out or str(
        Path(args.dir) / "view" / f"{args.variant.replace('+', '_')}_init{args.init}.html"
    )
    if not out.endswith((".html", ".htm")):
        raise ValueError("fruit-trading view --out: end the file name in .html")
    warn_if_incomplete(args.dir, rerun=f"`gt-llm fruit-trading run --out {args.dir}`")
    if not args.out:
        from runs.folders import folder_inside

        folder_inside(args.dir, "view")  # the page's folder, never written through a link
    say(str(write_fruit_page(args.dir, args.variant, args.init, out)))
    return 0


def _judge_check(args: argparse.Namespace) -> int:
    """``fruit-trading judge-check``: the run's judge requests on the labelled set, scored."""
    from pathlib import Path

    from games.engine.cli_options import (
        attach_cache,
        cache_path,
        prepare_model,
        result_settings,
    )
    from games.fruit_trading.judge_check import (
        ScoreStore,
        judge_lines,
        prompts_sha256,
        run_judge_check,
        scores_path,
        stored_scores,
    )
    from games.fruit_trading.judge_set import load_judge_set

    # Every check before the first model call: flags (argparse), backend, folder, the set.
    check_backend(args)
    check_out(args)
    judge_set = load_judge_set()
    settings = {
        **result_settings(args, also_ignore=("fruit_command",)),
        "judge_set_sha256": judge_set.sha256,
        "prompts_sha256": prompts_sha256(),
    }
    if not args.no_progress:
        n = len(judge_set.dialogues)
        sys.stderr.write(
            f"judge check: {n} labelled dialogues, {4 * n} model calls (2 agreement questions "
            "and 2 trade summaries each; re-asks add some, cached answers cost none)\n"
        )
    model = prepare_model(args)
    try:
        with results_folder(args, settings, model) as run:
            model = attach_cache(args, model)
            result, rows = run_judge_check(
                model,
                structured=args.structured == "on",
                seed=args.seed,
                judge_set=judge_set,
                max_concurrency=args.concurrency,
                progress=not args.no_progress,
            )
            ScoreStore(scores_path(cache_path(args))).put(result["key"], stored_scores(result))
            run.write_json("judge_check.json", {**result, "dialogues": [r.to_json() for r in rows]})
    finally:
        model.close()
    for line in judge_lines(result, indent=""):
        say(line)
    calls = result.get("llm_calls", {})
    say(
        f"  LLM calls: {calls.get('made', 0)} made, {calls.get('cached', 0)} from the cache; "
        f"written {Path(args.out) / 'judge_check.json'}"
    )
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
    run.add_argument(
        "--inits",
        type=bounded_int(1, MAX_SIZE),
        default=30,
        help="initialisations (default 30; refused when the estimate exceeds memory)",
    )
    run.add_argument(
        "--iterations",
        type=bounded_int(1, MAX_SIZE),
        default=1000,
        help="CFR iterations (default 1000; refused when the estimate exceeds memory)",
    )
    run.add_argument(
        "--variants",
        type=_variants,
        default=("tone", "tone+belief"),
        help="comma-separated: tone, tone+dirichlet, tone+gratr or tone+MODEL for any "
        "registered opponent model (tone+belief = tone+dirichlet; default tone,tone+belief)",
    )
    run.add_argument(
        "--player-backends",
        type=non_empty,
        default=None,
        help="the two players' backend specs, comma-separated (default: both on --backend, "
        "which stays the agreement judge's and the trade summary's); cached apart",
    )
    add_common_options(
        run, out="results/fruit", seed_help="master seed of the initialisations (default 0)"
    )
    run.add_argument(
        "--max-messages",
        type=bounded_int(MIN_MESSAGES, MAX_MESSAGES),
        default=4,
        help=f"messages per negotiation, {MIN_MESSAGES} to {MAX_MESSAGES} (default 4)",
    )
    run.add_argument(
        "--num-seeds",
        type=bounded_int(1, MAX_SEEDS),
        default=2,
        help=f"LLM seeds per message, 1 to {MAX_SEEDS} (default 2)",
    )
    run.add_argument(
        "--payoff",
        choices=("exact", "llm"),
        default="exact",
        help="exact (default): each player's payoff computed from the agreed trade and its "
        "valuations; llm: the payoff the LLM's calculation ends in (the paper's choice). The "
        "default is exact because a model's payoffs can be made up (SmolLM2-135M's differed "
        "from the exact payoff in all 16 agreements of a study run); the LLM payoff is still "
        "asked, and how often it differs from the exact one is reported either way",
    )
    run.add_argument(
        "--cfr",
        default="cfr",
        choices=sorted(CFR_VARIANTS),
        metavar="VARIANT",
        help=f"CFR variant: {', '.join(sorted(CFR_VARIANTS))} (default cfr)",
    )
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
        type=bounded_int(1, MAX_WORKERS),
        default=None,
        help="worker threads for the CFR solves and the noise checks (the compiled kernels "
        "release the GIL; default: "
        f"all cores when worth it; 1 = none; at most {MAX_WORKERS})",
    )
    add_noise_options(run)
    run.set_defaults(func=_run)
    fig = sub.add_parser("figures", help="redraw the figures of a results folder")
    fig.add_argument(
        "--out", default="results/fruit", help="results folder (default results/fruit)"
    )
    _add_figure_options(fig)
    fig.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="draw from a folder whose run did not finish (warns) instead of refusing",
    )
    fig.set_defaults(func=_figures)
    cmp = sub.add_parser(
        "compare",
        help="overlay several results folders (Figs. 6-8, one line per run, and a table)",
    )
    cmp.add_argument("dirs", nargs="+", metavar="DIR", help="results folders of `run`")
    cmp.add_argument("--out", required=True, help="folder for the comparison")
    cmp.add_argument(
        "--labels",
        type=_labels,
        default=None,
        help="comma-separated run labels, one per DIR, each different",
    )
    _add_figure_options(cmp)
    cmp.set_defaults(func=_compare)
    view = sub.add_parser(
        "view",
        help="one subgame's dialogue tree as a self-contained HTML page",
        description="Writes one subgame's dialogue tree (messages with tone, text, seed and "
        "CFR reach probability; sigma_CFR beside the sigma_LLM baseline at each decision; "
        "payoffs at the leaves) from a results folder's dialogues_*.jsonl and policy_*.json.",
    )
    view.add_argument("dir", metavar="DIR", help="results folder of `run`")
    view.add_argument("--variant", type=non_empty, default="tone", help="variant (default tone)")
    view.add_argument(
        "--init",
        type=bounded_int(0, MAX_SIZE),
        default=0,
        help="initialisation, from 0 (default 0)",
    )
    view.add_argument(
        "--out",
        type=non_empty,
        default=None,
        help="page to write (default DIR/view/<variant>_init<N>.html)",
    )
    view.set_defaults(func=_view)
    jc = sub.add_parser(
        "judge-check",
        help="score the agreement judge and the trade summary on a labelled set of dialogues",
        description="Asks --backend the agreement requests every run asks (the question in "
        "both label orders, the trade summary in both orders of its cases; the same prompts "
        "and combining rules) on each dialogue of the labelled set shipped with gt-llm, and "
        "reports the verdict's precision, recall and accuracy and the trade summary's "
        "accuracy, with Wilson 95 % intervals and n. Writes OUT/judge_check.json (one row per "
        "dialogue) and stores the scores beside the call cache, where a `fruit-trading run` "
        "with the same cache, backend and answer mode finds them.",
    )
    add_common_options(
        jc,
        out="results/judge-check",
        seed_help="seed of the judge's calls (default 0, the seed every run's judge uses)",
    )
    jc.set_defaults(func=_judge_check)
    group.set_defaults(func=lambda args: (group.print_help(), 2)[1])
