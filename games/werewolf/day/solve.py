"""``gt-llm werewolf solve``: the Werewolf day trees solved by CFR, per opponent model.

For ``days`` days drawn from scripted games (seeds from ``--seed`` upward; games
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

import argparse
import dataclasses
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from games.engine.cli_options import add_common_options, check_backend, open_results_dir, say
from games.engine.results import model_label
from games.werewolf import rules
from games.werewolf.day.steps import (
    DEFAULT_ACTS,
    DEFAULT_TONES,
    EXTRACTION,
    ORDERS,
    Abstraction,
    DaySettings,
    DaySubgame,
    build_days,
    day_roots,
)
from gt_llm.cache import CachedModel
from gt_llm.chat import ChatModel
from gt_llm.cli import positive_int
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model
from solvers import (
    CHANCE,
    TERMINAL,
    CFRSolver,
    Curves,
    GameTree,
    TreePolicy,
    cfr_curves,
    pure_policy,
    studies,
)
from solvers.plots import plot_grouped_bars, plot_metric_panel, read_csv_rows, read_curves_csv
from solvers.values import reach_probabilities
from solvers.writers import check_writable, write_csv, write_json

__all__ = [
    "DIFFERENCE_TV",
    "SolveResult",
    "SolveSettings",
    "add_solve_parser",
    "draw_all",
    "run_solve",
    "strategy_by_role",
]

logger = logging.getLogger(__name__)

#: Total-variation distance from which two strategies are reported as different.
DIFFERENCE_TV = 0.1
GROUPS = ("werewolf", "village")


@dataclasses.dataclass(frozen=True)
class SolveSettings:
    """Settings of :func:`run_solve` (the defaults run in minutes on 2 cores).

    Attributes:
      preset: Rules preset (``arena`` or ``gratr``).
      days: Days (one per scripted game) to solve.
      day: Which day of each game (the rules' round).
      speakers: K, speaking turns per day.
      order: Speaking order, ``bids`` or ``seats``.
      models: Listeners' opponent models.
      tones: Tones of the abstraction.
      acts: Act tokens of the abstraction.
      num_seeds: LLM seeds per statement.
      iterations: CFR iterations per day.
      first_seed: Seed of the first scripted game.
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

    def __post_init__(self) -> None:
        where = "run_solve"
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
        )


@dataclasses.dataclass(frozen=True)
class SolveResult:
    """What :func:`run_solve` produced: the summary and where the files are."""

    out: Path
    summary: dict[str, Any]


# --- analysis of solved days ---------------------------------------------------------


def _group(role: str) -> str:
    return "werewolf" if role == "werewolf" else "village"


def _node_values(tree: GameTree, policy: TreePolicy) -> np.ndarray:
    """Every node's expected returns under ``policy`` (children follow parents)."""
    values = np.array(tree.returns, dtype=float)
    for n in range(tree.num_nodes - 1, -1, -1):
        if tree.kind[n] == TERMINAL or tree.num_children[n] == 0:
            continue
        ch = np.arange(tree.first_child[n], tree.first_child[n] + tree.num_children[n])
        if tree.kind[n] == CHANCE:
            w = tree.chance_prob[ch]
        else:
            w = policy.probs[tree.infoset[n], tree.child_rank[ch]]
        values[n] = w @ values[ch]
    return values


def _empty(ab: Abstraction) -> dict[str, Any]:
    return {"decisions": 0, "tones": np.zeros(len(ab.tones)), "acts": np.zeros(len(ab.acts))}


def strategy_by_role(
    subgames: Sequence[DaySubgame], policies: Sequence[TreePolicy]
) -> dict[str, dict[str, Any]]:
    """Reach-weighted tone and act distributions of the CFR policies, per role group.

    Every information set's action distribution is weighted by the probability
    that the profile (chance included) reaches it; the totals are normalised per
    group. ``decisive`` keeps only the information sets where the choice changes
    the speaker's own expected return under the profile (by more than 1e-9):
    elsewhere CFR's average strategy is arbitrary (it stays near uniform).
    """
    ab = subgames[0].day_root.settings.abstraction
    mass = {(g, d): _empty(ab) for g in GROUPS for d in (False, True)}
    for sg, pol in zip(subgames, policies, strict=True):
        tree = sg.tree
        reach = reach_probabilities(tree, pol)
        values = _node_values(tree, pol)
        for s in range(tree.num_infosets):
            nodes = tree.infoset_nodes[tree.infoset_node_ptr[s] : tree.infoset_node_ptr[s + 1]]
            player = int(tree.infoset_player[s])
            w = float(reach[nodes].sum())
            legal = tree.legal_actions(s)
            # The player's value of each action, averaged over the set's nodes by reach.
            weights = reach[nodes] if w > 0 else np.ones(len(nodes))
            action_values = np.zeros(len(legal))
            for node, wn in zip(nodes, weights, strict=True):
                first = tree.first_child[node]
                action_values += wn * values[first : first + len(legal), player]
            action_values /= weights.sum()
            decisive = float(np.ptp(action_values)) > 1e-9
            g = _group(sg.day_root.role(player))
            for key in ((g, False), (g, True)) if decisive else ((g, False),):
                m = mass[key]
                m["decisions"] += 1
                for j, a in enumerate(legal):
                    tone, token = ab.decode(int(a))
                    p = w * float(pol.probs[s, j])
                    m["tones"][ab.tones.index(tone)] += p
                    m["acts"][ab.acts.index(token)] += p

    def dist(names: Sequence[str], x: np.ndarray) -> dict[str, float | None]:
        total = x.sum()
        return {k: (float(v / total) if total > 0 else None) for k, v in zip(names, x, strict=True)}

    out: dict[str, dict[str, Any]] = {}
    for g in GROUPS:
        out[g] = {}
        for d, name in ((False, "all"), (True, "decisive")):
            m = mass[(g, d)]
            out[g][name] = {
                "decisions": m["decisions"],
                "reach": float(m["tones"].sum()),
                "tones": dist(ab.tones, m["tones"]),
                "acts": dist(ab.acts, m["acts"]),
            }
    return out


def _tv(p: dict[str, float | None], q: dict[str, float | None]) -> float | None:
    if any(v is None for v in p.values()) or any(v is None for v in q.values()):
        return None
    return 0.5 * sum(abs(float(p[k]) - float(q[k])) for k in p)


def _side_gains(subgames: Sequence[DaySubgame], curves: Curves) -> list[dict[str, Any]]:
    rows = []
    for t, sg in enumerate(subgames):
        root = sg.day_root
        per = curves.cfr_gain_per_player[t, -1]
        wolves = [p for p, r in enumerate(root.start.roles) if r == "werewolf"]
        village = [p for p in range(len(root.start.roles)) if p not in wolves]
        rows.append(
            {
                "werewolf_speaks": any(root.role(p) == "werewolf" for p in root.speakers),
                "werewolf_gain": float(per[wolves].sum()),
                "village_gain": float(per[village].sum()),
            }
        )
    return rows


def _mean_std(xs: Sequence[float]) -> dict[str, Any]:
    a = np.asarray(xs, dtype=float)
    if a.size == 0:
        return {"n": 0, "mean": None, "std": None}
    return {"n": int(a.size), "mean": float(a.mean()), "std": float(a.std())}


def _questions(per_model: dict[str, Any], label: str) -> dict[str, Any]:
    q1 = {
        "label": label,
        "threshold_tv": DIFFERENCE_TV,
        "decided_on": "decisive decisions (where the choice changes the speaker's own "
        "expected return under the CFR profile)",
        "per_model": {},
    }
    for m, v in per_model.items():
        s = v["strategies"]
        w, g = s["werewolf"]["decisive"], s["village"]["decisive"]
        tv_acts = _tv(w["acts"], g["acts"])
        tv_tones = _tv(w["tones"], g["tones"])
        if tv_acts is None or tv_tones is None:
            answer = "no decisive werewolf (or village) decision was solved"
            differs = None
        else:
            differs = max(tv_acts, tv_tones) >= DIFFERENCE_TV
            answer = "yes" if differs else "no"
        q1["per_model"][m] = {
            "differs": differs,
            "answer": answer,
            "tv_acts": tv_acts,
            "tv_tones": tv_tones,
            "tv_acts_all_decisions": _tv(s["werewolf"]["all"]["acts"], s["village"]["all"]["acts"]),
            "werewolf": s["werewolf"],
            "village": s["village"],
        }
    q2: dict[str, Any] = {"label": label, "per_model": {}}
    for m, v in per_model.items():
        q2["per_model"][m] = v["side_gain"]["days_with_werewolf_speaker"]["werewolf"]
    if "none" in per_model and "gratr" in per_model:
        a = q2["per_model"]["none"]
        b = q2["per_model"]["gratr"]
        if a["mean"] is None or b["mean"] is None:
            q2["falls"] = None
            q2["answer"] = "no day with a werewolf speaker: nothing to compare"
        else:
            q2["falls"] = bool(b["mean"] < a["mean"])
            q2["difference_gratr_minus_none"] = b["mean"] - a["mean"]
            q2["answer"] = "yes" if q2["falls"] else "no"
    else:
        q2["falls"] = None
        q2["answer"] = "needs both models none and gratr in --models"
    return {"werewolf_vs_village_strategy": q1, "werewolf_gain_none_vs_gratr": q2}


# --- the run ---------------------------------------------------------------------


def _write_curves(curves: Curves, path: Path, *, per_tree: bool, tag: dict[str, Any]) -> None:
    # Curves.to_csv writes in place: write a temporary file and rename it.
    tmp = path.with_name(f".{path.name}.tmp")
    curves.to_csv(tmp, per_tree=per_tree, columns=tag)
    os.replace(tmp, path)


def run_solve(settings: SolveSettings, *, model: ChatModel | None = None) -> SolveResult:
    """Builds, solves and reports the day trees; see the module docstring.

    Args:
      settings: What to run (validated when built).
      model: A ready model (else ``settings.backend`` through the cache).

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
    tag = {"backend": label["backend"], "model": label["model"]}
    baseline_action = settings.abstraction.baseline_action()

    def baseline(tree: GameTree) -> TreePolicy:
        return pure_policy(tree, lambda key, legal: baseline_action)

    summary: dict[str, Any] = {
        **label,
        "settings": {k: v for k, v in dataclasses.asdict(settings).items() if k != "progress"},
        "baseline": "tone any, act nothing (say nothing new)",
        "belief_reading": "dirichlet: posterior mean; gratr: P(werewolf) = (1 + a T) / 2 from "
        "trust T (see games.werewolf.day.steps); none: no distribution",
        "game_seeds": seeds,
        "models": {},
    }
    timings: dict[str, float] = {}
    day_rows: list[dict[str, Any]] = []
    strat_rows: list[dict[str, Any]] = []
    for m in settings.models:
        ds = settings.day_settings(m)
        stats = ParseStats()
        t0 = time.perf_counter()
        subgames = build_days(
            ds,
            seeds,
            model,
            policy=ParsePolicy(),
            stats=stats,
            max_concurrency=settings.max_concurrency,
            progress=settings.progress,
            label=f"[{m}] trees:",
        )
        timings[f"build_{m}_s"] = time.perf_counter() - t0
        trees = [sg.tree for sg in subgames]
        t0 = time.perf_counter()
        curves = cfr_curves(
            trees,
            baseline,
            settings.iterations,
            variant=settings.cfr_variant,
            tree_names=[sg.day_root.label() for sg in subgames],
        )
        policies = [
            CFRSolver(t, variant=settings.cfr_variant).run(settings.iterations).average_policy()
            for t in trees
        ]
        timings[f"solve_{m}_s"] = time.perf_counter() - t0
        _write_curves(curves, out / f"curves_{m}.csv", per_tree=False, tag=tag)
        _write_curves(curves, out / f"curves_{m}_per_tree.csv", per_tree=True, tag=tag)
        ess = studies.ess_iterations(curves)
        sides = _side_gains(subgames, curves)
        with_wolf = [r for r in sides if r["werewolf_speaks"]]
        strategies = strategy_by_role(subgames, policies)
        summary["models"][m] = {
            "final": studies.final_metrics(curves),
            "ess_first_iteration": ess,
            "ess_days": sum(x is not None for x in ess),
            "side_gain": {
                "all_days": {
                    "werewolf": _mean_std([r["werewolf_gain"] for r in sides]),
                    "village": _mean_std([r["village_gain"] for r in sides]),
                },
                "days_with_werewolf_speaker": {
                    "werewolf": _mean_std([r["werewolf_gain"] for r in with_wolf]),
                    "village": _mean_std([r["village_gain"] for r in with_wolf]),
                },
            },
            "strategies": strategies,
            "trees": [
                {
                    **sg.day_root.to_dict(),
                    "nodes": sg.tree.num_nodes,
                    "infosets": sg.tree.num_infosets,
                    "terminals": sg.tree.num_terminals,
                }
                for sg in subgames
            ],
            "parse": stats.to_dict(),
        }
        for t, (sg, side) in enumerate(zip(subgames, sides, strict=True)):
            root = sg.day_root
            day_rows.append(
                {
                    "opponent_model": m,
                    "game_seed": root.game_seed,
                    "day": settings.day,
                    "speakers": " ".join(f"P{p}" for p in root.speakers),
                    "speaker_roles": " ".join(root.role(p) for p in root.speakers),
                    "nodes": sg.tree.num_nodes,
                    "nash_conv": float(curves.nash_conv[t, -1]),
                    "cfr_gain": float(curves.cfr_gain[t, -1]),
                    "werewolf_gain": side["werewolf_gain"],
                    "village_gain": side["village_gain"],
                    "ess_first_iteration": ess[t],
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
    summary["questions"] = _questions(summary["models"], label["label"])
    if isinstance(model, CachedModel):
        summary["llm_calls"] = dataclasses.asdict(model.stats())
    summary["timings"] = timings
    write_csv(out / "days.csv", day_rows)
    write_csv(out / "strategies.csv", strat_rows)
    write_json(out / "summary.json", summary)
    draw_all(out)
    return SolveResult(out=out, summary=summary)


# --- figures (drawn from the files) -------------------------------------------------


def _load_summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def _title(fig: Figure, summary: dict[str, Any], what: str) -> None:
    s = summary["settings"]
    fig.suptitle(
        f"{what}\nmodel: {summary['label']} — {s['preset']}, day {s['day']}, {s['days']} days, "
        f"K={s['speakers']} speakers",
        fontsize=9,
    )


def fig_curves(out: Path) -> Figure:
    """NashConv and CFR-Gain (mean ± std over days) per opponent model."""
    summary = _load_summary(out)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    series = {}
    for m in summary["models"]:
        c = read_curves_csv(out / f"curves_{m}.csv")
        series[f"NashConv, {m}"] = (c["iteration"], c["nash_conv_mean"], c["nash_conv_std"])
        series[f"CFR-Gain, {m}"] = (c["iteration"], c["cfr_gain_mean"], c["cfr_gain_std"])
    plot_metric_panel(ax, series, ylabel="value (mean ± std over days)", log_x=True)
    _title(fig, summary, "NashConv and CFR-Gain over CFR iterations")
    fig.tight_layout()
    return fig


def fig_side_gain(out: Path) -> Figure:
    """Final CFR-Gain of each side per opponent model (days with a werewolf speaker)."""
    summary = _load_summary(out)
    rows = read_csv_rows(out / "days.csv")
    models = list(summary["models"])
    series: dict[str, list[float]] = {"werewolf side": [], "village side": []}
    for m in models:
        mine = [
            r for r in rows if r["opponent_model"] == m and "werewolf" in r["speaker_roles"].split()
        ]
        series["werewolf side"].append(
            float(np.mean([float(r["werewolf_gain"]) for r in mine])) if mine else np.nan
        )
        series["village side"].append(
            float(np.mean([float(r["village_gain"]) for r in mine])) if mine else np.nan
        )
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    plot_grouped_bars(ax, models, series, fmt="%.2f")
    ax.set_ylabel("CFR-Gain at the last iteration (mean over days)")
    if all(np.isnan(v) for vals in series.values() for v in vals):
        # Say why the panel is empty rather than draw a blank chart.
        ax.text(
            0.5,
            0.5,
            "no day with a werewolf among the speakers\n(more --days, or --order seats)",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    _title(fig, summary, "CFR-Gain per side, days with a werewolf speaker")
    fig.tight_layout()
    return fig


def fig_strategies(out: Path) -> Figure:
    """The CFR act distribution per role group and opponent model."""
    summary = _load_summary(out)
    rows = [
        r
        for r in read_csv_rows(out / "strategies.csv")
        if r["kind"] == "act" and r["decisions"] == "decisive"
    ]
    acts = list(dict.fromkeys(r["name"] for r in rows))
    series = {}
    for m in summary["models"]:
        for g in GROUPS:
            vals = [r["probability"] for r in rows if r["opponent_model"] == m and r["group"] == g]
            series[f"{g}, {m}"] = [float(v) if v != "" else np.nan for v in vals]
    fig = Figure(figsize=(9, 4.5))
    ax = fig.subplots()
    plot_grouped_bars(ax, acts, series, fmt="%.2f")
    ax.set_ylabel("reach-weighted probability under CFR")
    _title(fig, summary, "CFR speech acts by role group (decisive decisions)")
    fig.tight_layout()
    return fig


def draw_all(out: str | Path) -> list[Path]:
    """Draws the figures into ``out`` as PNG files; returns their paths."""
    out = Path(out)
    paths = []
    for name, fn in (
        ("fig_nashconv_cfrgain.png", fig_curves),
        ("fig_side_gain.png", fig_side_gain),
        ("fig_strategies.png", fig_strategies),
    ):
        fig = fn(out)
        tmp = out / f".{name}.tmp.png"
        fig.savefig(tmp, dpi=120)
        os.replace(tmp, out / name)
        paths.append(out / name)
    return paths


# --- the command -------------------------------------------------------------------


def _names(text: str, *, known: Sequence[str], what: str) -> tuple[str, ...]:
    names = tuple(x.strip() for x in text.replace("/", ",").split(",") if x.strip())
    bad = [x for x in names if x not in known]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(bad) or '(none)'}; choose from {', '.join(known)}"
        )
    return names


def _models(text: str) -> tuple[str, ...]:
    return _names(text, known=sorted(EXTRACTION), what="opponent model(s)")


def _tones(text: str) -> tuple[str, ...]:
    return _names(text, known=rules.TONES, what="tone(s)")


def _acts(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.replace("/", ",").split(",") if x.strip())


def report_lines(summary: dict[str, Any], out: Path | str) -> list[str]:
    """The command's printed report: headline numbers per model and the two answers."""
    lines = [f"werewolf day results in {out}  (model: {summary['label']})"]
    for m, v in summary["models"].items():
        f = v["final"]
        w = v["side_gain"]["days_with_werewolf_speaker"]["werewolf"]
        wtxt = (
            f"{w['mean']:.3f} ± {w['std']:.3f} (n={w['n']})"
            if w["n"]
            else "n/a (no werewolf speaker)"
        )
        lines.append(
            f"  {m:10s} NashConv {f['nash_conv_mean']:.4f} ± {f['nash_conv_std']:.4f}   "
            f"CFR-Gain {f['cfr_gain_mean']:.4f} ± {f['cfr_gain_std']:.4f}   "
            f"CFR-Gain > NashConv in {v['ess_days']}/{len(v['ess_first_iteration'])} days   "
            f"werewolf-side CFR-Gain {wtxt}"
        )
    q = summary["questions"]
    lines.append(
        f"Q1 does a werewolf's CFR strategy differ from a villager's? [{summary['label']}]"
    )
    for m, a in q["werewolf_vs_village_strategy"]["per_model"].items():

        def top(d: dict[str, float | None]) -> str:
            known = {k: x for k, x in d.items() if x is not None}
            return (
                ", ".join(
                    f"{k} {x:.2f}" for k, x in sorted(known.items(), key=lambda kv: -kv[1])[:3]
                )
                or "-"
            )

        tv = (
            ""
            if a["tv_acts"] is None
            else f" (TV acts {a['tv_acts']:.2f}, tones {a['tv_tones']:.2f})"
        )
        lines.append(
            f"  {m:10s} {a['answer']}{tv}; werewolf acts: {top(a['werewolf']['decisive']['acts'])}; "
            f"village acts: {top(a['village']['decisive']['acts'])}"
        )
    q2 = q["werewolf_gain_none_vs_gratr"]
    lines.append(
        f"Q2 does the werewolf side's CFR-Gain fall with GRATR listeners instead of none? "
        f"{q2['answer']} [{summary['label']}]"
    )
    if "llm_calls" in summary:
        c = summary["llm_calls"]
        lines.append(f"  LLM calls: {c['misses']} made, {c['hits']} from the cache")
    return lines


def _run(args: argparse.Namespace) -> int:
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
    )
    # Manifest first (complete: false), refusal of a folder with other settings, then the run.
    fixed = {
        k: v
        for k, v in dataclasses.asdict(settings).items()
        if k
        not in (
            "out",
            "cache",
            "max_concurrency",
            "requests_per_minute",
            "timeout",
            "retry_budget",
            "max_answer_bytes",
            "progress",
        )
    }
    run = open_results_dir(args, {"command": "werewolf solve", **fixed})
    result = run_solve(settings)
    run.finish()
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
        "--days", type=positive_int, default=30, help="days (scripted games) to solve (default 30)"
    )
    p.add_argument("--day", type=positive_int, default=1, help="which day of each game (default 1)")
    p.add_argument(
        "--speakers", type=positive_int, default=2, help="speaking turns K per day (default 2)"
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
        help="comma-separated tones (default all four)",
    )
    p.add_argument(
        "--acts",
        type=_acts,
        default=DEFAULT_ACTS,
        help="comma-separated act tokens: nothing, claim:ROLE, accuse:SLOT, defend:SLOT, "
        "check:SLOT:RESULT with SLOT most, most2, least, least2 "
        f"(default {','.join(DEFAULT_ACTS)})",
    )
    p.add_argument(
        "--num-seeds", type=positive_int, default=1, help="LLM seeds per statement (default 1)"
    )
    p.add_argument(
        "--iterations", type=positive_int, default=1000, help="CFR iterations (default 1000)"
    )
    p.add_argument(
        "--cfr", choices=("cfr", "cfr+", "linear"), default="cfr", help="CFR variant (default cfr)"
    )
    add_common_options(
        p, out="results/werewolf_day", seed_help="seed of the first scripted game (default 0)"
    )
    p.set_defaults(func=_run)
