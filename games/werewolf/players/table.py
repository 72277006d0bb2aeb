"""LLM players at the Werewolf table: the game loop that asks the model, tracks deception, logs.

:class:`LLMTable` is a :class:`games.werewolf.play.runner.Table`: the runner owns the
state, chance and the log; the table answers every step with
:func:`games.werewolf.players.llm.decide` run through the engine's call driver
(:func:`games.engine.calls.run_batched`), so calls that do not depend on each
other go out as one batch:

* **night** - when the first werewolf is asked, the doctor, guard and seer are
  asked in the same batch: the rules show them nothing of the wolves' votes, so
  their prompts are the same as at their own steps (checked when the step comes;
  a changed view is asked again). Werewolves after the first see their partners'
  votes and the witch sees the victim, so they are asked at their steps;
* **bids** and **votes** - every living seat at once;
* **scratchpads** - after each day, every living LLM seat at once, fed back into
  that seat's later prompts only;
* **analyses** - after each statement, the speaker's self-analysis and every
  other living LLM seat's peer analysis (one batch); the
  :class:`~games.werewolf.deception.tracking.DeceptionTracker` scores feed each seat's
  ``suspicion``; the truth of a statement is
  :func:`~games.werewolf.rules.is_deceptive_in_truth`.

Seats that are not LLM players (rule players, a human) act through their
:class:`~games.werewolf.play.runner.Player`; LLM seats analyse their statements too.

**History window.** Each prompt shows the last ``history_limit`` public messages
(default :data:`HISTORY_K` = 15: announcements, statements and day vote tallies;
see :func:`~games.werewolf.players.view.view_from_knowledge`); private facts, the
scratchpad, beliefs and suspicion are always shown.

**Opponent models.** Each seat may hold a :class:`BeliefProvider` (made by a
:data:`BeliefFactory` once the roles are dealt). It observes every public
statement and vote (:class:`PublicObservation`) and puts its fields into that
seat's prompts (``PlayerView.beliefs`` and its own ``belief_lines`` text).
Default: none (the plain LLM with the window above).

**Log records** (besides the runner's): ``llm_call`` (``seat``, ``task``,
``seed``, ``key`` = the call's cache key, a SHA-256 over backend, model, the
server's endpoint (remote models), messages, seed, temperature and max_tokens;
``answer`` = the raw text;
``cached``; with ``log_prompts`` also ``messages``), ``parse`` (re-asks and
fallbacks of a batch, by task), ``defaulted`` (a fallback that gave no legal
action: a seeded random legal action was taken), ``offered`` (``seat``,
``phase``, ``players`` = the players a night target's or vote's prompt listed,
in its order, and ``choice``; the position counts of
:mod:`games.werewolf.play.quality`; not written for a defaulted action),
``scratchpad``, the
tracker's ``deception_statement`` / ``self_analysis`` / ``peer_analysis``
(:mod:`games.werewolf.deception.tracking`), and in the result ``model_calls``,
``parse_stats``, ``defaulted`` and ``deception`` (the game's summary).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from games.engine.calls import Step, run_batched
from games.engine.results import model_label
from games.werewolf import rules
from games.werewolf.deception.tracking import (
    EVENT_PEER,
    EVENT_SELF,
    EVENT_STATEMENT,
    DeceptionTracker,
    StatementRecord,
)
from games.werewolf.play.runner import Emit, GameResult, Player, Request
from games.werewolf.players import llm as pl
from games.werewolf.players import prompts
from games.werewolf.players.view import PlayerView, PublicStatement, act_dict, view_from_knowledge
from games.werewolf.rules import Action, GameState, Knowledge, SpeechAct
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.routing import RoutedModel

__all__ = [
    "HISTORY_K",
    "BeliefFactory",
    "BeliefProvider",
    "LLMTable",
    "PublicObservation",
    "early_night_asks",
    "play_llm_game",
]

#: Public messages a prompt shows by default (the plain LLM's memory).
HISTORY_K = 15

#: Night steps whose prompts do not depend on the werewolves' votes.
_EARLY_NIGHT = ("night_doctor", "night_guard", "night_seer")


@dataclasses.dataclass(frozen=True)
class PublicObservation:
    """Something every player saw, for opponent models.

    Attributes:
      kind: ``"statement"`` or ``"vote"``.
      round: The round.
      actor: Who spoke or voted.
      target: The accused / defended / checked player of a statement, or the
        vote's target (None: none).
      act: The statement's speech act (``players.act_dict``), None for a vote.
      text: The statement's words ("" for a vote).
      statement: The statement id (None for a vote).
    """

    kind: str
    round: int
    actor: int
    target: int | None = None
    act: Mapping[str, Any] | None = None
    text: str = ""
    statement: int | None = None


class BeliefProvider(Protocol):
    """One seat's opponent model, as the game loop sees it."""

    def observe(self, observation: PublicObservation) -> None:
        """Takes in one public statement or vote (in game order)."""
        ...

    def beliefs(self, phase: str = "") -> Mapping[int, Mapping[str, float]]:
        """``{player: {role: probability}}`` for a decision of ``phase`` (may be empty)."""
        ...

    def belief_lines(self, phase: str = "") -> str:
        """The prompt's belief text for ``phase``; "" to render it from :meth:`beliefs`."""
        ...


#: Makes a seat's provider from its knowledge once roles are dealt (None: no model).
BeliefFactory = Callable[[Knowledge], "BeliefProvider | None"]


class _Recorder(ChatModel):
    """Passes calls to the inner model and keeps (request, response) pairs in request order."""

    def __init__(self, inner: ChatModel):
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.max_concurrency = inner.max_concurrency
        self._lock = threading.Lock()
        self.pending: list[tuple[ChatRequest, ChatResponse]] = []
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        resp = self.inner.complete(request)
        with self._lock:
            self.pending.append((request, resp))
            self.calls += 1
        return resp

    def complete_batch(self, requests, *, max_concurrency=None, on_done=None):
        out = self.inner.complete_batch(requests, max_concurrency=max_concurrency, on_done=on_done)
        with self._lock:
            self.pending.extend(zip(requests, out, strict=True))
            self.calls += len(out)
        return out

    def key_of(self, request: ChatRequest) -> str:
        """The request's cache key under the model that answers it (a routed seat's own)."""
        m = self.inner.model_for(request) if isinstance(self.inner, RoutedModel) else self.inner
        return m.cache_key(request)

    def take(self) -> list[tuple[ChatRequest, ChatResponse]]:
        with self._lock:
            out, self.pending = self.pending, []
        return out


class LLMTable:
    """LLM players (and optional other seats) at one game; see the module docstring.

    Args:
      model: The chat model (usually cached).
      config: The game's settings.
      seed: Base seed of every call (each call derives its own with
        :func:`~games.werewolf.players.llm.call_seed` from round, phase, turn and seat).
      seats: Per seat, a :class:`Player` for a non-LLM seat, or None for an LLM
        seat (default: every seat an LLM player).
      belief_factory: Makes each LLM seat's opponent model (default: none).
      history_limit: Public messages a prompt shows (None: all).
      policy: Re-ask policy of unparseable answers.
      max_concurrency: Bound on concurrent calls of a batch.
      log_prompts: Also log every call's messages (default: the cache key only).
      structured: Ask for JSON answers under each task's schema (``--structured on``).
    """

    def __init__(
        self,
        model: ChatModel,
        config: rules.Config,
        *,
        seed: int,
        seats: Sequence[Player | None] | None = None,
        belief_factory: BeliefFactory | None = None,
        history_limit: int | None = HISTORY_K,
        policy: ParsePolicy | None = None,
        max_concurrency: int | None = None,
        log_prompts: bool = False,
        structured: bool = True,
    ):
        n = config.num_players
        seats = list(seats) if seats is not None else [None] * n
        if len(seats) != n:
            raise ValueError(f"LLMTable: {len(seats)} seats for {n} players; pass one per seat")
        if history_limit is not None and history_limit < 1:
            raise ValueError(f"LLMTable: history_limit must be >= 1 or None, got {history_limit}")
        self.config = config
        self.seed = int(seed)
        self.seats = seats
        self.model = _Recorder(model)
        self.label = model_label(model).label
        self.belief_factory = belief_factory
        self.history_limit = history_limit
        self.policy = policy or ParsePolicy()
        self.max_concurrency = max_concurrency
        self.log_prompts = log_prompts
        self.structured = bool(structured)
        self.stats = ParseStats()
        self.tracker = DeceptionTracker(num_players=n)
        self.texts: dict[int, str] = {}
        self.pads: dict[int, str] = dict.fromkeys(range(n), "")
        self.providers: dict[int, BeliefProvider] = {}
        self.defaulted = 0
        self._notes_round = 1
        self._dealt = False
        self._spoken: dict[int, str | None] = {}
        # seat -> (knowledge, legal, decision) asked ahead of its night step
        self._early: dict[int, tuple[Knowledge, list[Action], pl.Decision]] = {}

    # -- Table --------------------------------------------------------------------------

    def names(self) -> list[str]:
        return [
            f"prompted player, model {self.label}"
            if p is None
            else getattr(p, "name", type(p).__name__)
            for p in self.seats
        ]

    def header(self) -> dict[str, Any]:
        return {
            "backend": self.model.backend,
            "model": self.model.model,
            "model_label": self.label,
            "llm": {
                "history_limit": self.history_limit,
                "max_reasks": self.policy.max_reasks,
                "log_prompts": self.log_prompts,
                "structured": self.structured,
                "belief_models": self.belief_factory is not None,
                "prompts": "cache key and raw answer per call"
                + (", with messages" if self.log_prompts else ""),
            },
        }

    def result(self) -> dict[str, Any]:
        return {
            "model_calls": self.model.calls,
            "parse_stats": self.stats.to_dict(),
            "defaulted": self.defaulted,
            "deception": self.tracker.summary().to_dict(),
        }

    def decide(self, state: GameState, requests: Sequence[Request], emit: Emit) -> list[Action]:
        if not self._dealt:
            self._deal(state)
        if state.round > self._notes_round:
            self._scratchpads(state, emit)
        out: dict[int, Action] = {}
        asks: list[tuple[int, Knowledge, list[Action], str]] = []
        for r in requests:
            seat = self.seats[r.seat]
            if seat is not None:
                out[r.seat] = seat.act(r.view, r.legal, r.rng)
                continue
            early = self._early.pop(r.seat, None)
            if early is not None and early[0] == r.view and early[1] == r.legal:
                out[r.seat] = self._take(early[2], state.phase, r.seat, emit)
                continue
            asks.append((r.seat, r.view, r.legal, state.phase))
        asks += [a for a in early_night_asks(state) if self.seats[a[0]] is None]
        rngs = {r.seat: r.rng for r in requests}
        gens = [
            self._decision(state, p, view, legal, phase, rngs.get(p, self._spare_rng(state, p)))
            for p, view, legal, phase in asks
        ]
        decisions = self._run(gens, emit)
        for (p, view, legal, phase), d in zip(asks, decisions, strict=True):
            if phase != state.phase:
                self._early[p] = (view, legal, d)
            else:
                out[p] = self._take(d, phase, p, emit)
        return [out[r.seat] for r in requests]

    def after_step(
        self,
        before: GameState,
        moves: Sequence[tuple[int, Action]],
        after: GameState,
        emit: Emit,
    ) -> None:
        for seat, action in moves:
            if isinstance(action, SpeechAct):
                self._statement(before, seat, action, after, emit)
        for e in after.events[len(before.events) :]:
            if e.kind == "votes":
                for v, t in sorted(e.data["votes"].items(), key=lambda kv: int(kv[0])):
                    self._observe(PublicObservation("vote", e.round, int(v), t))

    # -- internals ----------------------------------------------------------------------

    def _deal(self, state: GameState) -> None:
        self._dealt = True
        if self.belief_factory is None:
            return
        for p in range(self.config.num_players):
            if self.seats[p] is None:
                provider = self.belief_factory(rules.knowledge(state, p))
                if provider is not None:
                    self.providers[p] = provider

    def _decision(
        self,
        state: GameState,
        p: int,
        view: Knowledge,
        legal: list[Action],
        phase: str,
        rng: np.random.Generator,
    ) -> Step[pl.Decision]:
        """The step of seat ``p``'s decision (the model's own choice; tables may steer it)."""
        return pl.decide(
            view, legal, seed=self._seed(state, phase, p), rng=rng, **self._extras(p, phase)
        )

    def _seed(self, state: GameState, phase: str, seat: int) -> int:
        return pl.call_seed(self.seed, state.round, phase, state.debate_turn, seat)

    def _spare_rng(self, state: GameState, seat: int) -> np.random.Generator:
        # A seat asked ahead of its step draws a defaulted action from its own stream.
        return np.random.default_rng(self._seed(state, "default", seat))

    def _extras(self, p: int, phase: str = "") -> dict[str, Any]:
        # The phase picks the decision kind a provider consults for (night, vote, statement).
        provider = self.providers.get(p)
        return {
            "texts": self.texts,
            "scratchpad": self.pads[p],
            "suspicion": self.tracker.scores_of(p),
            "beliefs": provider.beliefs(phase) if provider is not None else None,
            "belief_text": provider.belief_lines(phase) if provider is not None else "",
            "history_limit": self.history_limit,
            "structured": self.structured,
        }

    def _view(self, state: GameState, p: int) -> PlayerView:
        return view_from_knowledge(rules.knowledge(state, p), **self._extras(p))

    def _run(self, gens: list, emit: Emit) -> list[Any]:
        if not gens:
            return []
        before = self.stats.to_dict()
        out = run_batched(
            gens,
            self.model,
            policy=self.policy,
            stats=self.stats,
            max_concurrency=self.max_concurrency,
        )
        for request, response in self.model.take():
            rec: dict[str, Any] = {
                "seat": request.fields.get("player"),
                "task": request.task,
                "seed": request.seed,
                "key": self.model.key_of(request),
                "answer": response.text,
                "cached": response.cached,
            }
            if self.log_prompts:
                rec["messages"] = [m.to_dict() for m in request.messages]
            emit("llm_call", **rec)
        after = self.stats.to_dict()
        delta = {
            kind: {
                t: c - before[kind].get(t, 0)
                for t, c in after[kind].items()
                if c != before[kind].get(t, 0)
            }
            for kind in ("reasks", "fallbacks")
        }
        if delta["reasks"] or delta["fallbacks"]:
            emit("parse", **delta)
        return out

    def _take(self, d: pl.Decision, phase: str, seat: int, emit: Emit) -> Action:
        if d.defaulted:
            self.defaulted += 1
            emit("defaulted", seat=seat, phase=phase, action=rules.action_to_json(d.action))
        elif d.offered and isinstance(d.action, rules.Target):
            emit("offered", seat=seat, phase=phase, players=list(d.offered), choice=d.action.player)
        if phase == "day_speak":
            self._spoken[seat] = d.text
        return d.action

    def _scratchpads(self, state: GameState, emit: Emit) -> None:
        done = self._notes_round
        self._notes_round = state.round
        living = [p for p in state.living() if self.seats[p] is None]
        gens = [
            pl.update_scratchpad(
                self._view(state, p), f"round {done}", seed=self._seed(state, "scratchpad", p)
            )
            for p in living
        ]
        for p, pad in zip(living, self._run(gens, emit), strict=True):
            self.pads[p] = pad
            emit("scratchpad", seat=p, round=done, text=pad)

    def _statement(
        self, before: GameState, seat: int, act: SpeechAct, after: GameState, emit: Emit
    ) -> None:
        sid = len(self.tracker.statements)
        text = self._spoken.pop(seat, None) or prompts.plain_statement(act_dict(act))
        self.texts[sid] = text
        record = StatementRecord(
            sid,
            seat,
            before.round,
            text,
            rules.is_deceptive_in_truth(before, seat, act),
            act_dict(act),
        )
        self.tracker = self.tracker.add_statement(record)
        emit(EVENT_STATEMENT, **record.to_dict())
        analysts = [p for p in after.living() if self.seats[p] is None]  # LLM seats only
        views = {p: self._view(after, p) for p in analysts}
        stmt = PublicStatement(sid, before.round, seat, act, text)
        own, peers = self._run(
            [pl.analyse_statement(views, stmt, seed=self._seed(before, "analysis", seat))], emit
        )[0]
        if own is not None:
            self.tracker = self.tracker.add_self(own)
            emit(EVENT_SELF, **own.to_dict())
        for a in peers:
            self.tracker = self.tracker.add_peer(a)
            emit(EVENT_PEER, **a.to_dict())
        target = act.target
        self._observe(
            PublicObservation("statement", before.round, seat, target, act_dict(act), text, sid)
        )

    def _observe(self, obs: PublicObservation) -> None:
        for p in sorted(self.providers):
            self.providers[p].observe(obs)


def early_night_asks(state: GameState) -> list[tuple[int, Knowledge, list[Action], str]]:
    """The seats asked ahead at the first werewolf's night step: ``(seat, view, legal, phase)``.

    When the first werewolf is asked (``night_wolves`` before any werewolf
    vote), the living doctor, guard and seer are asked in the same batch, each
    with the view and legal actions of its own coming step (the rules show
    them nothing of the wolves' votes); :class:`LLMTable` asks the LLM seats
    among them, and the day study's replay of the arena consults them then
    (:mod:`games.werewolf.players.table_replay`).
    """
    if state.phase != "night_wolves" or state.wolf_votes:
        return []
    out = []
    for ph in _EARLY_NIGHT:
        for p in state.living_with(ph.removeprefix("night_")):
            ahead = dataclasses.replace(state, phase=ph, queue=(p,))
            legal = rules.legal_actions(ahead, p)
            if legal:
                out.append((p, rules.knowledge(ahead, p), legal, ph))
    return out


def play_llm_game(
    config: rules.Config,
    model: ChatModel,
    *,
    seed: int,
    log: Any = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    **table_options: Any,
) -> tuple[GameResult, LLMTable]:
    """Plays one game with LLM players; returns the runner's ``GameResult`` and the table.

    Args:
      config: The game's settings.
      model: The chat model (usually cached).
      seed: Seeds chance, every seat's generator and every call.
      log: A JSONL path or an open ``GameLog`` (see :func:`games.werewolf.play.runner.play_game`).
      on_record: Called with every log record as it happens (a live transcript).
      **table_options: :class:`LLMTable` options (``seats``, ``belief_factory``,
        ``history_limit``, ``policy``, ``max_concurrency``, ``log_prompts``, ``structured``).
    """
    from games.werewolf.play.runner import play_game

    table = LLMTable(model, config, seed=seed, **table_options)
    result = play_game(config, seed=seed, log=log, on_record=on_record, table=table)
    return result, table
