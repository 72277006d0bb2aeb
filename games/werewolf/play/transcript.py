"""Readable text of Werewolf log records, for a spectator or for one seat's eyes.

:func:`describe` turns one log record (see :mod:`games.werewolf.play.runner`) into a line
of transcript, or ``None`` when there is nothing to show.  With ``seat`` set, private
events the seat did not see are hidden (what a human player sees); without it the
transcript is a spectator's, who sees everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from games.werewolf.rules import Event, action_from_json, action_to_string
from gt_llm.safety import terminal_safe

__all__ = ["describe", "describe_event"]


def _players(ps) -> str:
    return ", ".join(f"P{p}" for p in ps) or "nobody"


def describe_event(event: Event, seat: int | None = None) -> str | None:
    """One transcript line for a rules event (None: hidden from ``seat`` or not shown)."""
    return describe({"type": "event", **event.to_json()}, seat)


def describe(record: Mapping[str, Any], seat: int | None = None) -> str | None:
    """One readable line (or a few) for a log record, or ``None`` for records not shown.

    Model text (statements, names) is escaped as ``gt-llm ask`` does
    (:func:`gt_llm.safety.terminal_safe`): an answer holding ESC, OSC, BEL or CR
    cannot clear the screen, set the window title or overwrite a line.

    Args:
      record: A log record.
      seat: Show only what this seat knows (``None``: the spectator's view).
    """
    text = _describe(record, seat)
    return None if text is None else terminal_safe(text)


def _describe(record: Mapping[str, Any], seat: int | None = None) -> str | None:
    """One transcript line for ``record``, unescaped (None: nothing to show to this viewer)."""
    kind = record.get("type")
    if kind == "header":
        names = sorted({p["name"] for p in record["players"]})
        roles = ", ".join(f"{n} {r}" for r, n in record["config"]["roles"].items() if n)
        return (
            f"Werewolf: {len(record['players'])} players ({roles}); seed {record['seed']}; "
            f"players: {', '.join(names)}\n"
            # Seats are numbered from 0 like OpenSpiel players; the prompts and the
            # players' own words number them from 1, as people do.
            f"(seat P0 is called Player 1 in the players' statements, P1 Player 2, and so on)"
        )
    if kind == "result":
        return (
            f"Result: {record['winner']} after {record['rounds']} round(s), {record['steps']} steps"
        )
    if kind == "deception_statement":  # the LLM player's words (public)
        return f'      "{record["text"]}"'
    if kind != "event":
        return None
    vis = record.get("visible_to")
    if seat is not None and vis is not None and seat not in vis:
        return None
    e, r = record["kind"], record["round"]
    if e == "role":
        who = "You are" if seat == record["player"] else f"P{record['player']} is"
        return f"{who} the {record['role']}"
    if e == "partners":
        return f"Werewolves: {_players(record['werewolves'])}"
    if e == "phase":
        return f"== {record['phase'].capitalize()} {r} =="
    if e == "wolf_vote":
        return f"  P{record['player']} (werewolf) wants to kill P{record['target']}"
    if e == "victim":
        return f"  tonight's victim: P{record['target']}"
    if e == "witch_victim":
        return f"  the witch learns tonight's victim: P{record['target']}"
    if e == "protect":
        return f"  P{record['player']} protects P{record['target']}"
    if e == "check":
        return f"  P{record['player']} (seer) checks P{record['target']}: {record['result']}"
    if e == "witch_save":
        return f"  P{record['player']} (witch) saves the victim" if record["used"] else None
    if e == "witch_poison":
        t = record["target"]
        return None if t is None else f"  P{record['player']} (witch) poisons P{t}"
    if e == "deaths":
        roles = record.get("roles", {})
        dead = [
            f"P{p}" + (f" ({roles[str(p)]})" if str(p) in roles else "") for p in record["players"]
        ]
        return f"Dawn: {', '.join(dead) or 'nobody'} died"
    if e == "my_bid":
        return f"  you bid {record['amount']}" if seat is not None else None
    if e == "bids":
        bids = " ".join(f"P{p}:{b}" for p, b in record["bids"].items())
        return f"  bids for turn {record['turn'] + 1}: {bids}"
    if e == "speech":
        act = action_from_json(record["act"])
        return f"  P{record['player']} {action_to_string(act)}"
    if e == "my_vote":
        return f"  you vote for P{record['target']}" if seat is not None else None
    if e == "votes":
        return "  votes: " + " ".join(f"P{v}->P{t}" for v, t in record["votes"].items())
    if e == "exile":
        p = record["player"]
        if p is None:
            return "  nobody is exiled"
        role = record.get("roles", {}).get(str(p))
        return f"  P{p} is exiled" + (f" ({role})" if role else "")
    if e == "game_over":
        roles = " ".join(f"P{p}:{x}" for p, x in record["roles"].items())
        return f"Game over: {record['winner']}. Roles: {roles}"
    return None  # "speaker" and kinds added later
