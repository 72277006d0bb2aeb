"""The whole-tree kernel of :func:`solvers.curves.cfr_curves`: CFR with recorded metrics."""

from __future__ import annotations

import numpy as np

from solvers._kernels.cfr import (
    cfr_iteration,
    normalize_rows,
    prefill_terminal_values,
    reach_ends,
    regret_matching,
)
from solvers._kernels.common import internal_end, jit
from solvers._kernels.metrics import metric_rows, policy_metrics


@jit
def curves_run(
    tt,
    num_players,
    baseline,
    iterations,
    record,
    alternating,
    rm_plus,
    gamma,
    discount,
    alpha,
    beta,
    out_ev,
    out_br,
    out_dev,
    out_policy,
):
    """CFR for ``iterations`` iterations on one tree, recording metrics.

    At each iteration listed in ``record`` (sorted, 1-based) the average
    policy is evaluated: ``out_ev[k]`` its values, ``out_br[k]`` the
    best-response values, ``out_dev[k]`` the values of each player deviating
    to it from ``baseline``. ``out_policy`` receives the average policy after
    the last iteration.
    """
    num_actions = tt[10]
    infoset_player = tt[9]
    n = tt[0].shape[0]
    ni = baseline.shape[0]
    na = baseline.shape[1]
    regret = np.zeros((ni, na))
    cumulative = np.zeros((ni, na))
    current = np.zeros((ni, na))
    average = np.zeros((ni, na))
    regret_matching(regret, num_actions, infoset_player, -1, current)
    # The metric pass's reach rows and the CFR passes' reaches are never live at
    # once, so they share memory: a smaller working set is a faster iteration on
    # trees larger than the cache (the iteration is bound by what it touches).
    # Per-node rows are read and written below the end of the interior only (the trailing
    # leaves never are): m rows, not n, so the call faults in less fresh memory.
    mi = internal_end(tt[0], tt[2])
    mflat = np.empty(mi * max(2, num_players))
    mreach = mflat[: mi * num_players].reshape((mi, num_players))
    own = mflat[:mi]
    cf = mflat[mi : 2 * mi]
    # What no policy changes (chance reach, last sequences, the baseline's sequence sums):
    # written once, before the first iteration (mreach is its scratch), only read after.
    chance_reach = np.empty(mi)
    val = np.empty(num_players * n)
    prefill_terminal_values(tt, num_players, val)
    tval = val.reshape((num_players, n))  # terminal entries = returns (one copy in memory)
    m = 1 if alternating else n
    reach2 = np.empty((m, num_players + 1))
    val2 = np.empty((m, num_players))
    mseq = np.empty((mi, num_players), dtype=np.int32)  # sequence ids < ni * na < 2**31
    ends = np.empty(num_players, dtype=np.int64)
    reach_ends(tt, num_players, ends)
    sreach = np.zeros(ni)
    q = np.empty(ni * na)
    rw = np.empty(ni * na)
    qb = np.empty(ni * na + num_players)
    iset_parent = np.empty(ni, dtype=np.int64)
    choice = np.empty(ni, dtype=np.int64)
    if record.shape[0] > 0:
        metric_rows(
            tt, num_players, tval, baseline, True, chance_reach, mseq, iset_parent, mreach, qb
        )
    k = 0
    nk = record.shape[0]
    for t in range(1, iterations + 1):
        cfr_iteration(
            tt,
            num_players,
            t,
            current,
            regret,
            cumulative,
            alternating,
            rm_plus,
            gamma,
            discount,
            alpha,
            beta,
            own,
            cf,
            val,
            reach2,
            val2,
            ends,
            sreach,
        )
        while k < nk and record[k] == t:
            normalize_rows(cumulative, num_actions, average)
            policy_metrics(
                tt,
                num_players,
                tval,
                average,
                True,
                chance_reach,
                mseq,
                iset_parent,
                qb,
                mreach,
                q,
                rw,
                choice,
                out_ev[k],
                out_br[k],
                out_dev[k],
            )
            k += 1
    normalize_rows(cumulative, num_actions, out_policy)
