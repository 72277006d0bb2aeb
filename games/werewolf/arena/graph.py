"""``gt-llm werewolf graph``: a seat's GRATR trust graph rebuilt from an arena log."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.engine.cli_options import Writer, say
from games.werewolf.play.log import LogError, read_game
from games.werewolf.players import prompts
from games.werewolf.players.beliefs import BeliefSettings, SeatBeliefs, make_seat_beliefs
from games.werewolf.rules import Config

if TYPE_CHECKING:
    from gt_llm.opponents import GratrModel

__all__ = [
    "BeliefReplayError",
    "add_graph_parser",
    "rebuild_trust_graph",
    "replay_seat",
]

#: Largest ``--step``: more steps than any game of the longest table plays.
MAX_STEP = 10**6

#: What replaying damaged belief records can raise (a record the models cannot take).
_DAMAGED = (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError)


class BeliefReplayError(ValueError):
    """A seat's belief records cannot be replayed: the log is damaged (one line)."""


def replay_seat(
    records: Sequence[Mapping[str, Any]], init: Mapping[str, Any]
) -> Iterator[tuple[Mapping[str, Any], SeatBeliefs, Mapping[str, Any] | None]]:
    """Replays one seat's belief records on a fresh provider, as the game ran them.

    Args:
      records: The log (its header first).
      init: The seat's ``belief_init`` record (model, role, settings).

    Yields:
      After each of the seat's ``belief_evidence`` / ``belief_consult`` records:
      the record, the seat's provider after it, and for a consultation the prompt
      fields it gave (``None`` after evidence).

    Raises:
      ValueError: an unknown model or role, or a record the model refuses.
    """
    from gt_llm.opponents import Evidence

    config = Config.from_dict(records[0]["config"])
    seat = int(init["seat"])
    state = make_seat_beliefs(
        str(init["model"]), config, seat, str(init["role"]), BeliefSettings(**init["settings"])
    )
    for r in records:
        if r.get("seat") != seat:
            continue
        if r.get("type") == "belief_evidence":
            model = state.model.observe_all(Evidence(**e) for e in r["evidence"])
            state = dataclasses.replace(state, model=model)
            yield r, state, None
        elif r.get("type") == "belief_consult":
            named = {prompts.player_name(p): p for p in range(config.num_players)}
            subjects = [named[x] for x in r["subjects"] if x in named]
            state, fields = state.consult(phase="decision", subjects=subjects)
            yield r, state, fields["opponent"]


def rebuild_trust_graph(records: Sequence[Mapping[str, Any]], player: int, step: int) -> GratrModel:
    """The GRATR model of ``player`` (seat id) after the log's records up to ``step``.

    Replays the seat's ``belief_evidence`` and ``belief_consult`` records with
    ``step <= step`` on a fresh model built from the ``belief_init`` record.

    Raises:
      ValueError: not an arena log, the seat has no GRATR model, or a bad step.
      BeliefReplayError: the seat's records cannot be replayed (a damaged log).
    """
    if not records or records[0].get("type") != "header":
        raise ValueError("werewolf graph: the log does not start with a header record")
    config = Config.from_dict(records[0]["config"])
    if not 0 <= player < config.num_players:
        raise ValueError(f"werewolf graph --player: must be a seat in 0..{config.num_players - 1}")
    # Belief records of the game's last votes carry the step after the last action.
    last = max((r["step"] for r in records if isinstance(r.get("step"), int)), default=0)
    if not 0 <= step <= last:
        raise ValueError(f"werewolf graph --step: must be a step of the log, 0..{last}; got {step}")
    init = next(
        (r for r in records if r.get("type") == "belief_init" and r.get("seat") == player), None
    )
    if init is None:
        raise ValueError(
            "werewolf graph: the log has no belief records; use a log written by "
            "gt-llm werewolf arena"
        )
    if init.get("model") != "gratr":
        raise ValueError(
            f"werewolf graph --player: seat {player} used the {init.get('model')!r} model; "
            "pick a seat that used gratr"
        )
    try:
        model = make_seat_beliefs(
            "gratr", config, player, init["role"], BeliefSettings(**init["settings"])
        ).model
        for r, state, _ in replay_seat(records, init):
            if int(r.get("step", -1)) > step:
                break  # records are in step order
            model = state.model
    except _DAMAGED as exc:
        raise BeliefReplayError(
            f"seat {player}'s belief records cannot be replayed ({type(exc).__name__}: {exc})"
        ) from None
    from gt_llm.opponents import GratrModel  # loaded already (the seat beliefs use it)

    if not isinstance(model, GratrModel):  # the belief_init record said gratr
        raise ValueError(f"werewolf graph: seat {player}'s model is {model.name!r}, not gratr")
    return model


def write_trust_graph(model: GratrModel, path: str | Path, *, title: str | None = None) -> None:
    """Writes a trust graph by the file's ending: .json, .graphml, or an image (.png/.svg/.pdf).

    Through the project's atomic writer (``runs.atomic``).
    """
    import matplotlib.pyplot as plt
    import networkx as nx

    from gt_llm.opponents import trust_graph_figure, trust_graph_graphml, trust_graph_to_json
    from runs.atomic import atomic_path, atomic_write_json

    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        atomic_write_json(path, trust_graph_to_json(model), indent=1)
        return
    if suffix == ".graphml":
        with atomic_path(path) as tmp:
            nx.write_graphml(trust_graph_graphml(model), tmp)
        return
    fig = trust_graph_figure(model, title=title)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=suffix.lstrip(".") or "png", dpi=120)
    finally:
        plt.close(fig)


def run_graph(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf graph LOG --player P --step S --out FILE`` (.png/.svg/.json/.graphml)."""

    write = write or say
    suffix = Path(args.out).suffix.lower()
    if suffix not in (".png", ".svg", ".pdf", ".json", ".graphml"):
        raise ValueError(
            "werewolf graph --out: end the file name in .png, .svg, .pdf, .json or .graphml"
        )
    if not Path(args.log).exists():
        raise ValueError(f"werewolf graph: no such log {args.log}")
    # The checked reader of `werewolf replay` and `view`: a header of this schema, typed fields.
    records = read_game(args.log)
    try:
        model = rebuild_trust_graph(records, args.player, args.step)
    except BeliefReplayError as exc:
        raise LogError(
            f"{args.log}: {exc}; the log is damaged: re-run the arena or pick another log"
        ) from None
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_trust_graph(
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
    from games.werewolf.config import MAX_PLAYERS
    from gt_llm.argtypes import bounded_int, non_empty

    p.add_argument("log", help="a JSONL game log written by gt-llm werewolf arena")
    p.add_argument(
        "--player",
        type=bounded_int(0, MAX_PLAYERS - 1),
        required=True,
        help="seat id (0-based)",
    )
    p.add_argument(
        "--step",
        type=bounded_int(0, MAX_STEP),
        required=True,
        help=f"the game step (log 'step', at most {MAX_STEP})",
    )
    p.add_argument(
        "--out",
        type=non_empty,
        required=True,
        help="FILE.png/.svg/.pdf, FILE.json or FILE.graphml",
    )
    p.set_defaults(func=run_graph)
