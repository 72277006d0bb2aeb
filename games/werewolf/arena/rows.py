"""Arena results as console lines and CSV rows (the Markdown and figures: :mod:`.report`).

What ``werewolf arena`` and ``werewolf tournament`` print and write beside
their JSON: an observer side's overall probability scores with their 95 %
intervals and gaps to the reference model (:func:`score_lines`), one CSV row
per pair, model, side and true role (:func:`score_rows`), and the win-rate
rows (:func:`csv_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from games.werewolf.arena.results import PairSummary, ProbabilityScore, ScoreGap

__all__ = ["csv_rows", "score_lines", "score_rows"]


def _fmt_ci(ci: tuple[float | None, float | None]) -> str:
    lo, hi = ci
    return "[n/a]" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"


def _fmt_acc(n: int | None, accuracy: float | None) -> str:
    if n is None:
        return "n/a"
    return f"{n}" + ("" if accuracy is None else f" right {accuracy:.2f}")


def _fmt_gap(what: str, gap: ScoreGap | None) -> str:
    if gap is None:
        return f"{what} n/a"
    n = f"n={gap.n}" if gap.method == "paired" else f"n={gap.n} and {gap.n_reference}"
    return f"{what} {gap.gap:+.3f} {_fmt_ci(gap.ci95)} ({gap.method}, {n})"


def score_lines(side: str, o: ProbabilityScore) -> list[str]:
    """The console lines of one observer side's overall scores."""
    lines = [
        f"{side} observers: Brier {o.brier:.3f} {_fmt_ci(o.brier_ci95)}, "
        f"log-loss {o.log_loss:.3f} {_fmt_ci(o.log_loss_ci95)} "
        f"(95 % {o.ci95_kind}, n={o.ci95_n} games); true role given 0: {o.zero_truth} of {o.n}",
        f"  labelled {o.labelled} of {o.n}"
        + ("" if o.label_accuracy is None else f", right {o.label_accuracy:.2f}")
        + f"; facts {_fmt_acc(o.labelled_facts, o.label_accuracy_facts)}"
        + f"; inferences {_fmt_acc(o.labelled_inferences, o.label_accuracy_inferences)}",
    ]
    any_gap = o.brier_gap or o.log_loss_gap
    if any_gap is not None:
        lines.append(
            f"  minus {any_gap.reference}: "
            + _fmt_gap("Brier", o.brier_gap)
            + ", "
            + _fmt_gap("log-loss", o.log_loss_gap)
        )
    return lines


def _gap_cells(prefix: str, gap: ScoreGap | None) -> dict[str, Any]:
    """The CSV cells of one gap (empty when there is none)."""
    return {
        f"{prefix}_gap": gap.gap if gap else None,
        f"{prefix}_gap_lo": gap.ci95[0] if gap else None,
        f"{prefix}_gap_hi": gap.ci95[1] if gap else None,
        f"{prefix}_gap_method": gap.method if gap else None,
        f"{prefix}_gap_n": gap.n if gap else None,
        f"{prefix}_gap_n_reference": gap.n_reference if gap else None,
        f"{prefix}_gap_df": gap.df if gap else None,
    }


def score_rows(summaries: Sequence[PairSummary]) -> list[dict[str, Any]]:
    """One row per pair, model, observer side and true role (``all``: every role).

    The gap columns (``brier_gap``, ``log_loss_gap``, ...) are there only when
    some score has a gap to the reference model.
    """
    with_gaps = any(
        x.brier_gap is not None or x.log_loss_gap is not None
        for s in summaries
        for row in s.models.values()
        for sc in (row.scores or {}).values()
        for x in (sc.overall, *sc.by_role.values())
    )
    rows = []
    for s in summaries:
        a, b = s.pair
        for m in (a, b):
            for side, sc in (s.models[m].scores or {}).items():
                for role, x in [("all", sc.overall), *sc.by_role.items()]:
                    rows.append(
                        {
                            "pair": f"{a} vs {b}",
                            "model": m,
                            "observers": side,
                            "true_role": role,
                            "n": x.n,
                            "games": x.games,
                            "brier": x.brier,
                            "brier_lo": x.brier_ci95[0],
                            "brier_hi": x.brier_ci95[1],
                            "log_loss": x.log_loss,
                            "log_loss_lo": x.log_loss_ci95[0],
                            "log_loss_hi": x.log_loss_ci95[1],
                            "zero_truth": x.zero_truth,
                            "labelled": x.labelled,
                            "label_accuracy": x.label_accuracy,
                            "ci95_n": x.ci95_n,
                            "ci95_kind": x.ci95_kind,
                            "labelled_facts": x.labelled_facts,
                            "label_accuracy_facts": x.label_accuracy_facts,
                            "labelled_inferences": x.labelled_inferences,
                            "label_accuracy_inferences": x.label_accuracy_inferences,
                            **(
                                {
                                    **_gap_cells("brier", x.brier_gap),
                                    **_gap_cells("log_loss", x.log_loss_gap),
                                }
                                if with_gaps
                                else {}
                            ),
                        }
                    )
    return rows


def csv_rows(summaries: Sequence[PairSummary]) -> list[dict[str, Any]]:
    """One row per pair and model: win rates with their intervals, mean action scores."""
    rows = []
    for s in summaries:
        a, b = s.pair
        for m in (a, b):
            row = s.models[m]
            r: dict[str, Any] = {"pair": f"{a} vs {b}", "model": m, "games": s.games}
            for k, rate in row.rates.items():
                r[k] = rate.rate
                r[f"{k}_lo"], r[f"{k}_hi"] = rate.ci95
            for role in ("werewolf", "witch", "guard", "seer", "doctor", "villager"):
                sc = row.action_scores.get(role)
                r[f"score_{role}"] = sc.mean if sc else None
            rows.append(r)
    return rows
