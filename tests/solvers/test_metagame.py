"""The empirical meta-game, α-Rank and Nash: numbers from theory on small games."""

from __future__ import annotations

import dataclasses
import io
import json
import math

import numpy as np
import pytest

from solvers.metagame import (
    DEFAULT_ALPHAS,
    MetaGame,
    alpha_rank,
    bootstrap_metagame,
    empirical_metagame,
    nash,
)
from solvers.tournament_figures import fig_metagame, fig_response_graph

RPS = [("R", "S", 1.0), ("S", "P", 1.0), ("P", "R", 1.0)]
#: D beats each of R, P, S every time; R, P, S are cyclic among themselves.
DOMINANT = RPS + [("D", "R", 1.0), ("P", "D", 0.0), ("D", "S", 1.0)]


@pytest.fixture(scope="module")
def rps():
    return empirical_metagame(["R", "P", "S"], RPS)


@pytest.fixture(scope="module")
def dominant():
    return empirical_metagame(["R", "P", "S", "D"], DOMINANT)


# --------------------------------------------------------------------------- meta-game


def test_empirical_metagame_by_hand():
    games = [("A", "B", 1.0), ("B", "A", 0.5), ("A", "B", 0.0), ("C", "A", 1.0), ("B", "C", 0.25)]
    mg = empirical_metagame(["A", "B", "C"], games)
    p = mg.payoff_matrix()
    # A against B: scores 1, 0.5, 0 (both seats) → mean 0.5, sample sd 0.5, se 0.5/√3.
    assert p[0, 1] == pytest.approx(0.5) and mg.games[0][1] == mg.games[1][0] == 3
    assert mg.stderr[0][1] == pytest.approx(0.5 / math.sqrt(3))
    assert p[0, 2] == 0.0 and p[2, 0] == 1.0
    assert p[1, 2] == pytest.approx(0.25) and p[2, 1] == pytest.approx(0.75)
    assert np.isnan(mg.stderr[1][2])  # one game: no standard error
    assert np.allclose(np.diag(p), 0.5) and [mg.games[i][i] for i in range(3)] == [0, 0, 0]
    assert np.allclose(p + p.T, 1.0)
    data = json.loads(json.dumps(mg.to_json(), allow_nan=False))
    assert data["stderr"][0][0] is None and data["agents"] == ["A", "B", "C"]


def test_empirical_metagame_refuses_a_pair_without_games():
    with pytest.raises(ValueError, match=r"empirical_metagame: no games between 1 pair"):
        empirical_metagame(["A", "B", "C"], [("A", "B", 1.0), ("B", "C", 1.0)])


def test_metagame_must_be_constant_sum():
    with pytest.raises(ValueError, match="must be 1"):
        MetaGame(("A", "B"), ((0.5, 0.7), (0.7, 0.5)), ((0.0, 0.0),) * 2, ((0, 1), (1, 0)))


# --------------------------------------------------------------------------- α-Rank


def test_rps_alpha_rank_is_uniform_at_every_alpha(rps):
    result = alpha_rank(rps)
    assert result.alphas == DEFAULT_ALPHAS
    for pi in result.pis:
        if pi is not None:
            assert pi == pytest.approx((1 / 3,) * 3, abs=1e-9)
    assert result.pi == pytest.approx((1 / 3,) * 3, abs=1e-9)
    assert result.converged and set(result.ranking) == {"R", "P", "S"}


def test_dominant_agent_takes_all_mass_at_large_alpha(dominant):
    result = alpha_rank(dominant)
    assert result.ranking[0] == "D"
    assert result.mass("D") > 0.99
    assert result.pis[0] is not None and result.pis[0][3] < 0.5  # small α: nearly neutral
    masses = [pi[3] for pi in result.pis if pi is not None]
    assert all(b >= a - 1e-12 for a, b in zip(masses, masses[1:], strict=False))  # rises with α
    # The rule: the first α whose π is close to the previous grid point's.
    k = result.alphas.index(result.alpha)
    assert np.allclose(result.pis[k], result.pis[k - 1], rtol=1e-5, atol=1e-8)
    assert not np.allclose(result.pis[k - 1], result.pis[k - 2], rtol=1e-5, atol=1e-8)
    # Payoff differences of 1 overflow exp(α) at the top of the grid: recorded as None.
    assert result.pis[-1] is None
    assert json.dumps(result.to_json(), allow_nan=False)


def test_two_agents_match_the_closed_form():
    # Two strategies, local selection: ρ(u)/ρ(−u) = e^{(m−1)u} with u = α(2p − 1), so the
    # stationary mass of the better agent is σ((m − 1)·α·(2p − 1)).
    mg = empirical_metagame(["A", "B"], [("A", "B", 0.6)])
    alphas = (0.01, 0.1, 0.5, 1.0, 2.0)
    result = alpha_rank(mg, alphas=alphas, population=20)
    for alpha, pi in zip(alphas, result.pis, strict=True):
        expected = 1.0 / (1.0 + math.exp(-19 * alpha * 0.2))
        assert pi is not None and pi[0] == pytest.approx(expected, rel=1e-6)


def test_alpha_before_numerical_trouble_is_chosen_when_pi_never_settles(dominant):
    result = alpha_rank(dominant, alphas=(0.01, 0.02, 2000.0))
    assert result.pis[2] is None
    assert result.alpha == 0.02 and not result.converged


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alphas": (1.0, 0.5)}, "strictly increasing"),
        ({"alphas": (0.0, 1.0)}, "positive"),
        ({"population": 1}, "population"),
    ],
)
def test_alpha_rank_validates(rps, kwargs, message):
    with pytest.raises(ValueError, match=f"alpha_rank: .*{message}"):
        alpha_rank(rps, **kwargs)


# --------------------------------------------------------------------------- Nash


def test_nash_of_rps_is_uniform(rps):
    result = nash(rps)
    assert result.strategy == pytest.approx((1 / 3,) * 3, abs=1e-7)
    assert result.value == pytest.approx(0.5, abs=1e-9)
    assert result.exploitability == pytest.approx(0.0, abs=1e-9)
    assert result.support == ("R", "P", "S")


def test_nash_of_a_dominant_agent_is_pure(dominant):
    result = nash(dominant)
    assert result.strategy == pytest.approx((0, 0, 0, 1), abs=1e-9)
    assert result.support == ("D",)
    assert result.exploitability == pytest.approx(0.0, abs=1e-9)
    assert json.dumps(result.to_json(), allow_nan=False)


def test_nash_of_weighted_rps_is_the_kernel_of_the_skew_matrix():
    # Zero-sum part A = [[0, −a, b], [a, 0, −c], [−b, c, 0]]: xᵀA = 0 for x ∝ (c, b, a).
    a, b, c = 0.1, 0.2, 0.3
    games = [("P", "R", 0.5 + a), ("R", "S", 0.5 + b), ("S", "P", 0.5 + c)]
    result = nash(empirical_metagame(["R", "P", "S"], games))
    assert result.strategy == pytest.approx((c / 0.6, b / 0.6, a / 0.6), abs=1e-7)
    assert result.exploitability == pytest.approx(0.0, abs=1e-9)
    # A pure strategy is exploitable: against R alone, P scores 0.5 + a.
    pure = np.array([1.0, 0.0, 0.0])
    assert np.max(empirical_metagame(["R", "P", "S"], games).payoff_matrix() @ pure) - 0.5 == (
        pytest.approx(a)
    )


# --------------------------------------------------------------------------- figures


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def test_figures_render(dominant):
    games = DOMINANT + [("R", "S", 0.0), ("D", "P", 0.5)]
    mg = empirical_metagame(["R", "P", "S", "D"], games)
    fig = fig_metagame(mg, title="scripted stand-in, not an LLM")
    assert _png(fig)[:4] == b"\x89PNG"
    assert fig.axes[0].get_title() == "scripted stand-in, not an LLM"
    ar = alpha_rank(mg)
    fig = fig_response_graph(mg, ar, title="response graph")
    assert _png(fig)[:4] == b"\x89PNG"
    other = dataclasses.replace(ar, agents=("a", "b", "c", "d"))
    with pytest.raises(ValueError, match="same agents"):
        fig_response_graph(mg, other, title="x")


# --------------------------------------------------------------------------- non-unique Nash

#: s1 and s2 tie with each other and beat s3 and s4 every time: every mixture of s1 and
#: s2 is an equilibrium, and nothing else is.
TIED = [
    ("s1", "s2", 0.5),
    ("s1", "s3", 1.0),
    ("s1", "s4", 1.0),
    ("s2", "s3", 1.0),
    ("s2", "s4", 1.0),
    ("s3", "s4", 0.7),
]


def test_two_tied_dominant_strategies_are_flagged_not_unique_with_both_in_the_support():
    result = nash(empirical_metagame(["s1", "s2", "s3", "s4"], TIED))
    assert not result.unique
    assert result.support == ("s1", "s2")
    # Each of s1 and s2 can take any weight in [0, 1]; s3 and s4 none.
    assert result.weight_low == pytest.approx((0, 0, 0, 0), abs=1e-7)
    assert result.weight_high == pytest.approx((1, 1, 0, 0), abs=1e-7)
    # The reported one is the maximum-entropy equilibrium, not the solver's vertex.
    assert result.selection == "maximum entropy"
    assert result.strategy == pytest.approx((0.5, 0.5, 0, 0), abs=1e-6)
    assert sorted(result.vertex, reverse=True) == pytest.approx((1, 0, 0, 0), abs=1e-9)
    assert result.exploitability == pytest.approx(0.0, abs=1e-7)
    data = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert data["unique"] is False and data["support"] == ["s1", "s2"]


def test_identical_agents_make_every_mixture_an_equilibrium():
    games = [("a", "b", 0.5), ("a", "c", 0.5), ("b", "c", 0.5)]
    result = nash(empirical_metagame(["a", "b", "c"], games))
    assert not result.unique and result.support == ("a", "b", "c")
    assert result.strategy == pytest.approx((1 / 3,) * 3, abs=1e-6)
    assert result.weight_high == pytest.approx((1, 1, 1), abs=1e-7)


def test_a_clone_of_rock_splits_rocks_weight_in_every_proportion():
    # R2 plays exactly as R: the equilibria put 1/3 on P and S and 1/3 on R and R2 together.
    clone = RPS + [("R2", "S", 1.0), ("P", "R2", 1.0), ("R", "R2", 0.5)]
    result = nash(empirical_metagame(["R", "P", "S", "R2"], clone))
    assert not result.unique and result.support == ("R", "P", "S", "R2")
    assert result.weight_low == pytest.approx((0, 1 / 3, 1 / 3, 0), abs=1e-7)
    assert result.weight_high == pytest.approx((1 / 3,) * 4, abs=1e-7)
    assert result.strategy == pytest.approx((1 / 6, 1 / 3, 1 / 3, 1 / 6), abs=1e-6)


def test_unique_equilibria_are_flagged_unique(rps, dominant):
    for mg, strategy in ((rps, (1 / 3,) * 3), (dominant, (0, 0, 0, 1))):
        result = nash(mg)
        assert result.unique and result.selection == "unique"
        assert result.strategy == pytest.approx(strategy, abs=1e-7)
        assert result.weight_low == pytest.approx(strategy, abs=1e-6)
        assert result.weight_high == pytest.approx(strategy, abs=1e-6)


# --------------------------------------------------------------------------- the bootstrap


def _noisy_games(seed: int, deals: int) -> tuple[list, list[int]]:
    """Every pair of A, B, C plays every deal from both sides; A is better, noisily."""
    rng = np.random.default_rng(seed)
    strength = {"A": 0.8, "B": 0.0, "C": -0.3}
    names = list(strength)
    games, clusters = [], []
    for deal in range(deals):
        for x, a in enumerate(names):
            for b in names[x + 1 :]:
                p = 1.0 / (1.0 + math.exp(-(strength[a] - strength[b])))
                for first, second in ((a, b), (b, a)):
                    won = rng.random() < (p if first == a else 1.0 - p)
                    games.append((first, second, float(won)))
                    clusters.append(deal)
    return games, clusters


def test_metagame_bootstrap_intervals_contain_the_point_estimates():
    games, clusters = _noisy_games(3, 30)
    boot = bootstrap_metagame(["A", "B", "C"], games, clusters, replicates=60, seed=1)
    assert boot.replicates == 60 and boot.clusters == 30
    ar, ne = (
        alpha_rank(empirical_metagame(["A", "B", "C"], games)),
        nash(empirical_metagame(["A", "B", "C"], games)),
    )
    for x, row in enumerate(boot.rows):
        assert row.alpha_rank_mass == ar.pi[x] and row.nash_weight == ne.strategy[x]
        assert row.alpha_rank_low <= row.alpha_rank_mass + 1e-12
        assert row.alpha_rank_mass <= row.alpha_rank_high + 1e-12
        assert row.nash_low - 1e-9 <= row.nash_weight <= row.nash_high + 1e-9
        assert 0.0 <= row.alpha_rank_top <= 1.0 and 0.0 <= row.nash_support <= 1.0
    # A, the strongest, is on top of α-Rank in most resamples, C in almost none.
    assert boot.row("A").alpha_rank_top > 0.5 > boot.row("C").alpha_rank_top
    assert 0.0 <= boot.alpha_rank_settled <= 1.0
    assert json.dumps(boot.to_json(), allow_nan=False)


def test_metagame_bootstrap_is_seeded_and_leaves_the_global_generator_alone():
    games, clusters = _noisy_games(4, 12)
    np.random.seed(123)
    before = np.random.random()
    np.random.seed(123)
    one = bootstrap_metagame(["A", "B", "C"], games, clusters, replicates=20, seed=5)
    assert np.random.random() == before
    assert one == bootstrap_metagame(["A", "B", "C"], games, clusters, replicates=20, seed=5)


def test_metagame_bootstrap_resamples_whole_clusters():
    # Within every deal B wins one game and loses the other: any resample of deals is an
    # even match, whereas resampling games one by one would move the payoff.
    games = [g for _ in range(10) for g in (("A", "B", 1.0), ("B", "A", 1.0))]
    clusters = [k // 2 for k in range(len(games))]
    boot = bootstrap_metagame(["A", "B"], games, clusters, replicates=30, seed=0)
    for row in boot.rows:
        assert row.alpha_rank_low == pytest.approx(0.5) == row.alpha_rank_high
        assert row.alpha_rank_top == 1.0 and row.nash_support == 1.0
    assert boot.nash_unique == 0.0  # every mixture of two even agents is an equilibrium


def test_metagame_bootstrap_refuses_a_cluster_without_every_pair():
    games = [("A", "B", 1.0), ("A", "C", 0.0), ("B", "C", 1.0), ("A", "B", 0.0)]
    with pytest.raises(ValueError, match=r"bootstrap_metagame: cluster 's2' has no game between"):
        bootstrap_metagame(["A", "B", "C"], games, ["s1", "s1", "s1", "s2"], replicates=2)
    with pytest.raises(ValueError, match=r"bootstrap_metagame: clusters must give one key"):
        bootstrap_metagame(["A", "B", "C"], games, ["s1"], replicates=2)


def test_the_bootstraps_lazy_sweep_chooses_the_alpha_of_the_full_sweep(dominant, rps):
    from solvers.metagame.alpharank import _sweep

    for mg, grid in (
        (dominant, DEFAULT_ALPHAS),
        (rps, DEFAULT_ALPHAS),
        (dominant, (0.01, 0.02, 2000.0)),
    ):
        full = alpha_rank(mg, alphas=grid)
        results, chosen, converged = _sweep(mg.payoff_matrix(), grid, 50, lazy=True)
        assert chosen is not None and grid[chosen] == full.alpha and converged == full.converged
        assert tuple(results[chosen][0]) == pytest.approx(full.pi, abs=1e-12)
        assert len(results) <= len(grid)
