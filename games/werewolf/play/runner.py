"""Play a Werewolf game with given players, logged as JSONL, and summarise a series.

The log's writer, reader and replay are :mod:`games.werewolf.play.log` (their
names are re-exported here).

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from games.werewolf import rules
from games.werewolf.play.log import (
    SCHEMA,
    GameLog,
    LogError,
    partial_path,
    read_log,
    replay,
    state_digest,
)
from games.werewolf.play.quality import QualityTally
from games.werewolf.rules import (
    CHANCE,
    Action,
    Config,
    GameState,
    Knowledge,
    action_to_json,
    encode_action,
)
from runs.intervals import wilson_interval

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
    # A path: the log is opened (and closed or aborted) here; an open GameLog is left open.
    if isinstance(log, (str, Path)):
        own_log: GameLog | None = GameLog(log)
        glog: GameLog | None = own_log
    else:
        own_log, glog = None, log

    tally = QualityTally()

    def emit(type_: str, **payload: Any) -> None:
        if glog is not None:
            glog.write(type_, **payload)
        record = {"type": type_, **payload}
        tally.observe(record)
        if on_record is not None:
            on_record(record)

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
        if "parse_stats" in extra:  # model players: their answers' quality
            extra = {**extra, "quality": tally.counts()}
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
        if own_log is not None:
            own_log.abort()  # the partial log beside, any previous log intact
        raise
    if own_log is not None:
        own_log.close()
    assert state.winner is not None  # set with the last phase ("over")
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
