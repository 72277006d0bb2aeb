"""GRATR: the trust graph of one agent, with graph-retrieval-augmented reasoning.

Follows "GRATR: Zero-Shot Evidence Graph Retrieval-Augmented Trustworthiness
Reasoning" (Zhu, Li, Kong, Yang and Xu; Sect. 3, Eqs. (1)-(9),
Algorithms 1-2). One agent keeps a directed graph (networkx): each node is a
player p with a trust T(p) in [-1, 1] and the observations about p; each edge
(p_i, p_j) keeps the evidence list D(p_i, p_j) of p_i's intents towards p_j and
the edge trust T(p_i, p_j), 0 at the start.

* Algorithm 1 (update, :meth:`GratrModel.observe`): an intent of p_i towards p_j
  with credibility c is appended to D(p_i, p_j) (Eq. 1), the edge trust is the
  merge of its raw evidence list (Eq. 4), and T(p_j) is updated from T(p_i)
  and c (Eqs. 2-3). The paper merges an edge's evidence during retrieval
  (Algorithm 2, line 11); since Eq. 4 is a function of the raw list alone we
  merge when evidence arrives — the same value, computed off the decision's
  hot path.
* Algorithm 2 (retrieval, :meth:`GratrModel.retrieve`): from the top-w most
  trusted nodes, a best-first search by node trust over *incoming* edges builds
  an evidence chain p_1 <- p_2 <- ... <- p_o = target per start; the chains give
  T(p_o) (Eqs. 5-8) and the last edge of each chain, (p_o, p_{o-1}), is updated
  backwards (Eq. 9).

Each equation is a pure function below, named and numbered as in the paper.
Where the paper leaves a hole, this module closes it as follows (each closing
is repeated where it is made):

1. **Every trust is clamped to [-1, 1]** after every equation (Eqs. 2, 8, 9 can
   leave it otherwise: Eq. 9 adds to a bounded value, Eq. 8 is only a convex
   combination when all weights are positive).
2. **Weights V - H that are not positive** (Eq. 8): a chain's weight is
   ``max(V - H, weight_floor)``. With T(p_o) = 0 at the start every two-node
   chain has V = 0, so the paper's weights would be <= 0 and Eq. 8 would divide
   by zero or flip signs (the reference implementation's negative weights);
   with the floor, weak chains still count a little and the result is a convex
   combination of the chains' u, hence in [-1, 1].
3. **H of a negative u** (Eq. 7): log2 of a negative number is undefined; we use
   H = -|u| log2 |u| (and H(0) = 0), the same uncertainty for support and
   hostility of equal strength. Base 2, as the paper writes (not ln).
4. **Division by a zero trust** (Eq. 9): the denominator T(p_{o-1}) is replaced
   by ``eps`` with its sign (+ for 0) when ``|T(p_{o-1})| < eps``; the result is
   clamped (1).
5. **Certain facts** (a seer's check, a revealed role, the observer itself) pin
   a node: its trust is set to the fact's alignment (+1 ally / -1 adversary, and
   1 for the observer itself) and never overwritten by Eqs. 3 or 8.
6. **Decay by time step** (Eq. 4): the paper's rho^(n-k) counts positions in the
   list; with ``decay="step"`` (default) the exponent is the gap in time steps
   to the edge's newest evidence, t_n - t_k, so evidence given at the same step
   weighs the same and a long silence decays more. ``decay="index"`` is the
   paper's literal rule. Eq. 4 is always applied to the raw evidence list,
   oldest first; merged values are never merged again, and no other edge (in
   particular not the reverse edge) is touched by a merge.
7. **One edge direction everywhere**: an edge (a, b) is a's intent towards b.
   Eqs. 5-6 read T(p_{k+1}, p_k), i.e. the chain follows edges *into* the node
   already on the chain, so retrieval walks predecessors, and the backward
   update (Eq. 9) adjusts exactly the chain's last edge (p_o, p_{o-1}).
8. **Backward updates persist**: Eq. 9's change is kept as an offset on the
   edge, so T(edge) = clamp(Eq. 4 of the raw list + offset); new evidence
   re-merges the list without losing it.
9. **Chains**: Algorithm 2 as printed has no stopping rule and no target; we run
   one best-first search per start node (top-w by T among nodes with T != 0
   other than the target: a start of trust 0 makes u = 0 and only dilutes
   Eq. 8), popping the most trusted frontier node, visiting each node once, and
   stopping at the target (optionally at ``max_hops`` edges). Identical chains
   from different starts count once; a shared last edge is updated once.
10. **Self-intents** (``[Player 3][Defend][Player 3]``, self-defence) carry no
    trust between two players: they are kept as node observations, no edge.
11. **Identity judgments** become trust through the context's ``alignment``
    (+1 for the observer's side, -1 for the other): u = T(source) * alignment *
    confidence with Eqs. 2-3. The source is the observer itself (T = 1) for a
    judgment without an actor (the observer's, or the moderator's) and for a
    speaker's claim about itself (the LLM's confidence already weighs it);
    otherwise it is the speaker whose statement gave it, with T(speaker).

Updates return a new model: the networkx graph is copied once per
``observe``/``observe_all``/``retrieve`` call (O(nodes + edges); see
``benchmarks/gratr.py``) and never mutated after it is built.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import math
import os
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import networkx as nx

from gt_llm.opponents.base import (
    UNSURE,
    Belief,
    ChainView,
    Consultation,
    Evidence,
    HistoryMixin,
    OpponentContext,
    OpponentModel,
    PlayerView,
    append_history,
    clamp_unit,
    stance_of,
    top_probabilities,
)

# ----------------------------------------------------------------------------
# The equations, as pure functions.
# ----------------------------------------------------------------------------


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
    triples = list(chains)
    if not triples:
        raise ValueError("combine_chains: need at least one chain")
    weights = [chain_weight(v, h, weight_floor) for v, _, h in triples]
    num = math.fsum(w * clamp_unit(u) for w, (_, u, _) in zip(weights, triples, strict=True))
    return clamp_unit(num / math.fsum(weights))


def backward_update(
    t_edge: float, t_target: float, t_previous: float, gamma: float = 0.1, *, eps: float = 1e-3
) -> float:
    """Eq. (9): T(p_o, p_{o-1}) <- gamma T(p_o) / T(p_{o-1}) + T(p_o, p_{o-1}).

    A zero (or tiny) T(p_{o-1}) is replaced by ``eps`` with its sign, + for 0
    (hole 4); the result is clamped to [-1, 1] (hole 1).
    """
    if eps <= 0:
        raise ValueError(f"backward_update: eps must be > 0, got {eps}")
    denom = t_previous if abs(t_previous) >= eps else math.copysign(eps, t_previous or 1.0)
    return clamp_unit(gamma * clamp_unit(t_target) / denom + clamp_unit(t_edge))


# ----------------------------------------------------------------------------
# The graph.
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GratrParams:
    """GRATR's constants.

    Attributes:
      rho: Temporal importance factor of Eq. 4.
      gamma: Learning rate of the backward update, Eq. 9.
      w: How many of the most trusted nodes start chains (Algorithm 2).
      epsilon: Ally above it, adversary below -epsilon, else unsure (Sect. 3.1).
      eps: Smallest denominator magnitude in Eq. 9 (hole 4).
      weight_floor: Smallest chain weight in Eq. 8 (hole 2).
      decay: ``"step"`` (time-step gaps) or ``"index"`` (the paper's n - k).
      max_hops: Longest chain in edges (``None``: bounded by the node count).
      top_n: How many hypotheses the prompt fields list per player.
    """

    rho: float = 0.95
    gamma: float = 0.1
    w: int = 3
    epsilon: float = 0.1
    eps: float = 1e-3
    weight_floor: float = 1e-3
    decay: Literal["step", "index"] = "step"
    max_hops: int | None = None
    top_n: int = 3

    def __post_init__(self) -> None:
        if not 0.0 < self.rho <= 1.0:
            raise ValueError(f"GratrParams: rho must be in (0, 1], got {self.rho}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"GratrParams: gamma must be in [0, 1], got {self.gamma}")
        if self.w < 1:
            raise ValueError(f"GratrParams: w must be >= 1, got {self.w}")
        if not 0.0 <= self.epsilon < 1.0:
            raise ValueError(f"GratrParams: epsilon must be in [0, 1), got {self.epsilon}")
        if self.eps <= 0 or self.weight_floor <= 0:
            raise ValueError("GratrParams: eps and weight_floor must be > 0")
        if self.decay not in ("step", "index"):
            raise ValueError(f"GratrParams: decay must be 'step' or 'index', got {self.decay!r}")
        if self.max_hops is not None and self.max_hops < 1:
            raise ValueError("GratrParams: max_hops must be >= 1 or None")


@dataclasses.dataclass(frozen=True)
class Chain:
    """One evidence chain p_1 <- ... <- p_o with its Eqs. 5-7 values."""

    players: tuple[str, ...]
    node_trusts: tuple[float, ...]
    edge_trusts: tuple[float, ...]
    value: float
    u: float
    uncertainty: float

    def view(self) -> ChainView:
        return {
            "players": list(self.players),
            "edge_trusts": [round(x, 6) for x in self.edge_trusts],
            "value": round(self.value, 6),
            "u": round(self.u, 6),
            "uncertainty": round(self.uncertainty, 6),
        }


@dataclasses.dataclass(frozen=True)
class Retrieval:
    """What one Algorithm 2 run found and did.

    Attributes:
      target: p_o.
      chains: The evidence chains to p_o.
      trust_before: T(p_o) before.
      trust_after: T(p_o) after Eq. 8 (unchanged without chains or when pinned).
      updated_edges: The edges (p_o, p_{o-1}) adjusted by Eq. 9, with their new trust.
    """

    target: str
    chains: tuple[Chain, ...]
    trust_before: float
    trust_after: float
    updated_edges: tuple[tuple[str, str, float], ...] = ()


def _new_node(graph: nx.DiGraph, node: str) -> None:
    if node not in graph:
        graph.add_node(node, trust=0.0, pinned=False, fact=None, observations=())


# eq=False: two models are equal only when they are the same object (a graph has
# no value equality; compare snapshots instead).
@dataclasses.dataclass(frozen=True, eq=False)
class GratrModel(HistoryMixin, OpponentModel):
    """One agent's GRATR trust graph (an immutable value; see the module docstring).

    Attributes:
      context: Players, self id, hypotheses, alignment, history window.
      params: GRATR's constants.
      graph: The networkx graph, frozen once the model holds it (its attribute
        dicts are not guarded: treat them as read-only).
      history: The last K messages.
    """

    name = "gratr"

    context: OpponentContext = OpponentContext()
    params: GratrParams = GratrParams()
    graph: nx.DiGraph = dataclasses.field(default_factory=nx.DiGraph)
    history: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        # Structural changes to a held graph raise (networkx's freeze); updates work
        # on a copy (``graph.copy()`` of a frozen graph is an unfrozen one).
        nx.freeze(self.graph)

    # -- construction -------------------------------------------------------

    @classmethod
    def create(cls, context: OpponentContext, params: GratrParams | None = None) -> GratrModel:
        """A fresh graph: every player a node of trust 0, the observer pinned at 1."""
        g = nx.DiGraph()
        for p in context.players:
            _new_node(g, p)
        if context.self_id is not None:
            _new_node(g, context.self_id)
            g.nodes[context.self_id].update(trust=1.0, pinned=True, fact=context.self_role)
        return cls(context=context, params=params or GratrParams(), graph=g)

    # -- reading ------------------------------------------------------------

    def trust(self, player: str) -> float:
        """T(player) (0 for a player not yet seen)."""
        return float(self.graph.nodes[player]["trust"]) if player in self.graph else 0.0

    def edge_trust(self, source: str, target: str) -> float:
        """T(source, target) (0 without evidence)."""
        if self.graph.has_edge(source, target):
            return float(self.graph.edges[source, target]["trust"])
        return 0.0

    def edge_evidence(self, source: str, target: str) -> tuple[Evidence, ...]:
        """D(source, target), oldest first."""
        if self.graph.has_edge(source, target):
            return self.graph.edges[source, target]["evidence"]
        return ()

    def _alignment(self, hypothesis: str) -> float:
        return float(self.context.alignment.get(hypothesis, 0.0))

    def identity_tally(self, player: str) -> dict[str, float]:
        """Summed confidence of the identity judgments about ``player``, per hypothesis."""
        tally = {h: 0.0 for h in self.context.hypotheses}
        if player in self.graph:
            for e in self.graph.nodes[player]["observations"]:
                if e.kind == "identity":
                    tally[e.value] = tally.get(e.value, 0.0) + e.weight
        return tally

    def belief(self, subject: str) -> Belief:
        self.context.check_subject("GratrModel.belief", subject)
        if subject not in self.graph:
            dist = {h: 1.0 / len(self.context.hypotheses) for h in self.context.hypotheses}
            return Belief(subject=subject, distribution=dist, value=0.0)
        data = self.graph.nodes[subject]
        hyps = self.context.hypotheses
        fact = data["fact"]
        tally = self.identity_tally(subject)
        if fact is not None and (not hyps or fact in hyps):
            dist = {h: float(h == fact) for h in (hyps or (fact,))}
        elif sum(tally.values()) > 0:
            # Not a posterior: each hypothesis's share of the judgments' confidence.
            total = sum(tally.values())
            dist = {h: v / total for h, v in tally.items()}
        else:
            dist = {h: 1.0 / len(hyps) for h in hyps} if hyps else {}
        incoming = [e for _, _, ev in self.graph.in_edges(subject, data="evidence") for e in ev]
        evidence = sorted(data["observations"] + tuple(incoming), key=lambda e: e.step)
        return Belief(
            subject=subject,
            distribution=dist,
            evidence=tuple(evidence),
            value=float(data["trust"]),
            pinned=bool(data["pinned"]) or fact is not None,
        )

    # -- Algorithm 1 --------------------------------------------------------

    def observe(self, evidence: Evidence) -> GratrModel:
        return self.observe_all((evidence,))

    def observe_all(self, evidence: Iterable[Evidence]) -> GratrModel:
        """Algorithm 1 for each piece of evidence, on one copy of the graph."""
        g = self.graph.copy()
        history = self.history
        for e in evidence:
            self._check(e)
            if e.kind == "message":
                history = append_history(history, e, self.context.k)
            else:
                self._apply(g, e)
        return dataclasses.replace(self, graph=g, history=history)

    def _check(self, e: Evidence) -> None:
        where = "GratrModel.observe"
        self.context.check_subject(where, e.subject)
        if e.kind == "intent":
            self.context.check_subject(where, e.actor)
        hyps = self.context.hypotheses
        if e.kind == "identity" and hyps and e.value not in hyps:
            raise ValueError(f"{where}: {e.value!r} is not one of {hyps}")

    def _apply(self, g: nx.DiGraph, e: Evidence) -> None:
        _new_node(g, e.subject)
        node = g.nodes[e.subject]
        if e.kind == "identity":
            node["observations"] = node["observations"] + (e,)
            a = self._alignment(e.value)
            if e.certain:
                if node["fact"] is None:
                    node["fact"] = e.value
                if a != 0.0 and not node["pinned"]:
                    # Hole 5: a certain fact pins the trust at its alignment's sign.
                    node.update(trust=math.copysign(1.0, a), pinned=True)
                return
            if node["pinned"] or a == 0.0:
                return
            # Hole 11: the observer's own judgment, or a claim about oneself as the
            # observer's LLM judged it, has source trust 1; a judgment that another
            # player's statement gave is scaled by that player's trust (Eq. 2).
            source = 1.0
            if e.actor and e.actor != e.subject:
                source = float(g.nodes[e.actor]["trust"]) if e.actor in g else 0.0
            node["trust"] = node_trust_update(source, a * e.weight, node["trust"])
            return
        # An intent of e.actor towards e.subject.
        if e.actor == e.subject:
            node["observations"] = node["observations"] + (e,)  # hole 10
            return
        _new_node(g, e.actor)
        if g.has_edge(e.actor, e.subject):
            edge = g.edges[e.actor, e.subject]
            edge["evidence"] = edge["evidence"] + (e,)  # Eq. 1
        else:
            g.add_edge(e.actor, e.subject, evidence=(e,), offset=0.0, trust=0.0)
            edge = g.edges[e.actor, e.subject]
        edge["trust"] = self._merged(edge["evidence"], edge["offset"])
        if not node["pinned"]:  # Eqs. 2-3
            t_actor = float(g.nodes[e.actor]["trust"])
            node["trust"] = node_trust_update(t_actor, e.credibility, node["trust"])

    def _merged(self, evidence: tuple[Evidence, ...], offset: float) -> float:
        # Eq. 4 over the raw list (hole 6), oldest first; plus the backward offset (hole 8).
        ordered = sorted(evidence, key=lambda e: e.step)  # stable: ties keep arrival order
        steps = [e.step for e in ordered] if self.params.decay == "step" else None
        merged = merge_edge_trust([e.credibility for e in ordered], self.params.rho, steps=steps)
        return clamp_unit(merged + offset)

    # -- Algorithm 2 --------------------------------------------------------

    def starts(self, target: str) -> list[str]:
        """The top-w nodes by trust (ties by name), other than target, with T != 0 (hole 9)."""
        cand = [
            (-float(d["trust"]), n)
            for n, d in self.graph.nodes(data=True)
            if n != target and float(d["trust"]) != 0.0
        ]
        return [n for _, n in sorted(cand)[: self.params.w]]

    def chains(self, target: str) -> tuple[Chain, ...]:
        """The evidence chains to ``target``, one best-first search per start (hole 9)."""
        if target not in self.graph:
            return ()
        g = self.graph
        found: dict[tuple[str, ...], Chain] = {}
        for start in self.starts(target):
            parent: dict[str, str | None] = {start: None}
            depth = {start: 0}
            heap = [(-self.trust(start), start)]
            while heap:
                _, cur = heapq.heappop(heap)
                if cur == target:
                    path = [cur]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])  # type: ignore[arg-type]
                    players = tuple(reversed(path))  # p_1 (start) ... p_o (target)
                    found.setdefault(players, self._chain(players))
                    break
                if self.params.max_hops is not None and depth[cur] >= self.params.max_hops:
                    continue
                # Hole 7: the chain follows edges into the node already on it.
                for nxt in g.predecessors(cur):
                    if nxt not in parent:
                        parent[nxt] = cur
                        depth[nxt] = depth[cur] + 1
                        heapq.heappush(heap, (-self.trust(nxt), nxt))
        return tuple(found.values())

    def _chain(self, players: tuple[str, ...]) -> Chain:
        nodes = tuple(self.trust(p) for p in players)
        edges = tuple(self.edge_trust(players[k + 1], players[k]) for k in range(len(players) - 1))
        v, u, h = chain_value(nodes, edges)
        return Chain(players, nodes, edges, v, u, h)

    def retrieve(self, target: str) -> tuple[GratrModel, Retrieval]:
        """Algorithm 2 for ``target``: chains, Eq. 8 on T(target), Eq. 9 on last edges.

        Returns:
          The updated model (``self`` when nothing changed) and what was found.
        """
        self.context.check_subject("GratrModel.retrieve", target)
        before = self.trust(target)
        chains = self.chains(target)
        if not chains:
            return self, Retrieval(target, (), before, before)
        g = self.graph.copy()
        node = g.nodes[target]
        after = before
        if not node["pinned"]:
            after = combine_chains(
                ((c.value, c.u, c.uncertainty) for c in chains),
                weight_floor=self.params.weight_floor,
            )
            node["trust"] = after
        updated = []
        for prev in dict.fromkeys(c.players[-2] for c in chains):
            edge = g.edges[target, prev]
            new = backward_update(
                edge["trust"], after, self.trust(prev), self.params.gamma, eps=self.params.eps
            )
            merged = edge["trust"] - edge["offset"]
            edge["offset"] = new - merged
            edge["trust"] = new
            updated.append((target, prev, new))
        model = dataclasses.replace(self, graph=g)
        return model, Retrieval(target, chains, before, after, tuple(updated))

    # -- prompt fields (appendix 3) -----------------------------------------

    def _player_view(self, subject: str, chains: Sequence[Chain]) -> PlayerView:
        b = self.belief(subject)
        top = b.most_likely()
        judged = b.pinned or sum(self.identity_tally(subject).values()) > 0
        # "unsure" (appendix 1) when nothing singles out one hypothesis.
        identity = top[0] if judged and len(top) == 1 else UNSURE
        return {
            "player": subject,
            "identity": identity,
            "probabilities": top_probabilities(b.distribution, self.params.top_n),
            "stance": stance_of(b.value, self.params.epsilon),
            "trust": round(float(b.value or 0.0), 6),
            "chains": [c.view() for c in chains],
            "pinned": b.pinned,
        }

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        """Runs Algorithm 2 for each subject in turn, then lists the players (appendix 3)."""
        who = list(subjects) if subjects is not None else self.context.others(self.graph.nodes)
        model = self
        found: dict[str, tuple[Chain, ...]] = {}
        for s in who:
            model, r = model.retrieve(s)
            found[s] = r.chains
        # The fields come from the model after retrieval (trust updated).
        return model._consultation(players=[model._player_view(s, found[s]) for s in who])

    def snapshot(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "params": dataclasses.asdict(self.params),
            "self_id": self.context.self_id,
            "graph": trust_graph_to_json(self),
            "history": [e.to_dict() for e in self.history],
        }


def make_gratr(context: OpponentContext) -> GratrModel:
    """Factory registered as ``gratr`` (the paper's constants: rho 0.95, gamma 0.1, w 3)."""
    return GratrModel.create(context)


# ----------------------------------------------------------------------------
# Export and drawing.
# ----------------------------------------------------------------------------


def trust_graph_to_json(model: GratrModel) -> dict[str, Any]:
    """The graph as JSON-ready node and edge lists (evidence included)."""
    g = model.graph
    return {
        "nodes": [
            {
                "id": n,
                "trust": float(d["trust"]),
                "pinned": bool(d["pinned"]),
                "fact": d["fact"],
                "observations": [e.to_dict() for e in d["observations"]],
            }
            for n, d in sorted(g.nodes(data=True))
        ],
        "edges": [
            {
                "source": a,
                "target": b,
                "trust": float(d["trust"]),
                "offset": float(d["offset"]),
                "evidence": [e.to_dict() for e in d["evidence"]],
            }
            for a, b, d in sorted(g.edges(data=True), key=lambda x: (x[0], x[1]))
        ],
    }


def _graphml_graph(model: GratrModel) -> nx.DiGraph:
    # GraphML holds scalars only: evidence lists go in as JSON strings.
    h = nx.DiGraph()
    for n, d in model.graph.nodes(data=True):
        h.add_node(
            n,
            trust=float(d["trust"]),
            pinned=bool(d["pinned"]),
            fact=d["fact"] or "",
            observations=json.dumps([e.to_dict() for e in d["observations"]]),
        )
    for a, b, d in model.graph.edges(data=True):
        h.add_edge(
            a,
            b,
            trust=float(d["trust"]),
            offset=float(d["offset"]),
            evidence=json.dumps([e.to_dict() for e in d["evidence"]]),
        )
    return h


def _atomic_write(path: str | os.PathLike[str], write: Any, suffix: str) -> None:
    target = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".", suffix=suffix)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def write_trust_graph_json(model: GratrModel, path: str | os.PathLike[str]) -> None:
    """Writes :func:`trust_graph_to_json` (temp file, then renamed into place)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(trust_graph_to_json(model), f, indent=1, sort_keys=True)

    _atomic_write(path, write, ".json")


def write_trust_graph_graphml(model: GratrModel, path: str | os.PathLike[str]) -> None:
    """Writes the graph as GraphML (temp file, then renamed into place)."""
    _atomic_write(path, lambda tmp: nx.write_graphml(_graphml_graph(model), tmp), ".graphml")


def read_trust_graph_graphml(path: str | os.PathLike[str]) -> nx.DiGraph:
    """Reads a GraphML file written by :func:`write_trust_graph_graphml` (scalars only)."""
    return nx.read_graphml(os.fspath(path))


def draw_trust_graph(
    model: GratrModel, path: str | os.PathLike[str], *, title: str | None = None
) -> None:
    """Draws the graph to an image file (matplotlib, Agg).

    Nodes are coloured by trust (red -1 ... green +1, pinned nodes outlined);
    edges are green for positive trust, red for negative, grey for 0, with width
    proportional to |T|.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = model.graph
    fig, ax = plt.subplots(figsize=(6, 6))
    try:
        pos = nx.circular_layout(sorted(g.nodes))
        trusts = [float(g.nodes[n]["trust"]) for n in sorted(g.nodes)]
        nx.draw_networkx_nodes(
            g,
            pos,
            nodelist=sorted(g.nodes),
            node_color=trusts,
            cmap="RdYlGn",
            vmin=-1,
            vmax=1,
            edgecolors=["black" if g.nodes[n]["pinned"] else "none" for n in sorted(g.nodes)],
            ax=ax,
        )
        nx.draw_networkx_labels(g, pos, font_size=8, ax=ax)
        edges = list(g.edges(data="trust"))
        nx.draw_networkx_edges(
            g,
            pos,
            edgelist=[(a, b) for a, b, _ in edges],
            edge_color=[
                "tab:green" if t > 0 else "tab:red" if t < 0 else "grey" for *_, t in edges
            ],
            width=[0.5 + 4.0 * abs(t) for *_, t in edges],
            arrows=True,
            connectionstyle="arc3,rad=0.1",
            ax=ax,
        )
        ax.set_title(title or f"GRATR trust graph of {model.context.self_id or 'observer'}")
        ax.set_axis_off()
        _atomic_write(path, lambda tmp: fig.savefig(tmp, format=_fmt(path), dpi=120), _sfx(path))
    finally:
        plt.close(fig)


def _sfx(path: str | os.PathLike[str]) -> str:
    return os.path.splitext(os.fspath(path))[1] or ".png"


def _fmt(path: str | os.PathLike[str]) -> str:
    return _sfx(path).lstrip(".") or "png"


__all__ = [
    "Chain",
    "GratrModel",
    "GratrParams",
    "Retrieval",
    "backward_update",
    "chain_uncertainty",
    "chain_value",
    "chain_weight",
    "combine_chains",
    "draw_trust_graph",
    "make_gratr",
    "merge_edge_trust",
    "node_trust_update",
    "read_trust_graph_graphml",
    "trust_graph_to_json",
    "write_trust_graph_graphml",
    "write_trust_graph_json",
]
