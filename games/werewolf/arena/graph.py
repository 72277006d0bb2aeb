"""``gt-llm werewolf graph``: a seat's GRATR trust graph rebuilt from an arena log."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.engine.cli_options import Writer, say
from games.werewolf.play import runner
from games.werewolf.players import prompts
from games.werewolf.players.beliefs import BeliefSettings, make_seat_beliefs
from games.werewolf.rules import Config

if TYPE_CHECKING:
    from gt_llm.opponents import GratrModel

__all__ = [
    "add_graph_parser",
    "rebuild_trust_graph",
]


def rebuild_trust_graph(records: Sequence[Mapping[str, Any]], player: int, step: int) -> GratrModel:
    """The GRATR model of ``player`` (seat id) after the log's records up to ``step``.

    Replays the seat's ``belief_evidence`` and ``belief_consult`` records with
    ``step <= step`` on a fresh model built from the ``belief_init`` record.

    Raises:
      ValueError: not an arena log, the seat has no GRATR model, or a bad step.
    """
    from gt_llm.opponents import Evidence

    if not records or records[0].get("type") != "header":
        raise ValueError("werewolf graph: the log does not start with a header record")
    config = Config.from_dict(records[0]["config"])
    if not 0 <= player < config.num_players:
        raise ValueError(f"werewolf graph --player: must be a seat in 0..{config.num_players - 1}")
    if step < 0:
        raise ValueError("werewolf graph --step: must be >= 0")
    init = next(
        (r for r in records if r.get("type") == "belief_init" and r["seat"] == player), None
    )
    if init is None:
        raise ValueError(
            "werewolf graph: the log has no belief records; use a log written by "
            "gt-llm werewolf arena"
        )
    if init["model"] != "gratr":
        raise ValueError(
            f"werewolf graph --player: seat {player} used the {init['model']!r} model; "
            "pick a seat that used gratr"
        )
    beliefs = make_seat_beliefs(
        "gratr", config, player, init["role"], BeliefSettings(**init["settings"])
    )
    model = beliefs.model
    for r in records:
        if r.get("seat") != player or int(r.get("step", -1)) > step:
            continue
        if r["type"] == "belief_evidence":
            model = model.observe_all(Evidence(**e) for e in r["evidence"])
        elif r["type"] == "belief_consult":
            model = model.consult(subjects=r["subjects"]).model
    return model


def run_graph(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf graph LOG --player P --step S --out FILE`` (.png/.svg/.json/.graphml)."""
    from gt_llm.opponents import draw_trust_graph, write_trust_graph_json
    from gt_llm.opponents.gratr import write_trust_graph_graphml

    write = write or say
    suffix = Path(args.out).suffix.lower()
    if suffix not in (".png", ".svg", ".pdf", ".json", ".graphml"):
        raise ValueError(
            "werewolf graph --out: end the file name in .png, .svg, .pdf, .json or .graphml"
        )
    if not Path(args.log).exists():
        raise ValueError(f"werewolf graph: no such log {args.log}")
    records = runner.read_log(args.log)
    model = rebuild_trust_graph(records, args.player, args.step)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".json":
        write_trust_graph_json(model, args.out)
    elif suffix == ".graphml":
        write_trust_graph_graphml(model, args.out)
    else:
        draw_trust_graph(
            model,
            args.out,
            title=f"{prompts.player_name(args.player)}'s trust graph at step {args.step}",
        )
    write(f"trust graph of seat {args.player} at step {args.step} written to {args.out}")
    return 0


def add_graph_parser(sub: argparse._SubParsersAction) -> None:
    """Adds ``graph`` to the ``werewolf`` command group."""
    p = sub.add_parser(
        "graph", help="a seat's GRATR trust graph at a step of an arena log (draw or export)"
    )
    p.add_argument("log", help="a JSONL game log written by gt-llm werewolf arena")
    p.add_argument("--player", type=int, required=True, help="seat id (0-based)")
    p.add_argument("--step", type=int, required=True, help="the game step (log 'step')")
    p.add_argument("--out", required=True, help="FILE.png/.svg/.pdf, FILE.json or FILE.graphml")
    p.set_defaults(func=run_graph)
