"""Certain facts (probabilities exactly 0 or 1) kept apart in the identification scores."""

from __future__ import annotations

import json

import pytest

from games.werewolf.arena import rows as arena_rows
from games.werewolf.arena.results import (
    CertainProbabilities,
    ModelSummary,
    PairSummary,
    ProbabilityScore,
    SideScores,
)
from games.werewolf.arena.scoring import (
    calibration_table,
    certain_probabilities,
    is_fact,
    probability_score,
    side_scores,
)
from gt_llm.opponents import UNSURE

#: (game, true role, label, reading): certain facts and inferences mixed.
PLANTED = [
    # A fact, right: p = 1 on the truth, two right zeros.
    (0, "villager", "villager", {"werewolf": 0.0, "villager": 1.0, "seer": 0.0}),
    # An inference, wrong; a right zero on seer.
    (0, "werewolf", "villager", {"werewolf": 0.25, "villager": 0.75, "seer": 0.0}),
    # A "fact" that is wrong: p = 1 on werewolf for a seer, the truth given 0.
    (1, "seer", "werewolf", {"werewolf": 1.0, "villager": 0.0, "seer": 0.0}),
    # An inference, right.
    (1, "seer", "seer", {"werewolf": 0.2, "villager": 0.2, "seer": 0.6}),
    # No label; the truth left out of the reading (probability 0).
    (1, "villager", UNSURE, {"werewolf": 0.4, "seer": 0.6}),
    # Near-certain is not certain: no zero, no one, the truth at 1e-6 is not a zero.
    (2, "villager", UNSURE, {"werewolf": 0.999999, "villager": 1e-6}),
    # A fact, right (a werewolf's partner).
    (2, "werewolf", "werewolf", {"werewolf": 1.0, "villager": 0.0}),
]


def test_calibration_leaves_out_exact_zeros_and_ones():
    bins = {round(lo, 1): (m, f, n) for lo, _, m, f, n in calibration_table(PLANTED)}
    assert set(bins) == {0.0, 0.2, 0.4, 0.6, 0.7, 0.9}
    assert bins[0.0] == pytest.approx((1e-6, 1.0, 1))  # the truth at 1e-6
    # 0.25 (werewolf, true), 0.2 and 0.2 (the seer's werewolf and villager, false).
    assert bins[0.2] == pytest.approx((0.65 / 3, 1 / 3, 3))
    assert bins[0.4] == pytest.approx((0.4, 0.0, 1))
    assert bins[0.6] == pytest.approx((0.6, 0.5, 2))  # seer 0.6 true, seer 0.6 false
    assert bins[0.7] == pytest.approx((0.75, 0.0, 1))
    assert bins[0.9] == pytest.approx((0.999999, 0.0, 1))
    # 18 probabilities: 9 uncertain in the table, 3 ones and 6 zeros apart.
    assert sum(n for *_, n in bins.values()) == 9
    assert sum(len(d) for *_, d in PLANTED) == 18


def test_certain_probabilities_counted_apart_with_how_many_were_right():
    c = certain_probabilities(PLANTED)
    # Ones: villager (right), werewolf for the seer (wrong), werewolf partner (right).
    # Zeros: 2 + 1 right in game 0; the seer's villager (right) and seer (wrong);
    # the partner's villager (right).
    assert c == CertainProbabilities(ones=3, ones_right=2, zeros=6, zeros_right=5)
    sc = side_scores(PLANTED)
    assert sc.calibration_certain == c
    assert sc.calibration == calibration_table(PLANTED)


def test_label_accuracy_split_into_facts_and_inferences():
    assert is_fact("villager", PLANTED[0][3]) and not is_fact("villager", PLANTED[1][3])
    assert not is_fact(UNSURE, {"werewolf": 1.0})
    s = probability_score(PLANTED)
    # Labels: 3 facts (2 right), 2 inferences (1 right); 5 in all, 3 right.
    assert (s.labelled, s.label_accuracy) == (5, pytest.approx(0.6))
    assert (s.labelled_facts, s.label_accuracy_facts) == (3, pytest.approx(2 / 3))
    assert (s.labelled_inferences, s.label_accuracy_inferences) == (2, pytest.approx(0.5))
    # No inference at all: no accuracy, a count of 0.
    only_facts = probability_score([PLANTED[0]])
    assert (only_facts.labelled_inferences, only_facts.label_accuracy_inferences) == (0, None)


def test_exact_zero_truths_are_counted():
    s = probability_score(PLANTED)
    # The seer given 0, the villager left out; the villager at 1e-6 is not a zero.
    assert s.zero_truth == 2
    by_role = side_scores(PLANTED).by_role
    assert {r: x.zero_truth for r, x in by_role.items()} == {
        "seer": 1,
        "villager": 1,
        "werewolf": 0,
    }


def test_console_and_csv_show_the_new_fields():
    sc = side_scores(PLANTED)
    lines = arena_rows.score_lines("village", sc.overall)
    assert "true role given 0: 2 of 7" in lines[0] and "student_t, n=3 games" in lines[0]
    assert "facts 3 right 0.67" in lines[1] and "inferences 2 right 0.50" in lines[1]
    assert len(lines) == 2  # no reference model: no gap line
    row = ModelSummary.from_json(_model_json({"village": sc.to_json()}))
    summary = PairSummary(pair=("A", "B"), games=3, draws=0, models={"A": row, "B": row})
    rows = arena_rows.score_rows([summary])
    assert rows[0]["zero_truth"] == 2 and rows[0]["labelled_facts"] == 3
    assert rows[0]["label_accuracy_inferences"] == pytest.approx(0.5)
    assert rows[0]["ci95_n"] == 3 and rows[0]["ci95_kind"] == "student_t"
    assert not any("gap" in k for k in rows[0])


def test_new_fields_round_trip_and_old_files_still_read():
    sc = side_scores(PLANTED)
    assert SideScores.from_json(json.loads(json.dumps(sc.to_json()))) == sc
    assert "brier_gap" not in sc.overall.to_json()
    # A file written before: normal intervals, no split, certain probabilities in the table.
    old = {
        "n": 4,
        "games": 2,
        "brier": 0.5,
        "brier_ci95": [0.1, 0.9],
        "log_loss": 1.0,
        "log_loss_ci95": [0.5, 1.5],
        "zero_truth": 0,
        "labelled": 1,
        "label_accuracy": 1.0,
    }
    s = ProbabilityScore.from_json(old)
    assert (s.ci95_n, s.ci95_kind) == (2, "normal")
    assert (s.labelled_facts, s.label_accuracy_facts, s.brier_gap) == (None, None, None)
    side = SideScores.from_json(
        {"overall": old, "by_role": {"villager": old}, "calibration": [[0.9, 1.0, 1.0, 1.0, 3]]}
    )
    assert side.calibration_certain is None and side.calibration[0][4] == 3
    lines = arena_rows.score_lines("village", s)
    assert "normal, n=2 games" in lines[0] and "facts n/a" in lines[1]


def _model_json(scores: dict) -> dict:
    rate = {"wins": 0, "games": 0, "rate": None, "ci95": [None, None]}
    return {
        "TWR": rate,
        "WWR": rate,
        "LWR": rate,
        "action_scores": {},
        "identification": None,
        "deception": {},
        "identification_scores": scores,
    }
