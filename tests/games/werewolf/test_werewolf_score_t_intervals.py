"""Student-t 95 % intervals over games for the arena's identification scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

from games.werewolf.arena.scoring import mean_ci95, probability_score, t_quantile

# t(0.975, 2) in closed form: with two degrees of freedom the quantile of p is
# (2p - 1) / sqrt(2 p (1 - p)).
T_2 = 0.95 / math.sqrt(2 * 0.975 * 0.025)


def test_t_quantile_with_two_degrees_of_freedom_by_hand():
    assert T_2 == pytest.approx(4.3026527)
    assert t_quantile(2) == pytest.approx(T_2)
    # About 2.2 times the normal 1.96: the audit's werewolf observers in 3 games.
    assert T_2 / 1.96 == pytest.approx(2.195, abs=1e-3)


def test_mean_interval_of_three_values_is_student_t():
    # mean 0.5, sd (ddof 1) = sqrt((0.09 + 0 + 0.09) / 2) = 0.3.
    mean, (lo, hi) = mean_ci95([0.2, 0.5, 0.8])
    half = T_2 * 0.3 / math.sqrt(3)  # 0.745241
    assert half == pytest.approx(0.745241, abs=1e-6)
    assert mean == pytest.approx(0.5)
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half))


def test_no_interval_below_two_values():
    assert mean_ci95([0.3]) == (0.3, (None, None))
    s = probability_score([(7, "villager", "unsure", {"villager": 0.5, "werewolf": 0.5})])
    assert s.brier_ci95 == (None, None) and s.log_loss_ci95 == (None, None)
    assert (s.games, s.ci95_n, s.ci95_kind) == (1, 1, "student_t")


def test_score_interval_over_three_games_by_hand():
    # Brier of {werewolf: a, villager: 1 - a} on a villager is 2 a^2: per game
    # 0 (a = 0), 0.08 (a = 0.2), 0.5 (a = 0.5; two judgments of 0.5 and 0.5).
    def reading(a: float) -> dict[str, float]:
        return {"werewolf": a, "villager": 1 - a}

    js = [
        (10, "villager", "unsure", reading(0.0)),
        (11, "villager", "unsure", reading(0.2)),
        (12, "villager", "unsure", reading(0.5)),
        (12, "villager", "unsure", reading(0.5)),
    ]
    s = probability_score(js)
    games = [0.0, 0.08, 0.5]
    mean = sum(games) / 3  # 0.193333
    sd = math.sqrt(sum((g - mean) ** 2 for g in games) / 2)
    half = T_2 * sd / math.sqrt(3)
    assert (s.n, s.games, s.ci95_n) == (4, 3, 3)
    assert s.brier == pytest.approx(mean)
    assert s.brier_ci95 == pytest.approx((mean - half, mean + half))
    # The old normal interval was 2.2 times narrower.
    lo, hi = s.brier_ci95
    assert lo is not None and hi is not None
    assert (hi - lo) / 2 == pytest.approx(half) and half > 2 * 1.96 * sd / math.sqrt(3)


def test_welch_interval_matches_scipys_and_both_callers_use_it():
    from scipy import stats

    from games.werewolf.arena.scoring import _welch
    from games.werewolf.day.summary import _mean_std, _welch_difference
    from runs.intervals import welch_half_width

    a, b = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0]
    # By hand: variances 1 and 20/3, se^2 = 1/3 + 5/3 = 2, df = 4 / (1/18 + 25/27).
    half, df = welch_half_width(1.0, 3, 20.0 / 3.0, 4)
    assert df == pytest.approx(4.0 / (1.0 / 18.0 + 25.0 / 27.0), rel=1e-12)
    ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    d = np.mean(b) - np.mean(a)
    assert (d - half, d + half) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert _welch(b, a) == ((-half, half), df)
    assert _welch_difference(_mean_std(a), _mean_std(b)) == pytest.approx((d - half, d + half))
    assert welch_half_width(0.0, 2, 0.0, 3) == (0.0, 3.0)  # both constant: zero width
    assert welch_half_width(1.0, 1, 1.0, 5) is None
