"""Exact, fast game-theoretic solvers on materialised game trees.

Walk an OpenSpiel game once (:func:`materialize`) or build a tree directly
(:class:`TreeBuilder`, :meth:`GameTree.from_arrays`); then run CFR and its
variants (:class:`CFRSolver`; Zinkevich et al. 2007, Tammelin 2014, Brown &
Sandholm 2019), compute best responses, NashConv and CFR-Gain, and whole
convergence curves over many trees (:func:`cfr_curves`, on all cores, with
each tree's final average policy). Policies convert to and from OpenSpiel
``TabularPolicy`` (metrics also take one directly) and trees export to Gambit
``.efg`` that both ``pyspiel.load_efg_game`` and ``pygambit.read_efg`` read.

The tree code is split by concern: :mod:`solvers.game_tree` (the type),
:mod:`solvers.canonical` (validation and canonical renumbering),
:mod:`solvers.builder` (:class:`TreeBuilder`) and :mod:`solvers.walk`
(:func:`materialize`); :mod:`solvers.tree` re-exports them.

Example::

    import pyspiel
    import solvers

    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    solver = solvers.CFRSolver(tree, variant="cfr+").run(1000)
    result = solvers.nash_conv(tree, solver.average_policy())
    result.nash_conv  # close to 0: the average policy is near a Nash equilibrium

    # A convergence curve: one compiled call per iteration (CFR + both metrics).
    solver = solvers.CFRSolver(tree)
    baseline = solvers.pure_policy(tree, lambda key, legal: legal[0])
    curve = [solver.step(baseline).nash_conv for _ in range(1000)]
"""

from solvers.best_response import (
    NashConvResult,
    best_response_policy,
    best_response_values,
    nash_conv,
)
from solvers.cfr import VARIANTS, CFRResult, CFRSolver, CFRVariant, IterationMetrics, run_cfr
from solvers.cfr_gain import CFRGainResult, cfr_gain, deviation_values
from solvers.curve_data import Curves, ratio_or_nan
from solvers.curves import cfr_curves, make_schedule
from solvers.diagnostics import DegeneracyCounts, TreeDegeneracy, degeneracy_counts
from solvers.efg import to_efg
from solvers.metagame import (
    AlphaRankResult,
    MetaGame,
    MetaGameBootstrap,
    NashResult,
    alpha_rank,
    bootstrap_metagame,
    empirical_metagame,
    nash,
)
from solvers.policy import (
    TreePolicy,
    check_policy,
    from_tabular_policy,
    merge_policies,
    normalize_policy,
    policy_from_dict,
    policy_from_fn,
    pure_policy,
    to_tabular_policy,
    uniform_policy,
)
from solvers.pool import shutdown_pool
from solvers.ratings import (
    AgentRating,
    EloSpread,
    Outcome,
    PairDifference,
    RatingTable,
    bradley_terry,
    elo,
    elo_scale,
    elo_spread,
    rate,
)
from solvers.studies import (
    GeneralisationResult,
    WholeGameResult,
    decision_levels,
    ess_iterations,
    final_metrics,
    first_ess_iteration,
    generalisation_study,
    level_distributions,
    mapped_policy,
    whole_game_study,
)
from solvers.tree import (
    CHANCE,
    DECISION,
    DEFAULT_MAX_NODES,
    TERMINAL,
    GameTree,
    TreeBuilder,
    materialize,
)
from solvers.values import expected_values, reach_probabilities
from solvers.writers import check_writable, finite_or_none, write_csv, write_json, write_text

__all__ = [
    "CHANCE",
    "DECISION",
    "DEFAULT_MAX_NODES",
    "TERMINAL",
    "VARIANTS",
    "AgentRating",
    "AlphaRankResult",
    "CFRGainResult",
    "CFRResult",
    "CFRSolver",
    "CFRVariant",
    "Curves",
    "DegeneracyCounts",
    "EloSpread",
    "GameTree",
    "GeneralisationResult",
    "IterationMetrics",
    "MetaGame",
    "MetaGameBootstrap",
    "NashConvResult",
    "NashResult",
    "Outcome",
    "PairDifference",
    "RatingTable",
    "TreeBuilder",
    "TreeDegeneracy",
    "TreePolicy",
    "WholeGameResult",
    "alpha_rank",
    "best_response_policy",
    "best_response_values",
    "bootstrap_metagame",
    "bradley_terry",
    "cfr_curves",
    "cfr_gain",
    "check_policy",
    "check_writable",
    "decision_levels",
    "degeneracy_counts",
    "deviation_values",
    "elo",
    "elo_scale",
    "elo_spread",
    "empirical_metagame",
    "ess_iterations",
    "expected_values",
    "final_metrics",
    "finite_or_none",
    "first_ess_iteration",
    "from_tabular_policy",
    "generalisation_study",
    "level_distributions",
    "make_schedule",
    "mapped_policy",
    "materialize",
    "merge_policies",
    "nash",
    "nash_conv",
    "normalize_policy",
    "policy_from_dict",
    "policy_from_fn",
    "pure_policy",
    "rate",
    "ratio_or_nan",
    "reach_probabilities",
    "run_cfr",
    "shutdown_pool",
    "to_efg",
    "to_tabular_policy",
    "uniform_policy",
    "whole_game_study",
    "write_csv",
    "write_json",
    "write_text",
]
