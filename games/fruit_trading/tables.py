"""The CSV tables of a fruit-trading experiment, from its summary.

One row per variant and table entry, each tagged with the backend and model
that produced it: Table 1 (``table1_guesses.csv``), Fig. 6
(``fig6_agreements.csv``), Tables 2-3 (``table2_3_payoff_signs.csv``), the
first iteration at which CFR-Gain exceeds NashConv (``ess.csv``) and, when
those studies ran, ``generalisation.csv`` and ``whole_game.csv``. Written
through the results folder (listed in its manifest, atomic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runs.results import ResultsDir

__all__ = ["write_tables"]

#: Columns of Table 1 (``report.guess_table`` rows), so the CSV has a header without rows.
_GUESS_COLUMNS = ("count", "message", "correct", "total", "percentage")

Rows = list[dict[str, Any]]


def write_tables(run: ResultsDir, summary: Mapping[str, Any]) -> None:
    """Writes the experiment's CSV tables (see the module docstring) into ``run``."""
    tag = {"backend": summary["backend"], "model": summary["model"]}
    variants: Mapping[str, Mapping[str, Any]] = summary["variants"]
    t1 = _guess_rows(variants, tag)
    f6 = _listed_rows(variants, "agreements", tag)
    t23 = _listed_rows(variants, "payoff_signs", tag)
    ess = _ess_rows(variants, tag)
    gen = _generalisation_rows(variants, tag)
    whole = _whole_game_rows(variants, tag)
    run.write_csv("table1_guesses.csv", t1, ("variant", *_GUESS_COLUMNS, *tag))
    run.write_csv("fig6_agreements.csv", f6)
    run.write_csv("table2_3_payoff_signs.csv", t23)
    run.write_csv("ess.csv", ess)
    # Only studies that ran (--no-generalisation / --no-whole-game leave no empty files).
    if gen:
        run.write_csv("generalisation.csv", gen)
    if whole:
        run.write_csv("whole_game.csv", whole)


def _guess_rows(variants: Mapping[str, Mapping[str, Any]], tag: Mapping[str, Any]) -> Rows:
    """Table 1: the opponent model's guesses, over histories and over distinct dialogues."""
    rows: Rows = []
    for variant, v in variants.items():
        for r in v.get("guesses", []):
            rows.append({"variant": variant, "count": "histories", **r, **tag})
        for r in v.get("guesses_distinct", []):
            rows.append({"variant": variant, "count": "distinct_dialogues", **r, **tag})
    return rows


def _listed_rows(
    variants: Mapping[str, Mapping[str, Any]], key: str, tag: Mapping[str, Any]
) -> Rows:
    """The rows a variant's summary lists under ``key``, each with its variant."""
    return [{"variant": variant, **r, **tag} for variant, v in variants.items() for r in v[key]]


def _ess_rows(variants: Mapping[str, Mapping[str, Any]], tag: Mapping[str, Any]) -> Rows:
    """Per subgame, the first iteration at which CFR-Gain exceeds NashConv."""
    return [
        {
            "variant": variant,
            "init": tr["init"],
            "first_iteration_gain_above_nashconv": it,
            **tag,
        }
        for variant, v in variants.items()
        for tr, it in zip(v["trees"], v["ess_first_iteration"], strict=True)
    ]


def _generalisation_rows(variants: Mapping[str, Mapping[str, Any]], tag: Mapping[str, Any]) -> Rows:
    """Per subgame, its strategy's CFR-Gain at home and in the other subgames."""
    rows: Rows = []
    for variant, v in variants.items():
        if "generalisation" not in v:
            continue
        g = v["generalisation"]
        for tr, own, tm, tp in zip(
            v["trees"],
            g["own_gain"],
            g["transfer_gain_mean"],
            g["transfer_positive_fraction"],
            strict=True,
        ):
            rows.append(
                {
                    "variant": variant,
                    "init": tr["init"],
                    "own_cfr_gain": own,
                    "transfer_cfr_gain_mean": tm,
                    "transfer_positive_fraction": tp,
                    **tag,
                }
            )
    return rows


def _whole_game_rows(variants: Mapping[str, Mapping[str, Any]], tag: Mapping[str, Any]) -> Rows:
    """NashConv and CFR-Gain in the whole game of each profile the study compared."""
    rows: Rows = []
    for variant, v in variants.items():
        if "whole_game" not in v:
            continue
        w = v["whole_game"]
        profiles = [(name, w[name]) for name in ("whole_game_cfr", "per_subgame_cfr_assembled")]
        if "per_subgame_in_whole_game" in w:
            profiles.append(("per_subgame_cfr_reach_mixed", w["per_subgame_in_whole_game"]))
        for name, metrics in profiles:
            rows.append(
                {
                    "variant": variant,
                    "profile": name,
                    "nash_conv": metrics["nash_conv"],
                    "cfr_gain": metrics["cfr_gain"],
                    "iterations": w["iterations"],
                    **tag,
                }
            )
    return rows
