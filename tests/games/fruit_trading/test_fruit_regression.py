"""Fruit-trading summaries stay the same across refactors of the engine and solvers.

The engine refactor was checked against the pre-engine implementation (commit
f2a190e, stand-in ``rules-v1``): identical summaries and byte-identical CSVs
(reference data of commit 51759ae). The redesign of the stand-in
(``rules-v2``) changes the answers by design, so the reference summaries in
``tests/games/data/fruit_regression_*.json`` were regenerated with it on the
shared engine (their ``_doc`` says where); this test recomputes them with the
current code and compares every number: counts exactly, floats to 1e-9.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from games.fruit_trading.experiment import ExperimentSettings, run_experiment

DATA = Path(__file__).resolve().parents[1] / "data"


def _assert_same(expected: Any, actual: Any, where: str = "summary") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), where
        assert sorted(expected) == sorted(actual), f"{where}: keys differ"
        for k in expected:
            _assert_same(expected[k], actual[k], f"{where}/{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(expected) == len(actual), f"{where}: length"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _assert_same(e, a, f"{where}[{i}]")
    elif isinstance(expected, float) or isinstance(actual, float):
        assert actual is not None and expected is not None, f"{where}: {expected} vs {actual}"
        assert math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9), (
            f"{where}: {expected} vs {actual}"
        )
    else:
        assert expected == actual, f"{where}: {expected!r} vs {actual!r}"


#: Settings added since the reference was produced; at their defaults they change nothing.
NEW_SETTINGS = {
    "timeout": None,
    "processes": None,
    "names": "random",
    "pools": "per_init",
    # The noise checks (no held-out trees on the stand-in by default): reports, no new calls.
    "eval_seeds": 0,
    "permutations": 999,
    "bootstrap": 200,
    "fdr_q": 0.05,
}
#: Per-variant keys added since (reports of the same trees, not new numbers for old ones).
NEW_VARIANT_KEYS = ("degeneracy", "opponent_model", "guesses_distinct", "quality", "noise")
#: Keys of the final metrics added since: the intervals of the same means.
NEW_FINAL_KEYS = ("n", "nash_conv_ci95", "cfr_gain_ci95")
#: Keys of the whole-game study added since (fixed names, leak, per-subgame NashConv).
NEW_WHOLE_GAME_KEYS = ("names", "pools", "per_subgame_in_whole_game")


#: Token counts of the calls, which the structured prompts and JSON answers change.
TOKEN_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "saved_prompt_tokens",
    "saved_completion_tokens",
)
#: A finished run of the README's main job (``gt-llm fruit-trading run``, all defaults) to
#: check instead of running it again: ``.ci/run`` runs the main job once and points here.
DEFAULT_RUN_ENV = "GT_LLM_DEFAULT_RUN"


def _reference(name: str, structured: bool = True) -> dict[str, Any]:
    ref = json.loads((DATA / name).read_text())["summary"]
    if structured:
        for k in TOKEN_COUNTS:
            ref["llm_calls"].pop(k)
    return ref


def _summary(tmp_path: Path, structured: bool = True, **settings: Any) -> dict[str, Any]:
    r = run_experiment(
        ExperimentSettings(out=str(tmp_path), progress=False, structured=structured, **settings)
    )
    return _normalised(r.out)


#: Summary keys added since: the agreement judge's scores on its labelled set (tested in
#: test_fruit_judge_check.py; the trees' numbers do not depend on them).
NEW_SUMMARY_KEYS = ("judge",)


def _normalised(out: Path) -> dict[str, Any]:
    s = json.loads((out / "summary.json").read_text())
    s.pop("timings")
    for k in NEW_SUMMARY_KEYS:
        s.pop(k, None)
    s["settings"].pop("out")
    s["settings"].pop("cache")
    # The stand-in answers structured requests with the JSON of the value its free text
    # gives, so both modes reproduce the (free-text) reference: the same calls and every
    # number, with other prompt and answer texts (token counts).
    if s["settings"].pop("structured"):
        for k in TOKEN_COUNTS:
            s["llm_calls"].pop(k)
    for k, default in NEW_SETTINGS.items():
        assert s["settings"].pop(k) == default
    for v in s["variants"].values():
        for k in NEW_VARIANT_KEYS:
            v.pop(k, None)
        for k in NEW_FINAL_KEYS:
            v["final"].pop(k, None)
        for k in NEW_WHOLE_GAME_KEYS:
            v.get("whole_game", {}).pop(k, None)
    return s


@pytest.mark.parametrize(
    "structured",
    # The default mode in every run; free text (the same stand-in answers) once in CI's slow step.
    # About 14 s each: CI runs both in its slow step (beside the main job's regression).
    [pytest.param(True, marks=pytest.mark.slow), pytest.param(False, marks=pytest.mark.slow)],
    ids=["structured", "free_text"],
)
def test_small_run_matches_reference_summary(tmp_path, structured):
    ref = _reference("fruit_regression_small.json", structured)
    _assert_same(ref, _summary(tmp_path, structured, inits=4, iterations=100))


@pytest.mark.slow
def test_default_run_matches_pre_engine_headline_numbers(tmp_path):
    ref = _reference("fruit_regression_default.json")
    given = os.environ.get(DEFAULT_RUN_ENV)
    if given:
        out = Path(given)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["complete"] is True, f"{DEFAULT_RUN_ENV}={given}: the run did not finish"
        assert manifest["command"][1:3] == ["fruit-trading", "run"], manifest["command"]
        s = _normalised(out)
    else:
        s = _summary(tmp_path)
    assert s["settings"] == ref["settings"]
    _assert_same(ref["llm_calls"], s["llm_calls"], "llm_calls")
    # The reference holds each variant's full summary (as the small one does).
    for name, want in ref["variants"].items():
        _assert_same(want, s["variants"][name], name)
