"""Werewolf game logs: the atomic JSONL writer, the checked reader and replay.

A log is written through :class:`GameLog` (the project's one atomic writer:
temporary file, fsync, rename on success; a failed game keeps its records under
:func:`partial_path`). :func:`read_log` returns the records, each checked (a
JSON object with a ``type``; the fields readers use of the right type),
:func:`read_game` also checks the header (a Werewolf log of :data:`SCHEMA`), and
:func:`replay` re-applies a log's chance outcomes and actions to the rules and
checks that it ends in the logged state. Every reader of a log (``replay``,
``summary``, ``graph``, ``view``, the arena's report) goes through them, so a
damaged log is refused in one line, ``FILE:LINE: what is wrong; the fix``. The
record types are listed in :mod:`games.werewolf.play.runner`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from games.werewolf import rules
from games.werewolf.rules import CHANCE, Config, GameState, action_from_json, encode_action
from runs.atomic import atomic_path, checked_size, disk_full, open_regular
from runs.readers import (
    BOOL,
    INT,
    NUMBER,
    OBJECT,
    TEXT,
    Shape,
    check_fields,
    list_of,
    map_of,
    optional,
)

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_LOG_BYTES",
    "MAX_RECORD_BYTES",
    "SCHEMA",
    "GameLog",
    "LogError",
    "check_header",
    "partial_path",
    "read_game",
    "read_log",
    "replay",
    "state_digest",
]

#: The log schema :func:`replay` reads (the header's ``schema``).
SCHEMA = 1


def state_digest(state: GameState) -> str:
    """A SHA-256 over everything that defines a state (roles, deaths, events, winner)."""
    body = {
        "roles": state.roles,
        "alive": state.alive,
        "round": state.round,
        "phase": state.phase,
        "winner": state.winner,
        "steps": state.num_steps,
        "events": [e.to_json() for e in state.events],
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def partial_path(path: str | Path) -> Path:
    """Where the log of a game that failed is kept: ``game.jsonl`` -> ``game.jsonl.partial``."""
    p = Path(path)
    return p.with_name(p.name + ".partial")


class GameLog:
    """A JSONL log written to a temporary file beside ``path``, renamed into place on success.

    Through the project's one atomic writer (:func:`runs.atomic.atomic_path`:
    the file is fsync-ed before the rename). :meth:`close` puts a finished log in
    place; :meth:`abort` (or leaving the ``with`` block with an exception) keeps
    what was written under :func:`partial_path` and leaves any previous log at
    ``path`` as it was, so a log under its final name is always a whole game.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir() or str(path).endswith(("/", "\\")):
            raise ValueError(
                f"GameLog: {str(path)!r} is a folder; pass a file name such as game.jsonl"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writing = atomic_path(self.path, partial=partial_path(self.path))
        self._tmp = self._writing.__enter__()
        self._fh: IO[str] | None = self._tmp.open("w", encoding="utf-8")

    def write(self, type: str, **payload: Any) -> None:
        """Append one record ``{"type": type, **payload}``."""
        if self._fh is None:
            raise ValueError(f"GameLog.write: {self.path} is closed")
        try:
            self._fh.write(json.dumps({"type": type, **payload}) + "\n")
        except OSError as exc:
            full = disk_full(exc, self.path)  # one line naming the log and the fix
            if full is None:
                raise
            raise full from None

    def close(self) -> None:
        """Puts the finished log in place (fsync, then rename); drops a stale partial log."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except BaseException as exc:  # e.g. a full disk on the last flush
                self._writing.__exit__(type(exc), exc, exc.__traceback__)
                raise
            self._writing.__exit__(None, None, None)
            # The game is whole now: an earlier failed attempt's partial log is stale.
            partial_path(self.path).unlink(missing_ok=True)

    def abort(self) -> None:
        """Keeps what was written as the partial log; the final name is left untouched."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            with contextlib.suppress(OSError):
                fh.close()
            failure = RuntimeError("game failed")
            with contextlib.suppress(RuntimeError):
                self._writing.__exit__(RuntimeError, failure, None)

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


#: Largest log accepted by the readers (a long LLM game with prompts is a few MB).
MAX_LOG_BYTES = 512 * 1024 * 1024
#: Largest single record (one prompt and answer is far below).
MAX_RECORD_BYTES = 8 * 1024 * 1024


class LogError(ValueError):
    """A log file is damaged or not a Werewolf log: ``FILE:LINE: what is wrong`` (one line)."""


#: The end of a damaged log's message: what to do about it.
_DAMAGED = "the log is damaged: re-run the game or delete the log"


#: A seat number as an object key (``"3"``): how the rules write votes, bids and roles.
_SEAT_KEY = Shape(lambda k: isinstance(k, str) and k.isascii() and k.isdigit(), "seat numbers")
_SEAT = optional(INT)
_SEATS = list_of(_SEAT)
_ROLES = map_of(TEXT, keys=_SEAT_KEY)
_PLAYER_TARGET = {"player": INT, "target": _SEAT}

#: The fields readers use, by record type (events by ``event/<kind>``), and what
#: each must hold. Absent fields pass (later layers add records and fields;
#: readers skip what they do not know); a present field of the wrong type is a
#: damaged log, refused here so that no reader trips over it later.
_FIELDS: dict[str, dict[str, Shape]] = {
    "*": {"step": INT, "round": INT},
    "header": {
        "schema": INT,
        "game": TEXT,
        "config": OBJECT,
        "players": list_of(OBJECT),
        "model_label": TEXT,
        "model": TEXT,
        "backend": TEXT,
    },
    "chance": {"phase": TEXT},
    "action": {"player": INT, "phase": TEXT, "action": OBJECT, "id": INT},
    "event": {"kind": TEXT, "visible_to": list_of(INT)},
    "event/role": {"player": INT, "role": TEXT},
    "event/partners": {"werewolves": list_of(INT)},
    "event/wolf_vote": _PLAYER_TARGET,
    "event/protect": _PLAYER_TARGET,
    "event/check": {**_PLAYER_TARGET, "result": TEXT},
    "event/victim": {"target": _SEAT},
    "event/witch_victim": {"target": _SEAT},
    "event/witch_save": {"player": INT, "used": BOOL},
    "event/witch_poison": _PLAYER_TARGET,
    "event/my_bid": {"player": INT, "amount": NUMBER, "turn": INT},
    "event/my_vote": _PLAYER_TARGET,
    "event/phase": {"phase": TEXT},
    "event/deaths": {"players": _SEATS, "roles": _ROLES},
    "event/exile": {"player": _SEAT, "roles": _ROLES},
    "event/bids": {"turn": INT, "bids": map_of(NUMBER, keys=_SEAT_KEY)},
    "event/speaker": {"player": INT, "turn": INT},
    "event/speech": {"player": INT, "turn": INT, "act": OBJECT},
    "event/votes": {"votes": map_of(_SEAT, keys=_SEAT_KEY)},
    "event/game_over": {"winner": optional(TEXT), "roles": _ROLES},
    "result": {
        "winner": optional(TEXT),
        "rounds": INT,
        "steps": INT,
        "roles": list_of(TEXT),
        "digest": TEXT,
        "model_calls": INT,
        "parse_stats": OBJECT,
        "defaulted": INT,
        "deception": optional(OBJECT),
    },
    "llm_call": {"seat": _SEAT, "task": TEXT, "answer": optional(TEXT), "cached": BOOL},
    "deception_statement": {
        "statement": INT,
        "speaker": INT,
        "text": optional(TEXT),
        "act": optional(OBJECT),
        "deceptive": optional(BOOL),
    },
    "self_analysis": {
        "statement": INT,
        "speaker": INT,
        "deceptive": BOOL,
        "kind": optional(TEXT),
        "confidence": optional(NUMBER),
    },
    "peer_analysis": {
        "statement": INT,
        "observer": INT,
        "speaker": INT,
        "deceptive": BOOL,
        "confidence": optional(NUMBER),
        "suspicion": optional(NUMBER),
        "reasoning": optional(TEXT),
    },
    "scratchpad": {"seat": INT, "text": optional(TEXT)},
    "arena": {
        "index": INT,
        "seed": INT,
        "rounds": INT,
        "wolf_model": TEXT,
        "leader_model": TEXT,
        "seats": list_of(TEXT),
        "winner": optional(TEXT),
        "winning_model": optional(TEXT),
    },
    "belief_init": {"seat": INT, "model": TEXT, "role": TEXT, "settings": OBJECT},
    "belief_evidence": {"seat": INT, "evidence": list_of(OBJECT)},
    "belief_consult": {"seat": INT, "subjects": list_of(TEXT)},
}


def _check_record(where: str, record: Mapping[str, Any]) -> None:
    """Refuses a record whose known fields have the wrong type (see :data:`_FIELDS`)."""
    kind = record["type"]
    names = ["*", kind]
    label = f"{kind} record"
    if kind == "event" and isinstance(record.get("kind"), str):
        names.append(f"event/{record['kind']}")
        label = f"{record['kind']} event"
    label = f"{'an' if label[:1] in 'aeiou' else 'a'} {label}"
    for name in names:
        try:
            check_fields(record, _FIELDS.get(name, {}))
        except TypeError as exc:
            raise LogError(f"{where}: {label}: {exc}; {_DAMAGED}") from None


def _no_constant(name: str) -> Any:
    # json.loads takes NaN and Infinity, which are not JSON (and no writer of ours makes them).
    raise ValueError(f"{name} is not valid JSON")


def _numbered_records(
    path: str | os.PathLike[str], *, cut_tail: bool = False
) -> list[tuple[int, dict[str, Any]]]:
    p = Path(path)
    try:
        checked_size(p, MAX_LOG_BYTES, what="a log", error=LogError)
    except FileNotFoundError:
        raise LogError(f"{p}: no such log") from None
    out: list[tuple[int, dict[str, Any]]] = []
    with open_regular(p, MAX_LOG_BYTES, what="a log", error=LogError) as fh:
        for lineno, raw in enumerate(fh, 1):
            if len(raw) > MAX_RECORD_BYTES:
                raise LogError(f"{p}:{lineno}: a record of {len(raw):,} bytes; the log is damaged")
            if not raw.strip():
                continue
            where = f"{p}:{lineno}"
            try:
                record = json.loads(raw, parse_constant=_no_constant)
            except UnicodeDecodeError as exc:
                raise LogError(f"{where}: not UTF-8 at byte {exc.start}; {_DAMAGED}") from None
            except json.JSONDecodeError as exc:
                if cut_tail and not raw.endswith(b"\n"):
                    # Only the last line can lack its newline: a game stopped mid-write.
                    logger.warning("%s: the last line is cut off (%s); dropped", where, exc.msg)
                    break
                cut = "" if raw.endswith(b"\n") else " (a truncated last line)"
                raise LogError(
                    f"{where}: not valid JSON ({exc.msg} at column {exc.colno}){cut}; {_DAMAGED}"
                ) from None
            except ValueError as exc:  # NaN or Infinity (_no_constant)
                raise LogError(f"{where}: {exc}; {_DAMAGED}") from None
            except RecursionError:
                raise LogError(f"{where}: JSON nested too deeply; {_DAMAGED}") from None
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                raise LogError(
                    f"{where}: a record must be a JSON object with a string 'type'; {_DAMAGED}"
                )
            _check_record(where, record)
            out.append((lineno, record))
    return out


def read_log(path: str | os.PathLike[str], *, cut_tail: bool = False) -> list[dict[str, Any]]:
    """The records of a JSONL log, each checked to be a JSON object with a ``type``.

    The fields readers use are checked too (a seat is a whole number, ``votes``
    an object of seats, ...): a wrong type is refused here, in one line, rather
    than tripping a reader later.

    Args:
      path: The log.
      cut_tail: Drop a last line cut off mid-write (a game interrupted while
        writing) with a warning instead of refusing the log (the viewer shows
        unfinished games).

    Raises:
      LogError: ``FILE:LINE: ...`` for a truncated or invalid line, a record that
        is not an object with a string ``type``, a known field of the wrong type,
        a nesting too deep, or a file or record larger than :data:`MAX_LOG_BYTES`
        / :data:`MAX_RECORD_BYTES`.
    """
    return [record for _, record in _numbered_records(path, cut_tail=cut_tail)]


def check_header(path: str | os.PathLike[str], records: list[tuple[int, dict[str, Any]]]) -> Config:
    """The game's settings from a log's header, checked: a Werewolf log of :data:`SCHEMA`.

    Raises:
      LogError: ``FILE:LINE: ...``: no header first, another game or schema, or a
        config the rules refuse.
    """
    if not records or records[0][1].get("type") != "header":
        raise LogError(
            f"{path}:1: not a Werewolf log: it does not start with a header record; give a "
            "log written by gt-llm werewolf play or arena"
        )
    lineno, header = records[0]
    if header.get("schema") != SCHEMA or header.get("game") != "werewolf":
        raise LogError(
            f"{path}:{lineno}: not a werewolf log of schema {SCHEMA} (game "
            f"{header.get('game')!r}, schema {header.get('schema')!r}); this version reads "
            f"schema {SCHEMA} only"
        )
    try:
        return Config.from_dict(header.get("config"))
    except (ValueError, TypeError, AttributeError) as exc:
        raise LogError(f"{path}:{lineno}: bad header config ({exc})") from None


def read_game(path: str | os.PathLike[str], *, cut_tail: bool = False) -> list[dict[str, Any]]:
    """:func:`read_log` and :func:`check_header`: the records of a Werewolf log this version reads.

    Raises:
      LogError: as :func:`read_log` and :func:`check_header`.
    """
    records = _numbered_records(path, cut_tail=cut_tail)
    check_header(path, records)
    return [record for _, record in records]


def replay(path: str | Path) -> GameState:
    """Re-apply a log's chance outcomes and actions; check it ends in the logged state.

    Raises:
        LogError: (a ValueError) ``FILE:LINE: ...``: a damaged line (see
            :func:`read_log`), no header, a record of the wrong shape, an illegal
            move, no result record (an unfinished game: its log says nothing about
            the end), or a final state (digest or winner) different from the
            logged result.
    """
    records = _numbered_records(path)
    state = rules.initial_state(check_header(path, records))
    result = None
    for lineno, rec in records[1:]:
        try:
            if rec["type"] == "chance":
                outcome = rec["outcome"]
                if not isinstance(outcome, int) or isinstance(outcome, bool):
                    raise TypeError(f"outcome must be a whole number, got {outcome!r}")
                state = rules.apply(state, CHANCE, outcome)
            elif rec["type"] == "action":
                if not isinstance(rec["action"], dict) or not isinstance(rec["player"], int):
                    raise TypeError("'action' must be an object and 'player' a seat number")
                action = action_from_json(rec["action"])
                if encode_action(state.num_players, action) != rec["id"]:
                    raise ValueError(f"action id mismatch at step {rec.get('step')}")
                state = rules.apply(state, rec["player"], action)
            elif rec["type"] == "result":
                result = (lineno, rec)
        except KeyError as exc:
            raise LogError(f"{path}:{lineno}: a {rec['type']} record without {exc}") from None
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            raise LogError(f"{path}:{lineno}: bad {rec['type']} record ({exc})") from None
    if result is None:
        raise LogError(
            f"{path}:{records[-1][0]}: unfinished game (no result record after step "
            f"{state.num_steps}); the run that wrote it stopped part-way"
        )
    lineno, rec = result
    if rec.get("winner") != state.winner or rec.get("digest") != state_digest(state):
        raise LogError(
            f"{path}:{lineno}: replays to winner={state.winner} digest="
            f"{state_digest(state)[:12]}, the log says {rec.get('winner')} "
            f"{str(rec.get('digest'))[:12]}"
        )
    return state
