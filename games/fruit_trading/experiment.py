"""The belief-revision experiment of Lindström et al., end to end.

For each variant (``tone``: tones only; ``tone+MODEL``: tones plus the
opponent model MODEL — ``tone+dirichlet`` is the paper's Dirichlet belief
revision, alias ``tone+belief``; ``tone+gratr`` the GRATR trust graph; any
registered model works) and each of ``inits`` initialisations, the subgame tree is
materialised (all LLM calls batched and cached) and solved with CFR for
``iterations`` iterations; NashConv, CFR-Gain (against always playing tone
"any") and their ratio are recorded at every iteration. Written to ``out``:

* ``summary.json`` — settings, backend and model, the agreement judge's scores
  on the labelled set (``judge``, :mod:`games.fruit_trading.judge_check`), call and parse counters,
  tree sizes, Tables 1–3, Fig. 6 data, final metrics, the iteration at which
  CFR-Gain first exceeds NashConv per subgame (approximate ESS), the
  generalisation and whole-game studies, the degeneracy counts per variant
  (:func:`solvers.degeneracy_counts`), timings, and on a remote backend the
  calls kept in flight (``calls_in_flight``: mean, peak; :mod:`gt_llm.inflight`);
* CSVs: ``table1_guesses.csv``, ``fig6_agreements.csv``,
  ``table2_3_payoff_signs.csv``, ``curves_<variant>.csv`` (mean/std per
  iteration), ``curves_<variant>_per_tree.csv``, ``ess.csv``,
  ``generalisation.csv``, ``whole_game.csv``;
* per variant ``policy_<variant>.json`` (each subgame's CFR average policy,
  loadable as an OpenSpiel ``TabularPolicy``) and ``dialogues_<variant>.jsonl``
  (every leaf's messages, tones, seeds, payoffs and reach under CFR) —
  :mod:`games.fruit_trading.exports`;
* figures, drawn from those files (:mod:`games.fruit_trading.figures`);
* ``manifest.json`` — written first with ``complete: false`` and last with
  ``complete: true`` (:mod:`runs.results`): a folder holding results of
  other settings is refused unless forced, and every file is written to a
  temporary file and renamed into place.

Beyond the paper: (1) generalisation — each subgame's CFR strategy, mapped to
a tone distribution per decision level (reach-weighted under that strategy),
is played in every other subgame and its CFR-Gain there is reported; (2) the
whole game — the initialisation becomes a chance node over all subgames (so
private information stays private), with fixed player names and shared
endowment/valuation pools so that information sets recur across
initialisations; CFR solves it, and its
NashConv and CFR-Gain are compared with the per-subgame solutions assembled
into a legal whole-game profile, together with how much the per-subgame
solutions gain from knowing the subgame (the leak). Both studies are in
:mod:`games.fruit_trading.studies`.

The CFR average policy of every subgame comes with its curves
(``solvers.Curves.average_policies``): nothing is solved twice.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from games.engine.pipeline import Solved, build_and_solve
from games.engine.results import ModelLabel, model_label
from games.engine.tree import beside
from games.fruit_trading import exports, judge_check, report
from games.fruit_trading.dialogue import Config, DialogueLogic
from games.fruit_trading.settings import (
    DEFAULT_VARIANTS,
    NON_RESULT_SETTINGS,
    TONE,
    VARIANT_ALIASES,
    WHOLE_GAME_SETTING,
    ExperimentSettings,
    known_variants,
    variant_model,
)
from games.fruit_trading.studies import ANY, any_baseline, generalisation_study, whole_game_study
from games.fruit_trading.tables import write_tables
from games.fruit_trading.tree import (
    GAME_NAME,
    Subgame,
    build_subgames,
    root_steps,
)
from gt_llm import inflight
from gt_llm.cache import combined_stats
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model, parse_spec
from gt_llm.safety import public_spec
from runs.atomic import finite_or_none
from runs.results import ResultsDir, prepare_results_dir
from solvers import (
    TreePolicy,
    cfr_curves,
    degeneracy_counts,
    studies,
)

__all__ = [
    "DEFAULT_VARIANTS",
    "NON_RESULT_SETTINGS",
    "TONE",
    "VARIANT_ALIASES",
    "WHOLE_GAME_SETTING",
    "ExperimentResult",
    "ExperimentSettings",
    "known_variants",
    "open_results",
    "run_experiment",
    "variant_model",
]

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` produced: the summary and where the files are."""

    out: Path
    summary: dict[str, Any]
    subgames: dict[str, list[Subgame]]


def open_results(
    settings: ExperimentSettings, *, force: bool = False, command: Sequence[str] | None = None
) -> ResultsDir:
    """Prepares ``settings.out`` for this experiment (manifest first, ``complete: false``).

    Raises:
      runs.atomic.ResultsError: the folder is empty, unwritable, or holds
        results of other settings and ``force`` is false.
    """
    backend, model_name = parse_spec(public_spec(settings.backend))
    return prepare_results_dir(
        settings.out,
        settings.results_settings(),
        force=force,
        backend=backend,
        model=model_name or None,
        command=command,
    )


def run_experiment(
    settings: ExperimentSettings,
    *,
    model: ChatModel | None = None,
    results: ResultsDir | None = None,
) -> ExperimentResult:
    """Runs the experiment and writes its files; see the module docstring.

    Args:
      settings: What to run.
      model: A ready model (else ``settings.backend`` through the cache at
        ``settings.cache_path``).
      results: The opened results folder (from :func:`open_results` or
        :func:`games.engine.cli_options.results_folder`); the caller finishes
        it. Default: :func:`open_results` without force, finished here.

    Raises:
      ValueError: bad settings, or an empty, unwritable or other-settings output folder.
      gt_llm.ConfigurationError: the backend cannot run here.
    """
    own = results is None
    run = results if results is not None else open_results(settings)
    try:
        if model is None:
            model = _load_model(settings)
        label = model_label(model)
        logger.info(
            "fruit trading: %s, %d inits, %d iterations",
            label.label,
            settings.inits,
            settings.iterations,
        )
        timings: dict[str, float] = {}
        in_flight = inflight.start()  # remote calls in flight, for the summary
        summary: dict[str, Any] = {
            **label.to_json(),
            "settings": settings.public(),
            "variants": {},
        }
        subgames: dict[str, list[Subgame]] = {}
        # The agreement judge's scores on the labelled set, first: a weak judge warns early.
        # On a remote backend its calls wait on the server beside the trees' (beside), so
        # neither waits for the other's slowest call; its scores are the same.
        summary["judge"] = None  # its place in the summary, whichever finishes first
        with ThreadPoolExecutor(max_workers=1) as pool:
            judge = beside(pool, model, lambda: judge_check.judge_for_run(settings, model))
            for variant in settings.variants:
                summary["variants"][variant], subgames[variant] = _run_variant(
                    settings, variant, model, run, label, timings
                )
            summary["judge"] = judge.result()
        stats = combined_stats(model)
        if stats is not None:
            summary["llm_calls"] = dataclasses.asdict(stats)
        summary["fallbacks_total"] = sum(v["fallbacks"] for v in summary["variants"].values())
        summary["timings"] = timings
        in_flight.close()
        seen = in_flight.result()
        if seen.calls > 0:  # a remote backend: how many calls the run kept in flight
            summary["calls_in_flight"] = seen.to_json()
            logger.info("fruit trading: %s", seen.line())
        _write_summary(run, summary)
        if own:
            run.finish()
    finally:
        if own:
            run.close()  # the folder's lock, also when the run failed
    return ExperimentResult(out=run.path, summary=summary, subgames=subgames)


def _load_model(settings: ExperimentSettings) -> ChatModel:
    """``settings.backend`` through the call cache at ``settings.cache_path``."""
    # None keeps a backend's default; the scripted backend ignores call options.
    return load_model(
        settings.backend,
        cache=settings.cache_path,
        requests_per_minute=settings.requests_per_minute,
        timeout=settings.timeout,
    )


def _run_variant(
    settings: ExperimentSettings,
    variant: str,
    model: ChatModel,
    run: ResultsDir,
    label: ModelLabel,
    timings: dict[str, float],
) -> tuple[dict[str, Any], list[Subgame]]:
    """One variant: its trees built and solved, its exports written, its studies run.

    Returns:
      The variant's part of the summary and its subgames; its timings go
      into ``timings``.
    """
    opponent = variant_model(variant)
    cfg = _dialogue_config(settings, opponent)
    stats = ParseStats()
    slug = variant.replace("+", "_")
    solved = build_and_solve(
        DialogueLogic(cfg),
        root_steps(range(settings.inits), cfg),
        model,
        baseline=any_baseline,
        iterations=settings.iterations,
        tree_name=lambda sg: f"init{sg.scenario.init}",
        cfr_variant=settings.cfr_variant,
        subgame=Subgame,
        game_name=GAME_NAME,
        run=run,
        slug=slug,
        tag={"backend": label.backend, "model": label.model},
        stats=stats,
        max_concurrency=settings.max_concurrency,
        processes=settings.processes,
        progress=settings.progress,
        label=f"[{variant}]",
        noise=settings.noise,
        eval_seeds=settings.eval_seeds,
    )
    timings[f"build_{variant}_s"] = solved.build_s
    timings[f"solve_{variant}_s"] = solved.solve_s
    timings[f"noise_{variant}_s"] = solved.noise_s
    sgs = solved.subgames
    v = _variant_summary(settings, solved, stats, opponent)
    # The final average policies come with the curves: no second CFR run per tree.
    policies = solved.policies
    # Through the results folder, so the manifest lists them and --force clears them.
    run.write_json(
        f"policy_{slug}.json",
        exports.policy_document(sgs, policies, variant=variant, label=label),
    )
    run.write_text(
        f"dialogues_{slug}.jsonl",
        exports.dialogue_lines(sgs, policies, variant=variant, label=label),
    )
    if settings.generalisation:
        t0 = time.perf_counter()
        v["generalisation"] = generalisation_study(solved.trees, policies)
        timings[f"generalisation_{variant}_s"] = time.perf_counter() - t0
    if settings.whole_game:
        t0 = time.perf_counter()
        v["whole_game"] = _whole_game(settings, variant, cfg, model, sgs, policies)
        timings[f"whole_game_{variant}_s"] = time.perf_counter() - t0
    return v, sgs


def _dialogue_config(settings: ExperimentSettings, opponent: str | None) -> Config:
    """The dialogue game of a variant (``opponent``: its opponent model, None for tones only)."""
    return Config(
        max_messages=settings.max_messages,
        num_seeds=settings.num_seeds,
        beliefs=opponent is not None,
        opponent_model=opponent or Config.opponent_model,
        scenario_seed=settings.scenario_seed,
        payoff_source=settings.payoff,
        names=settings.names,
        pools=settings.pools,
        structured=settings.structured,
    )


def _variant_summary(
    settings: ExperimentSettings,
    solved: Solved[Subgame],
    stats: ParseStats,
    opponent: str | None,
) -> dict[str, Any]:
    """The paper's tables, the curves' final metrics and ESS, and the trees of one variant."""
    sgs, curves = solved.subgames, solved.curves
    v: dict[str, Any] = {
        "trees": [
            {
                "init": sg.scenario.init,
                "nodes": sg.tree.num_nodes,
                "infosets": sg.tree.num_infosets,
                "terminals": sg.tree.num_terminals,
                "scenario": sg.scenario.to_dict(),
            }
            for sg in sgs
        ],
        "parse": stats.to_dict(),
        "fallbacks": stats.to_dict()["total_fallbacks"],
        "agreements": report.agreement_rates(sgs, settings.max_messages),
        # Tables 2 and 3 of the paper: the last two messages (3 and 4 by default).
        "payoff_signs": report.payoff_signs(
            sgs, (settings.max_messages - 1, settings.max_messages)
        ),
        "payoff_disagreements": report.payoff_disagreements(sgs),
        "final": studies.final_metrics(curves),
        # Each subgame's CFR-Gain and NashConv beside their noise (solvers.noise).
        "noise": solved.noise.to_dict() if solved.noise is not None else None,
        "ess_first_iteration": studies.ess_iterations(curves),
        "opponent_model": opponent,
        "degeneracy": degeneracy_counts(solved.trees, baseline_action=ANY).to_dict(),
    }
    if opponent is not None:
        v["guesses"] = report.guess_table(sgs)
        v["guesses_distinct"] = report.guess_table_distinct(sgs)
    v["quality"] = report.answer_quality_report(sgs, v)
    return v


def _whole_game(
    settings: ExperimentSettings,
    variant: str,
    cfg: Config,
    model: ChatModel,
    sgs: list[Subgame],
    policies: list[TreePolicy],
) -> dict[str, Any]:
    """The whole-game study of one variant (:func:`whole_game_study`)."""
    whole_sgs, whole_policies = sgs, policies
    if (cfg.names, cfg.pools) != WHOLE_GAME_SETTING:
        # With random names (or private information drawn per initialisation)
        # information sets hardly recur across subgames and the whole game is
        # the subgames side by side: solve it with fixed names and shared pools.
        whole_sgs, whole_policies = _fixed_name_solutions(settings, variant, cfg, model)
    return whole_game_study(
        whole_sgs,
        whole_policies,
        settings.whole_game_iterations or settings.iterations,
        settings.cfr_variant,
    )


def _fixed_name_solutions(
    settings: ExperimentSettings, variant: str, cfg: Config, model: ChatModel
) -> tuple[list[Subgame], list[TreePolicy]]:
    """The subgames rebuilt with fixed names and shared pools, and their CFR policies."""
    whole_sgs = build_subgames(
        range(settings.inits),
        dataclasses.replace(cfg, names=WHOLE_GAME_SETTING[0], pools=WHOLE_GAME_SETTING[1]),
        model,
        policy=ParsePolicy(),
        stats=ParseStats(),
        max_concurrency=settings.max_concurrency,
        progress=settings.progress,
        label=f"[{variant}] fixed-name trees:",
    )
    whole_policies = list(
        cfr_curves(
            [sg.tree for sg in whole_sgs],
            any_baseline,
            settings.iterations,
            variant=settings.cfr_variant,
            schedule=[settings.iterations],
            processes=settings.processes,
        ).average_policies
    )
    return whole_sgs, whole_policies


def _write_summary(run: ResultsDir, summary: dict[str, Any]) -> None:
    """The tables, ``summary.json``, ``tables.md`` and the figures drawn from them."""
    write_tables(run, summary)
    # Strict JSON: NaN (e.g. a percentage over zero histories) is written as null.
    run.write_json("summary.json", finite_or_none(summary))
    run.write_text("tables.md", report.markdown_tables(summary) + "\n")
    from games.fruit_trading import figures  # matplotlib: loaded only to draw

    figures.draw_all(run.path)
