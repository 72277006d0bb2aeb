"""GRATR's Eqs. (1)-(9) and the steps of Algorithms 1-2 as pure functions.

From "GRATR: Zero-Shot Evidence Graph Retrieval-Augmented Trustworthiness
Reasoning" (Zhu, Li, Kong, Yang and Xu; Sect. 3). Below the equations, the
steps of Algorithms 1-2 that apply them, as pure functions over the trust
graph's maps: one piece of evidence written into the nodes and edges
(:func:`apply_evidence`, Eqs. 1-4) and the best-first search that builds the
evidence chains (:func:`search_order`, :func:`chain_tree`, Eqs. 5-6). The
graph (:class:`gt_llm.opponents.gratr.GratrModel`) holds the maps and caches
the reads. ``docs/gratr.md`` lists the holes of the paper these functions
close (hole 1: clamping; 2: the weight floor of Eq. 8; 3: H of a negative u;
4: a zero divisor in Eq. 9; 13: Eq. 9's size, and feedback held inside the evidence; 5: certain facts; 6: decay by time step in Eq. 4;
9: the chains; 10: self-intents; 11: identity judgments as trust).
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gt_llm.opponents.base import Evidence, OpponentContext, clamp_unit
from gt_llm.opponents.gratr_types import EdgeState, GratrParams, NodeState

_EMPTY_NODE = NodeState()
_EMPTY_EDGE = EdgeState()


def node_trust_update(t_source: float, credibility: float, t_target: float) -> float:
    """Eqs. (2)-(3): the node trust of p_j after p_i's intent with credibility c.

    u = T(p_i) * c (Eq. 2); T(p_j) becomes u only when |u| > |T(p_j)| (Eq. 3),
    i.e. the stronger indication wins; on equal strength the stored value stays
    (first come, first kept: an order effect ``docs/gratr.md`` measures). Inputs are clamped to [-1, 1] first, so
    the result is in [-1, 1] (hole 1).
    """
    u = clamp_unit(t_source) * clamp_unit(credibility)
    t = clamp_unit(t_target)
    return u if abs(u) > abs(t) else t


def merge_edge_trust(
    credibilities: Sequence[float],
    rho: float = 0.95,
    *,
    steps: Sequence[int] | None = None,
) -> float:
    """Eq. (4): T(p_i, p_j) = tanh(sum_k rho^(n-k) c_k) over the raw list, oldest first.

    Args:
      credibilities: c_1 ... c_n of the evidence list D(p_i, p_j), oldest first.
      rho: The temporal importance factor in (0, 1].
      steps: The time steps t_1 <= ... <= t_n of the evidence; when given the
        exponent is t_n - t_k instead of n - k (hole 6: decay by time step).

    Returns:
      The edge trust in (-1, 1); 0 for an empty list (the paper's T^0 = 0).
    """
    if not 0.0 < rho <= 1.0:
        raise ValueError(f"merge_edge_trust: rho must be in (0, 1], got {rho}")
    n = len(credibilities)
    if n == 0:
        return 0.0
    if steps is None:
        exponents: Sequence[int] = range(n - 1, -1, -1)
    else:
        if len(steps) != n:
            raise ValueError("merge_edge_trust: steps and credibilities differ in length")
        if any(b < a for a, b in zip(steps, steps[1:], strict=False)):
            raise ValueError("merge_edge_trust: steps must be in time order (oldest first)")
        exponents = [steps[-1] - s for s in steps]
    total = math.fsum(
        (rho**e) * clamp_unit(c) for e, c in zip(exponents, credibilities, strict=True)
    )
    return math.tanh(total)


def chain_uncertainty(u: float) -> float:
    """Eq. (7) with hole 3 closed: H = -|u| log2 |u|, H(0) = 0, in [0, 1/(e ln 2)]."""
    a = abs(u)
    return 0.0 if a == 0.0 else -a * math.log2(a)


def chain_value(
    node_trusts: Sequence[float], edge_trusts: Sequence[float]
) -> tuple[float, float, float]:
    """Eqs. (5)-(7) for a chain p_1 <- p_2 <- ... <- p_o.

    Args:
      node_trusts: [T(p_1), ..., T(p_o)] (p_1 the start, p_o the target).
      edge_trusts: [T(p_2, p_1), ..., T(p_o, p_{o-1})].

    Returns:
      (V, u, H): the chain value V = sum_{k=1}^{o-1} T(p_{k+1}) T(p_{k+1}, p_k)
      (Eq. 5), the trust it implies for p_o, u = T(p_1) prod_k T(p_{k+1}, p_k)
      (Eq. 6), and its uncertainty H (Eq. 7, hole 3).
    """
    o = len(node_trusts)
    if o < 2 or len(edge_trusts) != o - 1:
        raise ValueError(
            "chain_value: need o >= 2 node trusts and o - 1 edge trusts "
            f"(got {o} and {len(edge_trusts)})"
        )
    nodes = [clamp_unit(t) for t in node_trusts]
    edges = [clamp_unit(t) for t in edge_trusts]
    value = math.fsum(nodes[k + 1] * edges[k] for k in range(o - 1))
    u = nodes[0] * math.prod(edges)
    return value, u, chain_uncertainty(u)


def chain_weight(value: float, uncertainty: float, weight_floor: float = 1e-3) -> float:
    """A chain's weight in Eq. (8), V - H, floored at ``weight_floor`` > 0 (hole 2)."""
    return max(value - uncertainty, weight_floor)


def combine_chains(
    chains: Iterable[tuple[float, float, float]], *, weight_floor: float = 1e-3
) -> float:
    """Eq. (8): T(p_o) = sum_n w_n u_n / sum_n w_n with w_n = max(V_n - H_n, floor).

    Args:
      chains: (V, u, H) triples of the chains ending at p_o (from :func:`chain_value`).
      weight_floor: The positive floor of a weight (hole 2).

    Raises:
      ValueError: no chains, or a floor that is not positive.
    """
    if weight_floor <= 0:
        raise ValueError(f"combine_chains: weight_floor must be > 0, got {weight_floor}")
    triples = chains if isinstance(chains, list) else list(chains)
    if not triples:
        raise ValueError("combine_chains: need at least one chain")
    weights = [chain_weight(v, h, weight_floor) for v, _, h in triples]
    num = math.fsum([w * clamp_unit(t[1]) for w, t in zip(weights, triples, strict=True)])
    return clamp_unit(num / math.fsum(weights))


def backward_increment(
    t_target: float, t_previous: float, gamma: float = 0.1, *, eps: float = 1e-3
) -> float | None:
    """Eq. (9)'s increment gamma T(p_o) / T(p_{o-1}), bounded by gamma; None when undefined.

    Hole 4: when ``|T(p_{o-1})| < eps`` the quotient has no defined size or sign
    (the observer has no stance on p_{o-1}), so there is no backward update at
    all — never a sign taken from a zero. Hole 13: the quotient of two trusts is
    read as a trust, clamped to [-1, 1], so one increment is at most ``gamma``
    in size (a small divisor no longer blows it up to the whole trust range).
    Whether it may be added to a given edge is :func:`sign_safe_increment`'s call.
    """
    if eps <= 0:
        raise ValueError(f"backward_increment: eps must be > 0, got {eps}")
    if abs(t_previous) < eps:
        return None
    return gamma * clamp_unit(clamp_unit(t_target) / t_previous)


def sign_safe_increment(
    increment: float, current: float, share: float = 0.5, *, eps: float = 1e-3
) -> float:
    """Hole 13: an Eq. 9 increment that never changes the sign of the edge it adds to.

    An increment of the edge's own sign (or to an edge at exactly 0) is kept.
    One against it takes away at most ``share`` of ``current`` (the edge's trust,
    or its Eq. 4 evidence sum), so ``current + result`` keeps ``current``'s sign
    and at least ``1 - share`` of its size, however many decisions follow; below
    ``eps`` an edge has no stance left to oppose and an opposing increment is 0
    (as hole 4 does for a small divisor; it also keeps the sum's sign clear of
    floating-point rounding in the cancelling terms of Eq. 4).

    Args:
      increment: The increment (:func:`backward_increment`).
      current: What it is added to (an edge trust, or an edge's Eq. 4 sum).
      share: In (0, 1): the largest share of ``current`` an opposing increment removes.
      eps: Below it (in size, not 0), an opposing increment is 0.
    """
    if not 0.0 < share < 1.0:
        raise ValueError(f"sign_safe_increment: share must be in (0, 1), got {share}")
    if current == 0.0 or increment == 0.0 or (increment > 0) == (current > 0):
        return increment
    if abs(current) < eps:
        return 0.0
    return math.copysign(min(abs(increment), share * abs(current)), increment)


def backward_update(
    t_edge: float,
    t_target: float,
    t_previous: float,
    gamma: float = 0.1,
    *,
    eps: float = 1e-3,
    share: float = 0.5,
) -> float:
    """Eq. (9): T(p_o, p_{o-1}) <- gamma T(p_o) / T(p_{o-1}) + T(p_o, p_{o-1}), sign-safe.

    The additive form on the trust, clamped to [-1, 1] (hole 1); the edge is
    unchanged when ``|T(p_{o-1})| < eps`` (hole 4, :func:`backward_increment`),
    and an opposing increment takes at most ``share`` of the edge (hole 13,
    :func:`sign_safe_increment`). The graph applies the increment as evidence
    instead (hole 8), sign-safe against the edge's Eq. 4 sum.
    """
    inc = backward_increment(t_target, t_previous, gamma, eps=eps)
    edge = clamp_unit(t_edge)
    if inc is None:
        return edge
    return clamp_unit(edge + sign_safe_increment(inc, edge, share, eps=eps))


# -- Algorithm 1: one piece of evidence on the graph's maps -------------------------


def merged_sum(
    evidence: tuple[Evidence, ...],
    feedback: tuple[Evidence, ...],
    params: GratrParams,
    *,
    at_step: int | None = None,
) -> float:
    """Eq. (4)'s sum, sum_k rho^(n-k) c_k, over an edge's items, oldest first (holes 6, 8).

    With ``at_step`` the sum is the one an item appended at that step would be
    added to (every item decayed to ``at_step``; with ``decay="index"`` one more
    position): Eq. 9's sign-safe bound reads it (hole 13).
    """
    ordered = sorted(evidence + feedback, key=lambda e: e.step)  # stable on ties
    if not ordered:
        return 0.0
    cs = [clamp_unit(e.credibility) for e in ordered]
    n = len(ordered)
    if params.decay == "step":
        last = ordered[-1].step if at_step is None else max(at_step, ordered[-1].step)
        exps = [last - e.step for e in ordered]
    else:
        shift = 0 if at_step is None else 1
        exps = [n - 1 - k + shift for k in range(n)]
    return math.fsum((params.rho**x) * c for x, c in zip(exps, cs, strict=True))


def _parts(
    evidence: tuple[Evidence, ...], feedback: tuple[Evidence, ...], params: GratrParams
) -> tuple[float, float]:
    # Eq. 4's sum over an edge's items, oldest first, split into what its observed
    # evidence and what its Eq. 9 feedback contribute (both decayed to the newest item).
    tagged = sorted(
        [(e, False) for e in evidence] + [(e, True) for e in feedback], key=lambda x: x[0].step
    )  # stable on ties: evidence before feedback of the same step
    n = len(tagged)
    if n == 0:
        return 0.0, 0.0
    if params.decay == "step":
        last = tagged[-1][0].step
        exps = [last - e.step for e, _ in tagged]
    else:
        exps = [n - 1 - k for k in range(n)]
    ev = [
        (params.rho**x) * clamp_unit(e.credibility)
        for x, (e, fb) in zip(exps, tagged, strict=True)
        if not fb
    ]
    fb = [
        (params.rho**x) * clamp_unit(e.credibility)
        for x, (e, f) in zip(exps, tagged, strict=True)
        if f
    ]
    return math.fsum(ev), math.fsum(fb)


def evidence_bounded_sum(evidence_sum: float, feedback_sum: float, share: float) -> float:
    """Hole 13: Eq. 4's sum with the feedback's part held inside what the evidence says.

    The edge's sum is ``E + F`` (evidence part E, Eq. 9 feedback part F), with F
    cut to ``[-share * E, 0]`` for E > 0 (mirrored for E < 0) and the sum 0 when
    E is 0: feedback may weaken an edge by up to ``share`` of its evidence (and
    agreeing feedback may take such a weakening back), but it never flips the
    edge's sign and never grows it beyond its evidence, however many decisions
    follow and whatever evidence arrives later. The paper's Eq. 9 adds without
    either bound.
    """
    if not 0.0 < share < 1.0:
        raise ValueError(f"evidence_bounded_sum: share must be in (0, 1), got {share}")
    if evidence_sum == 0.0:
        return 0.0
    sign = math.copysign(1.0, evidence_sum)
    moved = min(max(sign * feedback_sum, -share * abs(evidence_sum)), 0.0)
    return evidence_sum + sign * moved


def merged_trust(
    evidence: tuple[Evidence, ...], feedback: tuple[Evidence, ...], params: GratrParams
) -> float:
    """Eq. (4) over an edge's raw list and its Eq. 9 feedback items, oldest first (holes 6, 8, 13).

    tanh of the Eq. 4 sum, its feedback part held inside the evidence part
    (:func:`evidence_bounded_sum`): the edge's sign is its evidence's, and its
    size at most its evidence's.
    """
    e_sum, f_sum = _parts(evidence, feedback, params)
    return math.tanh(evidence_bounded_sum(e_sum, f_sum, params.opposing_share))


def _alignment(context: OpponentContext, hypothesis: str) -> float:
    return float(context.alignment.get(hypothesis, 0.0))


def _one_side(context: OpponentContext, allowed: Sequence[str]) -> float:
    # The common alignment sign of ``allowed`` (0: none, or mixed).
    signs = {math.copysign(1.0, a) if (a := _alignment(context, h)) else 0.0 for h in allowed}
    return signs.pop() if len(signs) == 1 else 0.0


def judgment_source(e: Evidence, alignment: float, t_actor: float) -> float:
    """Hole 11: the source trust an uncertain identity judgment ``e`` is scaled by.

    1 for the observer's own judgment (no actor); T(speaker) for one a
    speaker's statement gave about another player. About the speaker itself:
    a self-serving judgment (a role of the observer's side, ``alignment`` > 0:
    "I am the seer") is a claim, and weighs the claimer's own trust, so a claim
    buys no trust; a judgment against the speaker's interest (the other side:
    a lie the observer caught, an admission) weighs 1, as the observer's own.
    """
    if not e.actor:
        return 1.0
    if e.actor == e.subject and alignment <= 0.0:
        return 1.0
    return t_actor


def _fact(
    context: OpponentContext, node: NodeState, e: Evidence, obs: tuple[Evidence, ...]
) -> NodeState:
    # Hole 5. The first fact stays: a later contradiction is a bug upstream.
    if node.fact is not None:
        return dataclasses.replace(node, observations=obs)
    if e.negated:
        excluded = node.excluded | {e.value}
        side = _one_side(context, [h for h in context.hypotheses if h not in excluded])
        trust, pinned = node.trust, node.pinned
        if side != 0.0 and not pinned:
            trust, pinned = side, True
        return dataclasses.replace(
            node, observations=obs, excluded=excluded, trust=trust, pinned=pinned
        )
    a = _alignment(context, e.value)
    if a != 0.0 and not node.pinned:
        return dataclasses.replace(
            node, observations=obs, fact=e.value, trust=math.copysign(1.0, a), pinned=True
        )
    return dataclasses.replace(node, observations=obs, fact=e.value)


def apply_evidence(
    context: OpponentContext,
    params: GratrParams,
    nodes: dict[str, NodeState],
    incoming: dict[str, Mapping[str, EdgeState]],
    copied: set[str],
    e: Evidence,
) -> None:
    """Algorithm 1 for one identity judgment or intent ``e``, written into the maps.

    ``nodes`` and ``incoming`` are the caller's copies; a target's inner map of
    incoming edges is copied the first time it is written (its name joins
    ``copied``), so the caller's model keeps its own maps (copy-on-write).
    """
    node = nodes.get(e.subject, _EMPTY_NODE)
    if e.kind == "identity":
        obs = node.observations + (e,)
        if e.certain:
            nodes[e.subject] = _fact(context, node, e, obs)
            return
        a = _alignment(context, e.value)
        if node.pinned or a == 0.0:
            nodes[e.subject] = dataclasses.replace(node, observations=obs)
            return
        source = judgment_source(e, a, nodes.get(e.actor, _EMPTY_NODE).trust if e.actor else 1.0)
        trust = node_trust_update(source, a * e.weight, node.trust)
        nodes[e.subject] = dataclasses.replace(node, observations=obs, trust=trust)
        return
    # An intent of e.actor towards e.subject.
    if e.actor == e.subject:  # hole 10
        nodes[e.subject] = dataclasses.replace(node, observations=node.observations + (e,))
        return
    nodes.setdefault(e.actor, _EMPTY_NODE)
    inner = incoming.get(e.subject, {})
    if e.subject not in copied:
        inner = dict(inner)
        incoming[e.subject] = inner
        copied.add(e.subject)
    edge = inner.get(e.actor, _EMPTY_EDGE)
    ev = edge.evidence + (e,)  # Eq. 1
    inner[e.actor] = EdgeState(ev, edge.feedback, merged_trust(ev, edge.feedback, params))  # type: ignore[index]
    if not node.pinned:  # Eqs. 2-3
        t_actor = nodes[e.actor].trust
        trust = node_trust_update(t_actor, e.credibility, node.trust)
        nodes[e.subject] = dataclasses.replace(node, trust=trust)


# -- Algorithm 2: the search that builds the evidence chains --------------------------


def search_order(
    nodes: Mapping[str, NodeState],
    incoming: Mapping[str, Mapping[str, EdgeState]],
    start: str,
    max_hops: int | None,
) -> tuple[dict[str, str | None], list[str]]:
    """Best-first search from ``start`` over incoming edges, most trusted first (hole 9).

    Ties go by name; parent pointers are set on discovery, so the path to any
    node is the one a search stopping at that node would find. The order
    depends on node trusts and on which edges exist, not on edge trusts.

    Returns:
      Each reached node's parent (None for ``start``) and the nodes in
      discovery order, ``start`` first.
    """
    parent: dict[str, str | None] = {start: None}
    depth = {start: 0}
    order = [start]
    heap = [(-nodes[start].trust if start in nodes else 0.0, start)]
    while heap:
        _, cur = heapq.heappop(heap)
        if max_hops is not None and depth[cur] >= max_hops:
            continue
        for nxt in incoming.get(cur, ()):
            if nxt not in parent:
                parent[nxt] = cur
                depth[nxt] = depth[cur] + 1
                order.append(nxt)
                heapq.heappush(heap, (-nodes[nxt].trust, nxt))
    return parent, order


def chain_tree(
    start: str,
    t_start: float,
    parent: Mapping[str, str | None],
    order: Sequence[str],
    nodes: Mapping[str, NodeState],
    incoming: Mapping[str, Mapping[str, EdgeState]],
) -> dict[str, tuple[Any, ...]]:
    """Per node reached by :func:`search_order`, the record of its chain from ``start``.

    A record is ``(players, node trusts, edge trusts, V, u)``: Eqs. 5-6
    accumulated along the search tree (V adds T(p_{k+1}) T(p_{k+1}, p_k); u
    multiplies the edge trusts), parents first. ``t_start`` is T(start), clamped.
    """
    acc: dict[str, tuple[Any, ...]] = {start: ((start,), (t_start,), (), 0.0, t_start)}
    for n in order[1:]:
        up = parent[n]
        players, nts, ets, v, u = acc[up]  # type: ignore[index]
        te = incoming[up][n].trust  # type: ignore[index]
        tn = nodes[n].trust
        acc[n] = (players + (n,), nts + (tn,), ets + (te,), v + tn * te, u * te)
    return acc


__all__ = [
    "apply_evidence",
    "backward_increment",
    "backward_update",
    "chain_tree",
    "chain_uncertainty",
    "chain_value",
    "chain_weight",
    "combine_chains",
    "evidence_bounded_sum",
    "judgment_source",
    "merge_edge_trust",
    "merged_sum",
    "merged_trust",
    "node_trust_update",
    "search_order",
    "sign_safe_increment",
]
