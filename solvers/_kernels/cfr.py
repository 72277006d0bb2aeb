"""CFR kernels: regret matching, the CFR passes and the iteration entry points.

The algorithms (CFR, Zinkevich et al. 2007, "Regret Minimization in Games
with Incomplete Information"; CFR+, Tammelin 2014, "Solving Large Imperfect
Information Games Using CFR+"; linear and discounted CFR, Brown & Sandholm
2019, "Solving Imperfect-Information Games via Discounted Regret
Minimization") are documented in :mod:`solvers.cfr`. :func:`cfr_step` is the
per-iteration entry point of :class:`solvers.cfr.CFRSolver`: iterations, then
optionally the metrics of :func:`solvers._kernels.metrics.policy_metrics`.
"""

from __future__ import annotations

import numpy as np

from solvers._kernels.common import CHANCE, TERMINAL, U, internal_end, jit
from solvers._kernels.metrics import metric_rows, policy_metrics


@jit
def regret_matching(regret, num_actions, infoset_player, p, out):
    """Regret matching (Hart & Mas-Colell 2000) on the infosets of ``p`` (all if ``p < 0``)."""
    for s in range(U(regret.shape[0])):
        if p >= 0 and infoset_player[s] != p:
            continue
        na = U(num_actions[s])
        total = 0.0
        for a in range(na):
            r = regret[s, a]
            if r > 0.0:
                total += r
        if total > 0.0:
            for a in range(na):
                r = regret[s, a]
                out[s, a] = r / total if r > 0.0 else 0.0
        else:
            for a in range(na):
                out[s, a] = 1.0 / na


@jit
def post_update_regrets(regret, num_actions, infoset_player, p, rm_plus, pos_factor, neg_factor):
    """Discounts (DCFR/LCFR) and clips (RM+) the cumulative regrets of ``p``."""
    for s in range(U(regret.shape[0])):
        if p >= 0 and infoset_player[s] != p:
            continue
        for a in range(U(num_actions[s])):
            r = regret[s, a]
            if r >= 0.0:
                r *= pos_factor
            else:
                r *= neg_factor
            if rm_plus and r < 0.0:
                r = 0.0
            regret[s, a] = r


@jit
def normalize_rows(cumulative, num_actions, out):
    """Average policy: normalised cumulative policy, uniform where it is all zero."""
    for s in range(U(cumulative.shape[0])):
        na = U(num_actions[s])
        total = 0.0
        for a in range(na):
            total += cumulative[s, a]
        if total > 0.0:
            for a in range(na):
                out[s, a] = cumulative[s, a] / total
        else:
            for a in range(na):
                out[s, a] = 1.0 / na
        for a in range(na, U(cumulative.shape[1])):
            out[s, a] = 0.0


@jit
def prefill_terminal_values(tt, num_players, val):
    """``val[p * N + z] = returns[z, p]`` at every terminal ``z`` (see :func:`cfr_pass_alternating`)."""
    returns = tt[6]
    terminals = tt[14]
    n = tt[0].shape[0]
    for p in range(num_players):
        off = U(p * n)
        for z in terminals:
            val[off + U(z)] = returns[U(z), p]


@jit
def reach_ends(tt, num_players, ends):
    """``ends[p]``: one past the last decision node of player ``p`` (1 if it has none).

    The forward pass of :func:`cfr_pass_alternating` for ``p`` stops there:
    reaches are read only at ``p``'s decision nodes, and in a breadth-first
    tree whose last levels belong to other players (or to chance) those
    levels hold most of the nodes. One scan up from the end of the interior,
    stopping when every player is found.
    """
    kind, player, parent = tt[0], tt[1], tt[2]
    for p in range(num_players):
        ends[p] = 0
    left = num_players
    h = internal_end(kind, parent) - 1
    while h >= 0 and left > 0:
        if kind[h] != TERMINAL and kind[h] != CHANCE:
            p = player[h]
            if ends[p] == 0:
                ends[p] = h + 1
                left -= 1
        h -= 1
    for p in range(num_players):
        if ends[p] == 0:
            ends[p] = 1


@jit
def cfr_pass_alternating(tt, current, regret, cumulative, p, weight, own, cf, val, end, sreach):
    """One CFR traversal updating player ``p`` only (alternating updates).

    ``own[h]`` is ``p``'s reach, ``cf[h]`` the reach of chance and the other
    players; regrets get ``cf * (v(ha) - v(h))`` at every history of ``p``
    and the cumulative policy ``weight * own * sigma`` summed over them (see
    below). ``val`` holds one
    block of ``N`` values per player whose terminal entries were filled once
    by :func:`prefill_terminal_values`, so neither pass visits the trailing
    leaves (they are never written) and interior leaves are skipped. The
    reaches are computed up to ``end`` (:func:`reach_ends`): past ``p``'s
    last decision node nothing reads them. The cumulative policy gets
    ``weight * R(I) * sigma(I)`` once per information set ``I``, where
    ``R(I)`` sums ``own`` over ``I``'s histories in ``sreach`` (zero before
    and after the pass): ``sigma(I)`` is the same at all of them, so this is
    the per-history sum in another association (equal to rounding), for one
    addition per history instead of one per action.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    infoset_player = tt[9]
    num_actions = tt[10]
    n = kind.shape[0]
    m = internal_end(kind, parent)
    off = U(p * n)
    own[0] = 1.0
    cf[0] = 1.0
    for h in range(U(1), U(end)):  # unsigned indices throughout (see common.U)
        q = U(parent[h])
        if kind[q] == CHANCE:
            own[h] = own[q]
            cf[h] = cf[q] * chance_prob[h]
        else:
            s = current[U(infoset[q]), U(child_rank[h])]
            if player[q] == p:
                own[h] = own[q] * s
                cf[h] = cf[q]
            else:
                own[h] = own[q]
                cf[h] = cf[q] * s
    for hs in range(m - 1, -1, -1):
        h = U(hs)
        k = kind[h]
        if k == TERMINAL:
            continue
        fc = U(first_child[h])
        nc = U(num_children[h])
        v = 0.0
        if k == CHANCE:
            for j in range(nc):
                v += chance_prob[fc + j] * val[off + fc + j]
        else:
            s = U(infoset[h])
            for j in range(nc):
                v += current[s, j] * val[off + fc + j]
            if player[h] == p:
                c = cf[h]
                sreach[s] += own[h]
                for j in range(nc):
                    regret[s, j] += c * (val[off + fc + j] - v)
        val[off + h] = v
    for s in range(U(infoset_player.shape[0])):
        if infoset_player[s] == p:
            o = sreach[s] * weight
            sreach[s] = 0.0
            for j in range(U(num_actions[s])):
                cumulative[s, j] += o * current[s, j]


@jit
def cfr_pass_simultaneous(tt, current, regret, cumulative, weight, reach, val):
    """One CFR traversal updating every player at once (Zinkevich et al. 2007)."""
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    n = kind.shape[0]
    m = reach.shape[1]  # num_players + 1 (last column: chance)
    np_ = m - 1
    for i in range(m):
        reach[0, i] = 1.0
    for h in range(1, n):
        q = parent[h]
        for i in range(m):
            reach[h, i] = reach[q, i]
        if kind[q] == CHANCE:
            reach[h, np_] *= chance_prob[h]
        else:
            reach[h, player[q]] *= current[infoset[q], child_rank[h]]
    for h in range(n - 1, -1, -1):
        k = kind[h]
        if k == TERMINAL:
            for i in range(np_):
                val[h, i] = returns[h, i]
            continue
        fc = first_child[h]
        nc = num_children[h]
        for i in range(np_):
            val[h, i] = 0.0
        if k == CHANCE:
            for j in range(nc):
                pr = chance_prob[fc + j]
                for i in range(np_):
                    val[h, i] += pr * val[fc + j, i]
        else:
            s = infoset[h]
            for j in range(nc):
                pr = current[s, j]
                for i in range(np_):
                    val[h, i] += pr * val[fc + j, i]
            p = player[h]
            c = 1.0
            for i in range(m):
                if i != p:
                    c *= reach[h, i]
            o = reach[h, p] * weight
            vp = val[h, p]
            for j in range(nc):
                regret[s, j] += c * (val[fc + j, p] - vp)
                cumulative[s, j] += o * current[s, j]


@jit
def cfr_iteration(
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
):
    """Iteration ``t`` (1-based) of CFR / CFR+ / linear / discounted CFR (``ends``: :func:`reach_ends`)."""
    infoset_player = tt[9]
    num_actions = tt[10]
    ft = float(t)
    weight = ft**gamma
    pos = 1.0
    neg = 1.0
    if discount:
        pa = ft**alpha
        pb = ft**beta
        pos = pa / (pa + 1.0)
        neg = pb / (pb + 1.0)
    post = discount or rm_plus
    if alternating:
        for p in range(num_players):
            cfr_pass_alternating(
                tt, current, regret, cumulative, p, weight, own, cf, val, ends[p], sreach
            )
            if post:
                post_update_regrets(regret, num_actions, infoset_player, p, rm_plus, pos, neg)
            regret_matching(regret, num_actions, infoset_player, p, current)
    else:
        cfr_pass_simultaneous(tt, current, regret, cumulative, weight, reach2, val2)
        if post:
            post_update_regrets(regret, num_actions, infoset_player, -1, rm_plus, pos, neg)
        regret_matching(regret, num_actions, infoset_player, -1, current)


@jit
def cfr_run(
    tt,
    num_players,
    t0,
    iterations,
    current,
    regret,
    cumulative,
    alternating,
    rm_plus,
    gamma,
    discount,
    alpha,
    beta,
):
    """Runs ``iterations`` CFR iterations numbered ``t0 + 1, ...``."""
    n = tt[0].shape[0]
    own = np.empty(n)
    cf = np.empty(n)
    val = np.empty(num_players * n)
    prefill_terminal_values(tt, num_players, val)
    m = 1 if alternating else n
    reach2 = np.empty((m, num_players + 1))
    val2 = np.empty((m, num_players))
    ends = np.empty(num_players, dtype=np.int64)
    reach_ends(tt, num_players, ends)
    sreach = np.zeros(current.shape[0])
    for t in range(t0 + 1, t0 + iterations + 1):
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


@jit
def solver_state(fstate, n, ni, na, p, alternating):
    """Views of a :class:`~solvers.cfr.CFRSolver`'s CFR buffers in one flat ``float64`` array.

    ``fstate`` holds, in this order: ``current``, ``regret``, ``cumulative``
    and ``average`` (``[ni, na]`` each), ``own`` and ``cf`` (``[n]``),
    ``val`` (``[p * n]``), ``reach2`` (``[m, p + 1]``), ``val2``
    (``[m, p]``), with ``m = 1`` for alternating updates, else ``n``, and
    the zeroed scratch ``sreach`` (``[ni]``, :func:`cfr_pass_alternating`);
    its size is :func:`solver_state_size`. One array instead of ten keeps the
    per-call cost of :func:`cfr_step` down (numba unboxes every array
    argument at every call). Also called from Python
    (``.py_func``) so that the solver's NumPy views share the layout.
    """
    k = ni * na
    m = 1 if alternating else n
    current = fstate[0:k].reshape((ni, na))
    regret = fstate[k : 2 * k].reshape((ni, na))
    cumulative = fstate[2 * k : 3 * k].reshape((ni, na))
    average = fstate[3 * k : 4 * k].reshape((ni, na))
    o = 4 * k
    own = fstate[o : o + n]
    cf = fstate[o + n : o + 2 * n]
    o += 2 * n
    val = fstate[o : o + p * n]
    o += p * n
    reach2 = fstate[o : o + m * (p + 1)].reshape((m, p + 1))
    o += m * (p + 1)
    val2 = fstate[o : o + m * p].reshape((m, p))
    o += m * p
    sreach = fstate[o : o + ni]
    return current, regret, cumulative, average, own, cf, val, reach2, val2, sreach


@jit
def solver_state_size(n, ni, na, p, alternating):
    """Length of the ``fstate`` array of :func:`solver_state`."""
    m = 1 if alternating else n
    return 4 * ni * na + (2 + p) * n + m * (2 * p + 1) + ni


@jit
def solver_metrics(mbuf, ibuf, n, ni, na, p):
    """Views of the solver's metric buffers (see :func:`cfr_step`) in one ``float64`` and one ``int64`` array.

    ``mbuf``: the fused pass's reach columns (``[n, p]``), the chance reach
    (``[n]``), the counterfactual sequence values ``q`` and the scratch
    ``rw`` (``[ni * na]`` each), the baseline's sequence sums ``qb``
    (``[ni * na + p]``), ``ev``, ``br``, ``dev`` and the baseline's values
    (``[p]`` each), and ``out`` (``[2 + 3p]``: NashConv, CFR-Gain, NashConv
    per player, CFR-Gain per player, values per player). ``ibuf``: the last
    sequences (``[n, p]``), the information sets' parent sequences and
    best-response choices (``[ni]`` each). Sizes: :func:`solver_metrics_size`.
    """
    k = ni * na
    reach = mbuf[0 : n * p].reshape((n, p))
    chance_reach = mbuf[n * p : n * (p + 1)]
    o = n * (p + 1)
    q = mbuf[o : o + k]
    rw = mbuf[o + k : o + 2 * k]
    qb = mbuf[o + 2 * k : o + 3 * k + p]
    o += 3 * k + p
    ev = mbuf[o : o + p]
    br = mbuf[o + p : o + 2 * p]
    dev = mbuf[o + 2 * p : o + 3 * p]
    base_values = mbuf[o + 3 * p : o + 4 * p]
    out = mbuf[o + 4 * p : o + 7 * p + 2]
    seq = ibuf[0 : n * p].reshape((n, p))
    iset_parent = ibuf[n * p : n * p + ni]
    choice = ibuf[n * p + ni : n * p + 2 * ni]
    return reach, chance_reach, q, rw, qb, ev, br, dev, base_values, out, seq, iset_parent, choice


@jit
def solver_metrics_size(n, ni, na, p):
    """Lengths of the ``mbuf`` and ``ibuf`` arrays of :func:`solver_metrics`."""
    return n * (p + 1) + 3 * ni * na + 8 * p + 2, n * p + 2 * ni


@jit
def solver_istate_size(num_players):
    """Length of the ``istate`` array of :func:`cfr_step`: counter, rows flag, reach ends."""
    return 2 + num_players


@jit
def cfr_step(
    istate,
    iterations,
    evaluate,
    want_dev,
    tt,
    num_players,
    alternating,
    rm_plus,
    gamma,
    discount,
    alpha,
    beta,
    fstate,
    mbuf,
    ibuf,
    baseline,
):
    """``iterations`` CFR iterations, then (if ``evaluate``) the average policy's metrics.

    The per-iteration entry point of :class:`solvers.cfr.CFRSolver`: every
    buffer belongs to the solver (``fstate``: :func:`solver_state`;
    ``mbuf``, ``ibuf``: :func:`solver_metrics`, unused without
    ``evaluate``), so a call allocates nothing. ``tt`` may be the first 11
    arrays of ``GameTree.kernel_arrays`` (up to ``infoset_num_actions``):
    nothing here reads the others. ``istate`` is the solver's integer
    state (:func:`solver_istate_size`): ``istate[0]`` the number of
    completed iterations (the iterations run are numbered from
    ``istate[0] + 1`` and it advances); ``istate[1]`` what the metric
    buffers' :func:`metric_rows` hold (0: nothing, 1: the tree's, 2: also
    the baseline's; the caller lowers it when the baseline changes); ``istate[2:2 + p]`` the :func:`reach_ends`. With ``evaluate``
    the average policy is written to ``average``, :func:`policy_metrics`
    fills ``ev``, ``br`` and (with ``want_dev``) ``dev`` against
    ``baseline``, and ``out`` receives ``[NashConv, CFR-Gain, NashConv per
    player, CFR-Gain per player, values per player]`` (CFR-Gain NaN without
    ``want_dev``).
    """
    n = tt[0].shape[0]
    ni = tt[9].shape[0]
    na = baseline.shape[1]
    np_ = num_players
    current, regret, cumulative, average, own, cf, val, reach2, val2, sreach = solver_state(
        fstate, n, ni, na, np_, alternating
    )
    t0 = istate[0]
    ends = istate[2 : 2 + np_]
    for t in range(t0 + 1, t0 + iterations + 1):
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
    istate[0] = t0 + iterations
    if evaluate:
        reach, chance_reach, q, rw, qb, ev, br, dev, base_values, out, seq, iset_parent, choice = (
            solver_metrics(mbuf, ibuf, n, ni, na, np_)
        )
        normalize_rows(cumulative, tt[10], average)
        tval = val.reshape((num_players, n))  # terminal entries = returns (one copy in memory)
        need = 2 if want_dev else 1
        if istate[1] < need:
            metric_rows(
                tt, num_players, tval, baseline, want_dev, chance_reach, seq, iset_parent, reach, qb
            )
            istate[1] = need
        policy_metrics(
            tt,
            num_players,
            tval,
            average,
            want_dev,
            chance_reach,
            seq,
            iset_parent,
            qb,
            reach,
            q,
            rw,
            choice,
            ev,
            br,
            dev,
        )
        total_nc = 0.0
        total_gain = 0.0
        for i in range(np_):
            nc = br[i] - ev[i]
            gain = dev[i] - base_values[i] if want_dev else np.nan
            out[2 + i] = nc
            out[2 + np_ + i] = gain
            out[2 + 2 * np_ + i] = ev[i]
            total_nc += nc
            total_gain += gain
        out[0] = total_nc
        out[1] = total_gain
