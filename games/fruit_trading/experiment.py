"""The belief-revision experiment of Lindström et al., end to end.

For each variant (``tone``: tones only; ``tone+belief``: tones plus Dirichlet
belief revision) and each of ``inits`` initialisations, the subgame tree is
materialised (all LLM calls batched and cached) and solved with CFR for
``iterations`` iterations; NashConv, CFR-Gain (against always playing tone
"any") and their ratio are recorded at every iteration. Written to ``out``:

* ``summary.json`` — settings, backend and model, call and parse counters,
  tree sizes, Tables 1–3, Fig. 6 data, final metrics, the iteration at which
  CFR-Gain first exceeds NashConv per subgame (approximate ESS), the
  generalisation and whole-game studies, timings;
* CSVs: ``table1_guesses.csv``, ``fig6_agreements.csv``,
  ``table2_3_payoff_signs.csv``, ``curves_<variant>.csv`` (mean/std per
  iteration), ``curves_<variant>_per_tree.csv``, ``ess.csv``,
  ``generalisation.csv``, ``whole_game.csv``;
* figures, drawn from those files (:mod:`games.fruit_trading.figures`);
* ``manifest.json`` — written first with ``complete: false`` and last with
  ``complete: true`` (:mod:`solvers.results`): a folder holding results of
  other settings is refused unless forced, and every file is written to a
  temporary file and renamed into place.

Beyond the paper: (1) generalisation — each subgame's CFR strategy, mapped to
a tone distribution per decision level (reach-weighted under that strategy),
is played in every other subgame and its CFR-Gain there is reported; (2) the
whole game — the initialisation becomes a chance node over all subgames (so
private information stays private), CFR solves it, and its NashConv and
CFR-Gain are compared with the profile assembled from per-subgame solutions.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from games.engine.resources import solver_kernels_cached
from games.engine.results import model_label
from games.fruit_trading import report
from games.fruit_trading.dialogue import Config
from games.fruit_trading.rules import TONES
from games.fruit_trading.tree import Subgame, build_subgames, whole_game_tree
from gt_llm.cache import CachedModel
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model, parse_spec
from solvers import (
    CFRSolver,
    GameTree,
    TreePolicy,
    cfr_curves,
    pure_policy,
    studies,
)
from solvers.cfr import resolve_variant
from solvers.results import ResultsDir, finite_or_none, prepare_results_dir

logger = logging.getLogger(__name__)

VARIANTS: dict[str, bool] = {"tone": False, "tone+belief": True}
ANY = TONES.index("any")


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
    """

    inits: int = 30
    iterations: int = 1000
    variants: tuple[str, ...] = ("tone", "tone+belief")
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

    def __post_init__(self) -> None:
        if self.inits < 1:
            raise ValueError(f"run_experiment: inits must be >= 1, got {self.inits}")
        if self.iterations < 1:
            raise ValueError(f"run_experiment: iterations must be >= 1, got {self.iterations}")
        if not self.variants:
            raise ValueError("run_experiment: give at least one variant (tone, tone+belief)")
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise ValueError(
                f"run_experiment: unknown variant(s) {unknown}; choose from {list(VARIANTS)}"
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

        Where and how calls are made (folder, cache, concurrency, rate,
        timeout, progress bars) does not change the results and is left out,
        so a resumed run with another ``--rpm`` is the same run.
        """
        keep = (
            "inits",
            "iterations",
            "variants",
            "max_messages",
            "num_seeds",
            "scenario_seed",
            "payoff",
            "cfr_variant",
            "whole_game_iterations",
            "generalisation",
            "whole_game",
        )
        return {k: getattr(self, k) for k in keep}


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` produced: the summary and where the files are."""

    out: Path
    summary: dict[str, Any]
    subgames: dict[str, list[Subgame]]


def any_baseline(tree: GameTree) -> TreePolicy:
    """sigma_LLM: always the tone "any"."""
    return pure_policy(tree, lambda key, legal: ANY)


def generalisation_study(
    trees: Sequence[GameTree], policies: Sequence[TreePolicy]
) -> dict[str, Any]:
    """CFR-Gain of each subgame's strategy on its own and on every other subgame.

    Strategies are mapped to other subgames by decision level
    (:func:`solvers.studies.generalisation_study`); missing levels play "any".
    """
    return studies.generalisation_study(
        trees, policies, any_baseline, default_action=ANY, num_actions=len(TONES)
    ).to_dict()


def whole_game_study(
    subgames: Sequence[Subgame], policies: Sequence[TreePolicy], iterations: int, cfr_variant: str
) -> dict[str, Any]:
    """Solves the whole game and compares with the assembled per-subgame solutions."""
    tree = whole_game_tree([sg.root for sg in subgames], subgames[0].config)
    return studies.whole_game_study(
        tree,
        [sg.tree for sg in subgames],
        policies,
        any_baseline,
        iterations=iterations,
        cfr_variant=cfr_variant,
    ).to_dict()


# --- the run -----------------------------------------------------------------------


def open_results(
    settings: ExperimentSettings, *, force: bool = False, command: Sequence[str] | None = None
) -> ResultsDir:
    """Prepares ``settings.out`` for this experiment (manifest first, ``complete: false``).

    Raises:
      solvers.results.ResultsError: the folder is empty, unwritable, or holds
        results of other settings and ``force`` is false.
    """
    backend, model_name = parse_spec(settings.backend)
    return prepare_results_dir(
        settings.out,
        settings.results_settings(),
        force=force,
        backend=backend,
        model=model_name or None,
        command=command,
    )


def _say(settings: ExperimentSettings, message: str) -> None:
    # A status line beside the progress bars (stderr), or a log line when they are off.
    if settings.progress:
        tqdm.write(message, file=sys.stderr)
    else:
        logger.info(message)


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
        options: dict[str, Any] = {}
        # Only options given: the scripted backend accepts none.
        if settings.requests_per_minute is not None:
            options["requests_per_minute"] = settings.requests_per_minute
        if settings.timeout is not None:
            options["timeout"] = settings.timeout
        model = load_model(settings.backend, cache=settings.cache_path, **options)
    kernels_cached = solver_kernels_cached()
    label = model_label(model)
    logger.info(
        "fruit trading: %s, %d inits, %d iterations",
        label["label"],
        settings.inits,
        settings.iterations,
    )
    timings: dict[str, float] = {}
    summary: dict[str, Any] = {
        **label,
        "settings": {k: v for k, v in dataclasses.asdict(settings).items() if k != "progress"},
        "variants": {},
    }
    subgames: dict[str, list[Subgame]] = {}
    curves_by_variant = {}
    for variant in settings.variants:
        cfg = Config(
            max_messages=settings.max_messages,
            num_seeds=settings.num_seeds,
            beliefs=VARIANTS[variant],
            scenario_seed=settings.scenario_seed,
            payoff_source=settings.payoff,
        )
        stats = ParseStats()
        t0 = time.perf_counter()
        sgs = build_subgames(
            range(settings.inits),
            cfg,
            model,
            policy=ParsePolicy(),
            stats=stats,
            max_concurrency=settings.max_concurrency,
            progress=settings.progress,
            label=f"[{variant}] trees:",
        )
        timings[f"build_{variant}_s"] = time.perf_counter() - t0
        subgames[variant] = sgs
        trees = [sg.tree for sg in sgs]
        if kernels_cached is not True:
            # numba compiles the kernels on the first solve: ~30 s without output otherwise.
            _say(settings, "compiling solver kernels (first run only, about half a minute) ...")
            kernels_cached = True
        t0 = time.perf_counter()
        with tqdm(
            total=len(trees),
            desc=f"[{variant}] CFR curves",
            unit="tree",
            disable=not settings.progress,
        ) as bar:
            curves = cfr_curves(
                trees,
                any_baseline,
                settings.iterations,
                variant=settings.cfr_variant,
                tree_names=[f"init{sg.scenario.init}" for sg in sgs],
                on_tree_done=lambda _i, bar=bar: bar.update(1),
            )
        timings[f"solve_{variant}_s"] = time.perf_counter() - t0
        curves_by_variant[variant] = curves
        slug = variant.replace("+", "_")
        tag = {"backend": label["backend"], "model": label["model"]}
        with run.atomic_path(f"curves_{slug}.csv") as tmp:
            curves.to_csv(tmp, columns=tag)
        with run.atomic_path(f"curves_{slug}_per_tree.csv") as tmp:
            curves.to_csv(tmp, per_tree=True, columns=tag)
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
        }
        if VARIANTS[variant]:
            v["guesses"] = report.guess_table(sgs)
        if settings.generalisation or settings.whole_game:
            policies = [
                CFRSolver(t, variant=settings.cfr_variant).run(settings.iterations).average_policy()
                for t in tqdm(
                    trees,
                    desc=f"[{variant}] CFR policies",
                    unit="tree",
                    disable=not settings.progress,
                )
            ]
        if settings.generalisation:
            t0 = time.perf_counter()
            v["generalisation"] = generalisation_study(trees, policies)
            timings[f"generalisation_{variant}_s"] = time.perf_counter() - t0
        if settings.whole_game:
            t0 = time.perf_counter()
            v["whole_game"] = whole_game_study(
                sgs,
                policies,
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
_GUESS_COLUMNS = ("message", "correct", "total", "percentage")


def _write_tables(run: ResultsDir, summary: Mapping[str, Any]) -> None:
    tag = {"backend": summary["backend"], "model": summary["model"]}
    t1, f6, t23, ess, gen, whole = [], [], [], [], [], []
    for variant, v in summary["variants"].items():
        for r in v.get("guesses", []):
            t1.append({"variant": variant, **r, **tag})
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
                        **w[name],
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
