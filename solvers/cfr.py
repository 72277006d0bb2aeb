"""Counterfactual regret minimisation on a materialised :class:`GameTree`.

CFR (Zinkevich, Johanson, Bowling & Piccione 2007, "Regret Minimization in
Games with Incomplete Information", NeurIPS) minimises, at every information
set ``I``, the counterfactual regret

    R^T(I, a) = sum_t sum_{h in I} pi_{-i}^t(h) (v_i^t(h a) - v_i^t(h))

by regret matching; the reach-weighted average of the iterates converges to a
Nash equilibrium in two-player zero-sum games (and to a coarse-correlated
equilibrium set in general). Variants:

* ``"cfr"`` -- regret matching, uniform averaging (Zinkevich et al. 2007);
* ``"cfr+"`` -- regret matching+ (regrets clipped at zero) and linear
  averaging (Tammelin 2014, "Solving Large Imperfect Information Games Using
  CFR+", arXiv:1407.5042);
* ``"linear"`` -- regret matching with linear averaging (iterate ``t``
  weighted by ``t``, Brown & Sandholm 2019, "Solving Imperfect-Information
  Games via Discounted Regret Minimization", AAAI);
* ``"lcfr"`` -- Linear CFR of Brown & Sandholm 2019: regrets and average both
  weighted by ``t`` (DCFR with alpha = beta = gamma = 1);
* ``"dcfr"`` -- Discounted CFR, alpha = 3/2, beta = 0, gamma = 2 (Brown &
  Sandholm 2019).

Updates alternate between players by default (player 0 first, each player's
traversal using the policies already updated in this iteration), exactly as
OpenSpiel's ``open_spiel.python.algorithms.cfr``/``discounted_cfr`` solvers
(and ``pyspiel.CFRSolver``/``CFRPlusSolver``). Their average policies and
ours agree to rounding error only for a limited number of iterations: the
iterates are chaotic, so differences in the last bit (a different summation
order) grow. Measured on Leduc poker with CFR+ against ``pyspiel``: max
difference of the average policies 5e-13 at 50 iterations, 2e-10 at 100,
then 1e-2 at 200 and 6.5e-3 at 500 (NashConv 0.0018866 vs 0.0018773). The
same happens to our solver alone when the payoffs are scaled by 1 + 2**-50
(9e-14 at 50 iterations, 4e-11 at 100, 6e-3 at 200, 1e-2 at 500), so it is
the dynamics, not a bug on either side. Both runs converge alike; they are
not the same sequence beyond ~100 iterations. Three players amplify faster:
3-player Leduc CFR+ differs from pyspiel by 2e-12 at 20 iterations and 3e-6
at 50, and multiplying the counterfactual reach in OpenSpiel's order (per
player, chance last) leaves that unchanged (3.1e-6). The
solver shape is
OpenSpiel's: :meth:`CFRSolver.evaluate_and_update_policy`,
:meth:`CFRSolver.current_policy`, :meth:`CFRSolver.average_policy`.

Each iteration is one forward and one backward pass over the node arrays per
player, in compiled code (numba): O(num_nodes * num_players) time, O(num_nodes
+ num_infosets * max_actions) memory.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from solvers import _kernels
from solvers.best_response import MetricBuffers
from solvers.policy import PolicyLike, TreePolicy, check_policy, mark_checked
from solvers.tree import GameTree


@dataclasses.dataclass(frozen=True)
class CFRVariant:
    """Parameters of a CFR variant.

    Attributes:
        name: Display name.
        regret_matching_plus: Clip cumulative regrets at zero after each
            update (RM+).
        averaging_exponent: Iterate ``t`` enters the average policy with
            weight ``t ** averaging_exponent`` (0: uniform, 1: linear).
        alternating_updates: Update one player per traversal, in turn.
        discount_alpha: If not None, positive cumulative regrets are scaled
            by ``t^alpha / (t^alpha + 1)`` after iteration ``t`` (DCFR).
        discount_beta: Same for negative regrets (DCFR; used only with
            ``discount_alpha``).
    """

    name: str
    regret_matching_plus: bool = False
    averaging_exponent: float = 0.0
    alternating_updates: bool = True
    discount_alpha: float | None = None
    discount_beta: float | None = None

    def kernel_args(self) -> tuple[bool, bool, float, bool, float, float]:
        """(alternating, rm_plus, gamma, discount, alpha, beta) for the kernels."""
        discount = self.discount_alpha is not None
        return (
            bool(self.alternating_updates),
            bool(self.regret_matching_plus),
            float(self.averaging_exponent),
            discount,
            float(self.discount_alpha if discount else 0.0),
            float(self.discount_beta if discount and self.discount_beta is not None else 0.0),
        )


VARIANTS: dict[str, CFRVariant] = {
    "cfr": CFRVariant("cfr"),
    "cfr+": CFRVariant("cfr+", regret_matching_plus=True, averaging_exponent=1.0),
    "linear": CFRVariant("linear", averaging_exponent=1.0),
    "lcfr": CFRVariant("lcfr", averaging_exponent=1.0, discount_alpha=1.0, discount_beta=1.0),
    "dcfr": CFRVariant("dcfr", averaging_exponent=2.0, discount_alpha=1.5, discount_beta=0.0),
}
"""Named variants accepted by :class:`CFRSolver` and :func:`solvers.cfr_curves`."""


def resolve_variant(
    variant: str | CFRVariant, alternating_updates: bool | None = None, *, caller: str = "CFRSolver"
) -> CFRVariant:
    """Looks up a variant by name (or passes a :class:`CFRVariant` through).

    Raises:
        ValueError: If the name is unknown.
    """
    if isinstance(variant, CFRVariant):
        resolved = variant
    else:
        resolved = VARIANTS.get(str(variant).lower())
        if resolved is None:
            raise ValueError(
                f"{caller}: unknown variant {variant!r}; use one of {sorted(VARIANTS)} or a CFRVariant"
            )
    if alternating_updates is not None and alternating_updates != resolved.alternating_updates:
        resolved = dataclasses.replace(resolved, alternating_updates=bool(alternating_updates))
    return resolved


def _check_tree(tree: GameTree, caller: str) -> GameTree:
    if not isinstance(tree, GameTree):
        raise ValueError(
            f"{caller}: expected a GameTree, got {type(tree).__name__}; build one with solvers.materialize(game)"
        )
    return tree


@dataclasses.dataclass(frozen=True, eq=False)
class IterationMetrics:
    """NashConv and CFR-Gain of a solver's average policy after one iteration.

    Returned by :meth:`CFRSolver.step` and :meth:`CFRSolver.evaluate`; the
    same numbers as :func:`solvers.nash_conv` and :func:`solvers.cfr_gain` of
    ``solver.average_policy()`` (to rounding: one fused pass computes them).

    Attributes:
        iteration: Completed iterations when evaluated.
        nash_conv: ``sum(nash_conv_per_player)``.
        cfr_gain: ``sum(cfr_gain_per_player)``; NaN without a baseline.
        nash_conv_per_player: Best-response value minus policy value, per
            player.
        cfr_gain_per_player: ``u_i(avg_i, baseline_-i) - u_i(baseline)`` per
            player (NaN without a baseline).
        policy_values: ``u_i(avg)`` per player.
    """

    iteration: int
    nash_conv: float
    cfr_gain: float
    nash_conv_per_player: np.ndarray
    cfr_gain_per_player: np.ndarray
    policy_values: np.ndarray

    @classmethod
    def _trusted(
        cls,
        iteration: int,
        out: np.ndarray,
        nash_conv_per_player: np.ndarray,
        cfr_gain_per_player: np.ndarray,
        policy_values: np.ndarray,
    ) -> IterationMetrics:
        """Builds the frozen record without the dataclass ``__init__`` (internal).

        The frozen ``__init__`` sets each field through ``object.__setattr__``
        (~0.9 us for six fields, a tenth of a :meth:`CFRSolver.step`); the
        fields come from the solver, so they are stored directly. ``out[:2]``
        holds NashConv and CFR-Gain.
        """
        record = object.__new__(cls)
        nash_conv, cfr_gain = out[:2].tolist()
        record.__dict__.update(
            iteration=iteration,
            nash_conv=nash_conv,
            cfr_gain=cfr_gain,
            nash_conv_per_player=nash_conv_per_player,
            cfr_gain_per_player=cfr_gain_per_player,
            policy_values=policy_values,
        )
        return record


@dataclasses.dataclass(frozen=True, eq=False)
class CFRResult:
    """Outcome of :func:`run_cfr`.

    Attributes:
        average_policy: The (weighted) average policy after ``iterations``.
        current_policy: The last iterate.
        iterations: Number of iterations run.
        variant: The variant used.
    """

    average_policy: TreePolicy
    current_policy: TreePolicy
    iterations: int
    variant: CFRVariant


class CFRSolver:
    """CFR / CFR+ / linear / discounted CFR on a :class:`GameTree`.

    Usage, as OpenSpiel's solvers::

        solver = CFRSolver(tree, variant="cfr+")
        for _ in range(1000):
            solver.evaluate_and_update_policy()
        avg = solver.average_policy()  # TreePolicy (a fresh frozen copy)

    To track NashConv and CFR-Gain of the average policy at every
    iteration, :meth:`step` does the iteration and both metrics in one
    compiled call on the solver's own buffers (no re-validation, no
    allocation)::

        for _ in range(1000):
            m = solver.step(baseline)  # IterationMetrics: m.nash_conv, m.cfr_gain

    Args:
        tree: The materialised game.
        variant: One of :data:`VARIANTS` (``"cfr"``, ``"cfr+"``,
            ``"linear"``, ``"lcfr"``, ``"dcfr"``) or a :class:`CFRVariant`.
        alternating_updates: Overrides the variant's update scheme (True:
            players in turn, as OpenSpiel; False: simultaneous, as in
            Zinkevich et al. 2007).

    Raises:
        ValueError: For an unknown variant or a non-tree argument.
    """

    def __init__(
        self,
        tree: GameTree,
        *,
        variant: str | CFRVariant = "cfr",
        alternating_updates: bool | None = None,
    ) -> None:
        self._tree = _check_tree(tree, "CFRSolver")
        self._variant = resolve_variant(variant, alternating_updates)
        shape = (tree.num_infosets, tree.max_actions)
        self._regret = np.zeros(shape)
        self._cumulative = np.zeros(shape)
        self._current = np.zeros(shape)
        _kernels.regret_matching(
            self._regret, tree.infoset_num_actions, tree.infoset_player, -1, self._current
        )
        self._iteration = 0
        # The passes walk the collapsed tree (same infosets; decision-free subtrees are leaves).
        walked = tree.collapsed
        n = walked.num_nodes
        self._own = np.empty(n)
        self._cf = np.empty(n)
        # One block of values per player, terminal entries filled once (the passes skip leaves).
        self._val = np.empty(tree.num_players * n)
        _kernels.prefill_terminal_values(walked.kernel_arrays, tree.num_players, self._val)
        m = 1 if self._variant.alternating_updates else n
        self._reach2 = np.empty((m, tree.num_players + 1))
        self._val2 = np.empty((m, tree.num_players))
        self._average = np.zeros(shape)
        self._metrics: MetricBuffers | None = None  # allocated by the first evaluation
        self._baseline: object = None
        self._baseline_probs = self._average
        self._baseline_values = np.zeros(tree.num_players)
        self._out = np.zeros(2 + 2 * tree.num_players)
        # Kernel arguments built once: a step then costs one compiled call and no allocation.
        self._head = (walked.kernel_arrays, tree.num_players)
        self._state = (
            self._current,
            self._regret,
            self._cumulative,
            *self._variant.kernel_args(),
            self._own,
            self._cf,
            self._val,
            self._reach2,
            self._val2,
        )
        no_metrics = (False, self._average, self._average, *_NO_METRICS, self._out)
        # (compiled entry or None until the first call, trailing arguments)
        self._no_metric_call: tuple = (None, no_metrics)
        self._metric_calls: tuple[tuple, tuple] = ((None, ()), (None, ()))

    @property
    def tree(self) -> GameTree:
        """The tree being solved."""
        return self._tree

    @property
    def variant(self) -> CFRVariant:
        """The variant in use."""
        return self._variant

    @property
    def iteration(self) -> int:
        """Number of completed iterations."""
        return self._iteration

    def evaluate_and_update_policy(self) -> None:
        """Performs one CFR iteration (all players)."""
        self.run(1)

    def run(self, iterations: int) -> CFRSolver:
        """Performs ``iterations`` iterations in one compiled call; returns self."""
        iterations = int(iterations)
        if iterations < 0:
            raise ValueError(f"CFRSolver.run: iterations={iterations}; pass a non-negative number")
        if iterations == 0:
            return self
        self._call(iterations, None)
        return self

    def step(self, baseline: PolicyLike | None = None) -> IterationMetrics:
        """One iteration, then the metrics of the new average policy, in one compiled call.

        Equivalent to ``run(1)`` followed by :meth:`evaluate`; the fast way to
        record a convergence curve from Python.

        Args:
            baseline: CFR-Gain baseline (validated once and remembered while
                the same object is passed again); None skips CFR-Gain.

        Returns:
            :class:`IterationMetrics` of the average policy.
        """
        return self._call(1, baseline, evaluate=True)

    def evaluate(self, baseline: PolicyLike | None = None) -> IterationMetrics:
        """NashConv (and CFR-Gain against ``baseline``) of the current average policy.

        One fused pass (:func:`solvers._kernels.policy_metrics`) over the
        solver's buffers; the numbers equal ``nash_conv(tree,
        average_policy())`` and ``cfr_gain(tree, average_policy(),
        baseline)`` to rounding.

        Args:
            baseline: See :meth:`step`.

        Raises:
            ValueError: If ``baseline`` does not fit the tree.
        """
        return self._call(0, baseline, evaluate=True)

    def _call(
        self, iterations: int, baseline: PolicyLike | None, *, evaluate: bool = False
    ) -> IterationMetrics | None:
        want_dev = baseline is not None
        if evaluate:
            if self._metrics is None:
                self._metrics = MetricBuffers(self._tree)
                self._metric_calls = self._metric_arguments()
            if want_dev and baseline is not self._baseline:
                self._set_baseline(baseline)
            entry, tail = self._metric_calls[want_dev]
        else:
            entry, tail = self._no_metric_call
        if entry is None:
            entry = self._resolve(evaluate, want_dev, tail)
        entry(*self._head, self._iteration, iterations, *self._state, evaluate, *tail)
        self._iteration += iterations
        if not evaluate:
            return None
        out = self._out.copy()
        n = self._tree.num_players
        return IterationMetrics._trusted(
            self._iteration,
            out,
            out[2 : 2 + n],
            out[2 + n :],
            self._metrics.ev.copy(),
        )

    def _resolve(self, evaluate: bool, want_dev: bool, tail: tuple):
        """Picks (once per argument set) the compiled code :func:`_kernels.cfr_step` runs."""
        entry = compiled_entry(
            _kernels.cfr_step, (*self._head, 0, 1, *self._state, evaluate, *tail)
        )
        if not evaluate:
            self._no_metric_call = (entry, tail)
        else:
            calls = list(self._metric_calls)
            calls[want_dev] = (entry, tail)
            self._metric_calls = (calls[0], calls[1])
        return entry

    def _metric_arguments(self) -> tuple[tuple, tuple]:
        """The kernel's trailing arguments without / with CFR-Gain (built once per baseline)."""
        m = self._metrics
        buffers = (m.reach, m.seq, m.q, m.iset_parent, m.choice, m.ev, m.br, m.dev)
        return (
            (
                None,
                (False, self._average, self._average, *buffers, self._baseline_values, self._out),
            ),
            (
                None,
                (
                    True,
                    self._baseline_probs,
                    self._average,
                    *buffers,
                    self._baseline_values,
                    self._out,
                ),
            ),
        )

    def _set_baseline(self, baseline: PolicyLike) -> None:
        tree = self._tree
        probs = check_policy(tree, baseline, caller="CFRSolver.step", name="the baseline")
        self._baseline_values = MetricBuffers(tree).run(tree, probs).ev.copy()
        self._baseline_probs = probs
        self._baseline = baseline
        self._metric_calls = self._metric_arguments()

    def current_policy(self) -> TreePolicy:
        """The current iterate (regret-matching policy), as a frozen copy."""
        return TreePolicy(self._current)

    def average_policy(self) -> TreePolicy:
        """The average policy (uniform where nothing was accumulated)."""
        out = np.zeros_like(self._cumulative)
        _kernels.normalize_rows(self._cumulative, self._tree.infoset_num_actions, out)
        # Valid by construction (non-negative rows normalised to 1, padding zero): metrics
        # taking it skip re-validation.
        return mark_checked(TreePolicy(out), self._tree)

    def cumulative_regret(self) -> np.ndarray:
        """A copy of the cumulative regrets ``[num_infosets, max_actions]``."""
        return self._regret.copy()


_EMPTY_F = np.zeros(0)
_EMPTY_F2 = np.zeros((0, 1))
_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_I2 = np.zeros((0, 1), dtype=np.int64)
_NO_METRICS = (
    _EMPTY_F2,
    _EMPTY_I2,
    _EMPTY_F,
    _EMPTY_I,
    _EMPTY_I,
    _EMPTY_F,
    _EMPTY_F,
    _EMPTY_F,
    _EMPTY_F,
)
"""Placeholders for the metric buffers when :func:`_kernels.cfr_step` does not evaluate."""


def compiled_entry(kernel, args: tuple):
    """The machine code ``kernel`` runs for arguments typed like ``args`` (internal).

    A numba dispatcher types every argument at each call to pick its
    compiled overload: about 1 us for the 40-odd arguments of
    :func:`_kernels.cfr_step`, a third of a small step. A solver's arguments
    keep their types for its lifetime (same buffers; only ints and bools
    change), so it picks the overload once (loading or compiling it like
    the first call would) and calls its entry point directly. Without numba
    the (plain Python) kernel itself.
    """
    if not hasattr(kernel, "overloads"):
        return kernel
    signature = tuple(kernel.typeof_pyval(a) for a in args)
    compiled = kernel.overloads.get(signature)
    if compiled is None:
        kernel.compile(signature)
        compiled = kernel.overloads[signature]
    return compiled.entry_point


def run_cfr(
    tree: GameTree,
    iterations: int,
    *,
    variant: str | CFRVariant = "cfr",
    alternating_updates: bool | None = None,
) -> CFRResult:
    """Runs CFR for ``iterations`` iterations and returns the policies.

    Args:
        tree: The materialised game.
        iterations: Number of iterations (>= 0).
        variant: See :class:`CFRSolver`.
        alternating_updates: See :class:`CFRSolver`.

    Returns:
        A :class:`CFRResult`.
    """
    solver = CFRSolver(tree, variant=variant, alternating_updates=alternating_updates).run(
        iterations
    )
    return CFRResult(
        average_policy=solver.average_policy(),
        current_policy=solver.current_policy(),
        iterations=solver.iteration,
        variant=solver.variant,
    )
