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

from solvers._kernels.common import CHANCE, TERMINAL, U, internal_end, jit


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
    for ss in range(infoset_player.shape[0] - 1, -1, -1):
        s = U(ss)  # unsigned indices (see common.U)
        best = -np.inf
        best_a = U(0)
        base = s * U(width)
        for a in range(U(num_actions[s])):
            v = q[base + a]
            if v > best:
                best = v
                best_a = a
        choice[s] = best_a
        par = iset_parent[s]
        if par >= 0:
            q[U(par)] += best
        else:
            br[U(infoset_player[s])] += best


@jit
def _sequence_values(
    infoset_player, num_actions, width, policy, iset_parent, q, qb, want_dev, rw, ev, br, dev
):
    """Expected and deviation values from sequence sums (see :func:`policy_metrics`).

    Visits information sets upwards (a set's parent sequence belongs to a
    set with a smaller id): ``rw[s, a]`` is the acting player's reach of the
    sequence, ``rw(parent) * policy[s, a]``, the product the node passes form
    along a path. ``ev[i]`` starts from ``br[i]`` (terminals before ``i``'s
    first move, reach 1) and adds ``rw * q`` over ``i``'s sequences;
    ``dev[i]`` the same over the baseline's sums ``qb``. Call before
    :func:`_best_response_sets`, which changes ``q``.
    """
    k = qb.shape[0] - ev.shape[0]  # root sums of qb start here
    for i in range(ev.shape[0]):
        ev[i] = br[i]
        dev[i] = qb[k + i] if want_dev else 0.0
    for s in range(U(infoset_player.shape[0])):  # unsigned indices (see common.U)
        par = iset_parent[s]
        above = 1.0 if par < 0 else rw[U(par)]
        i = U(infoset_player[s])
        base = s * U(width)
        e = ev[i]
        d = dev[i]
        for a in range(U(num_actions[s])):
            r = above * policy[s, a]
            rw[base + a] = r
            e += r * q[base + a]
            if want_dev:
                d += r * qb[base + a]
        ev[i] = e
        dev[i] = d


@jit
def metric_rows(
    tt, num_players, tval, baseline, want_dev, chance_reach, seq, iset_parent, breach, qb
):
    """The part of :func:`policy_metrics` that no policy changes: once per tree and baseline.

    One forward pass over the parents writes, for every interior node ``h``,
    the chance reach ``chance_reach[h]`` (``c``) and each player's last
    sequence ``seq[h, i]`` (``infoset * A + action``, ``-1`` before the
    player's first move), and ``iset_parent[s]``, the sequence leading to
    information set ``s``. With ``want_dev`` it also sums, for each player
    ``i``, ``c prod_{j != i} b_j u_i(z)`` over the terminals ``z`` below each
    of ``i``'s sequences into ``qb[seq]`` (over the terminals before ``i``'s
    first move into ``qb[ni * A + i]``), where ``b_j`` is player ``j``'s
    reach under ``baseline``: CFR-Gain's deviation values are then a sum over
    sequences (:func:`_sequence_values`), not a sum over terminals. ``breach``
    (``[N, p]``) is scratch for the baseline reaches; terminal rows are never
    written. The products are formed in path order, as in the evaluation;
    two players have a specialised body that gives the same bits.
    """
    if num_players == 2:
        _metric_rows_2p(tt, tval, baseline, want_dev, chance_reach, seq, iset_parent, breach, qb)
    else:
        _metric_rows_any(
            tt, num_players, tval, baseline, want_dev, chance_reach, seq, iset_parent, breach, qb
        )


@jit
def _metric_rows_any(
    tt, num_players, tval, baseline, want_dev, chance_reach, seq, iset_parent, breach, qb
):
    """:func:`metric_rows` for any number of players."""
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    np_ = num_players
    width = U(baseline.shape[1])
    for k in range(qb.shape[0]):
        qb[k] = 0.0
    root = U(qb.shape[0] - np_)
    chance_reach[0] = 1.0
    for i in range(np_):
        seq[0, i] = -1
        breach[0, i] = 1.0
    for hs in range(internal_end(kind, parent)):
        h = U(hs)  # unsigned indices throughout (see common.U)
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = U(first_child[h])
        chance = kh == CHANCE
        ph = -1 if chance else player[h]
        s = U(0) if chance else U(infoset[h])
        if not chance:
            iset_parent[s] = seq[h, ph]
        c_h = chance_reach[h]
        for jj in range(U(num_children[h])):
            z = fc + jj
            c = c_h * chance_prob[z] if chance else c_h
            eb = 1.0 if chance else baseline[s, jj]
            if kind[z] != TERMINAL:
                chance_reach[z] = c
                for i in range(np_):
                    seq[z, i] = seq[h, i]
                    breach[z, i] = breach[h, i]
                if not chance:
                    seq[z, ph] = s * width + jj
                    breach[z, ph] = breach[h, ph] * eb
                continue
            if not want_dev:
                continue
            for i in range(np_):
                o = c
                for j in range(np_):
                    if j != i:
                        o *= breach[h, j] * eb if j == ph else breach[h, j]
                if ph == i:
                    qb[s * width + jj] += o * tval[i, z]
                else:
                    sq = seq[h, i]
                    qb[U(sq) if sq >= 0 else root + U(i)] += o * tval[i, z]


@jit
def _metric_rows_2p(tt, tval, baseline, want_dev, chance_reach, seq, iset_parent, breach, qb):
    """:func:`metric_rows` for two players: the general body's products, unrolled."""
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = U(baseline.shape[1])
    for k in range(qb.shape[0]):
        qb[k] = 0.0
    root = U(qb.shape[0] - 2)
    chance_reach[0] = 1.0
    seq[0, 0] = -1
    seq[0, 1] = -1
    breach[0, 0] = 1.0
    breach[0, 1] = 1.0
    for hs in range(internal_end(kind, parent)):
        h = U(hs)  # unsigned indices throughout (see common.U)
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = U(first_child[h])
        nc = U(num_children[h])
        c_h = chance_reach[h]
        b0 = breach[h, 0]
        b1 = breach[h, 1]
        s0 = seq[h, 0]
        s1 = seq[h, 1]
        # Where each player's terminal sums go: its last sequence, or its root entry.
        t0 = U(s0) if s0 >= 0 else root
        t1 = U(s1) if s1 >= 0 else root + U(1)
        if kh == CHANCE:
            for jj in range(nc):
                z = fc + jj
                c = c_h * chance_prob[z]
                if kind[z] != TERMINAL:
                    chance_reach[z] = c
                    seq[z, 0] = s0
                    seq[z, 1] = s1
                    breach[z, 0] = b0
                    breach[z, 1] = b1
                elif want_dev:
                    qb[t0] += c * b1 * tval[0, z]
                    qb[t1] += c * b0 * tval[1, z]
            continue
        s = U(infoset[h])
        base = s * width
        if player[h] == 0:
            iset_parent[s] = s0
            for jj in range(nc):
                z = fc + jj
                eb = baseline[s, jj]
                if kind[z] != TERMINAL:
                    chance_reach[z] = c_h
                    seq[z, 0] = base + jj
                    seq[z, 1] = s1
                    breach[z, 0] = b0 * eb
                    breach[z, 1] = b1
                elif want_dev:
                    qb[base + jj] += c_h * b1 * tval[0, z]
                    qb[t1] += c_h * (b0 * eb) * tval[1, z]
        else:
            iset_parent[s] = s1
            for jj in range(nc):
                z = fc + jj
                eb = baseline[s, jj]
                if kind[z] != TERMINAL:
                    chance_reach[z] = c_h
                    seq[z, 0] = s0
                    seq[z, 1] = base + jj
                    breach[z, 0] = b0
                    breach[z, 1] = b1 * eb
                elif want_dev:
                    qb[t0] += c_h * (b1 * eb) * tval[0, z]
                    qb[base + jj] += c_h * b0 * tval[1, z]


@jit
def _policy_metrics_2p(tt, tval, policy, chance_reach, seq, reach, q, br):
    """The terminal sums of :func:`policy_metrics` for two players, in registers where they can be.

    Same products and order as the general kernel, so both give identical
    bits; columns of ``reach``: ``r_0``, ``r_1``.
    """
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = U(policy.shape[1])
    br0 = br1 = 0.0
    reach[0, 0] = 1.0
    reach[0, 1] = 1.0
    for hs in range(internal_end(kind, parent)):
        h = U(hs)  # unsigned indices throughout (see common.U)
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = U(first_child[h])
        nc = U(num_children[h])
        c_h = chance_reach[h]
        r0 = reach[h, 0]
        r1 = reach[h, 1]
        s0 = seq[h, 0]
        s1 = seq[h, 1]
        if kh == CHANCE:
            for jj in range(nc):
                z = fc + jj
                if kind[z] != TERMINAL:
                    reach[z, 0] = r0
                    reach[z, 1] = r1
                    continue
                c = c_h * chance_prob[z]
                o0 = c * r1 * tval[0, z]
                o1 = c * r0 * tval[1, z]
                if s0 >= 0:
                    q[U(s0)] += o0
                else:
                    br0 += o0
                if s1 >= 0:
                    q[U(s1)] += o1
                else:
                    br1 += o1
            continue
        s = U(infoset[h])
        base = s * width
        if player[h] == 0:
            for jj in range(nc):
                z = fc + jj
                e = policy[s, jj]
                if kind[z] != TERMINAL:
                    reach[z, 0] = r0 * e
                    reach[z, 1] = r1
                    continue
                q[base + jj] += c_h * r1 * tval[0, z]
                o1 = c_h * (r0 * e) * tval[1, z]
                if s1 >= 0:
                    q[U(s1)] += o1
                else:
                    br1 += o1
        else:
            for jj in range(nc):
                z = fc + jj
                e = policy[s, jj]
                if kind[z] != TERMINAL:
                    reach[z, 0] = r0
                    reach[z, 1] = r1 * e
                    continue
                o0 = c_h * (r1 * e) * tval[0, z]
                if s0 >= 0:
                    q[U(s0)] += o0
                else:
                    br0 += o0
                q[base + jj] += c_h * r0 * tval[1, z]
    br[0] = br0
    br[1] = br1


@jit
def policy_metrics(
    tt,
    num_players,
    tval,
    policy,
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
):
    """Expected values, best-response values and deviation values: one node pass.

    ``chance_reach``, ``seq``, ``iset_parent`` and ``qb`` come from
    :func:`metric_rows` (once per tree and baseline). One forward pass over
    the parents (children are contiguous) carries each player's reach under
    ``policy`` (``r_i``, in ``reach``) and, at every terminal ``z``, adds
    ``c prod_{j != i} r_j u_i(z)`` to ``q[seq_i(z)]``, the counterfactual
    value of player ``i``'s last sequence (to ``br[i]`` when ``i`` has not
    moved). ``tval[i, z]`` is player ``i``'s return at terminal ``z`` (only
    terminal entries are read): CFR passes its value buffer, whose terminal
    entries hold the returns (:func:`prefill_terminal_values`), so an
    iteration touches one copy of the returns; other callers pass
    ``GameTree.returns_by_player``.

    Everything else is a pass over the information sets, not the nodes:

    * ``ev[i] = u_i(policy) = sum over i's sequences of r_i(seq) q[seq]``
      (plus the terminals before ``i``'s first move), and ``dev[i] =
      u_i(policy_i, baseline_-i)`` from ``qb`` the same way, if ``want_dev``
      (:func:`_sequence_values`; ``rw`` is scratch). Summed per sequence, not
      per terminal: equal to a sum over terminals to rounding.
    * The best responses: information sets are numbered by first appearance
      in breadth-first order, so under perfect recall a player's later
      information sets have larger ids; visiting ids downwards, ``max_a q[s,
      a]`` is final when reached and is added to the sequence leading to
      ``s`` (``iset_parent[s]``), or to ``br[i]`` at the top (the
      sequence-form best response). ``choice[s]`` gets the maximising action
      (ties: the first).

    Terminal rows of ``reach`` are never written.
    """
    kind = tt[0]
    infoset_player = tt[9]
    num_actions = tt[10]
    np_ = num_players
    width = policy.shape[1]
    for i in range(np_):
        br[i] = 0.0
    for k in range(q.shape[0]):
        q[k] = 0.0
    if kind[0] == TERMINAL:
        for i in range(np_):
            ev[i] = tval[i, 0]
            br[i] = tval[i, 0]
            dev[i] = tval[i, 0]
        return
    if np_ == 2:
        _policy_metrics_2p(tt, tval, policy, chance_reach, seq, reach, q, br)
    else:
        _policy_metrics_any(tt, np_, tval, policy, chance_reach, seq, reach, q, br)
    _sequence_values(
        infoset_player, num_actions, width, policy, iset_parent, q, qb, want_dev, rw, ev, br, dev
    )
    _best_response_sets(infoset_player, num_actions, width, q, iset_parent, choice, br)


@jit
def _policy_metrics_any(tt, np_, tval, policy, chance_reach, seq, reach, q, br):
    """The terminal sums of :func:`policy_metrics` for any number of players."""
    kind, player, parent, child_rank, chance_prob, infoset, returns, first_child, num_children = tt[
        :9
    ]
    width = policy.shape[1]
    for i in range(np_):
        reach[0, i] = 1.0
    for h in range(internal_end(kind, parent)):
        kh = kind[h]
        if kh == TERMINAL:
            continue
        fc = first_child[h]
        nc = num_children[h]
        ph = player[h]
        s = infoset[h] if kh != CHANCE else -1
        for jj in range(nc):
            z = fc + jj
            c = chance_reach[h]
            if kh == CHANCE:
                c *= chance_prob[z]
            if kind[z] != TERMINAL:
                for i in range(np_):
                    reach[z, i] = reach[h, i]
                if s >= 0:
                    reach[z, ph] *= policy[s, jj]
                continue
            e = policy[s, jj] if s >= 0 else 1.0
            for i in range(np_):
                opp = c
                for j in range(np_):
                    if j != i:
                        opp *= reach[h, j] * e if j == ph else reach[h, j]
                o = opp * tval[i, z]
                sq = s * width + jj if ph == i and s >= 0 else seq[h, i]
                if sq >= 0:
                    q[sq] += o
                else:
                    br[i] += o
