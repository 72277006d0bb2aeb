"""The frozen values of a GRATR trust graph: constants, nodes, edges, chains, reads.

:class:`gt_llm.opponents.gratr.GratrModel` is built from these; ``docs/gratr.md``
numbers the holes of the paper ("hole 2", ...) that they mention.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from gt_llm.opponents.base import ChainView, Evidence


@dataclasses.dataclass(frozen=True)
class GratrParams:
    """GRATR's constants.

    Attributes:
      rho: Temporal importance factor of Eq. 4.
      gamma: Learning rate of the backward update, Eq. 9.
      w: How many of the most trusted nodes start chains (Algorithm 2).
      epsilon: Ally above it, adversary below -epsilon, else unsure (Sect. 3.1).
      eps: Smallest divisor magnitude in Eq. 9 (hole 4: below it, no update).
      opposing_share: The largest share of an edge's Eq. 4 sum that one Eq. 9
        increment against the edge's sign takes away (hole 13: no sign flips).
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
    opposing_share: float = 0.5
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
        if not 0.0 < self.opposing_share < 1.0:
            raise ValueError(
                f"GratrParams: opposing_share must be in (0, 1), got {self.opposing_share}"
            )
        if self.eps <= 0 or self.weight_floor <= 0:
            raise ValueError("GratrParams: eps and weight_floor must be > 0")
        if self.decay not in ("step", "index"):
            raise ValueError(f"GratrParams: decay must be 'step' or 'index', got {self.decay!r}")
        if self.max_hops is not None and self.max_hops < 1:
            raise ValueError("GratrParams: max_hops must be >= 1 or None")


@dataclasses.dataclass(frozen=True)
class NodeState:
    """One node: T(p), whether a fact pins it, the fact, excluded hypotheses, observations."""

    trust: float = 0.0
    pinned: bool = False
    fact: str | None = None
    excluded: frozenset[str] = frozenset()
    observations: tuple[Evidence, ...] = ()


@dataclasses.dataclass(frozen=True)
class EdgeState:
    """One edge: D(p_i, p_j) (observed), the Eq. 9 feedback items, and T(p_i, p_j) (Eq. 4)."""

    evidence: tuple[Evidence, ...] = ()
    feedback: tuple[Evidence, ...] = ()
    trust: float = 0.0


@dataclasses.dataclass(frozen=True)
class FloorCount:
    """How often Eq. 8's weight floor bound at decisions (hole 2), and Eq. 9's fate.

    Attributes:
      combinations: Eq. 8 combinations a decision read (targets with chains, not pinned).
      bound: Of those, combinations in which at least one chain's V - H was below
        the floor and raised to it.
      decisive: Of those, combinations of two or more chains (where the floor
        changes the chains' relative weights; with one chain Eq. 8 gives u
        whatever the weight).
      chains: Chains read in those combinations.
      floored: Chains whose weight was raised to the floor.
      feedback: Eq. 9 feedback items decisions added.
      skipped: Eq. 9 updates skipped for a divisor |T(p_{o-1})| < eps (hole 4).
      limited: Eq. 9 increments cut so as not to change the edge's sign (hole 13).
    """

    combinations: int = 0
    bound: int = 0
    decisive: int = 0
    chains: int = 0
    floored: int = 0
    feedback: int = 0
    skipped: int = 0
    limited: int = 0

    def __add__(self, other: FloorCount) -> FloorCount:
        names = [f.name for f in dataclasses.fields(self)]
        return FloorCount(*(getattr(self, k) + getattr(other, k) for k in names))

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Chain:
    """One evidence chain p_1 <- ... <- p_o with its Eqs. 5-7 values and Eq. 8 weight."""

    players: tuple[str, ...]
    node_trusts: tuple[float, ...]
    edge_trusts: tuple[float, ...]
    value: float
    u: float
    uncertainty: float
    weight: float = 0.0
    floored: bool = False

    def view(self) -> ChainView:
        return chain_view(
            self.players, self.edge_trusts, self.value, self.u, self.uncertainty, self.weight
        )


@dataclasses.dataclass(frozen=True)
class Retrieval:
    """What one Algorithm 2 run reads (a pure read: the model is unchanged).

    Attributes:
      target: p_o.
      chains: The evidence chains to p_o.
      trust_before: The stored T(p_o) (Eqs. 2-3, facts).
      trust_after: T(p_o) by Eq. 8 over the chains (the stored trust without
        chains or when pinned): what a lookup reports.
      feedback: ``(p_o, p_{o-1}, increment)``: the Eq. 9 items a decision now
        would add (one per distinct last edge; sign-safe, hole 13).
      skipped: Last edges ``(p_o, p_{o-1})`` with no update (hole 4).
      floored: How many chains' weights the floor raised (hole 2).
      pinned: Whether a fact pins T(p_o) (then Eq. 8 does not apply).
    """

    target: str
    chains: tuple[Chain, ...]
    trust_before: float
    trust_after: float
    feedback: tuple[tuple[str, str, float], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    floored: int = 0
    pinned: bool = False


def chain_view(
    players: Sequence[str], edges: Sequence[float], v: float, u: float, h: float, w: float
) -> ChainView:
    """A chain's prompt fields (players, edge trusts, Eqs. 5-8 values rounded, floored)."""
    return {
        "players": list(players),
        "edge_trusts": list(edges),
        "value": round(v, 6),
        "u": round(u, 6),
        "uncertainty": round(h, 6),
        "weight": round(w, 6),
        "floored": v - h < w,
    }


__all__ = [
    "Chain",
    "EdgeState",
    "FloorCount",
    "GratrParams",
    "NodeState",
    "Retrieval",
    "chain_view",
]
