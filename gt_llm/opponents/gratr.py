"""GRATR: the trust graph of one agent, with graph-retrieval-augmented reasoning.

Follows "GRATR: Zero-Shot Evidence Graph Retrieval-Augmented Trustworthiness
Reasoning" (Zhu, Li, Kong, Yang and Xu; Sect. 3, Eqs. (1)-(9),
Algorithms 1-2). One agent keeps a directed graph: each node is a player p with
a trust T(p) in [-1, 1] and the observations about p; each edge (p_i, p_j)
keeps the evidence list D(p_i, p_j) of p_i's intents towards p_j and the edge
trust T(p_i, p_j), 0 at the start.

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
  T(p_o) (Eqs. 5-8), and the last edge of each chain, (p_o, p_{o-1}), gets the
  backward update (Eq. 9) when the agent decides (:meth:`GratrModel.consult`).

Each equation is a pure function in :mod:`gt_llm.opponents.gratr_equations`,
named and numbered as in the paper; the graph's frozen values (constants,
nodes, edges, chains, retrievals, floor counts) are in
:mod:`gt_llm.opponents.gratr_types`, and export and drawing in
:mod:`gt_llm.opponents.gratr_export`.
Where the paper leaves a hole (Eq. 8's weights that are not positive, Eq. 9's
zero divisor, Algorithm 2's missing stopping rule, ...) the code closes it;
``docs/gratr.md`` ("How our GRATR differs from the paper") lists the thirteen
closings, and the code cites them by number ("hole 8") where each is made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import networkx as nx

from gt_llm.opponents.base import (
    Belief,
    ChainView,
    Consultation,
    Evidence,
    OpponentContext,
    OpponentModel,
    PlayerView,
    clamp_unit,
    identity_label,
    prior_distribution,
)
from gt_llm.opponents.common import (
    HistoryMixin,
    append_history,
    stance_of,
    top_probabilities,
    used_counts,
)
from gt_llm.opponents.gratr_equations import (
    apply_evidence,
    backward_increment,
    chain_tree,
    chain_uncertainty,
    chain_weight,
    combine_chains,
    judgment_source,
    merged_sum,
    merged_trust,
    search_order,
    sign_safe_increment,
)
from gt_llm.opponents.gratr_export import trust_graph_to_json
from gt_llm.opponents.gratr_types import (
    Chain,
    EdgeState,
    FloorCount,
    GratrParams,
    NodeState,
    Retrieval,
    chain_view,
)

_EMPTY_NODE = NodeState()
_EMPTY_EDGE = EdgeState()


# eq=False: two models are equal only when they are the same object (compare snapshots).
@dataclasses.dataclass(frozen=True, eq=False)
class GratrModel(HistoryMixin, OpponentModel):
    """One agent's GRATR trust graph (an immutable value; see the module docstring).

    Attributes:
      context: Players, self id, hypotheses, alignment, prior, history window.
      params: GRATR's constants.
      nodes: Per player its :class:`NodeState` (read-only).
      incoming: Per target p_j, per source p_i, the edge (p_i, p_j) (read-only).
      history: The last K messages.
      clock: The latest time step of any evidence (a decision's step, hole 8).
      floor_count: Eq. 8 floor and Eq. 9 counts over the decisions so far.
    """

    name = "gratr"

    context: OpponentContext = OpponentContext()
    params: GratrParams = GratrParams()
    nodes: Mapping[str, NodeState] = dataclasses.field(default_factory=dict)
    incoming: Mapping[str, Mapping[str, EdgeState]] = dataclasses.field(default_factory=dict)
    history: tuple[Evidence, ...] = ()
    clock: int = 0
    floor_count: FloorCount = FloorCount()
    # Reads are pure, so their results are cached per (immutable) model.
    _cache: dict[Any, Any] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", MappingProxyType(dict(self.nodes)))
        object.__setattr__(self, "incoming", MappingProxyType(dict(self.incoming)))

    # -- construction -------------------------------------------------------

    @classmethod
    def create(cls, context: OpponentContext, params: GratrParams | None = None) -> GratrModel:
        """A fresh graph: every player a node of trust 0, the observer pinned at 1."""
        nodes = {p: _EMPTY_NODE for p in context.players}
        if context.self_id is not None:
            nodes[context.self_id] = NodeState(trust=1.0, pinned=True, fact=context.self_role)
        return cls(context=context, params=params or GratrParams(), nodes=nodes)

    # -- reading ------------------------------------------------------------

    def trust(self, player: str) -> float:
        """The stored T(player) (0 for a player not yet seen); lookups read :meth:`belief`."""
        node = self.nodes.get(player)
        return node.trust if node is not None else 0.0

    def _edge(self, source: str, target: str) -> EdgeState:
        return self.incoming.get(target, {}).get(source, _EMPTY_EDGE)

    def edge_trust(self, source: str, target: str) -> float:
        """T(source, target) (0 without evidence)."""
        return self._edge(source, target).trust

    def edge_evidence(self, source: str, target: str) -> tuple[Evidence, ...]:
        """D(source, target), oldest first (observed evidence only)."""
        return self._edge(source, target).evidence

    def edge_feedback(self, source: str, target: str) -> tuple[Evidence, ...]:
        """The Eq. 9 feedback items decisions gave the edge, oldest first."""
        return self._edge(source, target).feedback

    def edges(self) -> list[tuple[str, str, EdgeState]]:
        """Every edge as ``(source, target, state)``, sorted."""
        return sorted(
            ((a, b, e) for b, inner in self.incoming.items() for a, e in inner.items()),
            key=lambda x: (x[0], x[1]),
        )

    @property
    def graph(self) -> nx.DiGraph:
        """A frozen networkx view of the graph (built on request; for drawing and export)."""
        if "graph" not in self._cache:
            g = nx.DiGraph()
            for n, d in self.nodes.items():
                g.add_node(n, **dataclasses.asdict(d) | {"observations": d.observations})
            for a, b, e in self.edges():
                g.add_edge(a, b, evidence=e.evidence, feedback=e.feedback, trust=e.trust)
            self._cache["graph"] = nx.freeze(g)
        return self._cache["graph"]

    def _alignment(self, hypothesis: str) -> float:
        return float(self.context.alignment.get(hypothesis, 0.0))

    def identity_tally(self, player: str) -> dict[str, float]:
        """Per hypothesis the weight of the (uncertain) identity judgments about ``player``.

        Hole 11's policy for judgments: each source counts once, with its latest
        judgment about ``player`` (a restated judgment is not new evidence), and
        weighs its confidence times the source's trust when positive
        (:func:`~gt_llm.opponents.gratr_equations.judgment_source`: 1 for the
        observer's own judgments, T(speaker) for a speaker's statement, the
        claimer's own trust for a self-serving claim), so a player the observer
        does not trust adds nothing, here as in Eqs. 2-3.
        """
        key = ("tally", player)
        if key not in self._cache:
            tally = {h: 0.0 for h in self.context.hypotheses}
            node = self.nodes.get(player)
            latest: dict[str, Evidence] = {}
            for e in node.observations if node is not None else ():
                if e.kind == "identity" and not e.certain:
                    latest[e.actor] = e
            for actor, e in latest.items():
                t_actor = self.trust(actor) if actor else 1.0
                source = max(judgment_source(e, self._alignment(e.value), t_actor), 0.0)
                tally[e.value] = tally.get(e.value, 0.0) + e.weight * source
            self._cache[key] = tally
        return dict(self._cache[key])

    def _used(self, subject: str) -> dict[str, float]:
        # The roles other players hold for certain, per role (taken from the prior counts).
        key = ("used", subject)
        if key not in self._cache:
            facts = {n: d.fact for n, d in self.nodes.items() if d.fact is not None}
            self._cache[key] = used_counts(self.context, facts, subject)
        return self._cache[key]

    def _sides(
        self, allowed: tuple[str, ...], used: tuple[tuple[str, float], ...] = ()
    ) -> tuple[dict[str, float], list[list[str]]]:
        # Per allowed hypothesis its prior weight (the count left after ``used``), and the
        # hypotheses by alignment sign (adversary, neither, ally); cached (hole 12).
        key = ("sides", allowed, used)
        if key not in self._cache:
            prior = self.context.prior
            base = {h: float(prior.get(h, 0.0)) if prior else 1.0 for h in allowed}
            left = {h: max(v - dict(used).get(h, 0.0), 0.0) for h, v in base.items()}
            if sum(left.values()) > 0:
                base = left
            if sum(base.values()) <= 0:
                base = {h: 1.0 for h in allowed}
            sign = {h: (a > 0) - (a < 0) for h in allowed for a in (self._alignment(h),)}
            sides = [[h for h in allowed if sign[h] == s] for s in (-1, 0, 1)]
            self._cache[key] = (base, sides)
        return self._cache[key]

    def distribution(self, subject: str, trust: float) -> dict[str, float]:
        """Hole 12: the distribution over hypotheses for a read trust ``trust``."""
        hyps = self.context.hypotheses
        node = self.nodes.get(subject, _EMPTY_NODE)
        if node.fact is not None and (not hyps or node.fact in hyps):
            return {h: float(h == node.fact) for h in (hyps or (node.fact,))}
        allowed = tuple(h for h in hyps if h not in node.excluded)
        if not allowed:
            return {}
        base, sides = self._sides(allowed, tuple(sorted(self._used(subject).items())))
        tally = self.identity_tally(subject)
        weight = {h: base[h] * (1.0 + tally.get(h, 0.0)) for h in allowed}
        if not sides[0] and not sides[2]:
            total = sum(weight.values())
            return {h: weight.get(h, 0.0) / total for h in hyps}
        t = clamp_unit(trust)
        mass = [
            sum(base[h] for h in hs) * f
            for hs, f in zip(sides, (1.0 - t, 1.0, 1.0 + t), strict=True)
        ]
        total = sum(mass)
        if total <= 0:  # every side with prior mass ruled out by T = +-1: the prior
            mass = [sum(base[h] for h in hs) for hs in sides]
            total = sum(mass)
        dist: dict[str, float] = {}
        for hs, m in zip(sides, mass, strict=True):
            wsum = sum(weight[h] for h in hs)
            for h in hs:
                dist[h] = m / total * weight[h] / wsum if wsum > 0 else 0.0
        return {h: dist.get(h, 0.0) for h in hyps}

    def reference(self, subject: str) -> dict[str, float]:
        """The distribution at trust 0 without judgments: the prior minus ruled-out roles."""
        node = self.nodes.get(subject, _EMPTY_NODE)
        return prior_distribution(self.context, None, node.excluded, self._used(subject))

    def belief(self, subject: str) -> Belief:
        """The one reading of ``subject``: Eq. 8's trust (hole 8) and its distribution (hole 12)."""
        self.context.check_subject("GratrModel.belief", subject)
        after = self._read(subject)[0]
        node = self.nodes.get(subject, _EMPTY_NODE)
        incoming = [e for edge in self.incoming.get(subject, {}).values() for e in edge.evidence]
        evidence = sorted(node.observations + tuple(incoming), key=lambda e: e.step)
        return Belief(
            subject=subject,
            distribution=self.distribution(subject, after),
            evidence=tuple(evidence),
            value=after,
            pinned=node.pinned or node.fact is not None,
        )

    # -- Algorithm 1 --------------------------------------------------------

    def observe(self, evidence: Evidence) -> GratrModel:
        return self.observe_all((evidence,))

    def observe_all(self, evidence: Iterable[Evidence]) -> GratrModel:
        """Algorithm 1 for each piece of evidence; copies only the maps it writes."""
        nodes = dict(self.nodes)
        incoming = dict(self.incoming)
        copied: set[str] = set()
        history = self.history
        clock = self.clock
        for e in evidence:
            self._check(e)
            clock = max(clock, int(e.step))
            if e.kind == "message":
                history = append_history(history, e, self.context.k)
            else:
                apply_evidence(self.context, self.params, nodes, incoming, copied, e)
        return dataclasses.replace(
            self, nodes=nodes, incoming=incoming, history=history, clock=clock
        )

    def _check(self, e: Evidence) -> None:
        where = "GratrModel.observe"
        self.context.check_subject(where, e.subject)
        if e.kind == "intent":
            self.context.check_subject(where, e.actor)
        hyps = self.context.hypotheses
        if e.kind == "identity" and hyps and e.value not in hyps:
            raise ValueError(f"{where}: {e.value!r} is not one of {hyps}")

    # -- Algorithm 2 (reads) ------------------------------------------------

    def _ranked(self) -> list[str]:
        # Nodes with T != 0 by trust, highest first, ties by name (hole 9).
        if "ranked" not in self._cache:
            cand = sorted((-d.trust, n) for n, d in self.nodes.items() if d.trust != 0.0)
            self._cache["ranked"] = [n for _, n in cand[: self.params.w + 1]]
        return self._cache["ranked"]

    def starts(self, target: str) -> list[str]:
        """The top-w nodes by trust (ties by name), other than target, with T != 0 (hole 9)."""
        return [n for n in self._ranked() if n != target][: self.params.w]

    def _order(self, start: str) -> tuple[dict[str, str | None], list[str]]:
        # The best-first search from ``start`` (hole 9; its order ignores edge trusts).
        key = ("order", start)
        if key in self._cache:
            return self._cache[key]
        parent, order = search_order(self.nodes, self.incoming, start, self.params.max_hops)
        self._cache[key] = (parent, order)
        return parent, order

    def _tree(self, start: str) -> dict[str, tuple[Any, ...]]:
        # Per node reached from ``start``: its chain's record (players, node and edge
        # trusts, V, u; Eqs. 5-6 along the search tree).
        key = ("tree", start)
        if key in self._cache:
            return self._cache[key]
        parent, order = self._order(start)
        t0 = clamp_unit(self.trust(start))
        acc = chain_tree(start, t0, parent, order, self.nodes, self.incoming)
        self._cache[key] = acc
        return acc

    def _records(self, target: str) -> list[tuple[Any, ...]]:
        # The tree records of the chains to ``target``: one per start that reaches it.
        if target not in self.nodes:
            return []
        out = []
        for start in self.starts(target):
            rec = self._tree(start).get(target)
            if rec is not None:
                out.append(rec)  # distinct starts give distinct chains
        return out

    def chains(self, target: str) -> tuple[Chain, ...]:
        """The evidence chains to ``target``, one per start that reaches it (hole 9)."""
        floor = self.params.weight_floor
        out = []
        for players, nts, ets, v, u in self._records(target):
            h = chain_uncertainty(u)
            out.append(Chain(players, nts, ets, v, u, h, chain_weight(v, h, floor), v - h < floor))
        return tuple(out)

    def _read(self, target: str) -> tuple[float, list[tuple[Any, ...]], int, list[Any]]:
        # Eq. 8's T(target), the chain records, how many weights the floor raised, and
        # Eq. 9's (p_{o-1}, increment or None) per distinct last edge. Cached: a pure read.
        key = ("read", target)
        if key in self._cache:
            return self._cache[key]
        recs = self._records(target)
        node = self.nodes.get(target, _EMPTY_NODE)
        after = node.trust
        floored = 0
        if recs and not node.pinned:
            floor = self.params.weight_floor
            triples = [(v, u, chain_uncertainty(u)) for _, _, _, v, u in recs]
            floored = sum(v - h < floor for v, _, h in triples)
            after = combine_chains(triples, weight_floor=floor)
        updates = [(prev, *self._increment(target, prev, after)) for prev in
                   dict.fromkeys(rec[0][-2] for rec in recs)]  # fmt: skip
        out = (after, recs, floored, updates)
        self._cache[key] = out
        return out

    def _increment(self, target: str, prev: str, after: float) -> tuple[float | None, bool]:
        # Eq. 9's item for the edge (target, prev) at a decision now (holes 4, 13), and
        # whether the sign guard cut it. The sum it is added to is the edge's without this
        # step's feedback, which a decision replaces (hole 8).
        p = self.params
        inc = backward_increment(after, self.trust(prev), p.gamma, eps=p.eps)
        if inc is None:
            return None, False
        edge = self._edge(target, prev)
        kept = tuple(f for f in edge.feedback if f.step != self.clock)
        total = merged_sum(edge.evidence, kept, p, at_step=self.clock)
        safe = sign_safe_increment(inc, total, p.opposing_share, eps=p.eps)
        return safe, safe != inc

    def retrieve(self, target: str) -> Retrieval:
        """Algorithm 2 for ``target`` as a read: chains, Eq. 8's T(target), Eq. 9's increments.

        Pure (hole 8): the model is unchanged; :meth:`consult` applies the feedback.
        """
        self.context.check_subject("GratrModel.retrieve", target)
        after, _, floored, updates = self._read(target)
        return Retrieval(
            target,
            self.chains(target),
            self.trust(target),
            after,
            tuple((target, prev, inc) for prev, inc, _ in updates if inc is not None),
            tuple((target, prev) for prev, inc, _ in updates if inc is None),
            floored,
            self.nodes.get(target, _EMPTY_NODE).pinned,
        )

    # -- decisions: Eq. 9 as evidence (hole 8) ------------------------------

    def _without_feedback_at(self, step: int) -> GratrModel:
        # The model before any decision of ``step`` (whose feedback a new decision replaces).
        incoming = dict(self.incoming)
        changed = False
        for target, inner in self.incoming.items():
            stale = [a for a, e in inner.items() if e.feedback and e.feedback[-1].step == step]
            if not stale:
                continue
            new_inner = dict(inner)
            for a in stale:
                e = inner[a]
                fb = tuple(f for f in e.feedback if f.step != step)
                new_inner[a] = EdgeState(e.evidence, fb, merged_trust(e.evidence, fb, self.params))
            incoming[target] = new_inner
            changed = True
        return self._same_shape(dataclasses.replace(self, incoming=incoming)) if changed else self

    def _same_shape(self, other: GratrModel) -> GratrModel:
        # ``other`` differs from self only in edge trusts: the searches' order is shared.
        other._cache.update(
            (k, v) for k, v in self._cache.items() if k == "ranked" or k[0] == "order"
        )
        return other

    def decide(self, subjects: Sequence[str]) -> GratrModel:
        """A decision about ``subjects`` at the current step (hole 8): adds Eq. 9's feedback.

        Every subject is retrieved from the model before the decision (so their
        order does not matter); the feedback replaces that of an earlier decision
        at the same step. Counts Eq. 8's floor and Eq. 9's skips (:class:`FloorCount`).
        """
        step = self.clock
        base = self._without_feedback_at(step)
        incoming = dict(base.incoming)
        copied: set[str] = set()
        # combinations, bound, decisive, chains, floored, feedback, skipped, limited.
        n = [0] * 8
        for target in dict.fromkeys(subjects):
            self.context.check_subject("GratrModel.decide", target)
            _, recs, floored, updates = base._read(target)
            if recs and not base.nodes.get(target, _EMPTY_NODE).pinned:
                n[0] += 1
                n[1] += floored > 0
                n[2] += floored > 0 and len(recs) > 1
                n[3] += len(recs)
                n[4] += floored
            for prev, inc, cut in updates:
                if inc is None:
                    n[6] += 1
                    continue
                n[5] += 1
                n[7] += cut
                inner = incoming[prev]
                if prev not in copied:
                    inner = dict(inner)
                    incoming[prev] = inner
                    copied.add(prev)
                e = inner[target]
                item = Evidence(
                    subject=prev,
                    value="Feedback",
                    source="eq9",
                    kind="intent",
                    actor=target,
                    credibility=inc,
                    step=step,
                )
                fb = e.feedback + (item,)
                inner[target] = EdgeState(e.evidence, fb, merged_trust(e.evidence, fb, self.params))  # type: ignore[index]
        count = self.floor_count + FloorCount(*n)
        return base._same_shape(dataclasses.replace(base, incoming=incoming, floor_count=count))

    # -- prompt fields (appendix 3) -----------------------------------------

    def _player_view(self, subject: str) -> PlayerView:
        # The fields of belief(subject) (the one reading), without collecting its evidence.
        self.context.check_subject("GratrModel.consult", subject)
        after = self._read(subject)[0]
        node = self.nodes.get(subject, _EMPTY_NODE)
        dist = self.distribution(subject, after)
        pinned = node.pinned or node.fact is not None
        # "unsure" (appendix 1) unless the likeliest role beat its prior odds by the ratio.
        identity = identity_label(dist, self.reference(subject))
        return {
            "player": subject,
            "identity": identity,
            "probabilities": top_probabilities(dist, self.params.top_n),
            "stance": stance_of(after, self.params.epsilon),
            "trust": round(after, 6),
            "chains": self._chain_views(subject),
            "pinned": pinned,
        }

    def _chain_views(self, subject: str) -> list[ChainView]:
        # Chain.view() of every chain, straight from the tree records (no Chain objects).
        floor = self.params.weight_floor
        out = []
        for players, _, ets, v, u in self._records(subject):
            h = chain_uncertainty(u)
            out.append(chain_view(players, ets, v, u, h, chain_weight(v, h, floor)))
        return out

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        """A decision (:meth:`decide`), then the players' fields read from the model after it."""
        who = list(subjects) if subjects is not None else self.context.others(self.nodes)
        model = self.decide(who)
        return model._consultation(players=[model._player_view(s) for s in who])

    def snapshot(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "params": dataclasses.asdict(self.params),
            "self_id": self.context.self_id,
            "clock": self.clock,
            "floor_count": self.floor_count.as_dict(),
            "graph": trust_graph_to_json(self),
            "history": [e.to_dict() for e in self.history],
        }


def make_gratr(context: OpponentContext) -> GratrModel:
    """Factory registered as ``gratr`` (the paper's constants: rho 0.95, gamma 0.1, w 3)."""
    return GratrModel.create(context)


__all__ = [
    "GratrModel",
    "make_gratr",
]
