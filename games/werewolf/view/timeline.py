"""A Werewolf JSONL log as the data of its page: a timeline and the seats' opponent models.

:func:`read_records` reads a log defensively (a cut-off last line, as an
interrupted game leaves, is dropped with a warning; unknown record types and
fields are kept or ignored, never fatal). :func:`game_data` turns the records
into the JSON the game page renders:

* ``items`` — the timeline in log order: phases, night actions (private: shown
  only when the page's "reveal roles" is ticked), deaths, bids, statements (the
  speaker, tone and speech act, the text, the truth of the deception record,
  the speaker's self analysis, every listener's peer analysis), votes, exiles,
  scratchpads and the result. Each item keeps the raw model answers behind it
  (``calls``), opened on demand in the page.
* ``beliefs`` — per step, each seat's opponent model after the records of that
  step (see :mod:`games.werewolf.view.beliefs`), and the listeners' suspicion
  scores from their peer analyses (every LLM seat has those).
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["game_data", "log_counts", "read_records"]

#: Which call tasks a record of each type answers (its raw answers go with it).
_TASKS_OF_ACTION = {
    "night_wolves": ("werewolf.night_kill",),
    "night_doctor": ("werewolf.night_protect",),
    "night_guard": ("werewolf.night_protect",),
    "night_seer": ("werewolf.night_check",),
    "night_witch_save": ("werewolf.night_witch",),
    "night_witch_poison": ("werewolf.night_witch",),
    "day_bid": ("werewolf.bid",),
    "day_speak": ("werewolf.speech_act", "werewolf.statement"),
    "day_vote": ("werewolf.vote",),
}


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a JSONL log.

    A last line that is not valid JSON (a game interrupted while writing) is
    dropped with a warning.

    Raises:
      ValueError: the file is empty, does not start with a Werewolf header, or
        has a broken line before the last.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    records: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            if n == len(lines):
                logger.warning("%s: the last line is cut off (%s); dropped", path, e)
                break
            raise ValueError(f"werewolf view: {path} line {n} is not JSON ({e})") from e
        if isinstance(rec, dict):
            records.append(rec)
    if not records or records[0].get("type") != "header" or records[0].get("game") != "werewolf":
        raise ValueError(
            f"werewolf view: {path} is not a Werewolf log (no header record); give a log "
            "written by `gt-llm werewolf play --log` or a results folder"
        )
    return records


def _int(x: Any, default: int = -1) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        return default


def _seat_map(d: Mapping[str, Any] | None) -> dict[int, Any]:
    return {_int(k): v for k, v in (d or {}).items()}


def _call(rec: Mapping[str, Any]) -> dict[str, Any]:
    out = {"seat": rec.get("seat"), "task": rec.get("task"), "answer": rec.get("answer")}
    for k in ("cached", "fallback", "error", "reasks", "messages"):
        if k in rec:
            out[k] = rec[k]
    return out


class _Calls:
    """Model calls waiting for the record they answered, per seat."""

    def __init__(self) -> None:
        self.pending: dict[int, list[dict[str, Any]]] = defaultdict(list)

    def add(self, rec: Mapping[str, Any]) -> None:
        self.pending[_int(rec.get("seat"))].append(_call(rec))

    def take(self, seat: int, tasks: Iterable[str]) -> list[dict[str, Any]]:
        tasks = tuple(tasks)
        mine = self.pending.get(seat, [])
        got = [c for c in mine if str(c.get("task")) in tasks]
        self.pending[seat] = [c for c in mine if str(c.get("task")) not in tasks]
        return got

    def rest(self) -> list[dict[str, Any]]:
        out = [c for calls in self.pending.values() for c in calls]
        self.pending.clear()
        return out


def game_data(records: Sequence[Mapping[str, Any]], *, beliefs: bool = True) -> dict[str, Any]:
    """The page data of one game (see the module docstring).

    Args:
      records: The log's records (:func:`read_records`).
      beliefs: Replay the opponent models of the seats that have one (arena logs).
    """
    header = records[0]
    config = header.get("config") or {}
    n = len(header.get("players") or []) or sum((config.get("roles") or {}).values())
    roles: dict[int, str] = {}
    items: list[dict[str, Any]] = []
    statements: dict[int, dict[str, Any]] = {}
    calls = _Calls()
    step = 0
    rnd = 1
    last_bids: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    arena: dict[str, Any] | None = None
    suspicion: list[dict[str, Any]] = []
    speech_of_turn: dict[tuple[int, int], dict[str, Any]] = {}
    bid_calls: list[dict[str, Any]] = []
    vote_calls: list[dict[str, Any]] = []
    night_calls: dict[int, list[dict[str, Any]]] = {}

    def add(item: dict[str, Any]) -> dict[str, Any]:
        item.setdefault("round", rnd)
        item["step"] = step
        items.append(item)
        return item

    for rec in records[1:]:
        t = rec.get("type")
        if "round" in rec and isinstance(rec.get("round"), int):
            rnd = rec["round"]
        if t == "llm_call":
            calls.add(rec)
        elif t == "action":
            step = _int(rec.get("step"), step)
            seat = _int(rec.get("player"))
            phase = str(rec.get("phase", ""))
            taken = calls.take(seat, _TASKS_OF_ACTION.get(phase, ()))
            act = rec.get("action") or {}
            if phase == "day_bid":
                bid_calls.extend(taken)
            elif phase == "day_vote":
                vote_calls.extend(taken)
            elif phase == "day_speak":
                speech_of_turn[(rnd, seat)] = {"calls": taken, "act": act}
            elif phase.startswith("night"):
                # The private event that follows (wolf_vote, protect, check, ...) says
                # what the action did; its raw answers go with it.
                night_calls[seat] = night_calls.get(seat, []) + taken
            else:
                add({"k": "action", "seat": seat, "phase": phase, "action": act, "calls": taken})
        elif t == "event":
            kind = rec.get("kind")
            data = {k: v for k, v in rec.items() if k not in ("type", "kind", "round")}
            if kind == "role":
                roles[_int(rec.get("player"))] = str(rec.get("role"))  # the roster shows it
            elif kind == "phase":
                stray = calls.rest()  # answers no record claimed (e.g. belief extraction)
                if stray:
                    add({"k": "calls", "calls": stray})
                add({"k": "phase", "phase": rec.get("phase")})
            elif kind == "deaths":
                add(
                    {
                        "k": "deaths",
                        "players": list(rec.get("players") or []),
                        "roles": rec.get("roles"),
                    }
                )
            elif kind == "exile":
                add({"k": "exile", "player": rec.get("player"), "roles": rec.get("roles")})
            elif kind == "bids":
                last_bids = add(
                    {
                        "k": "bids",
                        "turn": rec.get("turn"),
                        "bids": _seat_map(rec.get("bids")),
                        "calls": bid_calls,
                    }
                )
                bid_calls = []
            elif kind == "speaker":
                pass  # the speech that follows says who spoke
            elif kind == "speech":
                seat = _int(rec.get("player"))
                pending = speech_of_turn.pop((rnd, seat), {"calls": []})
                item = add(
                    {
                        "k": "speech",
                        "seat": seat,
                        "turn": rec.get("turn"),
                        "act": rec.get("act") or pending.get("act") or {},
                        "calls": pending["calls"],
                        "peers": [],
                        "text": None,
                    }
                )
                if last_bids is not None:
                    last_bids["winner"] = seat
                    last_bids = None
                statements[len(statements)] = item
            elif kind == "votes":
                add({"k": "votes", "votes": _seat_map(rec.get("votes")), "calls": vote_calls})
                vote_calls = []
            elif kind == "game_over":
                for p, r in _seat_map(rec.get("roles")).items():
                    roles.setdefault(p, str(r))
            elif kind in ("my_bid", "my_vote"):
                pass  # the public bids / votes events carry the same numbers
            else:
                hidden = rec.get("visible_to") is not None
                item = add({"k": "event", "kind": kind, "data": data, "hidden": hidden})
                actor = _int(rec.get("player"))
                if hidden and night_calls.get(actor):
                    item["calls"] = night_calls.pop(actor)
        elif t == "deception_statement":
            sid = _int(rec.get("statement"))
            item = statements.get(sid)
            if item is None:  # a statement without its speech event: keep it anyway
                item = add(
                    {
                        "k": "speech",
                        "seat": _int(rec.get("speaker")),
                        "act": {},
                        "calls": [],
                        "peers": [],
                        "text": None,
                    }
                )
                statements[sid] = item
            item["sid"] = sid
            item["text"] = rec.get("text")
            item["truth"] = rec.get("deceptive")
            if rec.get("act"):
                item["act"] = {**item["act"], **rec["act"]}
        elif t == "self_analysis":
            item = statements.get(_int(rec.get("statement")))
            if item is not None:
                item["self"] = {k: rec.get(k) for k in ("deceptive", "kind", "confidence")}
                item["calls"] += calls.take(_int(rec.get("speaker")), ("werewolf.self_analysis",))
        elif t == "peer_analysis":
            item = statements.get(_int(rec.get("statement")))
            observer = _int(rec.get("observer"))
            peer = {
                k: rec.get(k)
                for k in ("observer", "deceptive", "confidence", "suspicion", "reasoning")
            }
            got = calls.take(observer, ("werewolf.peer_analysis",))
            if got:
                peer["answer"] = got[0].get("answer")
            if item is not None:
                item["peers"].append(peer)
            if rec.get("suspicion") is not None:
                suspicion.append(
                    {
                        "step": step,
                        "observer": observer,
                        "subject": _int(rec.get("speaker")),
                        "value": float(rec["suspicion"]),
                    }
                )
        elif t == "scratchpad":
            seat = _int(rec.get("seat"))
            got = calls.take(seat, ("werewolf.scratchpad",))
            add(
                {
                    "k": "scratchpad",
                    "seat": seat,
                    "text": rec.get("text"),
                    "answer": got[0].get("answer") if got else None,
                }
            )
        elif t == "result":
            result = {k: v for k, v in rec.items() if k not in ("type", "deception")}
            if isinstance(rec.get("roles"), list):
                for p, r in enumerate(rec["roles"]):
                    roles[p] = str(r)
            result["deception"] = _deception_digest(rec.get("deception"))
        elif t == "arena":
            arena = {
                k: rec.get(k)
                for k in (
                    "index",
                    "seed",
                    "wolf_model",
                    "leader_model",
                    "seats",
                    "winner",
                    "rounds",
                )
            }
        elif t in ("chance", "belief_init", "belief_evidence", "belief_consult"):
            if t == "chance":
                step = max(step, _int(rec.get("step"), step))
        # Unknown record types (fields other helpers add later) are ignored.
    leftover = calls.rest() + [c for cs in night_calls.values() for c in cs]
    if leftover:
        add({"k": "calls", "calls": leftover})
    data: dict[str, Any] = {
        "kind": "werewolf-game",
        "seed": header.get("seed"),
        "config": config,
        "num_players": n,
        "model": header.get("model_label") or header.get("model") or header.get("backend"),
        "players": [p.get("name") for p in header.get("players") or []],
        "roles": [roles.get(p) for p in range(n)],
        "items": items,
        "result": result,
        "arena": arena,
        "suspicion": suspicion,
        "last_step": step,
    }
    if beliefs:
        from games.werewolf.view.beliefs import encode_snapshots, replay_beliefs

        data["beliefs"] = encode_snapshots(replay_beliefs(records))
    return data


def _deception_digest(d: Any) -> dict[str, Any] | None:
    if not isinstance(d, Mapping):
        return None
    return {k: d.get(k) for k in ("total_statements", "peer_detection", "self_detection")}


def log_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """What a page must show, counted straight from the log: statements, votes, deaths.

    ``statements`` counts ``speech`` events, ``votes`` the ballots of every
    ``votes`` event, ``deaths`` the players of every ``deaths`` event (night
    deaths) and ``exiles`` the ``exile`` events with a player.
    """
    counts = {"statements": 0, "votes": 0, "deaths": 0, "exiles": 0}
    for r in records:
        if r.get("type") != "event":
            continue
        kind = r.get("kind")
        if kind == "speech":
            counts["statements"] += 1
        elif kind == "votes":
            counts["votes"] += len(r.get("votes") or {})
        elif kind == "deaths":
            counts["deaths"] += len([p for p in r.get("players") or [] if p is not None])
        elif kind == "exile" and r.get("player") is not None:
            counts["exiles"] += 1
    return counts
