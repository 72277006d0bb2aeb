"""Compiled inner loops of the solvers (numba), over :class:`GameTree` arrays.

These are the per-node loops behind :mod:`solvers.cfr` (Zinkevich et al.
2007; Tammelin 2014; Brown & Sandholm 2019), :mod:`solvers.best_response`,
:mod:`solvers.values`, :mod:`solvers.cfr_gain` and :mod:`solvers.curves`; the
algorithms are documented there. They live in one module on purpose: numba's
on-disk cache (``cache=True``) is invalidated per source file, so a kernel
calling kernels of another file could keep stale machine code after an edit.

Every kernel takes the tree as the tuple ``GameTree.kernel_arrays`` (``tt``).
Nodes are in breadth-first order, so a loop ``for h in range(1, N)`` visits
parents before children and ``range(N - 1, -1, -1)`` children before parents.

Without numba the same functions run as (very slow) plain Python.
"""

from __future__ import annotations

import numpy as np

try:  # pragma: no cover - exercised implicitly
    import numba

    HAVE_NUMBA = True

    def _jit(fn):
        return numba.njit(cache=True, nogil=True)(fn)

except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

    def _jit(fn):
        return fn


TERMINAL = 0
CHANCE = 1
DECISION = 2


@_jit
def regret_matching(regret, num_actions, infoset_player, p, out):
    """Regret matching (Hart & Mas-Colell 2000) on the infosets of ``p`` (all if ``p < 0``)."""
    for s in range(regret.shape[0]):
        if p >= 0 and infoset_player[s] != p:
            continue
        na = num_actions[s]
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


@_jit
def post_update_regrets(regret, num_actions, infoset_player, p, rm_plus, pos_factor, neg_factor):
    """Discounts (DCFR/LCFR) and clips (RM+) the cumulative regrets of ``p``."""
    for s in range(regret.shape[0]):
        if p >= 0 and infoset_player[s] != p:
            continue
        for a in range(num_actions[s]):
            r = regret[s, a]
            if r >= 0.0:
                r *= pos_factor
            else:
                r *= neg_factor
            if rm_plus and r < 0.0:
                r = 0.0
            regret[s, a] = r


@_jit
def normalize_rows(cumulative, num_actions, out):
    """Average policy: normalised cumulative policy, uniform where it is all zero."""
    for s in range(cumulative.shape[0]):
        na = num_actions[s]
        total = 0.0
        for a in range(na):
            total += cumulative[s, a]
        if total > 0.0:
            for a in range(na):
                out[s, a] = cumulative[s, a] / total
        else:
            for a in range(na):
                out[s, a] = 1.0 / na
        for a in range(na, cumulative.shape[1]):
            out[s, a] = 0.0


@_jit
def cfr_pass_alternating(tt, current, regret, cumulative, p, weight, own, cf, val):
    """One CFR traversal updating player ``p`` only (alternating updates).

    ``own[h]`` is ``p``'s reach, ``cf[h]`` the reach of chance and the other
    players; regrets get ``cf * (v(ha) - v(h))`` and the cumulative policy
    ``weight * own * sigma`` at every history of ``p``.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    n = kind.shape[0]
    own[0] = 1.0
    cf[0] = 1.0
    for h in range(1, n):
        q = parent[h]
        if kind[q] == CHANCE:
            own[h] = own[q]
            cf[h] = cf[q] * chance_prob[h]
        else:
            s = current[infoset[q], child_rank[h]]
            if player[q] == p:
                own[h] = own[q] * s
                cf[h] = cf[q]
            else:
                own[h] = own[q]
                cf[h] = cf[q] * s
    for h in range(n - 1, -1, -1):
        k = kind[h]
        if k == TERMINAL:
            val[h] = returns[h, p]
            continue
        fc = first_child[h]
        nc = num_children[h]
        v = 0.0
        if k == CHANCE:
            for j in range(nc):
                v += chance_prob[fc + j] * val[fc + j]
        else:
            s = infoset[h]
            for j in range(nc):
                v += current[s, j] * val[fc + j]
            if player[h] == p:
                c = cf[h]
                o = own[h] * weight
                for j in range(nc):
                    regret[s, j] += c * (val[fc + j] - v)
                    cumulative[s, j] += o * current[s, j]
        val[h] = v


@_jit
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


@_jit
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
):
    """Iteration ``t`` (1-based) of CFR / CFR+ / linear / discounted CFR."""
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
            cfr_pass_alternating(tt, current, regret, cumulative, p, weight, own, cf, val)
            if post:
                post_update_regrets(regret, num_actions, infoset_player, p, rm_plus, pos, neg)
            regret_matching(regret, num_actions, infoset_player, p, current)
    else:
        cfr_pass_simultaneous(tt, current, regret, cumulative, weight, reach2, val2)
        if post:
            post_update_regrets(regret, num_actions, infoset_player, -1, rm_plus, pos, neg)
        regret_matching(regret, num_actions, infoset_player, -1, current)


@_jit
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
    val = np.empty(n)
    m = 1 if alternating else n
    reach2 = np.empty((m, num_players + 1))
    val2 = np.empty((m, num_players))
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
        )


@_jit
def profile_reach(tt, policy, reach):
    """Reach probability of every node under one policy profile."""
    kind, player, parent, child_rank, chance_prob, infoset = tt[:6]
    reach[0] = 1.0
    for h in range(1, kind.shape[0]):
        q = parent[h]
        if kind[q] == CHANCE:
            reach[h] = reach[q] * chance_prob[h]
        else:
            reach[h] = reach[q] * policy[infoset[q], child_rank[h]]


@_jit
def expected_values(tt, num_players, policy, reach, out):
    """Expected return of every player under ``policy``."""
    returns = tt[6]
    terminals = tt[14]
    profile_reach(tt, policy, reach)
    for i in range(num_players):
        out[i] = 0.0
    for z in terminals:
        r = reach[z]
        if r != 0.0:
            for i in range(num_players):
                out[i] += r * returns[z, i]


@_jit
def best_response_value(tt, policy, br_player, reach, val, choice):
    """Value of a best response of ``br_player`` to ``policy``; fills ``choice``.

    ``choice[s]`` is the chosen action index at each infoset of ``br_player``
    (``-1`` elsewhere). Ties go to the first action.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    num_actions = tt[10]
    iset_ptr = tt[11]
    iset_nodes = tt[12]
    order = tt[13]
    n = kind.shape[0]
    reach[0] = 1.0
    for h in range(1, n):
        q = parent[h]
        if kind[q] == CHANCE:
            reach[h] = reach[q] * chance_prob[h]
        elif player[q] == br_player:
            reach[h] = reach[q]
        else:
            reach[h] = reach[q] * policy[infoset[q], child_rank[h]]
    for s in range(choice.shape[0]):
        choice[s] = -1
    for k in range(n):
        h = order[k, br_player]
        kh = kind[h]
        if kh == TERMINAL:
            val[h] = returns[h, br_player]
            continue
        fc = first_child[h]
        nc = num_children[h]
        if kh == CHANCE:
            v = 0.0
            for j in range(nc):
                v += chance_prob[fc + j] * val[fc + j]
            val[h] = v
            continue
        s = infoset[h]
        if player[h] != br_player:
            v = 0.0
            for j in range(nc):
                v += policy[s, j] * val[fc + j]
            val[h] = v
            continue
        if choice[s] < 0:
            best = -np.inf
            best_a = 0
            for a in range(num_actions[s]):
                q = 0.0
                for m in range(iset_ptr[s], iset_ptr[s + 1]):
                    g = iset_nodes[m]
                    q += reach[g] * val[first_child[g] + a]
                if q > best:
                    best = q
                    best_a = a
            choice[s] = best_a
        val[h] = val[fc + choice[s]]
    return val[0]


@_jit
def deviation_values(tt, num_players, deviation, base, reach2, out):
    """``out[i] = u_i(deviation_i, base_-i)`` for every player ``i``."""
    kind, player, parent, child_rank, chance_prob, infoset, returns = tt[:7]
    terminals = tt[14]
    n = kind.shape[0]
    for i in range(num_players):
        reach2[0, i] = 1.0
    for h in range(1, n):
        q = parent[h]
        if kind[q] == CHANCE:
            pr = chance_prob[h]
            for i in range(num_players):
                reach2[h, i] = reach2[q, i] * pr
        else:
            s = infoset[q]
            r = child_rank[h]
            pd = deviation[s, r]
            pb = base[s, r]
            pq = player[q]
            for i in range(num_players):
                reach2[h, i] = reach2[q, i] * (pd if i == pq else pb)
    for i in range(num_players):
        out[i] = 0.0
    for z in terminals:
        for i in range(num_players):
            out[i] += reach2[z, i] * returns[z, i]


@_jit
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
    own = np.empty(n)
    cf = np.empty(n)
    val = np.empty(n)
    m = 1 if alternating else n
    reach2 = np.empty((m, num_players + 1))
    val2 = np.empty((m, num_players))
    reach_dev = np.empty((n, num_players))
    choice = np.empty(ni, dtype=np.int64)
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
        )
        while k < nk and record[k] == t:
            normalize_rows(cumulative, num_actions, average)
            expected_values(tt, num_players, average, own, out_ev[k])
            for i in range(num_players):
                out_br[k, i] = best_response_value(tt, average, i, own, val, choice)
            deviation_values(tt, num_players, average, baseline, reach_dev, out_dev[k])
            k += 1
    normalize_rows(cumulative, num_actions, out_policy)
