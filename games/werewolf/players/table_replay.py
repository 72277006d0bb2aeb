"""Every seat's arena provider replayed from a game's records, decisions included.

:func:`day_start_beliefs` walks a game's ``chance`` and ``action`` records (a
seeded rule-based game's, or an arena game's log) through the rules and does
to each seat's :class:`~games.werewolf.players.table_beliefs.TableBeliefs`
what the arena's table (:class:`games.werewolf.arena.table.ArenaTable` on
:class:`games.werewolf.players.table.LLMTable`) does at every step:

1. before the step's decisions, the seat's new private facts and
   announcements (:meth:`~games.werewolf.players.table_beliefs.TableBeliefs.add_private`),
   given to the model as one batch of every seat's extraction calls;
2. at the first step of a new round, every living seat's scratchpad, whose
   prompt reads the model (phase ``""``: a statement);
3. every seat that decides reads the model for its phase (the doctor, guard
   and seer are asked ahead at the first werewolf's night step:
   :func:`~games.werewolf.players.table.early_night_asks`);
4. after the step, each statement's analyses (every living seat's prompt view
   reads the model, phase ``""``), then the statement and the votes as public
   observations, given to the model as one batch.

Every read is the provider's own (:meth:`TableBeliefs.beliefs`: one
:func:`~games.werewolf.players.table_beliefs.seat_decision` per decision kind
and new evidence), so each seat's model at the start of a day's debate is the
arena's, the decisions' effects included (GRATR adds Eq. 9 feedback at every
decision; the other models are unchanged by one). The day study builds its
roots with it (:mod:`games.werewolf.day.roots`).

Every seat with a model is taken to be an LLM seat with a plain opponent model
(``werewolf arena --models``): a CFR day policy's extra reading of an agent's
speech (:class:`games.werewolf.arena.table.ArenaTable`) is not replayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from games.engine.calls import Call, Step
from games.werewolf import rules
from games.werewolf.players.beliefs import BeliefSettings, SeatBeliefs, make_seat_beliefs
from games.werewolf.players.table import PublicObservation, early_night_asks
from games.werewolf.players.table_beliefs import TableBeliefs
from games.werewolf.players.view import act_dict
from games.werewolf.rules import Action, Config, GameState, Knowledge

__all__ = ["day_start_beliefs", "is_debate_start", "statement_texts"]


def is_debate_start(state: GameState) -> bool:
    """Whether ``state`` is the start of a day's debate (its first bidding step)."""
    return state.phase == "day_bid" and state.debate_turn == 0


def statement_texts(records: Iterable[Mapping[str, Any]]) -> dict[int, str]:
    """The statements' words by statement id, from an LLM game's ``deception_statement`` records."""
    return {
        int(r["statement"]): str(r["text"])
        for r in records
        if r.get("type") == "deception_statement" and r.get("text")
    }


def _steps(
    config: Config, records: Iterable[Mapping[str, Any]]
) -> Iterator[tuple[GameState, list[tuple[int, Action]], GameState]]:
    """Each decision step of the game: the state, its ``(seat, action)`` moves, the state after.

    Chance records are applied in between; the records are the runner's
    (:func:`games.werewolf.play.runner.play_game`): one ``action`` record per
    seat of :func:`~games.werewolf.rules.independent_actors`, in order.

    Raises:
      ValueError: the records do not follow the rules' order.
    """
    pending = [r for r in records if r.get("type") in ("chance", "action")]
    state = rules.initial_state(config)
    i = 0
    while not state.is_terminal() and i < len(pending):
        if rules.current_player(state) == rules.CHANCE:
            rec = pending[i]
            if rec["type"] != "chance":
                raise ValueError(f"day_start_beliefs: record {i} is no chance outcome: {rec}")
            state = rules.apply(state, rules.CHANCE, rec["outcome"])
            i += 1
            continue
        seats = rules.independent_actors(state)
        recs = pending[i : i + len(seats)]
        got = [r.get("player") for r in recs]
        if [r["type"] for r in recs] != ["action"] * len(seats) or got != list(seats):
            raise ValueError(
                f"day_start_beliefs: the records from {i} are not the actions of seats "
                f"{list(seats)} at {state.phase} (got {got})"
            )
        i += len(seats)
        moves = [(p, rules.action_from_json(r["action"])) for p, r in zip(seats, recs, strict=True)]
        after = state
        for p, action in moves:
            after = rules.apply(after, p, action)
        yield state, moves, after
        state = after


def _flush_all(providers: Iterable[TableBeliefs]) -> Step[None]:
    """Every provider's queue given to its model, their extraction calls as one batch."""
    pending: list[tuple[Step[None], int | None]] = []  # a list's length; None: one Call
    calls: list[Call[Any]] = []
    for a in providers:
        g = a.flush()
        try:
            asked = next(g)
        except StopIteration:
            continue
        if isinstance(asked, list):
            pending.append((g, len(asked)))
            calls += asked
        else:
            pending.append((g, None))
            calls.append(asked)
    if not pending:
        return None
    answers = yield calls
    k = 0
    for g, n in pending:
        part = answers[k] if n is None else answers[k : k + n]
        k += 1 if n is None else n
        try:
            g.send(part)
        except StopIteration:
            continue
        raise RuntimeError("day_start_beliefs: a provider's flush asked twice")
    return None


def _read(provider: TableBeliefs, phase: str) -> None:
    """A prompt's reading of the seat's model for ``phase`` (the arena's, its queue given first)."""
    if provider.queue:  # pragma: no cover - every read follows a flush, as at the table
        raise RuntimeError("day_start_beliefs: a provider was read with a queue")
    provider.beliefs(phase)


def day_start_beliefs(
    config: Config,
    records: Iterable[Mapping[str, Any]],
    models: Sequence[str | None],
    *,
    settings: BeliefSettings = BeliefSettings(),  # noqa: B008 - frozen, so a shared default is safe
    texts: Mapping[int, str] | None = None,
    last_day: int | None = None,
    chat: Any = None,
) -> Step[dict[int, dict[int, SeatBeliefs]]]:
    """Each seat's provider at the start of every day's debate, fed and read as in the arena.

    Args:
      config: The game's rules settings.
      records: The game's log records (only ``chance`` and ``action`` are read).
      models: Per seat the opponent model's name (None: the seat has no model).
      settings: The providers' settings (the arena's).
      texts: The statements' words by statement id (:func:`statement_texts`;
        missing: the act's plain rendering, as for a rule-based game).
      last_day: Stop at the start of this day's debate (None: replay the whole game).
      chat: The chat model a provider reads with (``rerank-rag`` only).

    Returns:
      ``{day: {seat: provider}}`` for every day whose debate the game reached
      (up to ``last_day``): the models after the day's new facts, before its
      first bid. Yields each step's extraction calls as one batch.

    Raises:
      ValueError: ``models`` has not one entry per seat, or the records do not
        follow the rules.
    """
    if len(models) != config.num_players:
        raise ValueError(
            f"day_start_beliefs: {len(models)} model names for {config.num_players} seats"
        )
    texts = dict(texts or {})
    providers: dict[int, TableBeliefs] = {}
    out: dict[int, dict[int, SeatBeliefs]] = {}
    notes_round = 1
    early: dict[int, tuple[Knowledge, list[Action]]] = {}
    sid = 0
    for state, moves, after in _steps(config, records):
        if not providers:
            providers = {
                p: TableBeliefs(make_seat_beliefs(m, config, p, r, settings, chat=chat), chat)
                for p, (m, r) in enumerate(zip(models, state.roles, strict=True))
                if m is not None
            }
        # 1. The seats' new facts (ArenaTable.decide).
        for p, a in providers.items():
            a.add_private(rules.knowledge(state, p).events)
        yield from _flush_all(providers.values())
        if is_debate_start(state) and state.round not in out:
            out[state.round] = {p: a.state for p, a in providers.items()}
            if last_day is not None and state.round >= last_day:
                return out
        living = [p for p in state.living() if p in providers]
        # 2. A new round's scratchpads (LLMTable.decide).
        if state.round > notes_round:
            notes_round = state.round
            for p in living:
                _read(providers[p], "")
        # 3. The decisions, and the night seats asked ahead (LLMTable.decide).
        for p, _ in moves:
            ahead = early.pop(p, None)
            if p not in providers:
                continue
            if ahead is not None and ahead == (
                rules.knowledge(state, p),
                rules.legal_actions(state, p),
            ):
                continue  # decided when asked ahead
            _read(providers[p], state.phase)
        for p, view, legal, phase in early_night_asks(state):
            if p in providers:
                _read(providers[p], phase)
                early[p] = (view, legal)
        yield from _flush_all(providers.values())
        # 4. The step's statements (their analyses first) and votes (LLMTable.after_step).
        for p, action in moves:
            if not isinstance(action, rules.SpeechAct):
                continue
            for q in after.living():
                if q in providers:
                    _read(providers[q], "")
            obs = PublicObservation(
                "statement",
                state.round,
                p,
                action.target,
                act_dict(action),
                texts.get(sid, ""),
                sid,
            )
            sid += 1
            for q in sorted(providers):
                providers[q].observe(obs)
        for e in after.events[len(state.events) :]:
            if e.kind == "votes":
                for v, t in sorted(e.data["votes"].items(), key=lambda kv: int(kv[0])):
                    for q in sorted(providers):
                        providers[q].observe(PublicObservation("vote", e.round, int(v), t))
        yield from _flush_all(providers.values())
    return out
