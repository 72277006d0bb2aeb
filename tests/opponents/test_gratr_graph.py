"""The GRATR trust graph: Algorithm 1, Algorithm 2, the closed holes, invariants, export."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from opponent_fixtures import PLAYERS, ROLES, werewolf_context

from gt_llm.opponents import Evidence, GratrModel, GratrParams, make_opponent_model
from gt_llm.opponents.gratr import (
    backward_update,
    chain_value,
    combine_chains,
    draw_trust_graph,
    merge_edge_trust,
    read_trust_graph_graphml,
    trust_graph_to_json,
    write_trust_graph_graphml,
    write_trust_graph_json,
)


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


def test_retrieval_one_hop_and_backward_update(g0):
    m = g0.observe(intent(p(3), p(1), -0.9, 1))  # Player 3 attacks me
    t31 = math.tanh(-0.9)  # -0.716298
    assert m.edge_trust(p(3), p(1)) == pytest.approx(t31)
    assert m.trust(p(3)) == 0.0  # Algorithm 1 updates the target (me, pinned), not the actor
    m2, r = m.retrieve(p(3))
    # One chain P1 <- P3: V = T(P3) T(P3,P1) = 0, u = 1 * t31; weight = floor -> T(P3) = u.
    assert [c.players for c in r.chains] == [(p(1), p(3))]
    assert r.trust_after == pytest.approx(t31)
    assert m2.trust(p(3)) == pytest.approx(t31)
    # Eq. 9 on the chain's last edge (P3, P1): 0.1 * t31 / 1 + t31 = 1.1 t31.
    assert m2.edge_trust(p(3), p(1)) == pytest.approx(1.1 * t31)
    assert r.updated_edges == ((p(3), p(1), pytest.approx(1.1 * t31)),)
    # The parent is untouched.
    assert m.trust(p(3)) == 0.0 and m.edge_trust(p(3), p(1)) == pytest.approx(t31)
    # The backward offset survives new evidence: Eq. 4 of the raw list + offset.
    m3 = m2.observe(intent(p(3), p(1), -0.5, 2))
    offset = 0.1 * t31
    expected = max(-1.0, math.tanh(0.95 * -0.9 - 0.5) + offset)
    assert m3.edge_trust(p(3), p(1)) == pytest.approx(expected)


def test_retrieval_two_hop_chain_and_combination(g0):
    m = g0.observe_all([intent(p(1), p(2), 0.8, 1), intent(p(3), p(1), -0.9, 2)])
    t12, t31 = math.tanh(0.8), math.tanh(-0.9)  # 0.664037, -0.716298
    m2, r = m.retrieve(p(3))
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
    # Both chains end with the edge (P3, P1): it is updated once.
    assert r.updated_edges == (
        (p(3), p(1), pytest.approx(backward_update(t31, r.trust_after, 1.0))),
    )
    assert m2.edge_trust(p(1), p(2)) == pytest.approx(t12)  # not on a last edge
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
    m2, _ = m.retrieve(p(5))
    assert m2.trust(p(5)) == -1.0
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
    assert b.distribution["seer"] == pytest.approx(1.0)  # all judgment weight on seer
    # A claim about oneself counts with the LLM's confidence: u = 1 * (+1) * 0.7.
    m = m.observe(Evidence(subject=p(3), value="seer", weight=0.7, actor=p(3), step=5))
    assert m.trust(p(3)) == pytest.approx(0.7)
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
            m, _ = m.retrieve(PLAYERS[int(rng.integers(1, len(PLAYERS)))])
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
    m, _ = m.retrieve(p(3))
    data = json.loads(json.dumps(trust_graph_to_json(m)))
    assert {n["id"] for n in data["nodes"]} == set(PLAYERS)
    assert {(e["source"], e["target"]) for e in data["edges"]} == {(p(1), p(2)), (p(3), p(1))}
    write_trust_graph_json(m, tmp_path / "g.json")
    assert json.loads((tmp_path / "g.json").read_text()) == data
    write_trust_graph_graphml(m, tmp_path / "g.graphml")
    h = read_trust_graph_graphml(tmp_path / "g.graphml")
    assert isinstance(h, nx.DiGraph)
    assert h.number_of_nodes() == 8 and h.number_of_edges() == 2
    assert h.edges[p(3), p(1)]["trust"] == pytest.approx(m.edge_trust(p(3), p(1)))
    assert h.nodes[p(5)]["fact"] == "werewolf"
    draw_trust_graph(m, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["g.graphml", "g.json", "g.png"]
