"""Each seat's opponent model at each step of a logged game, replayed from its records.

An arena log holds, per seat with an opponent model, a ``belief_init`` record
(the model, the seat's role, the settings) and then ``belief_evidence`` (what the
model was given) and ``belief_consult`` (a decision read it; GRATR's retrieval
updates trust then) records, each with the step. Replaying them in order on a
fresh model rebuilds the model exactly as the game had it — the same way
``werewolf graph`` rebuilds one trust graph, here for every seat and step at
once.

After the records of each step a seat had, :func:`replay_beliefs` keeps a small
snapshot: per other player the identity the model infers, its P(werewolf) (the
belief line the prompts show), GRATR's trust T(p) and stance; GRATR's edges
with their edge trust; the Dirichlet role distribution; the messages a
retrieval baseline put in the prompt. Snapshots are reads: the replayed model
is advanced only by the logged records.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["encode_snapshots", "replay_beliefs"]


def _r(x: Any, digits: int = 2) -> float | None:
    if x is None:
        return None
    return round(float(x), digits)


def _seat_of(name: str, n: int) -> int | None:
    """``"Player 3" -> 2`` (the names models see), else ``None``."""
    head, _, num = str(name).rpartition(" ")
    if head != "Player" or not num.isdigit():
        return None
    p = int(num) - 1
    return p if 0 <= p < n else None


def _snapshot(state: Any, fields: Mapping[str, Any], others: Sequence[int], n: int) -> dict:
    from games.werewolf.players.beliefs import belief_map

    beliefs = belief_map(state, others, fields)  # type: ignore[arg-type]
    players = []
    for view in fields.get("players", []):
        p = _seat_of(view.get("player", ""), n)
        if p is None:
            continue
        dist = beliefs.get(p) or {}
        # Trust as the model holds it (what `werewolf graph` draws); a view's trust is
        # the retrieval's reading of it, which only a consultation commits.
        value = state.model.belief(view.get("player", "")).value
        entry: dict[str, Any] = {
            "p": p,
            "id": view.get("identity"),
            "pw": _r(dist.get("werewolf")) if dist else None,
            "trust": _r(value),
            "stance": view.get("stance"),
        }
        if state.name == "dirichlet" and dist:
            entry["dist"] = {k: _r(v) for k, v in dist.items() if v and v >= 0.0005}
        if view.get("pinned"):
            entry["pinned"] = True
        players.append(entry)
    snap: dict[str, Any] = {"players": players}
    graph = getattr(state.model, "graph", None)
    if graph is not None:
        edges = []
        for a, b, d in graph.edges(data=True):
            pa, pb = _seat_of(a, n), _seat_of(b, n)
            if pa is not None and pb is not None:
                edges.append([pa, pb, _r(d.get("trust"))])
        snap["edges"] = sorted(edges)
    retrieved = fields.get("retrieved") or []
    if retrieved or str(state.name).endswith("rag"):
        snap["retrieved"] = [
            {"step": m.get("step"), "speaker": m.get("speaker"), "text": m.get("text")}
            for m in retrieved
        ]
    return snap


def _seat_snapshots(
    records: Sequence[Mapping[str, Any]], init: Mapping[str, Any], n: int
) -> list[dict[str, Any]]:
    """One seat's snapshots: after the last of its records at each step."""
    from games.werewolf.arena.graph import replay_seat
    from games.werewolf.players.beliefs import goal_text
    from games.werewolf.players.prompts import player_name

    seat = int(init["seat"])
    others = [p for p in range(n) if p != seat]
    snaps: list[dict[str, Any]] = []

    def snapshot(step: int, consulted: bool, state: Any, fields: Any) -> None:
        if fields is None:  # a pure read: the model does not change
            fields = state.model.prompt_fields(
                goal=goal_text(seat, state.role, "decision"),
                subjects=[player_name(p) for p in others],
            )
        snap = _snapshot(state, fields, others, n)
        snaps.append({"seat": seat, "step": step, "consulted": consulted, **snap})

    pending: tuple[int, bool, Any, Any] | None = None  # step, consulted, state, fields
    for rec, state, fields in replay_seat(records, init):
        step = int(rec.get("step", 0))
        if pending is not None and pending[0] != step:
            snapshot(*pending)
            pending = None
        consulted = fields is not None or (pending is not None and pending[1])
        pending = (step, consulted, state, fields)
    if pending is not None:
        snapshot(*pending)
    return snaps


def replay_beliefs(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every opponent-model seat's snapshots, replayed from a log's belief records.

    Each seat is replayed by :func:`games.werewolf.arena.graph.replay_seat` (the
    replay ``werewolf graph`` uses); a snapshot is taken after the last of the
    seat's records at each step.

    Returns:
      ``{"models": {seat: model name}, "roles": {seat: role},
      "snapshots": [{"seat", "step", "consulted", ...snapshot}], "skipped": {...}}``,
      snapshots by step then seat; empty for a log without belief records. A seat
      whose records cannot be replayed (an unknown model, a changed record
      format) is left out with a warning and named in ``"skipped"``.
    """
    from games.werewolf.rules import Config

    out: dict[str, Any] = {"models": {}, "roles": {}, "snapshots": [], "skipped": {}}
    inits = [r for r in records if r.get("type") == "belief_init"]
    if not inits:
        return out
    try:
        n = Config.from_dict(records[0]["config"]).num_players
    except (KeyError, TypeError, ValueError) as e:
        out["skipped"]["all"] = f"the header's config cannot be read ({e})"
        return out
    for init in inits:
        seat = int(init.get("seat", -1))
        try:
            snaps = _seat_snapshots(records, init, n)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as e:
            # One seat's damaged records leave its mind out of the page, named there.
            logger.warning("werewolf view: seat %s's opponent model not replayed: %s", seat, e)
            out["skipped"][str(seat)] = str(e)
            continue
        out["models"][str(seat)] = str(init.get("model"))
        out["roles"][str(seat)] = str(init.get("role"))
        out["snapshots"] += snaps
    out["snapshots"].sort(key=lambda s: (s["step"], s["seat"]))
    return out


def encode_snapshots(beliefs: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshots of :func:`replay_beliefs` as per-seat changes (what a page embeds).

    A long game has hundreds of snapshots of which most values repeat, so each
    snapshot keeps only what changed since the same seat's previous one:
    ``[seat, step, consulted, players, edges, retrieved]`` with ``players`` a
    list of ``[p, P(werewolf), trust, identity, stance, pinned, dist]`` rows
    (identity and stance as indices into ``labels``, dist aligned with
    ``hypotheses`` or ``None``), ``edges`` a list of ``[a, b, trust]`` (trust
    ``None``: the edge is gone) and ``retrieved`` the retrieved messages as
    ``[step, speaker, text]`` or ``None`` when unchanged. The page replays the
    changes in order (``decodeBeliefs`` in ``game.js``).
    """
    labels: list[str] = []
    hyps: list[str] = []

    def label(x: Any) -> int:
        x = "" if x is None else str(x)
        if x not in labels:
            labels.append(x)
        return labels.index(x)

    for snap in beliefs.get("snapshots", []):
        for e in snap["players"]:
            for h in e.get("dist") or {}:
                if h not in hyps:
                    hyps.append(h)
    last_players: dict[int, dict[int, list]] = {}
    last_edges: dict[int, dict[tuple[int, int], Any]] = {}
    last_retrieved: dict[int, Any] = {}
    rows = []
    for snap in beliefs.get("snapshots", []):
        seat = snap["seat"]
        prev_p = last_players.setdefault(seat, {})
        players = []
        for e in snap["players"]:
            dist = e.get("dist")
            row = [
                e["p"],
                e.get("pw"),
                e.get("trust"),
                label(e.get("id")),
                label(e.get("stance")),
                int(bool(e.get("pinned"))),
                [dist.get(h, 0.0) for h in hyps] if dist else None,
            ]
            if prev_p.get(e["p"]) != row:
                players.append(row)
                prev_p[e["p"]] = row
        edges = []
        if "edges" in snap:
            prev_e = last_edges.setdefault(seat, {})
            now = {(a, b): t for a, b, t in snap["edges"]}
            for key, t in now.items():
                if prev_e.get(key, "absent") != t:
                    edges.append([key[0], key[1], t])
            edges += [[a, b, None] for (a, b) in prev_e if (a, b) not in now]
            last_edges[seat] = now
        retrieved = None
        if "retrieved" in snap:
            r = [[m.get("step"), m.get("speaker"), m.get("text")] for m in snap["retrieved"]]
            if last_retrieved.get(seat) != r:
                retrieved = last_retrieved[seat] = r
        rows.append([seat, snap["step"], int(snap["consulted"]), players, edges, retrieved])
    return {
        "models": dict(beliefs.get("models", {})),
        "roles": dict(beliefs.get("roles", {})),
        "skipped": dict(beliefs.get("skipped", {})),
        "graph_seats": sorted({s["seat"] for s in beliefs.get("snapshots", []) if "edges" in s}),
        "labels": labels,
        "hypotheses": hyps,
        "changes": rows,
    }
