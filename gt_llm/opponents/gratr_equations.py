"""GRATR's Eqs. (1)-(9) as pure functions, named and numbered as in the paper.

From "GRATR: Zero-Shot Evidence Graph Retrieval-Augmented Trustworthiness
Reasoning" (Zhu, Li, Kong, Yang and Xu; Sect. 3). The trust graph that applies
them (:class:`gt_llm.opponents.gratr.GratrModel`) documents, in its module
docstring, the holes of the paper these functions close (hole 1: clamping;
2: the weight floor of Eq. 8; 3: H of a negative u; 4: a zero divisor in
Eq. 9; 6: decay by time step in Eq. 4).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from gt_llm.opponents.base import clamp_unit


def node_trust_update(t_source: float, credibility: float, t_target: float) -> float:
    """Eqs. (2)-(3): the node trust of p_j after p_i's intent with credibility c.

    u = T(p_i) * c (Eq. 2); T(p_j) becomes u only when |u| > |T(p_j)| (Eq. 3),
    i.e. the stronger indication wins. Inputs are clamped to [-1, 1] first, so
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
    """Eq. (9)'s increment gamma T(p_o) / T(p_{o-1}), clamped to [-1, 1]; None when undefined.

    Hole 4: when ``|T(p_{o-1})| < eps`` the quotient has no defined size or sign
    (the observer has no stance on p_{o-1}), so there is no backward update at
    all — never a sign taken from a zero.
    """
    if eps <= 0:
        raise ValueError(f"backward_increment: eps must be > 0, got {eps}")
    if abs(t_previous) < eps:
        return None
    return clamp_unit(gamma * clamp_unit(t_target) / t_previous)


def backward_update(
    t_edge: float, t_target: float, t_previous: float, gamma: float = 0.1, *, eps: float = 1e-3
) -> float:
    """Eq. (9) as printed: T(p_o, p_{o-1}) <- gamma T(p_o) / T(p_{o-1}) + T(p_o, p_{o-1}).

    The literal additive form, clamped to [-1, 1] (hole 1); the edge is
    unchanged when ``|T(p_{o-1})| < eps`` (hole 4, :func:`backward_increment`).
    The graph applies the increment as evidence instead (hole 8).
    """
    inc = backward_increment(t_target, t_previous, gamma, eps=eps)
    return clamp_unit(t_edge) if inc is None else clamp_unit(clamp_unit(t_edge) + inc)


__all__ = [
    "backward_increment",
    "backward_update",
    "chain_uncertainty",
    "chain_value",
    "chain_weight",
    "combine_chains",
    "merge_edge_trust",
    "node_trust_update",
]
