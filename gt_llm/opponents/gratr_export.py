"""A GRATR trust graph as JSON, as GraphML, and drawn as a matplotlib figure."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Protocol

import networkx as nx

from gt_llm.opponents.base import OpponentContext
from gt_llm.opponents.gratr_types import EdgeState, NodeState


class TrustGraph(Protocol):
    """What the exports read of a trust graph (:class:`gt_llm.opponents.gratr.GratrModel`)."""

    @property
    def nodes(self) -> Mapping[str, NodeState]: ...

    @property
    def context(self) -> OpponentContext: ...

    @property
    def graph(self) -> nx.DiGraph: ...

    def edges(self) -> list[tuple[str, str, EdgeState]]: ...


def trust_graph_to_json(model: TrustGraph) -> dict[str, Any]:
    """The graph as JSON-ready node and edge lists (evidence and feedback included)."""
    return {
        "nodes": [
            {
                "id": n,
                "trust": float(d.trust),
                "pinned": bool(d.pinned),
                "fact": d.fact,
                "excluded": sorted(d.excluded),
                "observations": [e.to_dict() for e in d.observations],
            }
            for n, d in sorted(model.nodes.items())
        ],
        "edges": [
            {
                "source": a,
                "target": b,
                "trust": float(e.trust),
                "evidence": [x.to_dict() for x in e.evidence],
                "feedback": [x.to_dict() for x in e.feedback],
            }
            for a, b, e in model.edges()
        ],
    }


def trust_graph_graphml(model: TrustGraph) -> nx.DiGraph:
    """The graph with scalar attributes only, for GraphML (lists as JSON strings)."""
    h = nx.DiGraph()
    for n, d in model.nodes.items():
        h.add_node(
            n,
            trust=float(d.trust),
            pinned=bool(d.pinned),
            fact=d.fact or "",
            excluded=json.dumps(sorted(d.excluded)),
            observations=json.dumps([e.to_dict() for e in d.observations]),
        )
    for a, b, e in model.edges():
        h.add_edge(
            a,
            b,
            trust=float(e.trust),
            evidence=json.dumps([x.to_dict() for x in e.evidence]),
            feedback=json.dumps([x.to_dict() for x in e.feedback]),
        )
    return h


def read_trust_graph_graphml(path: str | os.PathLike[str]) -> nx.DiGraph:
    """Reads a GraphML file of :func:`trust_graph_graphml` (scalars only)."""
    return nx.read_graphml(os.fspath(path))


def trust_graph_figure(model: TrustGraph, *, title: str | None = None) -> Any:
    """The graph drawn as a matplotlib figure (the caller saves and closes it).

    Nodes are coloured by trust (red -1 ... green +1, pinned nodes outlined);
    edges are green for positive trust, red for negative, grey for 0, with width
    proportional to |T|. Writing files is the caller's (games write through the
    project's atomic writer).
    """
    import matplotlib.pyplot as plt

    g = model.graph
    order = sorted(g.nodes)
    fig, ax = plt.subplots(figsize=(6, 6))
    pos = nx.circular_layout(order)
    nx.draw_networkx_nodes(
        g,
        pos,
        nodelist=order,
        node_color=[float(g.nodes[n]["trust"]) for n in order],
        cmap="RdYlGn",
        vmin=-1,
        vmax=1,
        edgecolors=["black" if g.nodes[n]["pinned"] else "none" for n in order],
        ax=ax,
    )
    nx.draw_networkx_labels(g, pos, font_size=8, ax=ax)
    edges = list(g.edges(data="trust"))
    nx.draw_networkx_edges(
        g,
        pos,
        edgelist=[(a, b) for a, b, _ in edges],
        edge_color=["tab:green" if t > 0 else "tab:red" if t < 0 else "grey" for *_, t in edges],
        width=[0.5 + 4.0 * abs(t) for *_, t in edges],
        arrows=True,
        connectionstyle="arc3,rad=0.1",
        ax=ax,
    )
    ax.set_title(title or f"GRATR trust graph of {model.context.self_id or 'observer'}")
    ax.set_axis_off()
    return fig


__all__ = [
    "TrustGraph",
    "read_trust_graph_graphml",
    "trust_graph_figure",
    "trust_graph_graphml",
    "trust_graph_to_json",
]
