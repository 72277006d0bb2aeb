"""Ratings of agents from pairwise tournament outcomes: Bradley–Terry with a bootstrap, and Elo.

Input everywhere is a list of :data:`Outcome` triples ``(a, b, score)``: agent ``a``
played agent ``b`` and scored ``score`` in [0, 1] (1 a win, 0 a loss, 0.5 a draw; any
value in between counts as that fraction of a win). Agents are given explicitly, as
distinct names, and every output keeps their order. Nothing here knows about games.

**Bradley–Terry** (Bradley & Terry 1952; Hunter 2004): every agent ``i`` has a
log-strength ``θ_i`` and ``P(i beats j) = σ(θ_i − θ_j)`` with ``σ`` the logistic
function. A draw counts as half a win each way, so a game with score ``s`` adds
``s·log σ(θ_a − θ_b) + (1 − s)·log σ(θ_b − θ_a)`` to the log-likelihood.
:func:`bradley_terry` maximises the log-likelihood minus a ridge ``(λ/2)·Σθ_i²``
(a weak Gaussian prior ``θ_i ~ N(0, 1/λ)``, λ = :data:`DEFAULT_RIDGE`), which keeps the
estimate finite when an agent is undefeated, and centres the result to mean 0. The
objective is convex; it is minimised by ``scipy.optimize.minimize`` (``trust-exact``,
with the exact gradient and Hessian). Ratings on the Elo scale are
``1500 + 400/ln(10)·θ`` (:func:`elo_scale`), so a difference of 400 points means odds of
10 to 1.

:func:`rate` adds uncertainty by a percentile bootstrap (Efron & Tibshirani 1993),
refitting the model on every resample. By default it is stratified: the games of every
pair are resampled with replacement, each pair keeping its number of games. With
``clusters`` it is a cluster bootstrap: whole clusters of games (e.g. every game played on
one deal, by every pair) are resampled with replacement, since games that share a deal are
not independent and resampling them one by one would understate the uncertainty. The
table gives each agent's rating interval, rank interval, and each pair's
rating-difference interval (a pair whose interval contains 0 is *inseparable* at that
level).

**Elo** (Elo 1978; :mod:`solvers.elo`, re-exported here): sequential updates in the
order the outcomes are given, beside Bradley–Terry; :func:`elo_spread` shows how much
the order matters. Outcomes are validated by :func:`solvers.outcomes.check_outcomes`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solvers.elo import EloSpread, elo, elo_spread
from solvers.outcomes import CheckedOutcomes, Outcome, check_outcomes
from solvers.writers import finite_or_none

__all__ = [
    "DEFAULT_RIDGE",
    "ELO_BASE",
    "ELO_SCALE",
    "AgentRating",
    "CheckedOutcomes",
    "EloSpread",
    "Outcome",
    "PairDifference",
    "RatingTable",
    "bradley_terry",
    "check_outcomes",
    "cluster_counts",
    "cluster_index",
    "elo",
    "elo_scale",
    "elo_spread",
    "rate",
]

logger = logging.getLogger(__name__)


#: The ridge λ of :func:`bradley_terry`: a N(0, 1/λ) prior on each log-strength, so
#: weak (standard deviation ≈ 32) that it only matters when a maximum-likelihood
#: estimate would be infinite (an undefeated or winless agent).
DEFAULT_RIDGE = 1e-3

#: Elo-scale offset and points per unit of log-strength: ``1500 + 400/ln(10)·θ``.
ELO_BASE = 1500.0
ELO_SCALE = 400.0 / math.log(10.0)


# --------------------------------------------------------------------------- checks


def _check_level(level: float, where: str) -> None:
    if not (0.0 < level < 1.0):
        raise ValueError(f"{where}: level must be in (0, 1), got {level!r}; e.g. 0.95")


def _check_ridge(ridge: float, where: str) -> None:
    if not (math.isfinite(ridge) and ridge >= 0.0):
        raise ValueError(f"{where}: ridge must be a finite number >= 0, got {ridge!r}")


# --------------------------------------------------------------------------- Bradley–Terry


@dataclass(frozen=True)
class _Pairs:
    """Sufficient statistics of Bradley–Terry: per unordered pair (i < j) with games."""

    i: np.ndarray  # first agent of each pair
    j: np.ndarray  # second agent (i < j)
    n: np.ndarray  # games of the pair
    w: np.ndarray  # total score of i against j
    game_pair: np.ndarray  # per game: index of its pair
    game_score: np.ndarray  # per game: the score of the pair's first agent


def _pairs(checked: CheckedOutcomes) -> _Pairs:
    lo = np.minimum(checked.a, checked.b)
    hi = np.maximum(checked.a, checked.b)
    first_score = np.where(checked.a == lo, checked.score, 1.0 - checked.score)
    n_agents = len(checked.agents)
    keys, game_pair = np.unique(lo * n_agents + hi, return_inverse=True)
    n = np.bincount(game_pair, minlength=len(keys)).astype(float)
    w = np.bincount(game_pair, weights=first_score, minlength=len(keys))
    return _Pairs(keys // n_agents, keys % n_agents, n, w, game_pair, first_score)


def _strongly_connected(n_agents: int, pairs: _Pairs) -> bool:
    """Hunter's (2004) condition for a finite maximum-likelihood estimate without ridge."""
    # scipy lazily, here and in _fit_bt: it would double the time of `import solvers`.
    from scipy.sparse import csr_matrix  # type: ignore[import-untyped]
    from scipy.sparse.csgraph import connected_components  # type: ignore[import-untyped]

    rows = np.concatenate([pairs.i[pairs.w > 0], pairs.j[pairs.n - pairs.w > 0]])
    cols = np.concatenate([pairs.j[pairs.w > 0], pairs.i[pairs.n - pairs.w > 0]])
    graph = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_agents, n_agents))
    count, _ = connected_components(graph, directed=True, connection="strong")
    return bool(count == 1)


def _fit_bt(
    n_agents: int,
    i: np.ndarray,
    j: np.ndarray,
    n: np.ndarray,
    w: np.ndarray,
    ridge: float,
    x0: np.ndarray | None = None,
) -> np.ndarray:
    """Centred penalised maximum-likelihood log-strengths from pair statistics.

    The objective adds ``½·(Σθ)²``, which leaves the optimum unchanged (the likelihood is
    shift-invariant and the ridge is smallest at mean 0) but fixes the shift, so the
    Hessian is positive definite whenever the comparison graph is connected.
    """
    from scipy.optimize import minimize  # type: ignore[import-untyped]

    lose = n - w

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        d = theta[i] - theta[j]
        nll = float(np.sum(w * np.logaddexp(0.0, -d) + lose * np.logaddexp(0.0, d)))
        total = float(theta.sum())
        value = nll + 0.5 * ridge * float(theta @ theta) + 0.5 * total * total
        g = n / (1.0 + np.exp(-d)) - w  # d(nll)/d(d)
        grad = np.bincount(i, g, n_agents) - np.bincount(j, g, n_agents)
        return value, grad + ridge * theta + total

    def hessian(theta: np.ndarray) -> np.ndarray:
        d = theta[i] - theta[j]
        p = 1.0 / (1.0 + np.exp(-d))
        h = n * p * (1.0 - p)
        hess = np.full((n_agents, n_agents), 1.0) + ridge * np.eye(n_agents)
        np.add.at(hess, (i, j), -h)
        np.add.at(hess, (j, i), -h)
        hess[np.diag_indices(n_agents)] += np.bincount(i, h, n_agents) + np.bincount(j, h, n_agents)
        return hess

    start = np.zeros(n_agents) if x0 is None else np.asarray(x0, dtype=float)
    result = minimize(
        objective, start, jac=True, hess=hessian, method="trust-exact", options={"gtol": 1e-9}
    )
    if not result.success:
        logger.debug("bradley_terry: optimiser stopped early: %s", result.message)
    theta = np.asarray(result.x, dtype=float)
    return theta - theta.mean()


def bradley_terry(
    agents: Sequence[str], outcomes: Sequence[Outcome], *, ridge: float = DEFAULT_RIDGE
) -> dict[str, float]:
    """Maximum-likelihood Bradley–Terry log-strengths, centred to mean 0.

    Model (Bradley & Terry 1952): ``P(i beats j) = σ(θ_i − θ_j)``; a game with score ``s``
    for ``i`` counts as ``s`` wins of ``i`` and ``1 − s`` wins of ``j`` (a draw is half a
    win each way). The estimate maximises the log-likelihood minus ``(ridge/2)·Σθ_i²``.

    Args:
      agents: Distinct agent names; the result keeps their order.
      outcomes: ``(a, b, score)`` triples.
      ridge: The ridge λ ≥ 0 (default :data:`DEFAULT_RIDGE`). With ``ridge=0`` the plain
        maximum-likelihood estimate, which exists only if every split of the agents into
        two groups has a game each group scored in (Hunter 2004); otherwise ValueError.

    Returns:
      Agent -> θ (natural-log odds units; :func:`elo_scale` converts to Elo points).
    """
    where = "bradley_terry"
    _check_ridge(ridge, where)
    checked = check_outcomes(agents, outcomes, where=where)
    pairs = _pairs(checked)
    n_agents = len(checked.agents)
    if ridge == 0.0 and not _strongly_connected(n_agents, pairs):
        raise ValueError(
            f"{where}: with ridge=0 the estimate is infinite (an agent or group never scored "
            "against, or never lost to, the rest); use ridge > 0"
        )
    theta = _fit_bt(n_agents, pairs.i, pairs.j, pairs.n, pairs.w, ridge)
    return dict(zip(checked.agents, (float(t) for t in theta), strict=True))


def elo_scale(theta: float) -> float:
    """A Bradley–Terry log-strength on the Elo scale: ``1500 + 400/ln(10)·θ``."""
    return ELO_BASE + ELO_SCALE * theta


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class AgentRating:
    """One agent's row of a :class:`RatingTable` (ratings on the Elo scale).

    Attributes:
      agent: The agent's name.
      theta: Bradley–Terry log-strength (centred).
      rating: ``elo_scale(theta)``.
      low: Lower end of the percentile-bootstrap interval of ``rating``.
      high: Upper end of that interval.
      rank: Rank of ``rating`` (1 = best; tied agents share the better rank).
      rank_low: Best rank in the bootstrap interval of ranks (a number ≤ ``rank_high``).
      rank_high: Worst rank in that interval.
      elo: Sequential Elo rating, outcomes in the given order (:func:`elo`).
      games: Games played.
      wins: Games with score > 0.5.
      draws: Games with score 0.5.
      losses: Games with score < 0.5.
      score: Mean score over the agent's games.
    """

    agent: str
    theta: float
    rating: float
    low: float
    high: float
    rank: int
    rank_low: int
    rank_high: int
    elo: float
    games: int
    wins: int
    draws: int
    losses: int
    score: float


#: Elo points within which an interval's end counts as 0 (the fit's rounding, far below a rating).
SEPARATION_TOLERANCE = 1e-6


@dataclass(frozen=True)
class PairDifference:
    """The rating difference ``rating(a) − rating(b)`` of one pair, with its interval.

    Attributes:
      a: The first agent (earlier in the agents' order).
      b: The second agent.
      difference: ``rating(a) − rating(b)`` (Elo points).
      low: Lower end of its percentile-bootstrap interval.
      high: Upper end.
      games: Games played between ``a`` and ``b``.
    """

    a: str
    b: str
    difference: float
    low: float
    high: float
    games: int

    @property
    def separable(self) -> bool:
        """Whether the interval excludes 0 by more than :data:`SEPARATION_TOLERANCE`.

        An end within the tolerance of 0 is 0: resamples that tie the pair give a
        difference of 0 up to the fit's rounding (e.g. 3e-11), which is not a resolved order.
        """
        return self.low > SEPARATION_TOLERANCE or self.high < -SEPARATION_TOLERANCE


@dataclass(frozen=True)
class RatingTable:
    """Bradley–Terry ratings with bootstrap intervals (:func:`rate`).

    Attributes:
      agents: The agent names, in the given order.
      rows: One :class:`AgentRating` per agent, in that order.
      pairs: One :class:`PairDifference` per unordered pair, in the agents' order.
      level: Confidence level of every interval.
      bootstrap: Number of bootstrap resamples.
      seed: Seed of the bootstrap's ``numpy.random.default_rng``.
      ridge: Ridge of the Bradley–Terry fit.
      elo_k: K-factor of the sequential Elo column.
      total_games: Number of outcomes.
      clusters: Number of clusters the bootstrap resampled (None: it resampled the
        games within each pair).
    """

    agents: tuple[str, ...]
    rows: tuple[AgentRating, ...]
    pairs: tuple[PairDifference, ...]
    level: float
    bootstrap: int
    seed: int
    ridge: float
    elo_k: float
    total_games: int
    clusters: int | None = None

    def row(self, agent: str) -> AgentRating:
        """The row of ``agent`` (KeyError if unknown)."""
        for r in self.rows:
            if r.agent == agent:
                return r
        raise KeyError(agent)

    def pair(self, a: str, b: str) -> PairDifference:
        """The difference ``rating(a) − rating(b)``, in either order of the two names."""
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
            if (p.a, p.b) == (b, a):
                return PairDifference(a, b, -p.difference, -p.high, -p.low, p.games)
        raise KeyError((a, b))

    def inseparable(self) -> list[tuple[str, str]]:
        """Pairs whose rating-difference interval contains 0, in the agents' order."""
        return [(p.a, p.b) for p in self.pairs if not p.separable]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types (NaN and infinities as None), for results files."""
        out: dict[str, Any] = {
            "method": "bradley_terry",
            "scale": "elo: 1500 + 400/ln(10) * theta",
            "level": self.level,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "ridge": self.ridge,
            "elo_k": self.elo_k,
            "total_games": self.total_games,
            "resampling": (
                "games within each pair"
                if self.clusters is None
                else f"{self.clusters} clusters of games (all games of a cluster together)"
            ),
            "clusters": self.clusters,
            "agents": [
                {k: getattr(r, k) for k in AgentRating.__dataclass_fields__} for r in self.rows
            ],
            "pairs": [
                {
                    **{k: getattr(p, k) for k in PairDifference.__dataclass_fields__},
                    "separable": p.separable,
                }
                for p in self.pairs
            ],
            "inseparable": [list(p) for p in self.inseparable()],
        }
        return dict(finite_or_none(out))


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 + the number of strictly larger values, along the last axis (1 = best)."""
    return 1 + (values[..., None, :] > values[..., :, None]).sum(axis=-1)


def _bootstrap_thetas(
    n_agents: int,
    pairs: _Pairs,
    ridge: float,
    bootstrap: int,
    rng: np.random.Generator,
    start: np.ndarray,
) -> np.ndarray:
    """(bootstrap, n_agents) log-strengths refitted on resamples stratified by pair."""
    w_boot = np.empty((bootstrap, len(pairs.n)))
    for p in range(len(pairs.n)):
        scores = pairs.game_score[pairs.game_pair == p]
        picks = rng.integers(0, len(scores), size=(bootstrap, len(scores)))
        w_boot[:, p] = scores[picks].sum(axis=1)
    n_boot = np.broadcast_to(pairs.n, w_boot.shape)
    return _refit(n_agents, pairs, ridge, n_boot, w_boot, start)


def cluster_counts(n_clusters: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """The multiplicities of a cluster bootstrap, shape ``(replicates, n_clusters)``.

    Each row resamples ``n_clusters`` clusters with replacement (one ``rng.integers``
    draw for all rows). :func:`rate` and :func:`solvers.metagame.bootstrap_metagame`
    both draw through it, so with the same seed and count they resample the same clusters.
    """
    picks = rng.integers(0, n_clusters, size=(replicates, n_clusters))
    return np.stack([np.bincount(row, minlength=n_clusters) for row in picks]).astype(float)


def cluster_index(clusters: Sequence[Hashable], n_games: int, where: str) -> np.ndarray:
    """Each game's cluster as an index 0..K-1 (in order of first appearance), checked."""
    if isinstance(clusters, str) or len(clusters) != n_games:
        got = "a string" if isinstance(clusters, str) else f"{len(clusters)} keys"
        raise ValueError(
            f"{where}: clusters must give one key per outcome ({n_games}), got {got}; "
            "pass e.g. each game's seed"
        )
    index: dict[Hashable, int] = {}
    return np.fromiter((index.setdefault(c, len(index)) for c in clusters), np.intp, n_games)


def _cluster_thetas(
    n_agents: int,
    pairs: _Pairs,
    ridge: float,
    bootstrap: int,
    rng: np.random.Generator,
    start: np.ndarray,
    game_cluster: np.ndarray,
) -> np.ndarray:
    """(bootstrap, n_agents) log-strengths refitted on resamples of whole clusters."""
    counts = cluster_counts(int(game_cluster.max()) + 1, bootstrap, rng)
    weight = counts[:, game_cluster]  # (bootstrap, games): each game's multiplicity
    member = np.zeros((len(pairs.game_pair), len(pairs.n)))
    member[np.arange(len(pairs.game_pair)), pairs.game_pair] = 1.0
    n_boot = weight @ member
    w_boot = (weight * pairs.game_score) @ member
    return _refit(n_agents, pairs, ridge, n_boot, w_boot, start)


def _refit(
    n_agents: int,
    pairs: _Pairs,
    ridge: float,
    n_boot: np.ndarray,
    w_boot: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:
    """One refit per row of pair statistics ``(n_boot[b], w_boot[b])``, warm-started."""
    thetas = np.empty((len(w_boot), n_agents))
    for b in range(len(w_boot)):
        # A pair absent from a cluster resample has n = 0 and adds nothing to the fit.
        thetas[b] = _fit_bt(n_agents, pairs.i, pairs.j, n_boot[b], w_boot[b], ridge, start)
    return thetas


def rate(
    agents: Sequence[str],
    outcomes: Sequence[Outcome],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    ridge: float = DEFAULT_RIDGE,
    elo_k: float = 16.0,
    clusters: Sequence[Hashable] | None = None,
) -> RatingTable:
    """Bradley–Terry ratings (Elo scale) with percentile-bootstrap intervals.

    Without ``clusters`` (stratified), each resample draws, for every pair of agents that
    played, as many games as the pair played, with replacement from that pair's games.
    With ``clusters`` (a cluster bootstrap), each resample draws as many clusters as there
    are, with replacement, and takes every game of each drawn cluster as often as it was
    drawn: use it when games share something that makes them dependent (the tournament's
    clusters are game seeds: one deal, played by every pair from both sides). Either way
    the draws come from ``numpy.random.default_rng(seed)`` and the model is refitted.
    Intervals are the ``(1 − level)/2`` and ``(1 + level)/2`` percentiles over resamples:
    of each rating, of each rank (as observed ranks), and of each pair's rating difference.

    Args:
      agents: Distinct agent names; every output keeps their order.
      outcomes: ``(a, b, score)`` triples.
      bootstrap: Number of resamples (≥ 1).
      seed: Seed of the resampling generator; the same seed gives the same table.
      level: Confidence level in (0, 1).
      ridge: Ridge of the fit (> 0, so every resample has finite ratings).
      elo_k: K-factor of the sequential Elo column (:func:`elo`).
      clusters: Per outcome, the key of its cluster (hashable, e.g. the game's seed), or
        None to resample games within each pair.

    Returns:
      The :class:`RatingTable`.
    """
    where = "rate"
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 1:
        raise ValueError(f"rate: bootstrap must be an integer >= 1, got {bootstrap!r}; e.g. 1000")
    _check_level(level, where)
    _check_ridge(ridge, where)
    if ridge == 0.0:
        raise ValueError(
            "rate: ridge must be > 0 so that every bootstrap resample has finite ratings"
        )
    checked = check_outcomes(agents, outcomes, where=where)
    names = checked.agents
    n_agents = len(names)
    pairs = _pairs(checked)

    game_cluster = None if clusters is None else cluster_index(clusters, len(outcomes), where)
    theta = _fit_bt(n_agents, pairs.i, pairs.j, pairs.n, pairs.w, ridge)
    rng = np.random.default_rng(seed)
    if game_cluster is None:
        thetas = _bootstrap_thetas(n_agents, pairs, ridge, int(bootstrap), rng, theta)
    else:
        thetas = _cluster_thetas(n_agents, pairs, ridge, int(bootstrap), rng, theta, game_cluster)
    ratings = ELO_BASE + ELO_SCALE * theta
    boot = ELO_BASE + ELO_SCALE * thetas
    q = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    low, high = np.percentile(boot, [100 * q[0], 100 * q[1]], axis=0)
    rank = _ranks(ratings)
    boot_rank = _ranks(boot)
    rank_low = np.quantile(boot_rank, q[0], axis=0, method="inverted_cdf")
    rank_high = np.quantile(boot_rank, q[1], axis=0, method="inverted_cdf")
    elos = elo(names, outcomes, k=elo_k)

    games = np.bincount(checked.a, minlength=n_agents) + np.bincount(checked.b, minlength=n_agents)
    own_a, own_b = checked.score, 1.0 - checked.score
    total = np.bincount(checked.a, own_a, n_agents) + np.bincount(checked.b, own_b, n_agents)

    def count(mask_a: np.ndarray, mask_b: np.ndarray) -> np.ndarray:
        return np.bincount(checked.a[mask_a], minlength=n_agents) + np.bincount(
            checked.b[mask_b], minlength=n_agents
        )

    wins = count(own_a > 0.5, own_b > 0.5)
    draws = count(own_a == 0.5, own_b == 0.5)
    losses = count(own_a < 0.5, own_b < 0.5)

    rows = tuple(
        AgentRating(
            agent=name,
            theta=float(theta[x]),
            rating=float(ratings[x]),
            low=float(low[x]),
            high=float(high[x]),
            rank=int(rank[x]),
            rank_low=int(rank_low[x]),
            rank_high=int(rank_high[x]),
            elo=float(elos[name]),
            games=int(games[x]),
            wins=int(wins[x]),
            draws=int(draws[x]),
            losses=int(losses[x]),
            score=float(total[x] / games[x]) if games[x] else math.nan,
        )
        for x, name in enumerate(names)
    )
    pair_games = {
        (int(a), int(b)): int(c) for a, b, c in zip(pairs.i, pairs.j, pairs.n, strict=True)
    }
    diffs = []
    for x in range(n_agents):
        for y in range(x + 1, n_agents):
            d_lo, d_hi = np.percentile(boot[:, x] - boot[:, y], [100 * q[0], 100 * q[1]])
            diffs.append(
                PairDifference(
                    a=names[x],
                    b=names[y],
                    difference=float(ratings[x] - ratings[y]),
                    low=float(d_lo),
                    high=float(d_hi),
                    games=pair_games.get((x, y), 0),
                )
            )
    logger.debug("rate: %d agents, %d games, %d resamples", n_agents, len(outcomes), bootstrap)
    return RatingTable(
        agents=names,
        rows=rows,
        pairs=tuple(diffs),
        level=float(level),
        bootstrap=int(bootstrap),
        seed=int(seed),
        ridge=float(ridge),
        elo_k=float(elo_k),
        total_games=len(outcomes),
        clusters=None if game_cluster is None else int(game_cluster.max()) + 1,
    )
