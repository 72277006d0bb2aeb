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
order) grow, faster with three players than with two. The same happens to
our solver alone when the payoffs are perturbed in the last bit, so it is
the dynamics, not a bug on either side: both runs converge alike without
being the same sequence. (The measured differences are in
``docs/architecture.md``, "Exactness", and ``benchmarks/solvers.py``.) The
solver shape is OpenSpiel's: :meth:`CFRSolver.evaluate_and_update_policy`,
:meth:`CFRSolver.current_policy`, :meth:`CFRSolver.average_policy`.

Each iteration is one forward and one backward pass over the node arrays per
player, in compiled code (numba): O(num_nodes * num_players) time, O(num_nodes
+ num_infosets * max_actions) memory. The passes walk ``tree.collapsed``, where
every subtree without a decision node is one leaf carrying its expected returns
(:mod:`solvers.collapse`); the iterates and policies are bit-for-bit those of
the full walk.
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
        alpha, beta = self.discount_alpha, self.discount_beta
        discount = alpha is not None
        return (
            bool(self.alternating_updates),
            bool(self.regret_matching_plus),
            float(self.averaging_exponent),
            discount,
            float(alpha if alpha is not None else 0.0),
            float(beta if discount and beta is not None else 0.0),
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
        named = VARIANTS.get(str(variant).lower())
        if named is None:
            raise ValueError(
                f"{caller}: unknown variant {variant!r}; use one of {sorted(VARIANTS)} or a CFRVariant"
            )
        resolved = named
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
    The per-player values are views of ``record``, made when read, so that a
    step does not build three arrays its caller may never read.

    Attributes:
        iteration: Completed iterations when evaluated.
        nash_conv: ``sum(nash_conv_per_player)``.
        cfr_gain: ``sum(cfr_gain_per_player)``; NaN without a baseline.
        record: ``[NashConv, CFR-Gain, NashConv per player, CFR-Gain per
            player, values per player]``, this evaluation's own copy.
        nash_conv_per_player: Best-response value minus policy value, per
            player.
        cfr_gain_per_player: ``u_i(avg_i, baseline_-i) - u_i(baseline)`` per
            player (NaN without a baseline).
        policy_values: ``u_i(avg)`` per player.
    """

    iteration: int
    nash_conv: float
    cfr_gain: float
    record: np.ndarray

    @property
    def num_players(self) -> int:
        """Number of players."""
        return (self.record.shape[0] - 2) // 3

    @property
    def nash_conv_per_player(self) -> np.ndarray:
        """Best-response value minus policy value, per player (a view of ``record``)."""
        n = self.num_players
        return self.record[2 : 2 + n]

    @property
    def cfr_gain_per_player(self) -> np.ndarray:
        """Deviation value minus baseline value, per player (a view of ``record``)."""
        n = self.num_players
        return self.record[2 + n : 2 + 2 * n]

    @property
    def policy_values(self) -> np.ndarray:
        """``u_i(avg)`` per player (a view of ``record``)."""
        return self.record[2 + 2 * self.num_players :]

    @classmethod
    def _from_out(cls, iteration: int, out: np.ndarray) -> IterationMetrics:
        """The record of a copy of :func:`_kernels.cfr_step`'s ``out`` (internal).

        Built without the dataclass ``__init__``: a frozen ``__init__`` sets
        each field through ``object.__setattr__``, and these fields come from
        the solver, so they are stored directly.
        """
        metrics = object.__new__(cls)
        metrics.__dict__.update(
            iteration=iteration, nash_conv=out.item(0), cfr_gain=out.item(1), record=out
        )
        return metrics


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
        # The passes walk the collapsed tree (same infosets; decision-free subtrees are leaves).
        walked = tree.collapsed
        alternating = self._variant.alternating_updates
        self._sizes = (walked.num_nodes, tree.num_infosets, tree.max_actions, tree.num_players)
        # Every CFR buffer is a view of one array: the kernel unboxes one argument, not nine.
        self._fstate = np.zeros(_kernels.solver_state_size(*self._sizes, alternating))
        self._iteration = 0
        # The kernel's integer state: completed iterations, what the metric rows hold, and the
        # reach ends (where each player's forward pass may stop; see _kernels.cfr_step).
        self._istate = np.zeros(_kernels.solver_istate_size(tree.num_players), dtype=np.int64)
        _kernels.reach_ends(walked.kernel_arrays, tree.num_players, self._istate[2:])
        # Metric buffers (one float and one int array) are allocated by the first evaluation.
        self._mbuf = _EMPTY_F
        self._ibuf = _EMPTY_I
        self._baseline: object = None
        self._baseline_probs: np.ndarray | None = None
        self._bind()
        _kernels.regret_matching(
            self._regret, tree.infoset_num_actions, tree.infoset_player, -1, self._current
        )
        # One block of values per player, terminal entries filled once (the passes skip leaves).
        values = _python(_kernels.solver_state)(self._fstate, *self._sizes, alternating)[6]
        _kernels.prefill_terminal_values(walked.kernel_arrays, tree.num_players, values)

    def _bind(self) -> None:
        """Views of the packed buffers and the prepared kernel arguments (after init or unpickling)."""
        tree, alternating = self._tree, self._variant.alternating_updates
        views = _python(_kernels.solver_state)(self._fstate, *self._sizes, alternating)
        self._current, self._regret, self._cumulative, self._average = views[:4]
        self._out = self._baseline_values = _EMPTY_F
        if self._mbuf.size:
            views = _python(_kernels.solver_metrics)(self._mbuf, self._ibuf, *self._sizes)
            self._baseline_values, self._out = views[8], views[9]
        if self._baseline is None:
            self._baseline_probs = self._average  # the kernel's baseline argument, unused
        # cfr_step reads the first 11 tree arrays only (numba rejects any other index at
        # compile time); leaving out the last four saves their unboxing at every call.
        arrays = tree.collapsed.kernel_arrays[:11]
        self._head = (arrays, tree.num_players, *self._variant.kernel_args())
        # (evaluate, want_dev) -> (compiled entry, arguments after the first four); built on
        # first use and again when the buffers or the baseline change.
        self._calls: dict[tuple[bool, bool], tuple] = {}
        # The last step's baseline, compiled entry and full argument tuple (step's fast path).
        self._step_baseline: object = _UNSET
        self._step_entry: Any = None  # a compiled entry point (untyped machine code)
        self._step_args: tuple = ()

    def __getstate__(self) -> dict:
        # The packed arrays only: views, compiled entries and prepared arguments are rebuilt.
        state = {key: self.__dict__[key] for key in _PICKLED}
        if self._baseline is None:
            state["_baseline_probs"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

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
        if baseline is self._step_baseline:  # the same call as the last step: arguments ready
            self._step_entry(*self._step_args)
            self._iteration += 1
            return IterationMetrics._from_out(self._iteration, self._out.copy())
        self._call(1, baseline, evaluate=True)
        return self._metrics()

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
        self._call(0, baseline, evaluate=True)
        return self._metrics()

    def _metrics(self) -> IterationMetrics:
        """The metrics row of the last evaluating call (the kernel's output, copied)."""
        return IterationMetrics._from_out(self._iteration, self._out.copy())

    def _call(
        self, iterations: int, baseline: PolicyLike | None, *, evaluate: bool = False
    ) -> None:
        """Runs ``iterations`` iterations, then (``evaluate``) the metrics, in one compiled call."""
        want_dev = baseline is not None
        if evaluate:
            if baseline is not None and baseline is not self._baseline:
                self._set_baseline(baseline)
            elif not self._mbuf.size:
                self._allocate_metrics()
        call = self._calls.get((evaluate, want_dev))
        if call is None:
            call = self._resolve(evaluate, want_dev)
        entry, tail = call
        args = (self._istate, iterations, evaluate, want_dev, *tail)
        if evaluate and iterations == 1:
            self._step_baseline, self._step_entry, self._step_args = baseline, entry, args
        entry(*args)
        self._iteration += iterations

    def _resolve(self, evaluate: bool, want_dev: bool) -> tuple:
        """The compiled code and trailing arguments of :func:`_kernels.cfr_step` for one call kind."""
        baseline = self._baseline_probs if want_dev else self._average
        tail = (*self._head, self._fstate, self._mbuf, self._ibuf, baseline)
        args = (self._istate, 1, evaluate, want_dev, *tail)
        call = (compiled_entry(_kernels.cfr_step, args), tail)
        self._calls[(evaluate, want_dev)] = call
        return call

    def _allocate_metrics(self) -> None:
        sizes = self._sizes
        float_size, int_size = _kernels.solver_metrics_size(*sizes)
        self._mbuf = np.zeros(float_size)
        self._ibuf = np.zeros(int_size, dtype=np.int64)
        self._istate[1] = 0  # new buffers: metric_rows has not written them yet
        self._bind()

    def _set_baseline(self, baseline: PolicyLike) -> None:
        tree = self._tree
        probs = check_policy(tree, baseline, caller="CFRSolver.step", name="the baseline")
        if not self._mbuf.size:
            self._allocate_metrics()
        self._baseline_values[:] = MetricBuffers(tree).run(tree, probs).ev
        self._baseline_probs = probs
        self._baseline = baseline
        self._istate[1] = min(self._istate[1], 1)  # the baseline sums are stale
        self._calls.clear()
        self._step_baseline = _UNSET

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
_UNSET = object()  # no step yet: matches no baseline
_PICKLED = (
    "_tree",
    "_variant",
    "_sizes",
    "_fstate",
    "_mbuf",
    "_ibuf",
    "_istate",
    "_iteration",
    "_baseline",
    "_baseline_probs",
)
"""What a pickled :class:`CFRSolver` holds (see ``CFRSolver.__getstate__``)."""
_EMPTY_I = np.zeros(0, dtype=np.int64)


def _python(kernel):
    """The plain Python function of a kernel (to lay out NumPy views as the kernel does)."""
    return getattr(kernel, "py_func", kernel)


def compiled_entry(kernel, args: tuple):
    """The machine code ``kernel`` runs for arguments typed like ``args`` (internal).

    A numba dispatcher types every argument at each call to pick its
    compiled overload, a fixed cost per call that grows with the 30-odd
    arguments (counting the tree's arrays) of :func:`_kernels.cfr_step`.
    A solver's arguments keep their types for its lifetime (same buffers;
    only ints and bools change), so it picks the overload once (loading or
    compiling it like the first call would) and calls its entry point
    directly. Typing through numba is itself slow, so the choice is also
    remembered per :func:`_type_key` of the arguments. Without numba the
    (plain Python) kernel itself.
    """
    if not hasattr(kernel, "overloads"):
        return kernel
    key = (kernel, _type_key(args))
    entry = _ENTRIES.get(key)
    if entry is None:
        signature = tuple(kernel.typeof_pyval(a) for a in args)
        compiled = kernel.overloads.get(signature)
        if compiled is None:
            kernel.compile(signature)
            compiled = kernel.overloads[signature]
        entry = _ENTRIES[key] = compiled.entry_point
    return entry


_ENTRIES: dict[tuple, object] = {}
"""Compiled entry points by (kernel, :func:`_type_key` of the arguments)."""


def _type_key(value: object) -> object:
    """What numba's type of ``value`` depends on, for the arguments the solver passes.

    An array's numba type is fixed by its class, dtype, dimensions, layout
    (C / F / any), read-only flag and alignment; a tuple's by its items';
    a scalar's (bool, int, float) by its Python type.
    """
    if isinstance(value, np.ndarray):
        flags = value.flags
        return (
            type(value),
            value.dtype,
            value.ndim,
            flags.c_contiguous,
            flags.f_contiguous,
            flags.writeable,
            flags.aligned,
        )
    if isinstance(value, tuple):
        return tuple(_type_key(item) for item in value)
    return type(value)


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
