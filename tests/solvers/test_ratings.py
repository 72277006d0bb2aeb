"""Bradley–Terry with a bootstrap, and Elo: numbers from the models, by hand or by theory."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from solvers.ratings import (
    ELO_SCALE,
    bradley_terry,
    elo,
    elo_scale,
    elo_spread,
    rate,
)

PLANTED = {"A": -1.0, "B": 0.0, "C": 0.5, "D": 1.5}


def simulate(strengths: dict[str, float], games_per_pair: int, seed: int) -> list:
    """Games of every pair under Bradley–Terry, alternating seats (no draws)."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    out = []
    for x, a in enumerate(names):
        for b in names[x + 1 :]:
            p = 1.0 / (1.0 + math.exp(-(strengths[a] - strengths[b])))
            wins = rng.random(games_per_pair) < p
            for g, won in enumerate(wins):
                s = float(won)
                out.append((a, b, s) if g % 2 == 0 else (b, a, 1.0 - s))
    return out


@pytest.fixture(scope="module")
def planted_games():
    return simulate(PLANTED, 500, seed=7)  # 6 pairs x 500 = 3000 games


@pytest.fixture(scope="module")
def planted_table(planted_games):
    return rate(list(PLANTED), planted_games, bootstrap=300, seed=0)


def centred(values: dict[str, float]) -> dict[str, float]:
    mean = sum(values.values()) / len(values)
    return {k: v - mean for k, v in values.items()}


# --------------------------------------------------------------------------- Bradley–Terry


def test_hand_case_three_wins_of_four_gives_ln3():
    games = [("A", "B", 1.0)] * 2 + [("B", "A", 0.0), ("B", "A", 1.0)]  # A: 3 of 4
    theta = bradley_terry(["A", "B"], games, ridge=0.0)
    # Likelihood 3·log σ(d) + log σ(−d) is maximal at σ(d) = 3/4, d = ln 3.
    assert theta["A"] - theta["B"] == pytest.approx(math.log(3.0), abs=1e-6)
    assert theta["A"] + theta["B"] == pytest.approx(0.0, abs=1e-9)
    # The default ridge shrinks it only slightly: 3 − 4σ(d) = λd/2 → about 7e-4 less.
    shrunk = bradley_terry(["A", "B"], games)
    d = shrunk["A"] - shrunk["B"]
    assert d < math.log(3.0)
    assert d == pytest.approx(math.log(3.0) - 1e-3 * math.log(3.0) / 2 / 0.75, abs=1e-5)


def test_draws_count_as_half_a_win_each_way():
    # One win and two draws: A scores 2 of 3, so σ(d) = 2/3 and d = ln 2.
    games = [("A", "B", 1.0), ("A", "B", 0.5), ("B", "A", 0.5)]
    theta = bradley_terry(["A", "B"], games, ridge=0.0)
    assert theta["A"] - theta["B"] == pytest.approx(math.log(2.0), abs=1e-6)
    even = bradley_terry(["A", "B"], [("A", "B", 0.5)] * 3, ridge=0.0)
    assert even == pytest.approx({"A": 0.0, "B": 0.0}, abs=1e-9)


def test_undefeated_agent_is_finite_with_the_ridge_and_refused_without():
    theta = bradley_terry(["A", "B"], [("A", "B", 1.0)])
    assert math.isfinite(theta["A"]) and 0.0 < theta["A"] - theta["B"] < 20.0
    with pytest.raises(ValueError, match="bradley_terry: with ridge=0"):
        bradley_terry(["A", "B"], [("A", "B", 1.0)], ridge=0.0)


def test_fit_recovers_planted_strengths(planted_games):
    theta = bradley_terry(list(PLANTED), planted_games)
    assert list(theta) == list(PLANTED)  # order kept
    assert sum(theta.values()) == pytest.approx(0.0, abs=1e-9)
    for name, value in centred(PLANTED).items():
        assert theta[name] == pytest.approx(value, abs=0.2), name


def test_bootstrap_intervals_contain_planted_values_and_ranks_are_resolved(planted_table):
    table = planted_table
    truth = centred(PLANTED)
    for row in table.rows:
        assert row.low <= row.rating <= row.high
        assert row.low <= elo_scale(truth[row.agent]) <= row.high, row
    assert [(r.rank, r.rank_low, r.rank_high) for r in table.rows] == [
        (4, 4, 4),
        (3, 3, 3),
        (2, 2, 2),
        (1, 1, 1),
    ]
    assert table.inseparable() == []


def test_bootstrap_width_matches_the_fisher_information(planted_games, planted_table):
    # Asymptotically θ̂ has covariance pinv(L), L the Laplacian with weights n·p(1−p):
    # a 95% interval spans about 2·1.96 standard errors.
    names = list(PLANTED)
    theta = np.array([planted_table.row(a).theta for a in names])
    lap = np.zeros((4, 4))
    for x in range(4):
        for y in range(x + 1, 4):
            p = 1.0 / (1.0 + math.exp(-(theta[x] - theta[y])))
            h = 500 * p * (1 - p)
            lap[x, y] = lap[y, x] = -h
            lap[x, x] += h
            lap[y, y] += h
    se = np.sqrt(np.diag(np.linalg.pinv(lap))) * ELO_SCALE
    width = np.array([planted_table.row(a).high - planted_table.row(a).low for a in names])
    assert np.all(width / (2 * 1.96 * se) > 0.75), width / (2 * 1.96 * se)
    assert np.all(width / (2 * 1.96 * se) < 1.3), width / (2 * 1.96 * se)


def test_equal_agents_are_inseparable_and_different_ones_are_not():
    games = simulate({"X": 0.0, "Y": 0.0, "Z": 2.0}, 200, seed=3)
    table = rate(["X", "Y", "Z"], games, bootstrap=200, seed=1)
    assert table.inseparable() == [("X", "Y")]
    assert table.pair("X", "Z").separable and table.pair("Z", "X").difference > 0
    assert table.pair("Y", "X").difference == pytest.approx(-table.pair("X", "Y").difference)


def test_counts_and_scale():
    games = [("A", "B", 1.0), ("B", "A", 0.5), ("A", "C", 0.0), ("C", "B", 1.0)]
    table = rate(["A", "B", "C"], games, bootstrap=20)
    a, b, c = table.rows
    assert (a.games, a.wins, a.draws, a.losses) == (3, 1, 1, 1)
    assert (b.games, b.wins, b.draws, b.losses) == (3, 0, 1, 2)
    assert (c.games, c.wins, c.draws, c.losses) == (2, 2, 0, 0)
    assert a.score == pytest.approx(0.5) and c.score == pytest.approx(1.0)
    assert a.rating == pytest.approx(1500 + 400 / math.log(10) * a.theta)
    assert table.total_games == 4 and table.agents == ("A", "B", "C")
    assert [p.games for p in table.pairs] == [2, 1, 1]


def test_same_seed_same_table_and_json_is_plain(planted_games):
    first = rate(list(PLANTED), planted_games[:600], bootstrap=50, seed=5)
    again = rate(list(PLANTED), planted_games[:600], bootstrap=50, seed=5)
    other = rate(list(PLANTED), planted_games[:600], bootstrap=50, seed=6)
    assert first == again
    assert first != other
    text = json.dumps(first.to_json(), allow_nan=False)
    data = json.loads(text)
    assert [r["agent"] for r in data["agents"]] == list(PLANTED)
    assert data["bootstrap"] == 50 and data["seed"] == 5


def test_rate_does_not_touch_the_global_generator(planted_games):
    np.random.seed(123)
    before = np.random.random()
    np.random.seed(123)
    rate(list(PLANTED), planted_games[:300], bootstrap=10, seed=0)
    assert np.random.random() == before


def test_cluster_bootstrap_widens_the_intervals_of_dependent_games():
    # 20 deals, each played 10 times with the same result (games of one deal are copies):
    # only the deals carry information, and only resampling deals shows it.
    rng = np.random.default_rng(11)
    games, clusters = [], []
    for deal in range(20):
        s = float(rng.random() < 0.6)
        games += [("A", "B", s)] * 10
        clusters += [deal] * 10
    by_game = rate(["A", "B"], games, bootstrap=300, seed=2)
    by_deal = rate(["A", "B"], games, bootstrap=300, seed=2, clusters=clusters)
    assert by_deal.rows[0].rating == by_game.rows[0].rating  # the fit does not change
    width_game = by_game.rows[0].high - by_game.rows[0].low
    width_deal = by_deal.rows[0].high - by_deal.rows[0].low
    # Ten copies shrink a standard error by √10 ≈ 3.2 when treated as independent.
    assert width_deal > 2.5 * width_game, (width_deal, width_game)
    assert by_deal.clusters == 20 and by_game.clusters is None
    assert by_deal.to_json()["resampling"].startswith("20 clusters")


def test_cluster_bootstrap_keeps_each_clusters_games_together():
    # In every deal each agent wins once: every resample of deals is an even match.
    games = [g for _ in range(8) for g in (("A", "B", 1.0), ("B", "A", 1.0))]
    clusters = [k // 2 for k in range(len(games))]
    table = rate(["A", "B"], games, bootstrap=100, seed=0, clusters=clusters)
    for row in table.rows:
        assert row.low == pytest.approx(1500.0) and row.high == pytest.approx(1500.0)
    assert table == rate(["A", "B"], games, bootstrap=100, seed=0, clusters=clusters)
    with pytest.raises(ValueError, match=r"rate: clusters must give one key per outcome \(16\)"):
        rate(["A", "B"], games, bootstrap=10, clusters=clusters[:-1])


# --------------------------------------------------------------------------- Elo


def test_elo_two_games_by_hand():
    # Game 1, A beats B at 1500-1500: E = 1/2, A += 16·(1 − 1/2) = 8 → 1508, B → 1492.
    # Game 2, B beats A: E_B = 1/(1 + 10^(16/400)) = 0.4769902, B += 16·0.5230098 = 8.36816.
    ratings = elo(["A", "B"], [("A", "B", 1.0), ("B", "A", 1.0)])
    assert ratings["A"] == pytest.approx(1499.63184, abs=1e-4)
    assert ratings["B"] == pytest.approx(1500.36816, abs=1e-4)
    assert sum(ratings.values()) == pytest.approx(3000.0)
    # The same games in the other order end the other way round.
    reverse = elo(["A", "B"], [("B", "A", 1.0), ("A", "B", 1.0)])
    assert reverse["A"] == pytest.approx(1500.36816, abs=1e-4)
    assert elo(["A", "B"], [("A", "B", 0.5)], k=32.0, initial=1000.0) == {"A": 1000.0, "B": 1000.0}


def test_elo_spread_shows_order_dependence():
    games = [("A", "B", 1.0), ("B", "A", 1.0)]
    spread = elo_spread(["A", "B"], games, permutations=200, seed=0)
    assert spread["A"].low == pytest.approx(1499.63184, abs=1e-4)
    assert spread["A"].high == pytest.approx(1500.36816, abs=1e-4)
    assert spread["A"].low < spread["A"].mean < spread["A"].high
    assert elo_spread(["A", "B"], games, seed=4) == elo_spread(["A", "B"], games, seed=4)


def test_elo_spread_is_a_point_when_order_cannot_matter():
    spread = elo_spread(["A", "B"], [("A", "B", 1.0)] * 3, permutations=20)
    assert spread["A"].low == pytest.approx(spread["A"].high)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: bradley_terry(["A"], [("A", "B", 1.0)]),
            r"bradley_terry: needs at least 2 agents",
        ),
        (lambda: bradley_terry(["A", "B"], [("A", "C", 1.0)]), r"bradley_terry: unknown agent 'C'"),
        (lambda: bradley_terry(["A", "B"], [("A", "A", 1.0)]), r"playing itself"),
        (lambda: bradley_terry(["A", "B"], [("A", "B", 1.5)]), r"outside \[0, 1\]"),
        (lambda: bradley_terry(["A", "B"], [("A", "B", float("nan"))]), r"outside \[0, 1\]"),
        (lambda: bradley_terry(["A", "B"], []), r"at least one outcome"),
        (lambda: bradley_terry(["A", "A"], [("A", "A", 1.0)]), r"distinct"),
        (lambda: bradley_terry("AB", [("A", "B", 1.0)]), r"not one string"),
        (lambda: bradley_terry(["A", "B"], [("A", "B")]), r"triple"),
        (lambda: bradley_terry(["A", "B"], [("A", "B", 1.0)], ridge=-1), r"ridge"),
        (lambda: rate(["A", "B"], [("A", "B", 1.0)], bootstrap=0), r"rate: bootstrap must be"),
        (lambda: rate(["A", "B"], [("A", "B", 1.0)], level=1.0), r"rate: level"),
        (lambda: rate(["A", "B"], [("A", "B", 1.0)], ridge=0.0), r"rate: ridge must be > 0"),
        (lambda: elo(["A", "B"], [("A", "B", 1.0)], k=0), r"elo: k must be"),
        (lambda: elo(["A", "B"], [("A", "X", 1.0)]), r"elo: unknown agent 'X'"),
        (
            lambda: elo_spread(["A", "B"], [("A", "B", 1.0)], permutations=0),
            r"elo_spread: permutations",
        ),
    ],
)
def test_invalid_inputs_raise_one_line_errors(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- figure


def test_ratings_figure_renders(planted_table):
    from solvers.tournament_figures import fig_ratings

    fig = fig_ratings(planted_table, title="scripted stand-in, not an LLM")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.axes[0].get_title() == "scripted stand-in, not an LLM"


def test_an_interval_ending_at_zero_up_to_rounding_does_not_separate() -> None:
    from solvers.ratings import SEPARATION_TOLERANCE, PairDifference

    # Seen in a 2-games-per-pair tournament: the lower end was 3.2e-11, not a resolved order.
    assert not PairDifference("a", "b", 262.5, 3.2e-11, 2027.9, 2).separable
    assert not PairDifference("a", "b", -262.5, -2027.9, -3.2e-11, 2).separable
    assert PairDifference("a", "b", 262.5, 10 * SEPARATION_TOLERANCE, 2027.9, 2).separable
    assert PairDifference("a", "b", -262.5, -2027.9, -1.0, 2).separable
