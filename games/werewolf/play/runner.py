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

import functools
import hashlib
import json
import math
import os
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

__all__ = [
    "SCHEMA",
    "Emit",
    "GameLog",
    "GameResult",
    "Player",
    "Request",
    "SeatTable",
    "Table",
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


class GameLog:
    """A JSONL log written to ``path + '.tmp'`` and renamed into place on :meth:`close`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".tmp")
        self._fh: IO[str] | None = self._tmp.open("w", encoding="utf-8")

    def write(self, type: str, **payload: Any) -> None:
        """Append one record ``{"type": type, **payload}``."""
        if self._fh is None:
            raise ValueError(f"GameLog.write: {self.path} is closed")
        self._fh.write(json.dumps({"type": type, **payload}) + "\n")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
            os.replace(self._tmp, self.path)

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
        players: one per seat; default scripted players everywhere.
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
    from games.werewolf.players.rule_based import ScriptedPlayer

    n = config.num_players
    if table is None:
        if players is None:
            players = [ScriptedPlayer() for _ in range(n)]
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
    finally:
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


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL log."""
    with Path(path).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def replay(path: str | Path) -> GameState:
    """Re-apply a log's chance outcomes and actions; check it ends in the logged state.

    Raises:
        ValueError: no header, an illegal record, or a final state (digest or winner)
            different from the logged result.
    """
    records = read_log(path)
    if not records or records[0].get("type") != "header":
        raise ValueError(f"replay: {path} does not start with a header record")
    header = records[0]
    if header.get("schema") != SCHEMA or header.get("game") != "werewolf":
        raise ValueError(f"replay: {path} is not a werewolf log of schema {SCHEMA}")
    state = rules.initial_state(Config.from_dict(header["config"]))
    result = None
    for rec in records[1:]:
        if rec["type"] == "chance":
            state = rules.apply(state, CHANCE, rec["outcome"])
        elif rec["type"] == "action":
            action = action_from_json(rec["action"])
            if encode_action(state.num_players, action) != rec["id"]:
                raise ValueError(f"replay: action id mismatch at step {rec['step']}")
            state = rules.apply(state, rec["player"], action)
        elif rec["type"] == "result":
            result = rec
    if result is not None:
        if result["winner"] != state.winner or result["digest"] != state_digest(state):
            raise ValueError(
                f"replay: {path} replays to winner={state.winner} digest="
                f"{state_digest(state)[:12]}, the log says {result['winner']} "
                f"{result['digest'][:12]}"
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
