"""Identification scored on probabilities, and a label that may abstain."""

from __future__ import annotations

import math

import pytest

from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.arena.matches import play_arena_game, summarize_pair
from games.werewolf.arena.scoring import (
    brier_score,
    calibration_table,
    log_loss,
    probability_score,
)
from games.werewolf.players.beliefs import make_seat_beliefs
from gt_llm.opponents import UNSURE, identity_label, opponent_models


def test_brier_and_log_loss_by_hand():
    d = {"werewolf": 0.5, "villager": 0.3, "seer": 0.2}
    # (0.5 - 0)^2 + (0.3 - 1)^2 + (0.2 - 0)^2 = 0.25 + 0.49 + 0.04.
    assert brier_score(d, "villager") == pytest.approx(0.78)
    assert log_loss(d, "villager") == pytest.approx(-math.log(0.3))  # 1.203973
    assert brier_score({"werewolf": 1.0}, "werewolf") == 0.0
    assert log_loss({"werewolf": 0.0, "villager": 1.0}, "werewolf") == pytest.approx(
        -math.log(1e-6)
    )
    # Two games, one judgment each: game means 0.78 and 0; mean 0.39, Student-t interval
    # 0.39 +- t(0.975, 1) * sd / sqrt(2) with sd = 0.78 / sqrt(2); with one degree of
    # freedom t is Cauchy's quantile, tan(0.475 pi) = 12.7062.
    s = probability_score(
        [(0, "villager", "werewolf", d), (1, "werewolf", "werewolf", {"werewolf": 1.0})]
    )
    t1 = math.tan(0.475 * math.pi)
    assert t1 == pytest.approx(12.7062047)
    half = t1 * (0.78 / math.sqrt(2)) / math.sqrt(2)
    assert s.brier == pytest.approx(0.39)
    assert s.brier_ci95 == pytest.approx((0.39 - half, 0.39 + half))
    assert (s.ci95_n, s.ci95_kind) == (2, "student_t")
    assert s.log_loss == pytest.approx(-math.log(0.3) / 2)
    assert (s.n, s.games, s.labelled, s.label_accuracy, s.zero_truth) == (2, 2, 2, 0.5, 0)
    # Calibration: p = 0.5, 0.3 and 0.2 in their bins, frequency of the truth; the
    # certain p = 1.0 is counted apart, not in a bin.
    bins = {round(lo, 1): (m, f, n) for lo, _, m, f, n in calibration_table(
        [(0, "villager", "x", d), (1, "werewolf", "x", {"werewolf": 1.0})])}  # fmt: skip
    assert bins[0.3] == (0.3, 1.0, 1) and bins[0.5] == (0.5, 0.0, 1)
    assert 0.9 not in bins


def test_label_names_the_likeliest_role_when_its_odds_tripled():
    prior = {"werewolf": 3 / 7, "villager": 2 / 7, "seer": 2 / 7}
    assert identity_label(prior, prior) == UNSURE  # no evidence: never the prior's argmax
    # Villager rose 0.286 -> 0.367 but werewolf (0.429) is likelier: unsure.
    read = {"werewolf": 0.429, "villager": 0.367, "seer": 0.204}
    assert identity_label(read, prior) == UNSURE
    # Villager 0.5 is the likeliest, odds 1 against 0.4 (x2.5 < 3): unsure; 0.6 (x3.75): named.
    assert identity_label({"werewolf": 0.2, "villager": 0.5, "seer": 0.3}, prior) == UNSURE
    assert identity_label({"werewolf": 0.2, "villager": 0.6, "seer": 0.2}, prior) == "villager"
    assert identity_label({"werewolf": 1.0, "villager": 0.0, "seer": 0.0}, prior) == "werewolf"


@pytest.mark.parametrize("preset", sorted(rules.PRESETS))
def test_no_model_labels_a_player_it_has_no_evidence_about(preset, scripted):
    config = rules.preset(preset)
    wolves = list(range(config.roles.werewolf))
    for name in opponent_models():
        for seat, role in ((0, "werewolf"), (config.num_players - 1, "villager")):
            sb = make_seat_beliefs(name, config, seat, role, chat=scripted)
            if role == "werewolf":
                event = rules.Event("partners", 0, {"werewolves": wolves}, (seat,))
                sb = run_sync(sb.observe([event], {}), scripted)
            others = [p for p in range(config.num_players) if p != seat]
            _, fields = sb.consult(phase="day_vote", subjects=others)
            for p in others:
                want = "werewolf" if role == "werewolf" and p in wolves else UNSURE
                assert fields["labels"][p] == want, (name, preset, role, p)
            for v in fields["opponent"]["players"]:
                q = int(v["player"].split()[-1]) - 1
                assert v["identity"] == fields["labels"][q]


def test_the_arena_summary_carries_brier_and_log_loss_per_model(scripted):
    config = rules.preset("gratr")
    games = [
        play_arena_game(config, scripted, wolf_model=w, leader_model=lead, seed=i, index=i)[0]
        for i, (w, lead) in enumerate([("gratr", "none"), ("none", "gratr")] * 2)
    ]
    summary = summarize_pair(games, "gratr", "none")
    for m in ("gratr", "none"):
        scores = summary.models[m].scores
        assert scores is not None and set(scores) == {"village", "werewolf"}
        for side, sc in scores.items():
            o = sc.overall
            # Every model has village-side seats in every game, werewolves in half of them.
            assert o.games == (4 if side == "village" else 2)
            assert 0.0 <= o.brier <= 2.0 and o.log_loss >= 0.0
            lo, hi = o.brier_ci95
            assert lo is not None and hi is not None and lo <= o.brier <= hi
            assert sum(x.n for x in sc.by_role.values()) == o.n
        # Recomputed from the games' records, judgment by judgment.
        js = [
            (g.index, t, lab, dict(d))
            for g in games
            for mm, team, _, t, lab, d in g.judgments
            if mm == m and team == "village"
        ]
        assert scores["village"].overall == probability_score(js)
    js = summary.models["gratr"].to_json()["identification_scores"]
    assert js["village"]["overall"]["brier"] == pytest.approx(
        summary.models["gratr"].scores["village"].overall.brier
    )
