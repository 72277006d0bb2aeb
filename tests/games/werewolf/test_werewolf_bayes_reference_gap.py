"""Every model's Brier and log-loss gap to the ``bayes`` reference model."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats  # type: ignore[import-untyped]

from games.werewolf import rules
from games.werewolf.arena import matches, rows
from games.werewolf.arena.results import PairSummary, ScoreGap
from games.werewolf.arena.scoring import (
    game_scores,
    probability_score,
    reference_scores,
    score_gap,
    side_scores,
)

T_2 = 0.95 / math.sqrt(2 * 0.975 * 0.025)  # t(0.975, 2) in closed form


def reading(a: float) -> dict[str, float]:
    """{werewolf: a, villager: 1 - a}: on a villager, Brier 2 a^2, log-loss -ln(1 - a)."""
    return {"werewolf": a, "villager": 1 - a}


# The reference's judgments in two pairs (all of villagers): seed 1 is in both.
REFERENCE = [
    [(0, "villager", "unsure", reading(0.0)), (1, "villager", "unsure", reading(0.5))],
    [(1, "villager", "unsure", reading(0.0)), (2, "villager", "unsure", reading(0.2))],
]
# The model's: seed 1 has two judgments; seed 3 has no reference (and a zero truth).
MODEL = [
    (0, "villager", "unsure", reading(0.5)),
    (1, "villager", "unsure", reading(0.0)),
    (1, "villager", "werewolf", reading(0.6)),
    (2, "villager", "unsure", reading(0.5)),
    (3, "villager", "werewolf", reading(1.0)),
]


def test_reference_game_means_average_its_pairs_per_seed():
    ref = reference_scores(REFERENCE)
    # Brier: seed 0 -> 0; seed 1 -> mean(0.5, 0) = 0.25; seed 2 -> 2 * 0.04 = 0.08.
    assert {s: b for s, (b, _) in ref.items()} == pytest.approx({0: 0.0, 1: 0.25, 2: 0.08})
    assert ref[1][1] == pytest.approx(math.log(2) / 2)


def test_paired_gap_by_hand():
    s = probability_score(MODEL, reference_scores(REFERENCE))
    gap = s.brier_gap
    assert gap is not None
    # Per seed the model's game mean: 0.5, mean(0, 0.72) = 0.36, 0.5 (seed 3 has no pair).
    d = [0.5 - 0.0, 0.36 - 0.25, 0.5 - 0.08]  # 0.5, 0.11, 0.42
    mean = sum(d) / 3  # 0.343333
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 2)  # 0.205994
    half = T_2 * sd / math.sqrt(3)  # 0.511716
    assert (gap.reference, gap.method, gap.n, gap.n_reference, gap.df) == (
        "bayes",
        "paired",
        3,
        3,
        2.0,
    )
    assert gap.gap == pytest.approx(0.343333, abs=1e-6)
    assert gap.ci95 == pytest.approx((mean - half, mean + half))
    assert half == pytest.approx(0.511716, abs=1e-6)
    # Log-loss the same way: -ln 0.5, mean(0, -ln 0.4), -ln 0.5 against 0, ln 2 / 2, -ln 0.8.
    dl = [math.log(2), -math.log(0.4) / 2 - math.log(2) / 2, math.log(2) + math.log(0.8)]
    ml = sum(dl) / 3
    hl = T_2 * math.sqrt(sum((x - ml) ** 2 for x in dl) / 2) / math.sqrt(3)
    lg = s.log_loss_gap
    assert lg is not None and lg.gap == pytest.approx(ml)
    assert lg.ci95 == pytest.approx((ml - hl, ml + hl))
    # The model's own score still counts seed 3 (and its zero truth).
    assert s.games == 4 and s.zero_truth == 1


def test_welch_gap_by_hand_when_no_seed_pairs():
    # Model: seeds 0 and 2, Brier 0.5 and 0; reference: seeds 1 and 3, 0.08 and 0.72.
    model = {0: 0.5, 2: 0.0}
    reference = {1: 0.08, 3: 0.72}
    g = score_gap(model, reference)
    assert g is not None and (g.method, g.n, g.n_reference) == ("welch", 2, 2)
    vm, vr = 0.125 / 2, 0.2048 / 2  # sample variances 0.125 and 0.2048, over n
    df = (vm + vr) ** 2 / (vm**2 + vr**2)  # each n - 1 = 1: 1.889382
    half = float(stats.t.ppf(0.975, df)) * math.sqrt(vm + vr)
    gap = 0.25 - 0.40
    assert g.df == pytest.approx(df) and df == pytest.approx(1.889382, abs=1e-6)
    assert g.gap == pytest.approx(gap)
    assert g.ci95 == pytest.approx((gap - half, gap + half))
    # One seed in common is no pairing: Welch over all the games.
    one = score_gap({0: 0.5, 2: 0.0}, {0: 0.1, 3: 0.3})
    assert one is not None and one.method == "welch" and one.n == 2
    # A single game on a side: a gap, no interval.
    single = score_gap({0: 0.5}, {1: 0.1, 3: 0.3})
    assert single is not None and single.ci95 == (None, None) and single.df is None
    assert score_gap({0: 0.5}, {}) is None


def test_no_reference_no_gap_and_per_role_reference():
    assert probability_score(MODEL).brier_gap is None
    sc = side_scores(MODEL, [[(0, "werewolf", "unsure", reading(0.9))]])
    # The reference judged no villager: no gap for the villagers; overall it has one
    # game (seed 0, a werewolf at 0.9: Brier 0.01 + 0.01), one seed in common: Welch.
    assert sc.by_role["villager"].brier_gap is None
    overall = sc.overall.brier_gap
    assert overall is not None and overall.method == "welch"
    assert overall.ci95 == (None, None)
    model_games = [b for b, _ in game_scores(MODEL).values()]
    assert model_games == pytest.approx([0.5, 0.36, 0.5, 2.0])
    assert overall.gap == pytest.approx(sum(model_games) / 4 - 0.02)


def fake_game(seed: int, wolf: str, lead: str, judgments) -> matches.ArenaGame:
    roles = ("werewolf", "werewolf", "werewolf", "villager", "seer", "witch", "guard", "villager")
    return matches.ArenaGame(
        index=seed,
        seed=seed,
        wolf_model=wolf,
        leader_model=lead,
        seats=(wolf,) * 4 + (lead,) * 4,
        roles=roles,
        winner=rules.VILLAGERS,
        rounds=1,
        votes=(),
        identification=(),
        judgments=tuple(
            (m, team, 1, truth, label, tuple(dist.items()))
            for m, team, truth, label, dist in judgments
        ),
        statements=(),
    )


def pair_games(a: str, b: str, briers: dict[str, list[float]]) -> list[matches.ArenaGame]:
    """Four games; every model judges one villager per game from a village seat."""
    return [
        fake_game(
            i,
            *((a, b) if i % 2 == 0 else (b, a)),
            [(m, "village", "villager", "unsure", reading(briers[m][i])) for m in (a, b)],
        )
        for i in range(4)
    ]


def test_arena_pairs_carry_the_gap_to_bayes_and_nothing_changes_without_it():
    a_vs_bayes = pair_games("A", "bayes", {"A": [0.5, 0.0, 0.5, 0.2], "bayes": [0, 0, 0.2, 0]})
    a_vs_b = pair_games("A", "B", {"A": [0.2, 0.2, 0.0, 0.5], "B": [0.5, 0.5, 0.5, 0.5]})
    plain = matches.summarize_pair(a_vs_b, "A", "B")
    reference = matches.reference_judgments([a_vs_bayes, a_vs_b])
    assert set(reference) == {"village"} and len(reference["village"]) == 1
    gapped = matches.with_reference_gaps(plain, a_vs_b, reference)
    b = gapped.models["B"].scores
    assert b is not None
    gap = b["village"].overall.brier_gap
    # B: Brier 2 * 0.25 = 0.5 every game; bayes: 0, 0, 0.08, 0 -> d = 0.5, 0.5, 0.42, 0.5.
    d = [0.5, 0.5, 0.42, 0.5]
    mean = sum(d) / 4
    half = float(stats.t.ppf(0.975, 3)) * math.sqrt(sum((x - mean) ** 2 for x in d) / 3) / 2
    assert gap is not None and (gap.method, gap.n) == ("paired", 4)
    assert gap.gap == pytest.approx(0.48)
    assert gap.ci95 == pytest.approx((mean - half, mean + half))
    # bayes's own rows in its pair: its games against all its games, here the same.
    own = matches.with_reference_gaps(
        matches.summarize_pair(a_vs_bayes, "A", "bayes"), a_vs_bayes, reference
    )
    own_scores = own.models["bayes"].scores
    assert own_scores is not None
    own_gap = own_scores["village"].overall.brier_gap
    assert own_gap is not None and own_gap.gap == 0.0
    # Everything but the gaps is unchanged, and the JSON reads back.
    for m in ("A", "B"):
        before, after = plain.models[m].scores, gapped.models[m].scores
        assert before is not None and after is not None
        assert before["village"].overall.brier_gap is None
        assert after["village"].overall.brier == before["village"].overall.brier
    j = json.loads(json.dumps(gapped.to_json()))
    village = j["models"]["B"]["identification_scores"]["village"]["overall"]
    assert village["brier_gap"]["method"] == "paired"
    assert ScoreGap.from_json(village["brier_gap"]) == gap
    assert PairSummary.from_json(j) == gapped
    assert "brier_gap" not in json.dumps(plain.to_json())
    # The CSV gets gap columns only when a gap exists; the console a gap line.
    assert "brier_gap" in rows.score_rows([gapped])[0]
    assert "brier_gap" not in rows.score_rows([plain])[0]
    lines = rows.score_lines("village", b["village"].overall)
    assert lines[-1].startswith("  minus bayes: Brier +0.480") and "paired, n=4" in lines[-1]
