"""Figures of a tournament: ratings with intervals, the meta-game heatmap, α-Rank's graph.

Each function returns a :class:`matplotlib.figure.Figure` drawn on the Agg canvas
(no pyplot state, no display needed); the caller saves it
(``fig.savefig(path)``). Titles are the caller's: they carry the model labels
(e.g. "scripted stand-in, not an LLM"), which this module never invents.

- :func:`fig_ratings`: Bradley–Terry ratings (Bradley & Terry 1952) on the Elo scale with
  their bootstrap intervals, and the sequential Elo rating (Elo 1978) beside each.
- :func:`fig_metagame`: the empirical meta-game (Wellman 2006) as a heatmap of mean
  scores, annotated "mean ± standard error".
- :func:`fig_response_graph`: α-Rank's response graph (Omidshafiei et al. 2019): agents
  as nodes sized and labelled by stationary mass, an arrow ``i → j`` when ``j`` beats
  ``i`` (``payoff[j][i] > 0.5``), i.e. when a mutant ``j`` is favoured to take over a
  population of ``i``; a dotted line joins an even pair (``payoff[i][j] = 0.5``).

Every figure draws any meta-game, including one where no pair has a strict winner
(all draws, or every pair split evenly) and one of a single pair: the response graph's
axes have fixed limits around the layout's unit circle, never limits autoscaled from
the nodes (two nodes on one horizontal line gave a height of 10⁻⁷ and text placed
millions of pixels away, which FreeType refuses to rasterise).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from solvers.metagame import AlphaRankResult, MetaGame
from solvers.ratings import RatingTable

__all__ = ["fig_metagame", "fig_ratings", "fig_response_graph"]


#: Half-width of the response graph's square axes: the layout's unit circle, the labels
#: below its lowest nodes and the largest nodes' radius.
_GRAPH_EXTENT = 1.5
#: A payoff this close to 0.5 is an even pair (no arrow): floating-point noise in a mean of
#: draws must not draw an arrow either way.
_EVEN_TOL = 1e-9


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def fig_ratings(table: RatingTable, *, title: str) -> Figure:
    """Horizontal rating intervals per agent, in the table's order (first at the top).

    Args:
      table: The ratings (:func:`solvers.ratings.rate`).
      title: The figure title (the caller's, with the model labels).

    Returns:
      The figure.
    """
    n = len(table.rows)
    fig = _figure(7.0, 1.2 + 0.45 * n)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1].astype(float)
    rating = np.array([r.rating for r in table.rows])
    err = np.array(
        [[r.rating - r.low for r in table.rows], [r.high - r.rating for r in table.rows]]
    )
    ax.errorbar(
        rating,
        y,
        xerr=np.clip(err, 0.0, None),
        fmt="o",
        color="C0",
        capsize=4,
        label=f"Bradley–Terry, {100 * table.level:g}% bootstrap interval",
    )
    ax.plot(
        [r.elo for r in table.rows],
        y - 0.22,
        marker="D",
        linestyle="none",
        color="C1",
        markersize=5,
        label=f"sequential Elo (k = {table.elo_k:g}, given order)",
    )
    ax.set_yticks(y, [f"{r.agent}  (#{r.rank}, {r.games} games)" for r in table.rows])
    ax.axvline(1500.0, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_xlabel("rating (Elo scale: 1500 + 400/ln 10 · θ)")
    ax.set_ylim(-0.8, n - 0.4)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title, fontsize=10)
    return fig


def _cell_text(mean: float, se: float) -> str:
    return f"{mean:.2f}" if not math.isfinite(se) else f"{mean:.2f}\n± {se:.2f}"


def fig_metagame(metagame: MetaGame, *, title: str) -> Figure:
    """Heatmap of the meta-game: mean score of the row agent against the column agent.

    Args:
      metagame: The meta-game (:func:`solvers.metagame.empirical_metagame`).
      title: The figure title (the caller's).

    Returns:
      The figure.
    """
    payoff = metagame.payoff_matrix()
    stderr = metagame.stderr_matrix()
    n = payoff.shape[0]
    side = 2.0 + 0.9 * n
    fig = _figure(side + 1.2, side)
    ax = fig.add_subplot()
    image = ax.imshow(payoff, cmap="RdBu", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            text = "—" if i == j else _cell_text(payoff[i, j], stderr[i, j])
            dark = abs(payoff[i, j] - 0.5) > 0.3
            ax.text(
                j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black"
            )
    ax.set_xticks(np.arange(n), list(metagame.agents), rotation=30, ha="right")
    ax.set_yticks(np.arange(n), list(metagame.agents))
    ax.set_xlabel("column agent (opponent)")
    ax.set_ylabel("row agent")
    fig.colorbar(image, ax=ax, label="mean score of row agent (± standard error)")
    ax.set_title(title, fontsize=10)
    return fig


def fig_response_graph(metagame: MetaGame, alpharank: AlphaRankResult, *, title: str) -> Figure:
    """α-Rank's response graph: an arrow ``i → j`` when ``j`` beats ``i``.

    Nodes are sized by stationary mass at the chosen α and labelled with it; arrows are
    labelled with ``payoff[j][i]``, the winner's mean score.

    Args:
      metagame: The meta-game.
      alpharank: Its α-Rank (:func:`solvers.metagame.alpha_rank`), same agents.
      title: The figure title (the caller's).

    Returns:
      The figure.
    """
    if tuple(alpharank.agents) != tuple(metagame.agents):
        raise ValueError("fig_response_graph: metagame and alpharank must have the same agents")
    payoff = metagame.payoff_matrix()
    agents = list(metagame.agents)
    pi = dict(zip(agents, alpharank.pi, strict=True))
    graph = nx.DiGraph()
    graph.add_nodes_from(agents)
    even: list[tuple[str, str]] = []
    for i, a in enumerate(agents):
        for j, b in enumerate(agents):
            if i != j and payoff[j, i] > 0.5 + _EVEN_TOL:
                graph.add_edge(a, b, score=payoff[j, i])
            elif i < j and abs(payoff[j, i] - 0.5) <= _EVEN_TOL:
                even.append((a, b))
    pos = nx.circular_layout(graph)
    fig = _figure(6.5, 6.0)
    ax = fig.add_subplot()
    # Fixed limits around the unit circle of the layout (labels sit below their node):
    # autoscaling from the nodes alone collapses to a sliver when they share one line.
    ax.set_xlim(-_GRAPH_EXTENT, _GRAPH_EXTENT)
    ax.set_ylim(-_GRAPH_EXTENT, _GRAPH_EXTENT)
    ax.set_aspect("equal")
    ax.set_autoscale_on(False)
    for a, b in even:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        ax.plot([xa, xb], [ya, yb], linestyle=":", color="0.55", linewidth=1.0, zorder=0)
    sizes = [300.0 + 4000.0 * pi[a] for a in agents]
    nx.draw_networkx_nodes(
        graph,
        pos,
        ax=ax,
        node_size=sizes,
        node_color=[pi[a] for a in agents],
        cmap="Greens",
        vmin=0.0,
        vmax=1.0,
        edgecolors="0.3",
    )
    nx.draw_networkx_edges(
        graph,
        pos,
        ax=ax,
        node_size=sizes,
        arrowstyle="-|>",
        arrowsize=15,
        connectionstyle="arc3,rad=0.08",
        edge_color="0.35",
    )
    nx.draw_networkx_edge_labels(
        graph,
        pos,
        ax=ax,
        edge_labels={e: f"{graph.edges[e]['score']:.2f}" for e in graph.edges},
        font_size=7,
        connectionstyle="arc3,rad=0.08",
    )
    for a, size in zip(agents, sizes, strict=True):
        # Below its node whatever its size: a marker of area s pt² has diameter √s pt.
        ax.annotate(
            f"{a}\nπ = {pi[a]:.3f}",
            xy=(float(pos[a][0]), float(pos[a][1])),
            xytext=(0.0, -(math.sqrt(size) / 2.0 + 2.0)),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=8,
        )
    ax.set_axis_off()
    ax.set_title(title, fontsize=10)
    fig.text(
        0.5,
        0.01,
        f"α-Rank: α = {alpharank.alpha:g}, population m = {alpharank.population}; "
        "arrow i → j: j beats i (label: j's mean score); dotted: an even pair",
        ha="center",
        fontsize=8,
    )
    return fig
