"""``gt-llm werewolf solve``: the Werewolf day trees solved by CFR, per opponent model.

For ``days`` days drawn from rule-based games (seeds from ``--seed`` upward; games
that end before day ``--day`` are skipped), and for each listeners' opponent
model of ``--models``, the day tree (:mod:`games.werewolf.day.steps`) is materialised
through the engine (batched, cached LLM calls: a re-run makes none) and solved
with CFR for ``iterations`` iterations. NashConv and CFR-Gain against the
baseline "tone any, say nothing new" are recorded at every iteration (mean ±
std over days), with the first iteration at which CFR-Gain exceeds NashConv
(approximate ESS, :func:`solvers.studies.ess_iterations`).

Written to ``--out`` (every file through :mod:`solvers.writers` or renamed into place):

* ``summary.json`` — settings, model label (the scripted stand-in is labelled
  as such), days, tree sizes, final metrics, ESS iterations, the CFR-Gain of
  each side, the CFR strategies per role, the answers to the two questions,
  parse and call counters, timings;
* ``curves_<model>.csv`` (mean/std per iteration), ``curves_<model>_per_tree.csv``;
* ``days.csv`` (per day and model: speakers, their roles, final NashConv,
  CFR-Gain, CFR-Gain of each side, ESS iteration), ``strategies.csv``
  (per model and role group: the CFR probability of each tone and act);
* ``decisions.json`` — every decision point of every day and model: speaker,
  role, the statements before it, CFR's reach and its probability of each
  (tone, act) (:mod:`games.werewolf.day.exports`; ``werewolf view OUT`` draws it);
* figures drawn from those files: ``fig_nashconv_cfrgain.png``,
  ``fig_side_gain.png``, ``fig_strategies.png``.

The two questions (as measured, with the model's label):

1. Does a werewolf's CFR strategy differ from a villager's? Per model, the
   reach-weighted distributions (under the CFR average profile) of the tones and
   acts played at werewolf and at village decisions — on all decisions, and on
   the *decisive* ones, where the choice changes the speaker's own expected
   return (elsewhere CFR's average is arbitrary) — and their total-variation
   distance; the answer is decided on the decisive decisions (``differs`` when
   the act or tone distance is at least :data:`DIFFERENCE_TV`).
2. Does CFR-Gain for the werewolf side fall when listeners use GRATR instead of
   ``none``? The werewolves' summed per-player CFR-Gain, mean ± std over the days
   on which a werewolf speaks, ``none`` against ``gratr``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

from games.engine.pipeline import build_and_solve
from games.engine.results import model_label
from games.werewolf import rules
from games.werewolf.day.abstraction import DEFAULT_ACTS, DEFAULT_TONES, Abstraction
from games.werewolf.day.build import DaySubgame, day_tree_name
from games.werewolf.day.exports import decisions_document
from games.werewolf.day.figures import FIGURES, draw_all
from games.werewolf.day.roots import day_roots, root_step
from games.werewolf.day.state import EXTRACTION, DaySettings
from games.werewolf.day.steps import DayLogic
from games.werewolf.day.summary import (
    DaySolveSummary,
    ModelResult,
    _questions,
    _side_gains,
    listed_votes,
    side_gains,
    strategy_by_role,
)
from gt_llm.cache import CachedModel
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParseStats
from gt_llm.registry import load_model
from gt_llm.safety import public_spec
from runs.atomic import finite_or_none
from runs.results import ResultsDir
from solvers import GameTree, TreePolicy, pure_policy, studies
from solvers.noise import NoiseSettings
from solvers.writers import check_writable, write_csv, write_json

__all__ = [
    "SolveResult",
    "SolveSettings",
    "run_solve",
]


logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class SolveSettings:
    """Settings of :func:`run_solve` (the defaults run in minutes on 2 cores).

    Attributes:
      preset: Rules preset (``arena`` or ``gratr``).
      days: Days (one per rule-based game) to solve.
      day: Which day of each game (the rules' round).
      speakers: K, speaking turns per day.
      order: Speaking order, ``bids`` or ``seats``.
      models: Listeners' opponent models.
      tones: Tones of the abstraction.
      acts: Act tokens of the abstraction.
      num_seeds: LLM seeds per statement.
      deals: The most deals each day's root chance node is over (0: the seeded
        game's own deal only, a clairvoyant tree).
      iterations: CFR iterations per day.
      first_seed: Seed of the first rule-based game.
      backend: Model spec.
      out: Output folder.
      cache: SQLite cache (default ``<out>/llm_cache.sqlite``).
      cfr_variant: CFR variant.
      max_concurrency: Bound on concurrent LLM calls.
      requests_per_minute: Rate limit of a remote backend.
      timeout: Per-call timeout of a remote backend.
      retry_budget: Total seconds a call may spend on retries (remote backends).
      max_answer_bytes: Largest answer accepted (remote backends).
      progress: Show progress bars.
      structured: Ask for JSON answers under each task's schema (``--structured on``).
      eval_seeds: Fresh LLM seeds per statement of the held-out trees (0: none).
      permutations: Label permutations per day for CFR-Gain's null (0: none).
      bootstrap: Seed-bootstrap replicates per day, each re-solved (0: none).
      fdr_q: False-discovery rate of the "above noise" count.
    """

    preset: str = "arena"
    days: int = 30
    day: int = 1
    speakers: int = 2
    order: str = "bids"
    models: tuple[str, ...] = ("none", "dirichlet", "gratr")
    tones: tuple[str, ...] = DEFAULT_TONES
    acts: tuple[str, ...] = DEFAULT_ACTS
    num_seeds: int = 1
    deals: int = 4
    iterations: int = 1000
    first_seed: int = 0
    backend: str = "scripted"
    out: str = "results/werewolf_day"
    cache: str | None = None
    cfr_variant: str = "cfr"
    max_concurrency: int | None = None
    requests_per_minute: float | None = None
    timeout: float | None = None
    retry_budget: float | None = None
    max_answer_bytes: int | None = None
    progress: bool = True
    structured: bool = True
    eval_seeds: int = 0
    permutations: int = 999
    bootstrap: int = 200
    fdr_q: float = 0.05

    def __post_init__(self) -> None:
        where = "run_solve"
        _ = self.noise  # validates permutations, bootstrap and fdr_q
        if self.eval_seeds < 0:
            raise ValueError(f"{where}: eval_seeds must be >= 0, got {self.eval_seeds}")
        if self.days < 1:
            raise ValueError(f"{where}: days must be >= 1, got {self.days}")
        if self.iterations < 1:
            raise ValueError(f"{where}: iterations must be >= 1, got {self.iterations}")
        if self.first_seed < 0:
            raise ValueError(f"{where}: first_seed must be >= 0, got {self.first_seed}")
        if not self.models or len(set(self.models)) != len(self.models):
            raise ValueError(f"{where}: give distinct models from {sorted(EXTRACTION)}")
        if self.cfr_variant not in ("cfr", "cfr+", "linear"):
            raise ValueError(
                f"{where}: cfr_variant must be cfr, cfr+ or linear, got {self.cfr_variant!r}"
            )
        for name, value in (
            ("requests_per_minute", self.requests_per_minute),
            ("timeout", self.timeout),
            ("retry_budget", self.retry_budget),
            ("max_answer_bytes", self.max_answer_bytes),
        ):
            if value is not None and not value > 0:
                raise ValueError(f"{where}: {name} must be > 0 (or None), got {value}")
        for m in self.models:
            self.day_settings(m)  # validates preset, day, speakers, order, abstraction
        self.abstraction.baseline_action()

    @property
    def noise(self) -> NoiseSettings:
        """The resampling of the noise checks, seeded by the first game's seed."""
        try:
            return NoiseSettings(
                permutations=self.permutations,
                bootstrap=self.bootstrap,
                q=self.fdr_q,
                seed=self.first_seed,
            )
        except ValueError as err:
            raise ValueError(f"run_solve: {err}") from None

    @property
    def abstraction(self) -> Abstraction:
        return Abstraction(tones=self.tones, acts=self.acts)

    @property
    def cache_path(self) -> str:
        return self.cache or os.path.join(self.out, "llm_cache.sqlite")

    def day_settings(self, opponent_model: str) -> DaySettings:
        return DaySettings(
            config=rules.preset(self.preset),
            day=self.day,
            speakers=self.speakers,
            order=self.order,
            opponent_model=opponent_model,
            abstraction=self.abstraction,
            num_seeds=self.num_seeds,
            structured=self.structured,
            deals=self.deals,
        )


@dataclasses.dataclass(frozen=True)
class SolveResult:
    """What :func:`run_solve` produced: the summary and where the files are."""

    out: Path
    summary: DaySolveSummary


# --- the run ---------------------------------------------------------------------


def run_solve(
    settings: SolveSettings,
    *,
    model: ChatModel | None = None,
    results: ResultsDir | None = None,
) -> SolveResult:
    """Builds, solves and reports the day trees; see the module docstring.

    Args:
      settings: What to run (validated when built).
      model: A ready model (else ``settings.backend`` through the cache).
      results: The opened results folder (``settings.out``), whose manifest
        lists the curves; the caller finishes it. None writes into
        ``settings.out`` directly.

    Raises:
      ValueError: an unwritable output folder, or too few games reach the day.
      gt_llm.ConfigurationError: the backend cannot run here.
    """
    out = check_writable(settings.out, caller="run_solve")
    seeds = day_roots(
        settings.day_settings(settings.models[0]), settings.days, first_seed=settings.first_seed
    )
    if model is None:
        # None keeps a backend's default; the scripted backend ignores call options.
        model = load_model(
            settings.backend,
            cache=settings.cache_path,
            requests_per_minute=settings.requests_per_minute,
            timeout=settings.timeout,
            retry_budget=settings.retry_budget,
            max_answer_bytes=settings.max_answer_bytes,
        )
    label = model_label(model)
    tag = {"backend": label.backend, "model": label.model}
    baseline_action = settings.abstraction.baseline_action()

    def baseline(tree: GameTree) -> TreePolicy:
        return pure_policy(tree, lambda key, legal: baseline_action)

    by_model: dict[str, ModelResult] = {}
    timings: dict[str, float] = {}
    day_rows: list[dict[str, Any]] = []
    strat_rows: list[dict[str, Any]] = []
    per_model = []  # (model, days, policies) for decisions.json
    for m in settings.models:
        ds = settings.day_settings(m)
        stats = ParseStats()
        solved = build_and_solve(
            DayLogic(ds),
            [root_step(ds, seed) for seed in seeds],
            model,
            baseline=baseline,
            iterations=settings.iterations,
            tree_name=lambda sg: sg.day_root.label(),
            cfr_variant=settings.cfr_variant,
            subgame=DaySubgame,
            game_name=day_tree_name,
            run=results if results is not None else out,
            slug=m,
            tag=tag,
            stats=stats,
            max_concurrency=settings.max_concurrency,
            processes=1,  # a handful of small trees: no worker processes
            progress=settings.progress,
            label=f"[{m}]",
            noise=settings.noise,
            eval_seeds=settings.eval_seeds,
        )
        timings[f"build_{m}_s"] = solved.build_s
        timings[f"solve_{m}_s"] = solved.solve_s
        timings[f"noise_{m}_s"] = solved.noise_s
        noise = solved.noise.to_dict() if solved.noise is not None else None
        # The CFR average policies come with the curves: nothing is solved twice.
        subgames, curves, policies = solved.subgames, solved.curves, solved.policies
        per_model.append((m, subgames, policies))
        ess = studies.ess_iterations(curves)
        baselines = [baseline(sg.tree) for sg in subgames]
        sides, with_wolf = _side_gains(subgames, policies, baselines)
        strategies = strategy_by_role(subgames, policies)
        by_model[m] = ModelResult(
            final=studies.final_metrics(curves),
            ess_first_iteration=tuple(ess),
            ess_days=sum(x is not None for x in ess),
            side_gain_all_days=side_gains(sides),
            side_gain_werewolf_days=side_gains(with_wolf),
            strategies=strategies,
            trees=tuple(
                {
                    **sg.day_root.to_dict(),
                    "nodes": sg.tree.num_nodes,
                    "infosets": sg.tree.num_infosets,
                    "terminals": sg.tree.num_terminals,
                    "deals_per_infoset": {str(t): x for t, x in sg.deals_per_infoset().items()},
                }
                for sg in subgames
            ),
            parse=stats.to_dict(),
            noise=noise,
            listed_votes=listed_votes(subgames),
        )
        for t, (sg, side) in enumerate(zip(subgames, sides, strict=True)):
            tree_noise = noise["per_tree"][t] if noise is not None else {}
            held = tree_noise.get("held_out") or {}
            root = sg.day_root
            day_rows.append(
                {
                    "opponent_model": m,
                    "game_seed": root.game_seed,
                    "day": settings.day,
                    "speakers": " ".join(f"P{p}" for p in root.speakers),
                    "deals": len(root.deals),
                    "werewolf_speaker_share": side["werewolf_speaker_share"],
                    "nodes": sg.tree.num_nodes,
                    "nash_conv": float(curves.nash_conv[t, -1]),
                    "cfr_gain": float(curves.cfr_gain[t, -1]),
                    "werewolf_gain": side["werewolf_gain"],
                    "village_gain": side["village_gain"],
                    "ess_first_iteration": ess[t],
                    "cfr_gain_p_value": tree_noise.get("p_value"),
                    "held_out_cfr_gain": held.get("cfr_gain"),
                    **tag,
                }
            )
        for g, by in strategies.items():
            for which, st in by.items():
                for kind in ("tones", "acts"):
                    for name, p in st[kind].items():
                        strat_rows.append(
                            {
                                "opponent_model": m,
                                "group": g,
                                "decisions": which,
                                "kind": kind[:-1],
                                "name": name,
                                "probability": p,
                                **tag,
                            }
                        )
    summary = DaySolveSummary(
        label=label,
        settings={
            **{k: v for k, v in dataclasses.asdict(settings).items() if k != "progress"},
            "backend": public_spec(settings.backend),
        },
        baseline="tone any, act nothing (say nothing new)",
        belief_reading="every model: belief(p).distribution (dirichlet: posterior mean; "
        "gratr: prior side masses weighed by its trust; none: the prior with the certain facts)",
        game_seeds=tuple(seeds),
        models=by_model,
        questions=_questions(by_model, label.label),
        llm_calls=dataclasses.asdict(model.stats()) if isinstance(model, CachedModel) else None,
        timings=timings,
    )
    decisions = decisions_document(per_model, label=label)
    if results is not None:
        # Through the folder: every file listed in the manifest (and cleared by --force).
        results.write_csv("days.csv", day_rows)
        results.write_csv("strategies.csv", strat_rows)
        results.write_json("decisions.json", finite_or_none(decisions), indent=None)
        results.write_json("summary.json", finite_or_none(summary.to_json()))
        for name in FIGURES:
            results.record(name)
    else:
        write_csv(out / "days.csv", day_rows)
        write_csv(out / "strategies.csv", strat_rows)
        write_json(out / "decisions.json", decisions, indent=None)
        write_json(out / "summary.json", summary.to_json())
    draw_all(out)
    return SolveResult(out=out, summary=summary)
