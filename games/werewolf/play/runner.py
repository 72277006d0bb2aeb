"""Play a Werewolf game with given players, log it as JSONL, and replay a log.

Randomness: ``seed`` feeds one ``np.random.SeedSequence``; its first child draws the
chance steps (deal, tie-breaks), child ``1 + seat`` is handed to the player in that
seat.  Same seed and players, same game, same log (apart from the header's clock).

Log schema (one JSON object per line, each with a ``"type"``; readers skip types
they do not know, so later layers add their own records, e.g. prompts, answers,
scratchpads, analyses, without breaking :func:`replay`):

* ``header``: ``schema`` (=1), ``game`` ("werewolf"), ``config`` (:meth:`Config.as_dict`),
  ``seed``, ``players`` (``[{"seat", "name"}]``), ``versions``, ``started`` (UTC ISO),
  plus the table's own fields (:meth:`Table.header`; the LLM table adds the backend,
  model, label and its settings).
* ``chance``: ``step``, ``phase``, ``outcome`` (role index for the deal, seat for ties).
* ``action``: ``step``, ``round``, ``phase``, ``player``, ``action``
  (:func:`~games.werewolf.rules.action_to_json`), ``id`` (:func:`encode_action`).
* ``event``: a rules event (:meth:`Event.to_json`: ``kind``, ``round``, data, and
  ``visible_to`` when private); phase transitions are ``kind="phase"``.
* ``result``: ``winner`` ("werewolves" / "villagers" / "draw"), ``rounds``, ``steps``,
  ``roles``, ``digest`` (:func:`state_digest` of the final state), plus the table's
  own fields (:meth:`Table.result`).

Who decides is a :class:`Table`: by default each seat's :class:`Player` in turn
(:class:`SeatTable`); the LLM players' table is
:class:`games.werewolf.players.table.LLMTable`, which writes its own records (model
calls, statements, analyses, scratchpads) through the same log.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from games.werewolf import rules
from games.werewolf.rules import (
    CHANCE,
    Action,
    Config,
    GameState,
    Knowledge,
    action_from_json,
    action_to_json,
    encode_action,
)
from runs.atomic import atomic_path

__all__ = [
    "SCHEMA",
    "Emit",
    "GameLog",
    "GameResult",
    "LogError",
    "Player",
    "Request",
    "SeatTable",
    "Table",
    "partial_path",
    "play_game",
    "read_log",
    "replay",
    "state_digest",
    "summarize",
    "wilson_interval",
]

SCHEMA = 1


class Player(Protocol):
    """A seat's decision maker: sees only its knowledge and the legal actions."""

    name: str

    def act(self, view: Knowledge, legal: Sequence[Action], rng: np.random.Generator) -> Action:
        """One of ``legal``."""
        ...


@dataclass(frozen=True)
class Request:
    """One decision to make: a seat, its view, its legal actions and its generator."""

    seat: int
    view: Knowledge
    legal: list[Action]
    rng: np.random.Generator


#: Writes one log record: ``emit(type, **payload)``.
Emit = Callable[..., None]


class Table(Protocol):
    """Who decides at every step of a game, and what it adds to the log.

    The runner owns the state, chance and the log; a table answers the requests
    of each step (every seat of :func:`~games.werewolf.rules.independent_actors`
    at once) and may observe every step after it is applied (e.g. to analyse a
    statement). It sees the full state because it is the game master's side
    (truth of statements); what it shows a seat must come from that seat's
    :class:`Request` view.
    """

    def names(self) -> list[str]:
        """One display name per seat (header)."""
        ...

    def header(self) -> dict[str, Any]:
        """Extra header fields (backend, model, settings); may be empty."""
        ...

    def decide(self, state: GameState, requests: Sequence[Request], emit: Emit) -> list[Action]:
        """One legal action per request, in order."""
        ...

    def after_step(
        self,
        before: GameState,
        moves: Sequence[tuple[int, Action]],
        after: GameState,
        emit: Emit,
    ) -> None:
        """Called once the step's moves are applied (and their events logged)."""
        ...

    def result(self) -> dict[str, Any]:
        """Extra fields of the result record (counts, summaries); may be empty."""
        ...


class SeatTable:
    """Each seat's :class:`Player` decides in turn (or ``decide_batch`` answers secret steps)."""

    def __init__(
        self,
        players: Sequence[Player],
        decide_batch: Callable[[Sequence[Request]], Sequence[Action]] | None = None,
    ):
        self.players = list(players)
        self.decide_batch = decide_batch

    def names(self) -> list[str]:
        return [getattr(p, "name", type(p).__name__) for p in self.players]

    def header(self) -> dict[str, Any]:
        return {}

    def decide(self, state: GameState, requests: Sequence[Request], emit: Emit) -> list[Action]:
        if self.decide_batch is not None and len(requests) > 1:
            return list(self.decide_batch(requests))
        return [self.players[r.seat].act(r.view, r.legal, r.rng) for r in requests]

    def after_step(
        self,
        before: GameState,
        moves: Sequence[tuple[int, Action]],
        after: GameState,
        emit: Emit,
    ) -> None:
        pass

    def result(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class GameResult:
    """How a game ended; ``extra`` holds the table's result fields (e.g. model calls)."""

    winner: str
    rounds: int
    steps: int
    roles: tuple[str, ...]
    final: GameState
    digest: str
    log_path: Path | None = None
    extra: dict[str, Any] | None = None


@functools.lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    out = {}
    for dist in ("gt-llm", "numpy", "open_spiel"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "unknown"
    return out


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


def play_game(
    config: Config,
    players: Sequence[Player] | None = None,
    *,
    seed: int,
    log: str | Path | GameLog | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    decide_batch: Callable[[Sequence[Request]], Sequence[Action]] | None = None,
    table: Table | None = None,
) -> GameResult:
    """Play one game to the end.

    Args:
        config: the rules settings.
        players: one per seat; default rule-based players everywhere.
        seed: seeds chance and every player's generator.
        log: a path (JSONL, written atomically) or an open :class:`GameLog` (left open,
            so callers can add their own records), or None.
        on_record: called with every log record as it happens (e.g. a live transcript).
        decide_batch: if given, answers the requests of a secret step (bids, votes: see
            :func:`~games.werewolf.rules.independent_actors`) at once, e.g. as one batch
            of model calls; otherwise each seat's player acts in turn.
        table: who decides (e.g. :class:`~games.werewolf.players.table.LLMTable`); replaces
            ``players`` and ``decide_batch``.
    """
    from games.werewolf.players.rule_based import RuleBasedPlayer

    n = config.num_players
    if table is None:
        if players is None:
            players = [RuleBasedPlayer() for _ in range(n)]
        if len(players) != n:
            raise ValueError(f"play_game: {len(players)} players for {n} seats; pass one per seat")
        table = SeatTable(players, decide_batch)
    elif players is not None or decide_batch is not None:
        raise ValueError("play_game: pass either table or players/decide_batch, not both")
    names = table.names()
    if len(names) != n:
        raise ValueError(f"play_game: the table has {len(names)} seats for {n}; one per seat")
    children = np.random.SeedSequence(seed).spawn(n + 1)
    chance_rng = np.random.default_rng(children[0])
    rngs = [np.random.default_rng(c) for c in children[1:]]
    own_log = isinstance(log, (str, Path))
    glog = GameLog(log) if own_log else log

    def emit(type_: str, **payload: Any) -> None:
        if glog is not None:
            glog.write(type_, **payload)
        if on_record is not None:
            on_record({"type": type_, **payload})

    try:
        emit(
            "header",
            schema=SCHEMA,
            game="werewolf",
            config=config.as_dict(),
            seed=seed,
            players=[{"seat": i, "name": name} for i, name in enumerate(names)],
            versions=dict(_versions()),
            started=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            **table.header(),
        )
        state = rules.initial_state(config)
        while not state.is_terminal():
            actor = rules.current_player(state)
            seen = len(state.events)
            if actor == CHANCE:
                outcomes = rules.chance_outcomes(state)
                probs = np.array([p for _, p in outcomes])
                outcome = outcomes[int(chance_rng.choice(len(outcomes), p=probs / probs.sum()))][0]
                emit("chance", step=state.num_steps, phase=state.phase, outcome=outcome)
                state = rules.apply(state, CHANCE, outcome)
            else:
                # Secret steps (bids, votes) are asked as one batch: every seat's view
                # is taken before any of them acts, which is what it sees anyway.
                seats = rules.independent_actors(state)
                requests = [
                    Request(p, rules.knowledge(state, p), rules.legal_actions(state, p), rngs[p])
                    for p in seats
                ]
                actions = table.decide(state, requests, emit)
                before = state
                for req, action in zip(requests, actions, strict=True):
                    emit(
                        "action",
                        step=state.num_steps,
                        round=state.round,
                        phase=state.phase,
                        player=req.seat,
                        action=action_to_json(action),
                        id=encode_action(n, action),
                    )
                    state = rules.apply(state, req.seat, action)
            for event in state.events[seen:]:
                emit("event", **event.to_json())
            if actor != CHANCE:
                moves = [(r.seat, a) for r, a in zip(requests, actions, strict=True)]
                table.after_step(before, moves, state, emit)
        digest = state_digest(state)
        extra = table.result()
        emit(
            "result",
            winner=state.winner,
            rounds=state.round,
            steps=state.num_steps,
            roles=list(state.roles),
            digest=digest,
            **extra,
        )
    except BaseException:
        if own_log:
            glog.abort()  # the partial log beside, any previous log intact
        raise
    if own_log:
        glog.close()
    return GameResult(
        winner=state.winner,
        rounds=state.round,
        steps=state.num_steps,
        roles=state.roles,
        final=state,
        digest=digest,
        log_path=glog.path if glog is not None else None,
        extra=extra,
    )


#: Largest log accepted by the readers (a long LLM game with prompts is a few MB).
MAX_LOG_BYTES = 512 * 1024 * 1024
#: Largest single record (one prompt and answer is far below).
MAX_RECORD_BYTES = 8 * 1024 * 1024


class LogError(ValueError):
    """A log file is damaged or not a Werewolf log: ``FILE:LINE: what is wrong`` (one line)."""


def _numbered_records(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise LogError(f"{p}: cannot read the log ({exc.strerror or exc})") from None
    if size > MAX_LOG_BYTES:
        raise LogError(f"{p}: {size:,} bytes, more than the {MAX_LOG_BYTES:,} a log may hold")
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


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95 % by default)."""
    if n <= 0:
        raise ValueError(f"wilson_interval: n must be >= 1, got {n}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def summarize(results: Sequence[GameResult]) -> dict[str, Any]:
    """Win rates (with 95 % Wilson intervals) and game lengths of a series of games."""
    n = len(results)
    if n == 0:
        raise ValueError("summarize: no games")
    out: dict[str, Any] = {"games": n, "win_rates": {}}
    for outcome in (rules.WEREWOLVES, rules.VILLAGERS, rules.DRAW):
        k = sum(r.winner == outcome for r in results)
        lo, hi = wilson_interval(k, n)
        out["win_rates"][outcome] = {"count": k, "rate": k / n, "ci95": [lo, hi]}
    rounds = np.array([r.rounds for r in results])
    steps = np.array([r.steps for r in results])
    out["rounds"] = {
        "mean": float(rounds.mean()),
        "min": int(rounds.min()),
        "max": int(rounds.max()),
        "histogram": {
            str(k): int(v) for k, v in zip(*np.unique(rounds, return_counts=True), strict=True)
        },
    }
    out["steps"] = {"mean": float(steps.mean()), "min": int(steps.min()), "max": int(steps.max())}
    return out
