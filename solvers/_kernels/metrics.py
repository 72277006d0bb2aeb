"""Metric kernels: reach, expected values, best responses, deviation values.

:func:`policy_metrics` computes the expected values, the best-response values
(NashConv, :mod:`solvers.best_response`) and the deviation values of
CFR-Gain (:mod:`solvers.cfr_gain`) in one forward pass, with a specialised
body for two players (:func:`_policy_metrics_2p`) and a general one
(:func:`_policy_metrics_any`) that give identical bits.
:func:`best_response_value` keeps the per-player node pass behind
``best_response_policy``.
"""

from __future__ import annotations

import numpy as np

from solvers._kernels.common import CHANCE, TERMINAL, internal_end, jit


@jit
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


@jit
def expected_values(tt, num_players, policy, reach, out):
    """Expected return of every player under ``policy``.

    One pass over the parents: interior children get their reach in
    ``reach`` (its terminal entries are not written), terminal children add
    ``reach * returns`` at once. Terminals are met in node order, as in a sum
    over ``terminals``, and each reach is the same product as in
    :func:`profile_reach`, so the sums are those of reach-then-sum bit for bit.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    for i in range(num_players):
        out[i] = 0.0
    reach[0] = 1.0
    if kind[0] == TERMINAL:
        for i in range(num_players):
            out[i] += returns[0, i]
        return
    for q in range(internal_end(kind, parent)):
        k = kind[q]
        if k == TERMINAL:
            continue
        fc = first_child[q]
        rq = reach[q]
        s = infoset[q]
        for j in range(num_children[q]):
            z = fc + j
            r = rq * chance_prob[z] if k == CHANCE else rq * policy[s, j]
            if kind[z] != TERMINAL:
                reach[z] = r
            elif r != 0.0:
                for i in range(num_players):
                    out[i] += r * returns[z, i]


@jit
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


@jit
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


@jit
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


@jit
def _policy_metrics_2p(
    tt, tval, policy, baseline, want_dev, fresh, paths, seq, iset_parent, reach, q, ev, br, dev
):
    """:func:`policy_metrics` for two players, with the sums in registers.

    Same quantities and multiplication order as the general kernel (which
    calls this one), so both give identical bits; columns of ``paths``:
    chance, ``b_0``, ``b_1``; of ``reach``: ``r_0``, ``r_1``.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = policy.shape[1]
    ev0 = ev1 = br0 = br1 = dev0 = dev1 = 0.0
    reach[0, 0] = 1.0
    reach[0, 1] = 1.0
    if fresh:
        for k in range(3):
            paths[0, k] = 1.0
        seq[0, 0] = -1
        seq[0, 1] = -1
    for h in range(internal_end(kind, parent)):
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = first_child[h]
        nc = num_children[h]
        c_h = paths[h, 0]
        b0 = paths[h, 1]
        b1 = paths[h, 2]
        r0 = reach[h, 0]
        r1 = reach[h, 1]
        s0 = seq[h, 0]
        s1 = seq[h, 1]
        if kh == CHANCE:
            if fresh:
                for jj in range(nc):
                    z = fc + jj
                    if kind[z] != TERMINAL:
                        paths[z, 0] = c_h * chance_prob[z]
                        paths[z, 1] = b0
                        paths[z, 2] = b1
                        seq[z, 0] = s0
                        seq[z, 1] = s1
            for jj in range(nc):
                z = fc + jj
                c = c_h * chance_prob[z]
                if kind[z] != TERMINAL:
                    reach[z, 0] = r0
                    reach[z, 1] = r1
                    continue
                u0 = tval[0, z]
                u1 = tval[1, z]
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
        if fresh:
            # The policy-independent rows (a separate loop: the hot one stays as it is).
            ph = player[h]
            iset_parent[s] = seq[h, ph]
            for jj in range(nc):
                z = fc + jj
                if kind[z] != TERMINAL:
                    paths[z, 0] = c_h
                    paths[z, 1] = b0 * baseline[s, jj] if ph == 0 else b0
                    paths[z, 2] = b1 * baseline[s, jj] if ph == 1 else b1
                    seq[z, 0] = base + jj if ph == 0 else s0
                    seq[z, 1] = base + jj if ph == 1 else s1
        if player[h] == 0:
            for jj in range(nc):
                z = fc + jj
                e = policy[s, jj]
                if kind[z] != TERMINAL:
                    reach[z, 0] = r0 * e
                    reach[z, 1] = r1
                    continue
                u0 = tval[0, z]
                u1 = tval[1, z]
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
            for jj in range(nc):
                z = fc + jj
                e = policy[s, jj]
                if kind[z] != TERMINAL:
                    reach[z, 0] = r0
                    reach[z, 1] = r1 * e
                    continue
                u0 = tval[0, z]
                u1 = tval[1, z]
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


@jit
def policy_metrics(
    tt,
    num_players,
    tval,
    policy,
    baseline,
    want_dev,
    fresh,
    paths,
    seq,
    iset_parent,
    reach,
    q,
    choice,
    ev,
    br,
    dev,
):
    """Expected values, best-response values and deviation values in one pass.

    One forward pass over the parents (children are contiguous) carries, per
    node, the chance reach ``c``, each player's own reach under ``policy``
    (``r_i``) and under ``baseline`` (``b_i``), and each player's last
    sequence ``seq_i`` (``infoset * A + action``, ``-1`` before the player's
    first move). ``tval[i, z]`` is player ``i``'s return at terminal ``z``
    (only terminal entries are read): CFR passes its value buffer, whose
    terminal entries hold the returns (:func:`prefill_terminal_values`), so
    an iteration touches one copy of the returns instead of two; other
    callers pass ``GameTree.returns_by_player``. At every terminal ``z`` it adds

    * ``c r_0 .. r_{n-1} u_i(z)`` to ``ev[i]`` (``u_i(policy)``);
    * ``c prod_{j != i} r_j u_i(z)`` to ``q[seq_i(z)]`` (the counterfactual
      value of player ``i``'s last sequence; to ``br[i]`` when empty);
    * ``c r_i prod_{j != i} b_j u_i(z)`` to ``dev[i]``
      (``u_i(policy_i, baseline_-i)``, if ``want_dev``).

    Only ``r_i`` depends on ``policy``. The rest (``paths[h] = [c, b_0, ..,
    b_{n-1}]``, ``seq[h]`` and ``iset_parent``) depends on the tree and the
    baseline alone: it is written when ``fresh`` and only read otherwise, so
    a caller evaluating many policies against one baseline (``cfr_curves``,
    ``CFRSolver.step``) writes ``reach[h] = [r_0, .., r_{n-1}]`` and nothing
    else per node. On a tree larger than the cache that is most of the
    pass's memory traffic: every written line is also read first
    (write-allocate). The values are the same products either way, so the
    results are identical bits.

    The best responses then need no second tree pass: information sets are
    numbered by first appearance in breadth-first order, so under perfect
    recall a player's later information sets have larger ids; visiting ids
    downwards, ``max_a q[s, a]`` is final when reached and is added to the
    sequence leading to ``s`` (``iset_parent[s]``), or to ``br[i]`` at the
    top (the sequence-form best response). ``choice[s]`` gets the maximising
    action (ties: the first). Terminal rows of ``paths``/``seq``/``reach``
    are never written.
    """
    kind = tt[0]
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
            ev[i] = tval[i, 0]
            br[i] = tval[i, 0]
            dev[i] = tval[i, 0]
        return
    if np_ == 2:
        _policy_metrics_2p(
            tt,
            tval,
            policy,
            baseline,
            want_dev,
            fresh,
            paths,
            seq,
            iset_parent,
            reach,
            q,
            ev,
            br,
            dev,
        )
    else:
        _policy_metrics_any(
            tt,
            np_,
            tval,
            policy,
            baseline,
            want_dev,
            fresh,
            paths,
            seq,
            iset_parent,
            reach,
            q,
            ev,
            br,
            dev,
        )
    _best_response_sets(infoset_player, num_actions, width, q, iset_parent, choice, br)


@jit
def _policy_metrics_any(
    tt, np_, tval, policy, baseline, want_dev, fresh, paths, seq, iset_parent, reach, q, ev, br, dev
):
    """:func:`policy_metrics` for any number of players (sums in memory: slower)."""
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = policy.shape[1]
    for i in range(np_):
        reach[0, i] = 1.0
    if fresh:
        for j in range(1 + np_):
            paths[0, j] = 1.0
        for i in range(np_):
            seq[0, i] = -1
    for h in range(internal_end(kind, parent)):
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = first_child[h]
        nc = num_children[h]
        ph = player[h]
        s = infoset[h] if kh != CHANCE else -1
        if fresh:
            if s >= 0:
                iset_parent[s] = seq[h, ph]
            for jj in range(nc):
                z = fc + jj
                if kind[z] != TERMINAL:
                    paths[z, 0] = paths[h, 0] * chance_prob[z] if kh == CHANCE else paths[h, 0]
                    for i in range(np_):
                        paths[z, 1 + i] = paths[h, 1 + i]
                        seq[z, i] = seq[h, i]
                    if s >= 0:
                        paths[z, 1 + ph] *= baseline[s, jj]
                        seq[z, ph] = s * width + jj
        for jj in range(nc):
            z = fc + jj
            c = paths[h, 0]
            if kh == CHANCE:
                c *= chance_prob[z]
            if kind[z] != TERMINAL:
                for i in range(np_):
                    reach[z, i] = reach[h, i]
                if s >= 0:
                    reach[z, ph] *= policy[s, jj]
                continue
            # Terminal child: accumulate without storing. The acting player's
            # factor for this edge is ``e`` (policy) / ``eb`` (baseline).
            e = 1.0
            eb = 1.0
            if s >= 0:
                e = policy[s, jj]
                eb = baseline[s, jj]
            for i in range(np_):
                u = tval[i, z]
                if u == 0.0:
                    continue
                opp = c
                for j in range(np_):
                    if j != i:
                        opp *= reach[h, j] * e if j == ph else reach[h, j]
                own = reach[h, i]
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
                            d *= paths[h, 1 + j] * eb if j == ph else paths[h, 1 + j]
                    dev[i] += d * u
