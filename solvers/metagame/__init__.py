"""The empirical meta-game of a tournament, and its solutions: α-Rank and Nash.

Empirical game-theoretic analysis (Wellman 2006) treats each agent as one pure strategy
of a *meta-game* whose payoffs are estimated from play: :func:`empirical_metagame` turns
:data:`~solvers.outcomes.Outcome` triples into the matrix ``payoff[i][j]`` = mean score of
agent ``i`` against agent ``j`` over their games in both seat orders. Scores are in
[0, 1] and a game's two scores sum to 1, so the meta-game is symmetric and
constant-sum: ``payoff[i][j] + payoff[j][i] = 1``, with ``payoff[i][i] = 0.5`` by
convention (an agent against itself is an even match; no self-play is measured).

Its solutions, one module each: :func:`alpha_rank` (:mod:`.alpharank`), :func:`nash`
(:mod:`.nash`), and both on resamples of the games, :func:`bootstrap_metagame`
(:mod:`.bootstrap`).
"""

from solvers.metagame.alpharank import DEFAULT_ALPHAS, AlphaRankResult, alpha_rank
from solvers.metagame.bootstrap import AgentUncertainty, MetaGameBootstrap, bootstrap_metagame
from solvers.metagame.game import MetaGame, empirical_metagame
from solvers.metagame.nash import NASH_TOLERANCE, NashResult, nash

__all__ = [
    "DEFAULT_ALPHAS",
    "NASH_TOLERANCE",
    "AgentUncertainty",
    "AlphaRankResult",
    "MetaGame",
    "MetaGameBootstrap",
    "NashResult",
    "alpha_rank",
    "bootstrap_metagame",
    "empirical_metagame",
    "nash",
]
