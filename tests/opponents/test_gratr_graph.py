"""The GRATR trust graph: Algorithm 1, Algorithm 2, the closed holes, invariants, export."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from opponent_fixtures import PLAYERS, ROLES, werewolf_context

from gt_llm.opponents import Evidence, GratrModel, GratrParams, make_opponent_model
from gt_llm.opponents.gratr_equations import (
    backward_increment,
    chain_value,
    combine_chains,
    merge_edge_trust,
)
from gt_llm.opponents.gratr_export import read_trust_graph_graphml, trust_graph_to_json


def intent(actor: str, target: str, c: float, step: int) -> Evidence:
    typ = "Defend" if c > 0 else "Attack"
    return Evidence(subject=target, value=typ, kind="intent", actor=actor, credibility=c, step=step)


def p(i: int) -> str:
    return f"Player {i}"


@pytest.fixture
def g0() -> GratrModel:
    m = make_opponent_model("gratr", werewolf_context())
    assert isinstance(m, GratrModel)
    return m


def test_fresh_graph(g0):
    assert sorted(g0.graph.nodes) == sorted(PLAYERS)
    assert g0.graph.number_of_edges() == 0
    assert g0.trust(p(1)) == 1.0  # the observer trusts itself, pinned
    assert all(g0.trust(x) == 0.0 for x in PLAYERS[1:])


def test_algorithm_1_edge_list_merge_and_node_update(g0):
    m = g0.observe(intent(p(1), p(2), 0.8, 1))
    # Eq. 1: the evidence list; Eq. 4: tanh(0.8) = 0.664037.
    assert [e.credibility for e in m.edge_evidence(p(1), p(2))] == [0.8]
    assert m.edge_trust(p(1), p(2)) == pytest.approx(0.664037, abs=1e-6)
    # Eqs. 2-3: u = T(P1) * 0.8 = 0.8 > |0|.
    assert m.trust(p(2)) == pytest.approx(0.8)
    # A second item at step 3: tanh(0.95^2 * 0.8 + 0.95^0 * -0.4) = tanh(0.322).
    m2 = m.observe(intent(p(1), p(2), -0.4, 3))
    assert m2.edge_trust(p(1), p(2)) == pytest.approx(math.tanh(0.9025 * 0.8 - 0.4))
    # |u| = 0.4 <= 0.8: T(P2) stays.
    assert m2.trust(p(2)) == pytest.approx(0.8)
    # The parent is unchanged (a value).
    assert m.edge_trust(p(1), p(2)) == pytest.approx(0.664037, abs=1e-6)
    assert g0.graph.number_of_edges() == 0
    # The held graphs are frozen.
    with pytest.raises(nx.NetworkXError):
        m.graph.add_edge(p(2), p(3))


def test_merge_never_touches_the_reverse_edge(g0):
    m = g0.observe(intent(p(3), p(4), 0.5, 1))
    before = m.edge_trust(p(3), p(4))
    m = m.observe(intent(p(4), p(3), -0.9, 2)).observe(intent(p(4), p(3), -0.9, 3))
    assert m.edge_trust(p(3), p(4)) == before
    assert [e.credibility for e in m.edge_evidence(p(3), p(4))] == [0.5]
    assert m.edge_trust(p(4), p(3)) == pytest.approx(merge_edge_trust([-0.9, -0.9], steps=[2, 3]))


def test_retrieval_is_a_read_and_a_decision_adds_eq_9_feedback(g0):
    m = g0.observe(intent(p(3), p(1), -0.9, 1))  # Player 3 attacks me
    t31 = math.tanh(-0.9)  # -0.716298
    assert m.edge_trust(p(3), p(1)) == pytest.approx(t31)
    assert m.trust(p(3)) == 0.0  # Algorithm 1 updates the target (me, pinned), not the actor
    before = json.dumps(m.snapshot(), sort_keys=True)
    r = m.retrieve(p(3))
    # One chain P1 <- P3: V = T(P3) T(P3,P1) = 0, u = 1 * t31; weight = floor -> T(P3) = u.
    assert [c.players for c in r.chains] == [(p(1), p(3))]
    assert r.trust_after == pytest.approx(t31) and r.trust_before == 0.0
    assert r.floored == 1 and r.chains[0].floored
    assert m.belief(p(3)).value == pytest.approx(t31)  # the one reading is Eq. 8's
    # Eq. 9's increment on the chain's last edge (P3, P1): 0.1 * t31 / T(P1) = 0.1 t31.
    assert r.feedback == ((p(3), p(1), pytest.approx(0.1 * t31)),)
    # Reading changed nothing.
    assert json.dumps(m.snapshot(), sort_keys=True) == before
    assert m.trust(p(3)) == 0.0 and m.edge_trust(p(3), p(1)) == pytest.approx(t31)
    # A decision adds the increment as feedback at the current step (1), merged by Eq. 4;
    # it agrees with the edge, which feedback never grows beyond its evidence (hole 13).
    d = m.decide([p(3)])
    assert [f.credibility for f in d.edge_feedback(p(3), p(1))] == [pytest.approx(0.1 * t31)]
    assert d.edge_trust(p(3), p(1)) == pytest.approx(t31)
    assert d.edge_evidence(p(3), p(1)) == m.edge_evidence(p(3), p(1))  # D is observed only
    assert d.floor_count.combinations == 1 and d.floor_count.feedback == 1
    # Deciding again at the same step replaces the step's feedback: the same trusts.
    dd = d.decide([p(3)])
    assert len(dd.edge_feedback(p(3), p(1))) == 1
    assert dd.edge_trust(p(3), p(1)) == d.edge_trust(p(3), p(1))
    assert m.consult(subjects=[p(3)]).model.edge_trust(p(3), p(1)) == d.edge_trust(p(3), p(1))
    # New evidence at step 2 keeps the feedback, decayed like evidence, still inside it.
    m3 = d.observe(intent(p(3), p(1), -0.5, 2))
    assert len(m3.edge_feedback(p(3), p(1))) == 1
    expected = math.tanh(0.95 * -0.9 - 0.5)
    assert m3.edge_trust(p(3), p(1)) == pytest.approx(expected)


def test_an_accusation_stays_negative_after_any_lookups_and_decisions(g0):
    # Y = P5 accuses X = P4 (credibility -0.8); P4 spoke about me, so the chain to P5
    # runs P1 <- P4 <- P5 and Eq. 9's divisor is T(P4) = 0.
    m = g0.observe_all([intent(p(4), p(1), 0.6, 1), intent(p(5), p(4), -0.8, 1)])
    assert m.trust(p(4)) == 0.0
    assert m.edge_trust(p(5), p(4)) == pytest.approx(-0.664037, abs=1e-6)
    assert (p(1), p(4), p(5)) in [c.players for c in m.retrieve(p(5)).chains]
    assert m.retrieve(p(5)).skipped == ((p(5), p(4)),) and m.retrieve(p(5)).feedback == ()
    before = json.dumps(m.snapshot(), sort_keys=True)
    for _ in range(12):
        for q in PLAYERS[1:]:
            m.retrieve(q)
            m.belief(q)
        m.prompt_fields()
    assert json.dumps(m.snapshot(), sort_keys=True) == before
    d = m
    for step in range(2, 14):
        msg = Evidence(subject=p(5), kind="message", actor=p(2), text="Hm.", step=step)
        d = d.observe(msg).decide(PLAYERS[1:])
        assert d.edge_trust(p(5), p(4)) < 0
    # Only decay moved it (Eq. 4 by step): tanh(-0.8) until new evidence arrives.
    assert d.edge_trust(p(5), p(4)) == pytest.approx(-0.664037, abs=1e-6)
    assert d.floor_count.skipped >= 12


def test_retrieval_two_hop_chain_and_combination(g0):
    m = g0.observe_all([intent(p(1), p(2), 0.8, 1), intent(p(3), p(1), -0.9, 2)])
    t12, t31 = math.tanh(0.8), math.tanh(-0.9)  # 0.664037, -0.716298
    r = m.retrieve(p(3))
    chains = {c.players: c for c in r.chains}
    assert set(chains) == {(p(1), p(3)), (p(2), p(1), p(3))}
    # Two-hop chain P2 <- P1 <- P3 with T = (0.8, 1, 0) and edges (t12, t31):
    # V = 1 * t12 + 0 * t31 = 0.664037; u = 0.8 * t12 * t31 = -0.380518.
    c2 = chains[(p(2), p(1), p(3))]
    assert c2.value == pytest.approx(0.664037, abs=1e-6)
    assert c2.u == pytest.approx(-0.380518, abs=1e-6)
    assert (c2.value, c2.u, c2.uncertainty) == pytest.approx(
        chain_value([0.8, 1.0, 0.0], [t12, t31])
    )
    # Eq. 8: weights 0.001 (floored; V - H < 0) and 0.664037 - 0.530428:
    # T = (0.001 * -0.716298 + 0.133609 * -0.380518) / 0.134609 = -0.383013.
    assert r.trust_after == pytest.approx(-0.383013, abs=1e-5)
    assert r.trust_after == pytest.approx(
        combine_chains([(c.value, c.u, c.uncertainty) for c in r.chains])
    )
    # Both chains end with the edge (P3, P1): it gets one feedback item.
    assert r.feedback == ((p(3), p(1), pytest.approx(backward_increment(r.trust_after, 1.0))),)
    m2 = m.decide([p(3)])
    assert m2.edge_trust(p(1), p(2)) == pytest.approx(t12)  # not on a last edge
    # The floor bound once, in a combination of two chains (where it decides the mix).
    fc = m2.floor_count
    assert (fc.combinations, fc.bound, fc.decisive, fc.chains, fc.floored) == (1, 1, 1, 2, 1)
    # max_hops=1 keeps only the direct chain.
    m1 = GratrModel.create(werewolf_context(), GratrParams(max_hops=1)).observe_all(
        [intent(p(1), p(2), 0.8, 1), intent(p(3), p(1), -0.9, 2)]
    )
    assert [c.players for c in m1.chains(p(3))] == [(p(1), p(3))]


def test_top_w_starts_skip_zero_and_target(g0):
    m = g0.observe_all([intent(p(1), p(2), 0.8, 1), intent(p(1), p(3), 0.3, 1)])
    assert m.starts(p(5)) == [p(1), p(2), p(3)]
    assert m.starts(p(2)) == [p(1), p(3)]  # never the target, never a trust of 0
    assert GratrModel.create(werewolf_context(), GratrParams(w=1)).starts(p(5)) == [p(1)]


def test_certain_facts_are_pinned(g0):
    m = g0.observe(Evidence(subject=p(5), value="werewolf", certain=True, step=1))
    assert m.trust(p(5)) == -1.0
    b = m.belief(p(5))
    assert b.pinned and b.most_likely() == ("werewolf",)
    # A trusted player defends the werewolf; an identity judgment says villager.
    m = m.observe_all(
        [
            intent(p(1), p(2), 0.9, 2),
            intent(p(2), p(5), 0.9, 3),
            Evidence(subject=p(5), value="villager", weight=1.0, step=3),
            Evidence(subject=p(5), value="villager", certain=True, step=4),
        ]
    )
    assert m.trust(p(5)) == -1.0
    assert m.belief(p(5)).most_likely() == ("werewolf",)
    m2 = m.decide([p(5)])
    assert m2.trust(p(5)) == -1.0 and m2.belief(p(5)).value == -1.0
    assert m2.trust(p(1)) == 1.0


def test_identity_judgments_through_alignment(g0):
    # The observer's own judgment (no actor): u = 1 * (-1) * 0.8.
    m = g0.observe(Evidence(subject=p(6), value="werewolf", weight=0.8, step=1))
    assert m.trust(p(6)) == pytest.approx(-0.8)
    # Via a speaker of trust 0 it carries nothing; via a trusted speaker it is scaled.
    m = m.observe(Evidence(subject=p(7), value="seer", weight=0.9, actor=p(4), step=2))
    assert m.trust(p(7)) == 0.0
    m = m.observe(intent(p(1), p(4), 0.5, 3)).observe(
        Evidence(subject=p(7), value="seer", weight=0.9, actor=p(4), step=4)
    )
    assert m.trust(p(7)) == pytest.approx(0.5 * 0.9)
    b = m.belief(p(7))
    assert b.most_likely() == ("seer",)
    # Hole 12 (uniform prior): P(adversary side) = 0.55 / (0.55 + 4 * 1.45); the village
    # side's mass is split by prior (1 + tally). P4 said it twice: only its latest
    # judgment counts, weighed by T(P4) = 0.5: seer 1 + 0.9 * 0.5, the other three 1 each.
    assert b.distribution["werewolf"] == pytest.approx(0.55 / 6.35)
    assert b.distribution["seer"] == pytest.approx(5.8 / 6.35 * 1.45 / 4.45)
    # A claim about oneself weighs the claimer's own trust (0): it buys nothing.
    m = m.observe(Evidence(subject=p(3), value="seer", weight=0.7, actor=p(3), step=5))
    assert m.trust(p(3)) == 0.0 and m.identity_tally(p(3))["seer"] == 0.0
    # Fruit-like hypotheses without alignment change no trust.
    f = make_opponent_model("gratr", hypotheses=("apples", "bananas"))
    f = f.observe(Evidence(subject="Bob", value="apples", step=1))
    assert f.trust("Bob") == 0.0 and f.belief("Bob").most_likely() == ("apples",)


def test_self_intent_makes_no_edge(g0):
    m = g0.observe(intent(p(3), p(3), 0.5, 1))
    assert m.graph.number_of_edges() == 0
    assert len(m.belief(p(3)).evidence) == 1


def test_unknown_players_and_options_raise(g0):
    with pytest.raises(ValueError, match="Player 9"):
        g0.observe(intent(p(9), p(1), 0.5, 1))
    with pytest.raises(ValueError, match="pirate"):
        g0.observe(Evidence(subject=p(2), value="pirate"))
    with pytest.raises(ValueError, match="rho"):
        GratrParams(rho=1.5)


def _random_evidence(rng: np.random.Generator, n: int) -> list[Evidence]:
    out = []
    for step in range(n):
        kind = rng.choice(["intent", "intent", "intent", "identity", "fact"])
        a, b = (PLAYERS[i] for i in rng.choice(len(PLAYERS), 2, replace=True))
        if kind == "intent":
            out.append(intent(a, b, float(rng.uniform(-1, 1)), step))
        else:
            role = ROLES[int(rng.integers(len(ROLES)))]
            out.append(
                Evidence(
                    subject=b,
                    value=role,
                    weight=float(rng.uniform(0, 1)),
                    actor=a if rng.random() < 0.5 else "",
                    certain=kind == "fact",
                    step=step,
                )
            )
    return out


@pytest.mark.parametrize("seed", range(20))
def test_invariants_on_random_evidence(seed):
    rng = np.random.default_rng(seed)
    params = GratrParams(gamma=float(rng.uniform(0, 1)), decay=str(rng.choice(["step", "index"])))
    m = GratrModel.create(werewolf_context(), params)
    facts: dict[str, float] = {}
    parent_snapshot = json.dumps(m.snapshot(), sort_keys=True)
    first = m
    for e in _random_evidence(rng, 60):
        m = m.observe(e)
        if e.certain and e.subject not in facts and e.subject != p(1):
            facts[e.subject] = math.copysign(1.0, -1.0 if e.value == "werewolf" else 1.0)
        if rng.random() < 0.3:
            m = m.decide([PLAYERS[int(rng.integers(1, len(PLAYERS)))]])
        for _, d in m.graph.nodes(data=True):
            assert -1.0 <= d["trust"] <= 1.0
        for _, _, t in m.graph.edges(data="trust"):
            assert -1.0 <= t <= 1.0
        assert m.trust(p(1)) == 1.0
        for who, t in facts.items():
            assert m.trust(who) == t
    assert json.dumps(first.snapshot(), sort_keys=True) == parent_snapshot


def test_export_json_graphml_and_drawing(g0, tmp_path):
    m = g0.observe_all(
        [
            intent(p(1), p(2), 0.8, 1),
            intent(p(3), p(1), -0.9, 2),
            Evidence(subject=p(5), value="werewolf", certain=True, step=3),
        ]
    )
    m = m.decide([p(3)])
    data = json.loads(json.dumps(trust_graph_to_json(m)))
    assert {n["id"] for n in data["nodes"]} == set(PLAYERS)
    assert {(e["source"], e["target"]) for e in data["edges"]} == {(p(1), p(2)), (p(3), p(1))}
    from games.werewolf.arena.graph import write_trust_graph  # the games write files

    write_trust_graph(m, tmp_path / "g.json")
    assert json.loads((tmp_path / "g.json").read_text()) == data
    write_trust_graph(m, tmp_path / "g.graphml")
    h = read_trust_graph_graphml(tmp_path / "g.graphml")
    assert isinstance(h, nx.DiGraph)
    assert h.number_of_nodes() == 8 and h.number_of_edges() == 2
    assert h.edges[p(3), p(1)]["trust"] == pytest.approx(m.edge_trust(p(3), p(1)))
    assert h.nodes[p(5)]["fact"] == "werewolf"
    write_trust_graph(m, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["g.graphml", "g.json", "g.png"]


def _game(seed: int, n: int = 50) -> list[Evidence]:
    return _random_evidence(np.random.default_rng(seed), n)


@pytest.mark.parametrize("seed", range(12))
def test_any_order_of_lookups_and_decisions_gives_identical_trusts(seed):
    rng = np.random.default_rng(1000 + seed)
    evidence = _game(seed)
    others = list(PLAYERS[1:])
    orders = [others, others[::-1], [others[i] for i in rng.permutation(len(others))]]
    readings, decided = [], []
    for order in orders:
        m = GratrModel.create(werewolf_context()).observe_all(evidence)  # a fresh cache
        snap = json.dumps(m.snapshot(), sort_keys=True)
        for _ in range(3):
            for q in order:
                m.retrieve(q)
        readings.append({q: (m.belief(q).value, dict(m.belief(q).distribution)) for q in order})
        assert json.dumps(m.snapshot(), sort_keys=True) == snap  # lookups are pure
        decided.append(json.dumps(m.decide(order).snapshot()["graph"], sort_keys=True))
    assert readings[0] == readings[1] == readings[2]
    assert decided[0] == decided[1] == decided[2]


def test_negative_facts_pin_a_side():
    ctx = werewolf_context(
        self_role="werewolf",
        alignment={h: (1.0 if h == "werewolf" else -1.0) for h in ROLES},
        prior={"werewolf": 2, "villager": 2, "seer": 1, "witch": 1, "guard": 1},
    )
    m = GratrModel.create(ctx).observe_all(
        [
            Evidence(subject=p(2), value="werewolf", certain=True, step=0),
            Evidence(subject=p(3), value="werewolf", certain=True, negated=True, step=0),
        ]
    )
    # A partner is a werewolf (an ally: +1); a non-partner is on the village side (-1).
    assert m.trust(p(2)) == 1.0 and m.belief(p(2)).distribution["werewolf"] == 1.0
    b = m.belief(p(3))
    assert m.trust(p(3)) == -1.0 and b.pinned and b.value == -1.0
    assert b.distribution["werewolf"] == 0.0
    assert b.distribution["villager"] == pytest.approx(0.4)  # 2 of the 5 village seats
    # Nothing moves a pinned side: an accusation by the partner, a judgment.
    m = m.observe_all(
        [intent(p(2), p(3), 0.9, 1), Evidence(subject=p(3), value="werewolf", weight=1.0, step=1)]
    )
    assert m.belief(p(3)).distribution["werewolf"] == 0.0
    with pytest.raises(ValueError, match="negated"):
        Evidence(subject=p(3), value="werewolf", negated=True)


def test_prior_is_the_reading_without_evidence():
    prior = {"werewolf": 3, "villager": 1, "seer": 1, "witch": 1, "guard": 0}
    m = GratrModel.create(werewolf_context(prior=prior))
    b = m.belief(p(4))
    assert b.value == 0.0
    assert dict(b.distribution) == pytest.approx({h: prior[h] / 6 for h in ROLES})
    assert m.prompt_fields(subjects=[p(4)])["players"][0]["identity"] == "unsure"
