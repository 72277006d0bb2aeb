"""Arena reports and figures: win-rate table and chart, role identification over the
days and scored on probabilities, a GRATR seat's trust graph at two moments of a game.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from games.werewolf.arena.graph import rebuild_trust_graph
from games.werewolf.arena.results import ArenaReport, ProbabilityScore, ScoreGap, WinRate
from games.werewolf.arena.table import WOLF
from games.werewolf.play import runner
from games.werewolf.players import prompts

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "fig_identification",
    "fig_win_rates",
    "identification_by_round",
    "identification_scores_markdown",
    "trust_graph_moments",
    "win_rate_markdown",
]


def _fmt_rate(r: WinRate) -> str:
    if r.rate is None:
        return "n/a"
    lo, hi = r.ci95
    return f"{r.rate:.2f} [{lo:.2f}, {hi:.2f}]"


def _percent(x: float | None) -> float:
    # No game on a side: no rate (NaN draws no bar rather than a false 0).
    return 100 * x if x is not None else np.nan


def win_rate_markdown(report: ArenaReport) -> str:
    """TWR / WWR / LWR of every model of every pair with 95 % Wilson intervals (Markdown)."""
    lines = [
        f"**Werewolf arena win rates** (95 % Wilson intervals), {report.preset} preset, "
        f"{report.games_per_pair} games per pair — model: {report.note}",
        "",
        "| pair | opponent model | games | TWR | WWR | LWR |",
        "|---|---|---|---|---|---|",
    ]
    for s in report.pairs:
        a, b = s.pair
        for m in (a, b):
            rates = " | ".join(_fmt_rate(r) for r in s.models[m].rates.values())
            lines.append(f"| {a} vs {b} | {m} | {s.games} | {rates} |")
    return "\n".join(lines) + "\n"


def _fmt_interval(value: float, ci: tuple[float | None, float | None]) -> str:
    lo, hi = ci
    return f"{value:.3f}" + ("" if lo is None or hi is None else f" [{lo:.3f}, {hi:.3f}]")


def _fmt_labels(n: int | None, accuracy: float | None) -> str:
    if n is None:
        return "n/a"
    return f"{accuracy:.2f} of {n:,}" if accuracy is not None else f"– of {n:,}"


def _fmt_gap(gap: ScoreGap | None) -> str:
    if gap is None:
        return "n/a"
    n = f"{gap.n}" if gap.method == "paired" else f"{gap.n} and {gap.n_reference}"
    return f"{_fmt_interval(gap.gap, gap.ci95)} ({gap.method}, n = {n})"


def _score_row(pair: str, model: str, o: ProbabilityScore, gaps: bool) -> str:
    cells = [
        pair,
        model,
        f"{o.ci95_n}",
        _fmt_interval(o.brier, o.brier_ci95),
        _fmt_interval(o.log_loss, o.log_loss_ci95),
        f"{o.zero_truth:,} of {o.n:,}",
        f"{o.labelled:,}",
        "n/a" if o.label_accuracy is None else f"{o.label_accuracy:.2f}",
        _fmt_labels(o.labelled_facts, o.label_accuracy_facts),
        _fmt_labels(o.labelled_inferences, o.label_accuracy_inferences),
    ]
    if gaps:
        cells += [_fmt_gap(o.brier_gap), _fmt_gap(o.log_loss_gap)]
    return "| " + " | ".join(cells) + " |"


def identification_scores_markdown(report: ArenaReport, side: str = "village") -> str:
    """The identification scores of one observer side, every model of every pair (Markdown).

    Brier score and log-loss with their 95 % intervals over ``games`` (Student t;
    normal in a file written before), judgments that gave the true role 0, the
    label accuracy overall, on certain facts and on inferences, and, when the
    run had the reference model, each score minus the reference's
    (:mod:`games.werewolf.arena.scoring`).
    """
    rows = [
        (f"{s.pair[0]} vs {s.pair[1]}", m, sc[side].overall)
        for s in report.pairs
        for m in s.pair
        if (sc := s.models[m].scores) is not None and side in sc
    ]
    gaps = any(o.brier_gap is not None or o.log_loss_gap is not None for _, _, o in rows)
    kinds = sorted({o.ci95_kind for _, _, o in rows}) or ["student_t"]
    ref = next((g.reference for _, _, o in rows for g in (o.brier_gap, o.log_loss_gap) if g), "")
    head = [
        "pair",
        "model",
        "games",
        "Brier",
        "log-loss",
        "true role at 0",
        "labelled",
        "label accuracy",
        "facts",
        "inferences",
    ]
    if gaps:
        head += [f"Brier − {ref}", f"log-loss − {ref}"]
    lines = [
        f"**Role identification, {side} observers** (95 % {'/'.join(kinds)} intervals over "
        f"games), {report.preset} preset — model: {report.note}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *(_score_row(pair, m, o, gaps) for pair, m, o in rows),
    ]
    return "\n".join(lines) + "\n"


def fig_win_rates(report: ArenaReport) -> Figure:
    """One panel per pair: each model's TWR / WWR / LWR (%) with 95 % Wilson intervals."""
    from solvers.plots import plot_grouped_bars

    summaries = report.pairs
    ncols = min(3, len(summaries))
    nrows = -(-len(summaries) // ncols)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.4 * ncols, 3.6 * nrows + 0.6))
    axes = np.asarray(fig.subplots(nrows, ncols, squeeze=False))
    for ax in axes.flat[len(summaries) :]:
        ax.set_axis_off()
    kinds = ("TWR", "WWR", "LWR")
    for ax, s in zip(axes.flat, summaries, strict=False):
        a, b = s.pair
        series: dict[str, list[float]] = {}
        intervals: dict[str, tuple[list[float], list[float]]] = {}
        for m in (a, b):
            rows = [s.models[m].rates[k] for k in kinds]
            series[m] = [_percent(r.rate) for r in rows]
            intervals[m] = (
                [_percent(r.ci95[0]) for r in rows],
                [_percent(r.ci95[1]) for r in rows],
            )
        plot_grouped_bars(ax, list(kinds), series, fmt="%.0f", intervals=intervals)
        ax.set_ylim(0, 115)
        ax.set_ylabel("win rate (%)")
        ax.set_title(f"{a} vs {b} ({s.games} games)", fontsize=9)
    fig.suptitle(
        f"Werewolf arena win rates (95 % Wilson intervals)\nmodel: {report.note}", fontsize=9
    )
    fig.tight_layout()
    return fig


def identification_by_round(report: ArenaReport) -> dict[str, list[tuple[int, float, int]]]:
    """Role-identification accuracy per round, per model and observer's team.

    Pools every pair the model played and every true role (weighted by the
    number of judgments). Keys ``"<model>, <team> observers"``; values
    ``(round, accuracy, judgments)`` in round order. Models that infer no
    identities (baselines) are absent.
    """
    pooled: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for s in report.pairs:
        for m, row in s.models.items():
            for team, rounds in (row.identification or {}).items():
                for rnd, roles in rounds.items():
                    acc = pooled[f"{m}, {team} observers"][rnd]
                    for cell in roles.values():
                        acc[0] += cell.accuracy * cell.n
                        acc[1] += cell.n
    return {
        key: [(r, ok / n, int(n)) for r, (ok, n) in sorted(by_round.items()) if n]
        for key, by_round in sorted(pooled.items())
    }


def fig_identification(report: ArenaReport) -> Figure:
    """Role-identification accuracy over the days, per model and observer's team."""
    data = identification_by_round(report)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2))
    ax = fig.subplots()
    styles = ("-", "--", "-.", ":")
    models = list(dict.fromkeys(key.split(",")[0] for key in data))
    for k, (key, points) in enumerate(data.items()):
        model, team = key.split(", ")
        # Equal accuracies would hide one line under another: shift each series a little
        # along x and give every model its own line style, every team its own marker.
        shift = 0.04 * (k - (len(data) - 1) / 2)
        ax.plot(
            [r + shift for r, _, _ in points],
            [100 * a for _, a, _ in points],
            linestyle=styles[models.index(model) % len(styles)],
            marker="o" if team.startswith("village") else "s",
            label=key,
        )
    if data:
        ax.legend(fontsize=8)
        ax.set_xticks(sorted({r for pts in data.values() for r, _, _ in pts}))
    else:
        ax.set_title("no model inferred identities (only gratr and dirichlet do)", fontsize=9)
    ax.set_ylim(-5, 105)
    ax.set_xlabel("day (round)")
    ax.set_ylabel("identities inferred correctly (%)")
    ax.grid(True, alpha=0.3)
    fig.suptitle(
        f"Role identification of the living players at each consultation\nmodel: {report.note}",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def trust_graph_moments(
    log: str | Path, out_dir: str | Path, *, player: int | None = None
) -> list[Path]:
    """A GRATR seat's trust graph after day 1's votes and at the end of the game, as PNGs.

    Args:
      log: An arena game log (``OUT/logs/<A>_vs_<B>/game_<i>.jsonl``).
      out_dir: Folder for ``trust_graph_seat<P>_step<S>.png``.
      player: The seat (default: the first village-side GRATR seat, else the first GRATR seat).

    Returns:
      The image paths, earlier moment first (one path if the seat has one step).

    Raises:
      ValueError: the log has no GRATR seat (or as :func:`rebuild_trust_graph`).
    """
    from games.werewolf.arena.graph import write_trust_graph

    records = runner.read_log(log)
    inits = [r for r in records if r.get("type") == "belief_init" and r["model"] == "gratr"]
    if not inits:
        raise ValueError(f"trust_graph_moments: {log} has no GRATR seat; use a gratr pair's log")
    if player is None:
        village = [r for r in inits if r["role"] != WOLF]
        player = int((village or inits)[0]["seat"])
    role = next((r["role"] for r in inits if r["seat"] == player), "?")
    steps = sorted(
        {
            int(r["step"])
            for r in records
            if r.get("seat") == player and r["type"] in ("belief_evidence", "belief_consult")
        }
    )
    if not steps:
        raise ValueError(f"trust_graph_moments: seat {player} has no belief records in {log}")
    # The round of a step: that of the last action at or before it.
    rounds = {int(r["step"]): int(r["round"]) for r in records if r.get("type") == "action"}

    def round_of(step: int) -> int:
        return max(((s, r) for s, r in rounds.items() if s <= step), default=(0, 1))[1]

    # Day 1's votes reach the graph at the first step of round 2; if that is the
    # game's last step, the moment before it instead.
    later = [s for s in steps if round_of(s) >= 2]
    if later and later[0] != steps[-1]:
        first, when = later[0], "after day 1's votes"
    else:
        first = steps[-2] if len(steps) > 1 else steps[-1]
        when = f"round {round_of(first)}"
    moments = {first: when, steps[-1]: "end of the game"}
    label = records[0].get("model_label", records[0].get("backend", "?"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for step, when in moments.items():
        path = out_dir / f"trust_graph_seat{player}_step{step}.png"
        write_trust_graph(
            rebuild_trust_graph(records, player, step),
            path,
            title=f"{prompts.player_name(player)} ({role}, GRATR): step {step}, {when}\n"
            f"model: {label}",
        )
        paths.append(path)
    return paths
