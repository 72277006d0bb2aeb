"""Werewolf game logs: the atomic JSONL writer, the checked reader and replay.

A log is written through :class:`GameLog` (the project's one atomic writer:
temporary file, fsync, rename on success; a failed game keeps its records under
:func:`partial_path`). :func:`read_log` returns the records, each checked, and
:func:`replay` re-applies a log's chance outcomes and actions to the rules and
checks that it ends in the logged state. The record types are listed in
:mod:`games.werewolf.play.runner`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import IO, Any

from games.werewolf import rules
from games.werewolf.rules import CHANCE, Config, GameState, action_from_json, encode_action
from runs.atomic import atomic_path, checked_size

__all__ = [
    "MAX_LOG_BYTES",
    "MAX_RECORD_BYTES",
    "SCHEMA",
    "GameLog",
    "LogError",
    "partial_path",
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
        self._fh.write(json.dumps({"type": type, **payload}) + "\n")

    def close(self) -> None:
        """Puts the finished log in place (fsync, then rename)."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except BaseException as exc:  # e.g. a full disk on the last flush
                self._writing.__exit__(type(exc), exc, exc.__traceback__)
                raise
            self._writing.__exit__(None, None, None)

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


def _numbered_records(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    p = Path(path)
    try:
        checked_size(p, MAX_LOG_BYTES, what="a log", error=LogError)
    except FileNotFoundError:
        raise LogError(f"{p}: no such log") from None
    out: list[tuple[int, dict[str, Any]]] = []
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if len(raw) > MAX_RECORD_BYTES:
                raise LogError(f"{p}:{lineno}: a record of {len(raw):,} bytes; the log is damaged")
            if not raw.strip():
                continue
            where = f"{p}:{lineno}"
            try:
                record = json.loads(raw)
            except UnicodeDecodeError as exc:
                raise LogError(
                    f"{where}: not UTF-8 at byte {exc.start}; the log is damaged"
                ) from None
            except json.JSONDecodeError as exc:
                cut = "" if raw.endswith(b"\n") else " (a truncated last line)"
                raise LogError(
                    f"{where}: not valid JSON ({exc.msg} at column {exc.colno}){cut}; the log is "
                    "damaged: re-run the game or delete the log"
                ) from None
            except RecursionError:
                raise LogError(f"{where}: JSON nested too deeply; the log is damaged") from None
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                raise LogError(f"{where}: a record must be a JSON object with a string 'type'")
            out.append((lineno, record))
    return out


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL log, each checked to be a JSON object with a ``type``.

    Raises:
      LogError: ``FILE:LINE: ...`` for a truncated or invalid line, a record that
        is not an object with a string ``type``, a nesting too deep, or a file or
        record larger than :data:`MAX_LOG_BYTES` / :data:`MAX_RECORD_BYTES`.
    """
    return [record for _, record in _numbered_records(path)]


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
    if not records or records[0][1].get("type") != "header":
        raise LogError(f"{path}:1: the log does not start with a header record")
    header = records[0][1]
    if header.get("schema") != SCHEMA or header.get("game") != "werewolf":
        raise LogError(f"{path}:1: not a werewolf log of schema {SCHEMA}")
    try:
        state = rules.initial_state(Config.from_dict(header.get("config")))
    except ValueError as exc:
        raise LogError(f"{path}:{records[0][0]}: bad header config ({exc})") from None
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
