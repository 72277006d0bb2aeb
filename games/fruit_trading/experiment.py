"""The belief-revision experiment of Lindström et al., end to end.

For each variant (``tone``: tones only; ``tone+MODEL``: tones plus the
opponent model MODEL — ``tone+dirichlet`` is the paper's Dirichlet belief
revision, alias ``tone+belief``; ``tone+gratr`` the GRATR trust graph; any
registered model works) and each of ``inits`` initialisations, the subgame tree is
materialised (all LLM calls batched and cached) and solved with CFR for
``iterations`` iterations; NashConv, CFR-Gain (against always playing tone
"any") and their ratio are recorded at every iteration. Written to ``out``:

* ``summary.json`` — settings, backend and model, call and parse counters,
  tree sizes, Tables 1–3, Fig. 6 data, final metrics, the iteration at which
  CFR-Gain first exceeds NashConv per subgame (approximate ESS), the
  generalisation and whole-game studies, the degeneracy counts per variant
  (:func:`solvers.degeneracy_counts`), timings;
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
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from games.engine.pipeline import build_and_solve
from games.engine.results import model_label
from games.fruit_trading import exports, report
from games.fruit_trading.dialogue import Config, DialogueLogic
from games.fruit_trading.rules import NAMINGS, POOLINGS
from games.fruit_trading.studies import ANY, any_baseline, generalisation_study, whole_game_study
from games.fruit_trading.tree import (
    GAME_NAME,
    Subgame,
    build_subgames,
    root_steps,
)
from gt_llm.cache import CachedModel
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model, parse_spec
from gt_llm.safety import public_spec
from runs.atomic import finite_or_none
from runs.results import ResultsDir, prepare_results_dir
from solvers import (
    cfr_curves,
    degeneracy_counts,
    studies,
)
from solvers.cfr import resolve_variant

logger = logging.getLogger(__name__)

#: The variant without an opponent model.
TONE = "tone"
#: Old variant names that still load: ``tone+belief`` was Dirichlet belief revision.
VARIANT_ALIASES: dict[str, str] = {"tone+belief": "tone+dirichlet"}
#: The paper's two variants, under their historical names (the default run).
DEFAULT_VARIANTS: tuple[str, ...] = ("tone", "tone+belief")
#: (names, pools) of the whole-game study: the same players, private information
#: from small shared pools, so that information sets recur across initialisations.
WHOLE_GAME_SETTING: tuple[str, str] = ("fixed", "shared")


def variant_model(variant: str) -> str | None:
    """The opponent model a variant names: ``tone`` -> None, ``tone+gratr`` -> ``gratr``.

    ``tone+<name>`` accepts every registered opponent model
    (:func:`gt_llm.opponents.opponent_models`); ``tone+belief`` is an alias of
    ``tone+dirichlet``.

    Raises:
      ValueError: not ``tone`` or ``tone+<registered model>``.
    """
    from gt_llm.opponents import opponent_models

    if variant == TONE:
        return None
    canonical = VARIANT_ALIASES.get(variant, variant)
    head, _, model = canonical.partition("+")
    if head != TONE or model not in opponent_models():
        raise ValueError(
            f"unknown variant {variant!r}; use tone or tone+MODEL with MODEL one of "
            f"{', '.join(opponent_models())} (tone+belief = tone+dirichlet)"
        )
    return model


def known_variants() -> list[str]:
    """Every variant name :func:`variant_model` accepts (aliases last)."""
    from gt_llm.opponents import opponent_models

    return [TONE] + [f"{TONE}+{m}" for m in opponent_models()] + list(VARIANT_ALIASES)


@dataclasses.dataclass(frozen=True)
class ExperimentSettings:
    """Settings of :func:`run_experiment` (defaults match the paper).

    Attributes:
      inits: Number of initialisations (subgames).
      iterations: CFR iterations per subgame.
      variants: Which of ``tone`` and ``tone+belief`` to run.
      backend: Model spec for :func:`gt_llm.load_model`.
      out: Output folder.
      cache: SQLite cache path (default ``<out>/llm_cache.sqlite``).
      max_messages: Messages per negotiation.
      num_seeds: LLM seeds per message.
      scenario_seed: Master seed of the initialisations.
      payoff: ``"llm"`` or ``"exact"`` payoffs.
      cfr_variant: CFR variant for :class:`solvers.CFRSolver`.
      max_concurrency: Bound on concurrent LLM calls (default: the backend's).
      requests_per_minute: Rate limit of a remote backend (e.g. Groq's
        per-model limit); only calls that miss the cache count.
      timeout: Per-call timeout of a remote backend, seconds (default: the backend's).
      whole_game_iterations: CFR iterations for the whole game (default: ``iterations``).
      generalisation: Run the generalisation study.
      whole_game: Run the whole-game study.
      progress: Show progress bars.
      names: Player names, ``random`` (the paper) or ``fixed``; the whole-game
        study always uses fixed names (see :func:`whole_game_study`).
      pools: Endowment/valuation pools, ``per_init`` or ``shared`` (the
        whole-game study always uses shared pools).
      processes: Worker processes for the CFR solves (``solvers.cfr_curves``):
        1 solves here, None uses every core when the work is large enough.
      structured: Ask for JSON answers under each task's schema (``--structured on``).
    """

    inits: int = 30
    iterations: int = 1000
    variants: tuple[str, ...] = DEFAULT_VARIANTS
    backend: str = "scripted"
    out: str = "results/fruit"
    cache: str | None = None
    max_messages: int = 4
    num_seeds: int = 2
    scenario_seed: int = 0
    payoff: str = "llm"
    cfr_variant: str = "cfr"
    max_concurrency: int | None = None
    requests_per_minute: float | None = None
    timeout: float | None = None
    whole_game_iterations: int | None = None
    generalisation: bool = True
    whole_game: bool = True
    progress: bool = True
    processes: int | None = None
    names: str = "random"
    pools: str = "per_init"
    structured: bool = True

    def __post_init__(self) -> None:
        if self.inits < 1:
            raise ValueError(f"run_experiment: inits must be >= 1, got {self.inits}")
        if self.iterations < 1:
            raise ValueError(f"run_experiment: iterations must be >= 1, got {self.iterations}")
        if not self.variants:
            raise ValueError("run_experiment: give at least one variant (tone, tone+dirichlet)")
        for v in self.variants:
            try:
                variant_model(v)
            except ValueError as err:
                raise ValueError(f"run_experiment: {err}") from None
        if len(set(self.variants)) != len(self.variants):
            raise ValueError(f"run_experiment: variants repeat a name: {list(self.variants)}")
        if self.names not in NAMINGS:
            raise ValueError(
                f"run_experiment: names must be one of {', '.join(NAMINGS)}, got {self.names!r}"
            )
        if self.pools not in POOLINGS:
            raise ValueError(
                f"run_experiment: pools must be one of {', '.join(POOLINGS)}, got {self.pools!r}"
            )
        if self.processes is not None and self.processes < 1:
            raise ValueError(
                f"run_experiment: processes must be >= 1 (or None: all cores when worth it), "
                f"got {self.processes}"
            )
        if self.max_messages < 2:
            raise ValueError(f"run_experiment: max_messages must be >= 2, got {self.max_messages}")
        if self.num_seeds < 1:
            raise ValueError(f"run_experiment: num_seeds must be >= 1, got {self.num_seeds}")
        if self.requests_per_minute is not None and not self.requests_per_minute > 0:
            raise ValueError(
                "run_experiment: requests_per_minute must be > 0 (or None for no limit), "
                f"got {self.requests_per_minute}"
            )
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(
                f"run_experiment: timeout must be > 0 seconds (or None), got {self.timeout}"
            )
        if self.payoff not in ("llm", "exact"):
            raise ValueError(
                f"run_experiment: payoff must be 'llm' or 'exact', got {self.payoff!r}"
            )
        # Before any call: an unknown variant used to surface only after every tree was built.
        resolve_variant(self.cfr_variant, caller="run_experiment: cfr_variant")
        if self.whole_game_iterations is not None and self.whole_game_iterations < 1:
            raise ValueError(
                "run_experiment: whole_game_iterations must be >= 1 (or None), "
                f"got {self.whole_game_iterations}"
            )

    @property
    def cache_path(self) -> str:
        return self.cache or os.path.join(self.out, "llm_cache.sqlite")

    def results_settings(self) -> dict[str, Any]:
        """The settings that determine the results, as the results folder's manifest records them.

        Every field except those declared in :data:`NON_RESULT_SETTINGS`
        (where and how calls are made: folder, cache, concurrency, rate,
        timeout, progress bars, worker processes; the backend, which the
        manifest records and compares on its own), so that a new field is
        compared unless it is declared harmless, and a resumed run with
        another ``--rpm`` is the same run.
        """
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in NON_RESULT_SETTINGS
        }

    def public(self) -> dict[str, Any]:
        """Every setting, the backend as its public label (no credentials), for summaries."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if k != "progress"}
        out["backend"] = public_spec(self.backend)
        return out


#: Fields of :class:`ExperimentSettings` that do not change the results (see
#: :meth:`ExperimentSettings.results_settings`); every other field is compared.
NON_RESULT_SETTINGS = frozenset(
    {
        "backend",
        "out",
        "cache",
        "max_concurrency",
        "requests_per_minute",
        "timeout",
        "progress",
        "processes",
    }
)


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` produced: the summary and where the files are."""

    out: Path
    summary: dict[str, Any]
    subgames: dict[str, list[Subgame]]


# --- the run -----------------------------------------------------------------------


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
    out = run.path
    if model is None:
        # None keeps a backend's default; the scripted backend ignores call options.
        model = load_model(
            settings.backend,
            cache=settings.cache_path,
            requests_per_minute=settings.requests_per_minute,
            timeout=settings.timeout,
        )
    label = model_label(model)
    logger.info(
        "fruit trading: %s, %d inits, %d iterations",
        label.label,
        settings.inits,
        settings.iterations,
    )
    timings: dict[str, float] = {}
    summary: dict[str, Any] = {
        **label.to_json(),
        "settings": settings.public(),
        "variants": {},
    }
    subgames: dict[str, list[Subgame]] = {}
    curves_by_variant = {}
    for variant in settings.variants:
        opponent = variant_model(variant)
        cfg = Config(
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
        stats = ParseStats()
        slug = variant.replace("+", "_")
        tag = {"backend": label.backend, "model": label.model}
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
            tag=tag,
            stats=stats,
            max_concurrency=settings.max_concurrency,
            processes=settings.processes,
            progress=settings.progress,
            label=f"[{variant}]",
        )
        timings[f"build_{variant}_s"] = solved.build_s
        timings[f"solve_{variant}_s"] = solved.solve_s
        sgs, curves, trees = solved.subgames, solved.curves, solved.trees
        subgames[variant] = sgs
        curves_by_variant[variant] = curves
        ess = studies.ess_iterations(curves)
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
            "ess_first_iteration": ess,
            "opponent_model": opponent,
            "degeneracy": degeneracy_counts(trees, baseline_action=ANY).to_dict(),
        }
        if opponent is not None:
            v["guesses"] = report.guess_table(sgs)
            v["guesses_distinct"] = report.guess_table_distinct(sgs)
        # The final average policies come with the curves: no second CFR run per tree.
        policies = solved.policies
        # Through the results folder, so the manifest lists them and --force clears them.
        policy_doc = exports.policy_document(sgs, policies, variant=variant, label=label)
        run.write_json(f"policy_{slug}.json", policy_doc)
        run.write_text(
            f"dialogues_{slug}.jsonl",
            exports.dialogue_lines(sgs, policies, variant=variant, label=label),
        )
        if settings.generalisation:
            t0 = time.perf_counter()
            v["generalisation"] = generalisation_study(trees, policies)
            timings[f"generalisation_{variant}_s"] = time.perf_counter() - t0
        if settings.whole_game:
            t0 = time.perf_counter()
            whole_sgs, whole_policies = sgs, policies
            if (cfg.names, cfg.pools) != WHOLE_GAME_SETTING:
                # With random names (or private information drawn per initialisation)
                # information sets hardly recur across subgames and the whole game is
                # the subgames side by side: solve it with fixed names and shared pools.
                whole_sgs = build_subgames(
                    range(settings.inits),
                    dataclasses.replace(
                        cfg, names=WHOLE_GAME_SETTING[0], pools=WHOLE_GAME_SETTING[1]
                    ),
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
            v["whole_game"] = whole_game_study(
                whole_sgs,
                whole_policies,
                settings.whole_game_iterations or settings.iterations,
                settings.cfr_variant,
            )
            timings[f"whole_game_{variant}_s"] = time.perf_counter() - t0
        summary["variants"][variant] = v

    if isinstance(model, CachedModel):
        summary["llm_calls"] = dataclasses.asdict(model.stats())
    summary["fallbacks_total"] = sum(v["fallbacks"] for v in summary["variants"].values())
    summary["timings"] = timings
    _write_tables(run, summary)
    # Strict JSON: NaN (e.g. a percentage over zero histories) is written as null.
    run.write_json("summary.json", finite_or_none(summary))
    run.write_text("tables.md", report.markdown_tables(summary) + "\n")
    from games.fruit_trading import figures

    figures.draw_all(out)
    if own:
        run.finish()
    return ExperimentResult(out=out, summary=summary, subgames=subgames)


#: Columns of Table 1 (``report.guess_table`` rows), so the CSV has a header without rows.
_GUESS_COLUMNS = ("count", "message", "correct", "total", "percentage")


def _write_tables(run: ResultsDir, summary: Mapping[str, Any]) -> None:
    tag = {"backend": summary["backend"], "model": summary["model"]}
    t1, f6, t23, ess, gen, whole = [], [], [], [], [], []
    for variant, v in summary["variants"].items():
        for r in v.get("guesses", []):
            t1.append({"variant": variant, "count": "histories", **r, **tag})
        for r in v.get("guesses_distinct", []):
            t1.append({"variant": variant, "count": "distinct_dialogues", **r, **tag})
        for r in v["agreements"]:
            f6.append({"variant": variant, **r, **tag})
        for r in v["payoff_signs"]:
            t23.append({"variant": variant, **r, **tag})
        for tr, it in zip(v["trees"], v["ess_first_iteration"], strict=True):
            ess.append(
                {
                    "variant": variant,
                    "init": tr["init"],
                    "first_iteration_gain_above_nashconv": it,
                    **tag,
                }
            )
        if "generalisation" in v:
            g = v["generalisation"]
            for tr, own, tm, tp in zip(
                v["trees"],
                g["own_gain"],
                g["transfer_gain_mean"],
                g["transfer_positive_fraction"],
                strict=True,
            ):
                gen.append(
                    {
                        "variant": variant,
                        "init": tr["init"],
                        "own_cfr_gain": own,
                        "transfer_cfr_gain_mean": tm,
                        "transfer_positive_fraction": tp,
                        **tag,
                    }
                )
        if "whole_game" in v:
            w = v["whole_game"]
            for name in ("whole_game_cfr", "per_subgame_cfr_assembled"):
                whole.append(
                    {
                        "variant": variant,
                        "profile": name,
                        "nash_conv": w[name]["nash_conv"],
                        "cfr_gain": w[name]["cfr_gain"],
                        "iterations": w["iterations"],
                        **tag,
                    }
                )
            if "per_subgame_in_whole_game" in w:
                legal = w["per_subgame_in_whole_game"]
                whole.append(
                    {
                        "variant": variant,
                        "profile": "per_subgame_cfr_reach_mixed",
                        "nash_conv": legal["nash_conv"],
                        "cfr_gain": legal["cfr_gain"],
                        "iterations": w["iterations"],
                        **tag,
                    }
                )
    run.write_csv("table1_guesses.csv", t1, ("variant", *_GUESS_COLUMNS, *tag))
    run.write_csv("fig6_agreements.csv", f6)
    run.write_csv("table2_3_payoff_signs.csv", t23)
    run.write_csv("ess.csv", ess)
    # Only studies that ran (--no-generalisation / --no-whole-game leave no empty files).
    if gen:
        run.write_csv("generalisation.csv", gen)
    if whole:
        run.write_csv("whole_game.csv", whole)
