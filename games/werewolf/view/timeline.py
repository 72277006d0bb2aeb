"""A Werewolf JSONL log as the data of its page: a timeline and the seats' opponent models.

:func:`read_records` reads a log through the checked reader of ``werewolf
replay`` (a cut-off last line, as an interrupted game leaves, is dropped with a
warning; unknown record types and fields are kept or ignored; a known field of
the wrong type is refused in one line). :func:`game_data` turns the records
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

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

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
    """The records of a Werewolf log, through the checked reader ``werewolf replay`` uses.

    A last line cut off mid-write (a game interrupted while writing) is dropped
    with a warning; the rest is checked as :func:`games.werewolf.play.log.read_game`
    checks it (a header of this schema, every known field of the right type).

    Raises:
      games.werewolf.play.log.LogError: ``FILE:LINE: what is wrong`` (a
        ``ValueError``): not a Werewolf log, a damaged line or a field of the wrong type.
    """
    from games.werewolf.play.log import read_game

    return read_game(path, cut_tail=True)


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
    timeline = _Timeline()
    for rec in records[1:]:
        timeline.read(rec)
    timeline.finish()
    data: dict[str, Any] = {
        "kind": "werewolf-game",
        "seed": header.get("seed"),
        "config": config,
        "num_players": n,
        "model": header.get("model_label") or header.get("model") or header.get("backend"),
        "players": [p.get("name") for p in header.get("players") or []],
        "roles": [timeline.roles.get(p) for p in range(n)],
        "items": timeline.items,
        "result": timeline.result,
        "arena": timeline.arena,
        "suspicion": timeline.suspicion,
        "last_step": timeline.step,
    }
    if beliefs:
        from games.werewolf.view.beliefs import encode_snapshots, replay_beliefs

        data["beliefs"] = encode_snapshots(replay_beliefs(records))
    return data


class _Timeline:
    """The timeline of one game, built record by record (:func:`game_data`).

    Model calls wait (``calls``) for the record they answered; bids, votes,
    speeches and night actions keep theirs until the public event that shows
    them. Records and events of unknown types are ignored.
    """

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.roles: dict[int, str] = {}
        self.suspicion: list[dict[str, Any]] = []
        self.result: dict[str, Any] | None = None
        self.arena: dict[str, Any] | None = None
        self.step = 0
        self.rnd = 1
        self.calls = _Calls()
        self.statements: dict[int, dict[str, Any]] = {}  # statement id -> its speech item
        self.last_bids: dict[str, Any] | None = None  # the bids item waiting for its winner
        self.speech_of_turn: dict[tuple[int, int], dict[str, Any]] = {}
        self.bid_calls: list[dict[str, Any]] = []
        self.vote_calls: list[dict[str, Any]] = []
        self.night_calls: dict[int, list[dict[str, Any]]] = {}

    def add(self, item: dict[str, Any]) -> dict[str, Any]:
        """Appends a timeline item at the current round and step."""
        item.setdefault("round", self.rnd)
        item["step"] = self.step
        self.items.append(item)
        return item

    def read(self, rec: Mapping[str, Any]) -> None:
        """Takes one record (after the header) into the timeline."""
        if "round" in rec and isinstance(rec.get("round"), int):
            self.rnd = rec["round"]
        handler = _RECORDS.get(str(rec.get("type")))
        if handler is not None:
            handler(self, rec)

    def finish(self) -> None:
        """Shows the model calls no record claimed as one last item."""
        leftover = self.calls.rest() + [c for cs in self.night_calls.values() for c in cs]
        if leftover:
            self.add({"k": "calls", "calls": leftover})

    # --- records ---------------------------------------------------------------

    def llm_call(self, rec: Mapping[str, Any]) -> None:
        """A model call, kept until the record it answered."""
        self.calls.add(rec)

    def action(self, rec: Mapping[str, Any]) -> None:
        """A decision: its calls go to the public event it leads to (or it is an item)."""
        self.step = _int(rec.get("step"), self.step)
        seat = _int(rec.get("player"))
        phase = str(rec.get("phase", ""))
        taken = self.calls.take(seat, _TASKS_OF_ACTION.get(phase, ()))
        act = rec.get("action") or {}
        if phase == "day_bid":
            self.bid_calls.extend(taken)
        elif phase == "day_vote":
            self.vote_calls.extend(taken)
        elif phase == "day_speak":
            self.speech_of_turn[(self.rnd, seat)] = {"calls": taken, "act": act}
        elif phase.startswith("night"):
            # The private event that follows (wolf_vote, protect, check, ...) says
            # what the action did; its raw answers go with it.
            self.night_calls[seat] = self.night_calls.get(seat, []) + taken
        else:
            self.add({"k": "action", "seat": seat, "phase": phase, "action": act, "calls": taken})

    def event(self, rec: Mapping[str, Any]) -> None:
        """A rules event, by kind (:data:`_EVENTS`)."""
        handler = _EVENTS.get(str(rec.get("kind")), _Timeline.other_event)
        handler(self, rec)

    def deception_statement(self, rec: Mapping[str, Any]) -> None:
        """The statement's text and truth, on its speech item."""
        sid = _int(rec.get("statement"))
        item = self.statements.get(sid)
        if item is None:  # a statement without its speech event: keep it anyway
            item = self.add(
                {
                    "k": "speech",
                    "seat": _int(rec.get("speaker")),
                    "act": {},
                    "calls": [],
                    "peers": [],
                    "text": None,
                }
            )
            self.statements[sid] = item
        item["sid"] = sid
        item["text"] = rec.get("text")
        item["truth"] = rec.get("deceptive")
        if rec.get("act"):
            item["act"] = {**item["act"], **rec["act"]}

    def self_analysis(self, rec: Mapping[str, Any]) -> None:
        """The speaker's own analysis, on the speech item."""
        item = self.statements.get(_int(rec.get("statement")))
        if item is not None:
            item["self"] = {k: rec.get(k) for k in ("deceptive", "kind", "confidence")}
            item["calls"] += self.calls.take(_int(rec.get("speaker")), ("werewolf.self_analysis",))

    def peer_analysis(self, rec: Mapping[str, Any]) -> None:
        """A listener's analysis, on the speech item; its suspicion score, on the curve."""
        item = self.statements.get(_int(rec.get("statement")))
        observer = _int(rec.get("observer"))
        peer = {
            k: rec.get(k) for k in ("observer", "deceptive", "confidence", "suspicion", "reasoning")
        }
        got = self.calls.take(observer, ("werewolf.peer_analysis",))
        if got:
            peer["answer"] = got[0].get("answer")
        if item is not None:
            item["peers"].append(peer)
        if rec.get("suspicion") is not None:
            self.suspicion.append(
                {
                    "step": self.step,
                    "observer": observer,
                    "subject": _int(rec.get("speaker")),
                    "value": float(rec["suspicion"]),
                }
            )

    def scratchpad(self, rec: Mapping[str, Any]) -> None:
        """A seat's scratchpad, with the raw answer behind it."""
        seat = _int(rec.get("seat"))
        got = self.calls.take(seat, ("werewolf.scratchpad",))
        self.add(
            {
                "k": "scratchpad",
                "seat": seat,
                "text": rec.get("text"),
                "answer": got[0].get("answer") if got else None,
            }
        )

    def game_result(self, rec: Mapping[str, Any]) -> None:
        """The ``result`` record: the outcome, every role, a digest of the deception summary."""
        result = {k: v for k, v in rec.items() if k not in ("type", "deception")}
        if isinstance(rec.get("roles"), list):
            for p, r in enumerate(rec["roles"]):
                self.roles[p] = str(r)
        result["deception"] = _deception_digest(rec.get("deception"))
        self.result = result

    def arena_record(self, rec: Mapping[str, Any]) -> None:
        """The arena's game record (models, seats, winner)."""
        self.arena = {k: rec.get(k) for k in _ARENA_FIELDS}

    def chance(self, rec: Mapping[str, Any]) -> None:
        """A chance outcome: only its step counts."""
        self.step = max(self.step, _int(rec.get("step"), self.step))

    # --- events ------------------------------------------------------------------

    def role_event(self, rec: Mapping[str, Any]) -> None:
        """A seat's role (not an item: the roster shows it)."""
        self.roles[_int(rec.get("player"))] = str(rec.get("role"))

    def phase_event(self, rec: Mapping[str, Any]) -> None:
        """A new phase, after any calls still unclaimed."""
        stray = self.calls.rest()  # answers no record claimed (e.g. belief extraction)
        if stray:
            self.add({"k": "calls", "calls": stray})
        self.add({"k": "phase", "phase": rec.get("phase")})

    def deaths_event(self, rec: Mapping[str, Any]) -> None:
        """Night deaths."""
        self.add(
            {"k": "deaths", "players": list(rec.get("players") or []), "roles": rec.get("roles")}
        )

    def exile_event(self, rec: Mapping[str, Any]) -> None:
        """The day's exile."""
        self.add({"k": "exile", "player": rec.get("player"), "roles": rec.get("roles")})

    def bids_event(self, rec: Mapping[str, Any]) -> None:
        """A bidding round, with the bid calls; its winner comes with the next speech."""
        self.last_bids = self.add(
            {
                "k": "bids",
                "turn": rec.get("turn"),
                "bids": _seat_map(rec.get("bids")),
                "calls": self.bid_calls,
            }
        )
        self.bid_calls = []

    def speech_event(self, rec: Mapping[str, Any]) -> None:
        """A speech item (its calls and act from the turn's action); the bids' winner."""
        seat = _int(rec.get("player"))
        pending = self.speech_of_turn.pop((self.rnd, seat), {"calls": []})
        item = self.add(
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
        if self.last_bids is not None:
            self.last_bids["winner"] = seat
            self.last_bids = None
        self.statements[len(self.statements)] = item

    def votes_event(self, rec: Mapping[str, Any]) -> None:
        """The day's ballots, with the vote calls."""
        self.add({"k": "votes", "votes": _seat_map(rec.get("votes")), "calls": self.vote_calls})
        self.vote_calls = []

    def game_over_event(self, rec: Mapping[str, Any]) -> None:
        """The roles revealed at the end (those not known yet)."""
        for p, r in _seat_map(rec.get("roles")).items():
            self.roles.setdefault(p, str(r))

    def ignored_event(self, rec: Mapping[str, Any]) -> None:
        """Nothing: ``speaker`` (the speech says who spoke), ``my_bid`` / ``my_vote``
        (the public bids / votes carry the same numbers)."""

    def other_event(self, rec: Mapping[str, Any]) -> None:
        """Any other event, shown as is (private ones with the night action's calls)."""
        data = {k: v for k, v in rec.items() if k not in ("type", "kind", "round")}
        hidden = rec.get("visible_to") is not None
        item = self.add({"k": "event", "kind": rec.get("kind"), "data": data, "hidden": hidden})
        actor = _int(rec.get("player"))
        if hidden and self.night_calls.get(actor):
            item["calls"] = self.night_calls.pop(actor)


_Handler = Callable[[_Timeline, Mapping[str, Any]], None]

#: What each record type adds; other types (``belief_*``, later additions) are ignored.
_RECORDS: dict[str, _Handler] = {
    "llm_call": _Timeline.llm_call,
    "action": _Timeline.action,
    "event": _Timeline.event,
    "deception_statement": _Timeline.deception_statement,
    "self_analysis": _Timeline.self_analysis,
    "peer_analysis": _Timeline.peer_analysis,
    "scratchpad": _Timeline.scratchpad,
    "result": _Timeline.game_result,
    "arena": _Timeline.arena_record,
    "chance": _Timeline.chance,
}

#: What each event kind adds; any other kind is :meth:`_Timeline.other_event`.
_EVENTS: dict[str, _Handler] = {
    "role": _Timeline.role_event,
    "phase": _Timeline.phase_event,
    "deaths": _Timeline.deaths_event,
    "exile": _Timeline.exile_event,
    "bids": _Timeline.bids_event,
    "speaker": _Timeline.ignored_event,
    "speech": _Timeline.speech_event,
    "votes": _Timeline.votes_event,
    "game_over": _Timeline.game_over_event,
    "my_bid": _Timeline.ignored_event,
    "my_vote": _Timeline.ignored_event,
}

#: The fields of an ``arena`` record the page shows.
_ARENA_FIELDS = ("index", "seed", "wolf_model", "leader_model", "seats", "winner", "rounds")


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
