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
def internal_end(kind):
    """One past the last non-terminal node: every node at or after it is a terminal.

    Breadth-first trees of chat games end with their (many) leaves, so the
    passes stop here instead of visiting them.
    """
    m = kind.shape[0]
    while m > 1 and kind[m - 1] == TERMINAL:
        m -= 1
    return m


@_jit
def prefill_terminal_values(tt, num_players, val):
    """``val[p * N + z] = returns[z, p]`` at every terminal ``z`` (see :func:`cfr_pass_alternating`)."""
    returns = tt[6]
    terminals = tt[14]
    n = tt[0].shape[0]
    for p in range(num_players):
        for z in terminals:
            val[p * n + z] = returns[z, p]


@_jit
def cfr_pass_alternating(tt, current, regret, cumulative, p, weight, own, cf, val):
    """One CFR traversal updating player ``p`` only (alternating updates).

    ``own[h]`` is ``p``'s reach, ``cf[h]`` the reach of chance and the other
    players; regrets get ``cf * (v(ha) - v(h))`` and the cumulative policy
    ``weight * own * sigma`` at every history of ``p``. ``val`` holds one
    block of ``N`` values per player whose terminal entries were filled once
    by :func:`prefill_terminal_values`, so neither pass visits the trailing
    leaves (they are never written) and interior leaves are skipped.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    n = kind.shape[0]
    m = internal_end(kind)
    off = p * n
    own[0] = 1.0
    cf[0] = 1.0
    for h in range(1, m):
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
    for h in range(m - 1, -1, -1):
        k = kind[h]
        if k == TERMINAL:
            continue
        fc = first_child[h] + off
        nc = num_children[h]
        v = 0.0
        if k == CHANCE:
            for j in range(nc):
                v += chance_prob[fc - off + j] * val[fc + j]
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
        val[off + h] = v


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
    val = np.empty(num_players * n)
    prefill_terminal_values(tt, num_players, val)
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
def cfr_step(
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
    own,
    cf,
    val,
    reach2,
    val2,
    evaluate,
    want_dev,
    baseline,
    average,
    mreach,
    mseq,
    q,
    iset_parent,
    choice,
    ev,
    br,
    dev,
    base_values,
    out,
):
    """``iterations`` CFR iterations, then (if ``evaluate``) the average policy's metrics.

    The per-iteration entry point of :class:`solvers.cfr.CFRSolver`: every
    buffer belongs to the solver, so a call allocates nothing. With
    ``evaluate`` the average policy is written to ``average``,
    :func:`policy_metrics` fills ``ev``, ``br`` and (with ``want_dev``)
    ``dev`` against ``baseline``, and ``out`` receives ``[NashConv,
    CFR-Gain, NashConv per player, CFR-Gain per player]`` (CFR-Gain NaN
    without ``want_dev``; ``base_values`` are the baseline's values).
    """
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
    if evaluate:
        normalize_rows(cumulative, tt[10], average)
        policy_metrics(
            tt,
            num_players,
            average,
            baseline,
            want_dev,
            mreach,
            mseq,
            q,
            iset_parent,
            choice,
            ev,
            br,
            dev,
        )
        np_ = num_players
        total_nc = 0.0
        total_gain = 0.0
        for i in range(np_):
            nc = br[i] - ev[i]
            gain = dev[i] - base_values[i] if want_dev else np.nan
            out[2 + i] = nc
            out[2 + np_ + i] = gain
            total_nc += nc
            total_gain += gain
        out[0] = total_nc
        out[1] = total_gain


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
def _best_response_sets(infoset_player, num_actions, width, q, iset_parent, choice, br):
    """Sequence-form best response over counterfactual values ``q`` (see :func:`policy_metrics`)."""
    for s in range(infoset_player.shape[0] - 1, -1, -1):
        best = -np.inf
        best_a = 0
        base = s * width
        for a in range(num_actions[s]):
            v = q[base + a]
            if v > best:
                best = v
                best_a = a
        choice[s] = best_a
        par = iset_parent[s]
        if par >= 0:
            q[par] += best
        else:
            br[infoset_player[s]] += best


@_jit
def _policy_metrics_2p(tt, policy, baseline, want_dev, reach, seq, q, iset_parent, ev, br, dev):
    """:func:`policy_metrics` for two players, with the sums in registers.

    Same quantities and multiplication order as the general kernel (which
    calls this one), so both give identical bits; columns of ``reach``:
    chance, ``r_0``, ``r_1``, ``b_0``, ``b_1``.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = policy.shape[1]
    ev0 = ev1 = br0 = br1 = dev0 = dev1 = 0.0
    for k in range(5):
        reach[0, k] = 1.0
    seq[0, 0] = -1
    seq[0, 1] = -1
    for h in range(internal_end(kind)):
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = first_child[h]
        nc = num_children[h]
        c_h = reach[h, 0]
        r0 = reach[h, 1]
        r1 = reach[h, 2]
        b0 = reach[h, 3]
        b1 = reach[h, 4]
        s0 = seq[h, 0]
        s1 = seq[h, 1]
        if kh == CHANCE:
            for jj in range(nc):
                z = fc + jj
                c = c_h * chance_prob[z]
                if kind[z] != TERMINAL:
                    reach[z, 0] = c
                    reach[z, 1] = r0
                    reach[z, 2] = r1
                    reach[z, 3] = b0
                    reach[z, 4] = b1
                    seq[z, 0] = s0
                    seq[z, 1] = s1
                    continue
                u0 = returns[z, 0]
                u1 = returns[z, 1]
                ev0 += c * r1 * r0 * u0
                ev1 += c * r0 * r1 * u1
                o0 = c * r1 * u0
                o1 = c * r0 * u1
                if s0 >= 0:
                    q[s0] += o0
                else:
                    br0 += o0
                if s1 >= 0:
                    q[s1] += o1
                else:
                    br1 += o1
                if want_dev:
                    dev0 += c * r0 * b1 * u0
                    dev1 += c * r1 * b0 * u1
            continue
        s = infoset[h]
        base = s * width
        if player[h] == 0:
            iset_parent[s] = s0
            for jj in range(nc):
                z = fc + jj
                e = policy[s, jj]
                if kind[z] != TERMINAL:
                    reach[z, 0] = c_h
                    reach[z, 1] = r0 * e
                    reach[z, 2] = r1
                    reach[z, 3] = b0 * baseline[s, jj]
                    reach[z, 4] = b1
                    seq[z, 0] = base + jj
                    seq[z, 1] = s1
                    continue
                u0 = returns[z, 0]
                u1 = returns[z, 1]
                r0e = r0 * e
                ev0 += c_h * r1 * r0e * u0
                ev1 += c_h * r0e * r1 * u1
                q[base + jj] += c_h * r1 * u0
                o1 = c_h * r0e * u1
                if s1 >= 0:
                    q[s1] += o1
                else:
                    br1 += o1
                if want_dev:
                    dev0 += c_h * r0e * b1 * u0
                    dev1 += c_h * r1 * (b0 * baseline[s, jj]) * u1
        else:
            iset_parent[s] = s1
            for jj in range(nc):
                z = fc + jj
                e = policy[s, jj]
                if kind[z] != TERMINAL:
                    reach[z, 0] = c_h
                    reach[z, 1] = r0
                    reach[z, 2] = r1 * e
                    reach[z, 3] = b0
                    reach[z, 4] = b1 * baseline[s, jj]
                    seq[z, 0] = s0
                    seq[z, 1] = base + jj
                    continue
                u0 = returns[z, 0]
                u1 = returns[z, 1]
                r1e = r1 * e
                ev0 += c_h * r1e * r0 * u0
                ev1 += c_h * r0 * r1e * u1
                o0 = c_h * r1e * u0
                if s0 >= 0:
                    q[s0] += o0
                else:
                    br0 += o0
                q[base + jj] += c_h * r0 * u1
                if want_dev:
                    dev0 += c_h * r0 * (b1 * baseline[s, jj]) * u0
                    dev1 += c_h * r1e * b0 * u1
    ev[0] = ev0
    ev[1] = ev1
    br[0] = br0
    br[1] = br1
    dev[0] = dev0
    dev[1] = dev1


@_jit
def policy_metrics(
    tt, num_players, policy, baseline, want_dev, reach, seq, q, iset_parent, choice, ev, br, dev
):
    """Expected values, best-response values and deviation values in one pass.

    One forward pass over the parents (children are contiguous) carries, per
    node, the chance reach ``c``, each player's own reach under ``policy``
    (``r_i``) and under ``baseline`` (``b_i``), and each player's last
    sequence ``seq_i`` (``infoset * A + action``, ``-1`` before the player's
    first move). At every terminal ``z`` it adds

    * ``c r_0 .. r_{n-1} u_i(z)`` to ``ev[i]`` (``u_i(policy)``);
    * ``c prod_{j != i} r_j u_i(z)`` to ``q[seq_i(z)]`` (the counterfactual
      value of player ``i``'s last sequence; to ``br[i]`` when empty);
    * ``c r_i prod_{j != i} b_j u_i(z)`` to ``dev[i]``
      (``u_i(policy_i, baseline_-i)``, if ``want_dev``).

    The best responses then need no second tree pass: information sets are
    numbered by first appearance in breadth-first order, so under perfect
    recall a player's later information sets have larger ids; visiting ids
    downwards, ``max_a q[s, a]`` is final when reached and is added to the
    sequence leading to ``s`` (``iset_parent[s]``), or to ``br[i]`` at the
    top (the sequence-form best response). ``choice[s]`` gets the maximising
    action (ties: the first). Terminal rows of ``reach``/``seq`` are never
    written.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    infoset_player = tt[9]
    num_actions = tt[10]
    np_ = num_players
    width = policy.shape[1]
    for i in range(np_):
        ev[i] = 0.0
        br[i] = 0.0
        dev[i] = 0.0
    for k in range(q.shape[0]):
        q[k] = 0.0
    if kind[0] == TERMINAL:
        for i in range(np_):
            ev[i] = returns[0, i]
            br[i] = returns[0, i]
            dev[i] = returns[0, i]
        return
    if np_ == 2:
        _policy_metrics_2p(tt, policy, baseline, want_dev, reach, seq, q, iset_parent, ev, br, dev)
    else:
        _policy_metrics_any(
            tt, np_, policy, baseline, want_dev, reach, seq, q, iset_parent, ev, br, dev
        )
    _best_response_sets(infoset_player, num_actions, width, q, iset_parent, choice, br)


@_jit
def _policy_metrics_any(
    tt, np_, policy, baseline, want_dev, reach, seq, q, iset_parent, ev, br, dev
):
    """:func:`policy_metrics` for any number of players (sums in memory: slower)."""
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = policy.shape[1]
    for j in range(1 + 2 * np_):
        reach[0, j] = 1.0
    for i in range(np_):
        seq[0, i] = -1
    for h in range(internal_end(kind)):
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = first_child[h]
        nc = num_children[h]
        ph = player[h]
        s = infoset[h] if kh != CHANCE else -1
        if s >= 0:
            iset_parent[s] = seq[h, ph]
        for jj in range(nc):
            z = fc + jj
            c = reach[h, 0]
            if kh == CHANCE:
                c *= chance_prob[z]
            if kind[z] != TERMINAL:
                reach[z, 0] = c
                for j in range(1, 1 + 2 * np_):
                    reach[z, j] = reach[h, j]
                for i in range(np_):
                    seq[z, i] = seq[h, i]
                if s >= 0:
                    reach[z, 1 + ph] *= policy[s, jj]
                    reach[z, 1 + np_ + ph] *= baseline[s, jj]
                    seq[z, ph] = s * width + jj
                continue
            # Terminal child: accumulate without storing. The acting player's
            # factor for this edge is ``e`` (policy) / ``eb`` (baseline).
            e = 1.0
            eb = 1.0
            if s >= 0:
                e = policy[s, jj]
                eb = baseline[s, jj]
            for i in range(np_):
                u = returns[z, i]
                if u == 0.0:
                    continue
                opp = c
                for j in range(np_):
                    if j != i:
                        opp *= reach[h, 1 + j] * e if j == ph else reach[h, 1 + j]
                own = reach[h, 1 + i]
                sq = seq[h, i]
                if ph == i and s >= 0:
                    own *= e
                    sq = s * width + jj
                ev[i] += opp * own * u
                if sq >= 0:
                    q[sq] += opp * u
                else:
                    br[i] += opp * u
                if want_dev:
                    d = c * own
                    for j in range(np_):
                        if j != i:
                            d *= reach[h, 1 + np_ + j] * eb if j == ph else reach[h, 1 + np_ + j]
                    dev[i] += d * u


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
    val = np.empty(num_players * n)
    prefill_terminal_values(tt, num_players, val)
    m = 1 if alternating else n
    reach2 = np.empty((m, num_players + 1))
    val2 = np.empty((m, num_players))
    mreach = np.empty((n, 1 + 2 * num_players))
    mseq = np.empty((n, num_players), dtype=np.int64)
    q = np.empty(ni * na)
    iset_parent = np.empty(ni, dtype=np.int64)
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
            policy_metrics(
                tt,
                num_players,
                average,
                baseline,
                True,
                mreach,
                mseq,
                q,
                iset_parent,
                choice,
                out_ev[k],
                out_br[k],
                out_dev[k],
            )
            k += 1
    normalize_rows(cumulative, num_actions, out_policy)
