"""LLM players of Werewolf: what a player knows, and the steps that ask its model.

A :class:`PlayerView` is everything one player may know at a decision: its
role, its partners (werewolves), its checks (seer), the public statements,
votes and announcements, its private notes (the *scratchpad*, which only its
own prompts ever contain), its opponent-model beliefs and its accumulated
deception scores. The runner builds it; nothing here reads the hidden state.

Each decision is a *step*: a generator that yields :class:`games.engine.calls.Call`
objects (or a list of independent ones) and returns the chosen action, run by
:func:`games.engine.calls.run_sync` / :func:`~games.engine.calls.run_batched`.
Independent decisions of several players (night actions, bids, votes) are
batched by running their steps together with ``run_batched``; the analyses
of one statement (the speaker's self-analysis and every peer's) are one list
of calls in :func:`analyse_statement`.

Steps (each returns the parsed value or the task's documented fallback, see
:mod:`games.werewolf.players.parsing`):

* :func:`night_kill`, :func:`night_protect`, :func:`night_check` -> ``int | None``;
* :func:`night_witch` -> :class:`~games.werewolf.players.parsing.WitchChoice`;
* :func:`bid` -> ``int`` in 0..10;
* :func:`speak` -> :class:`Speech` (the speech act, then its statement text);
* :func:`statement` -> ``str`` (the words of a given speech act, in its tone);
* :func:`vote` -> ``int | None``;
* :func:`update_scratchpad` -> ``str`` (the new private notes);
* :func:`analyse_statement` -> ``(SelfAnalysis | None, tuple[PeerAnalysis, ...])``;
* :func:`decide` -> :class:`Decision`: any decision point of the rules (its
  phase and legal actions) mapped to the step above that answers it, and the
  answer mapped back to a legal ``rules`` action.

Seeds are explicit: the runner derives one per call with :func:`call_seed`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from games.engine.calls import Call, Step
from games.werewolf.deception.tracking import PeerAnalysis, SelfAnalysis
from games.werewolf.players import parsing, prompts
from games.werewolf.rules import (
    ROLES,
    SPEECH_ACTS,
    TONES,
    Action,
    Bid,
    Knowledge,
    Save,
    Skip,
    SpeechAct,
    Target,
)
from gt_llm.prompts import PromptTemplate

__all__ = [
    "PlayerView",
    "PublicStatement",
    "Speech",
    "analyse_statement",
    "partner_votes",
    "speech_menu",
    "tonight_victim",
    "view_from_knowledge",
    "Decision",
    "act_dict",
    "bid",
    "call_seed",
    "decide",
    "context_fields",
    "make_call",
    "night_check",
    "night_kill",
    "night_protect",
    "night_witch",
    "speak",
    "statement",
    "update_scratchpad",
    "vote",
]


def act_dict(act: SpeechAct) -> dict[str, Any]:
    """A speech act as a JSON-ready dict (the keys of ``SpeechAct``)."""
    return {
        "kind": act.kind,
        "tone": act.tone,
        "target": act.target,
        "role": act.role,
        "result": act.result,
    }


@dataclasses.dataclass(frozen=True)
class PublicStatement:
    """A statement everyone heard.

    Attributes:
      statement: Its id (unique within the game).
      round: The round (night, then day) it was said in.
      speaker: Who said it.
      act: The speech act it expresses.
      text: What was said.
    """

    statement: int
    round: int
    speaker: int
    act: SpeechAct
    text: str

    def to_fields(self) -> dict[str, Any]:
        """The typed form the prompts carry (``statements`` field)."""
        return {
            "statement": self.statement,
            "round": self.round,
            "speaker": self.speaker,
            **act_dict(self.act),
            "text": self.text,
        }


@dataclasses.dataclass(frozen=True)
class Speech:
    """A speaking turn: the chosen speech act and the statement that expresses it."""

    act: SpeechAct
    text: str


def _frozen_map(m: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(m))


@dataclasses.dataclass(frozen=True)
class PlayerView:
    """What one player knows at a decision (built by the runner).

    Attributes:
      player: The player's id.
      role: Its role (one of ``rules.ROLES``).
      num_players: Players in the game.
      alive: The living players.
      round: The current round (a night, then a day; the rules' ``round``).
      partners: The other werewolves (werewolves only).
      checks: The seer's results so far, ``{player: result}``.
      check_results: The results a check can give (``rules`` decides per preset,
        e.g. the roles, or ``("werewolf", "not werewolf")``).
      statements: Public statements so far, in order.
      votes: Past day votes ``(round, voter, target or None)``, in order.
      announcements: Public announcements ``(round, text)`` (deaths, exiles), in order.
      private_notes: Private facts from the rules in words (e.g. whom the player
        protected), in order.
      scratchpad: The player's own notes (from :func:`update_scratchpad`).
      beliefs: Opponent-model beliefs ``{player: {role: probability}}`` (may be empty).
      suspicion: The player's deception scores ``{speaker: score}`` (from
        :meth:`DeceptionTracker.scores_of`).
      belief_text: An opponent model's own ``belief_lines`` text (e.g. GRATR's
        evidence chains); empty: the lines are rendered from ``beliefs``.
      earlier_messages: Public messages left out of ``statements`` / ``votes`` /
        ``announcements`` by the history window (see :func:`view_from_knowledge`).
    """

    player: int
    role: str
    num_players: int
    alive: tuple[int, ...]
    round: int = 1
    partners: tuple[int, ...] = ()
    checks: Mapping[int, str] = dataclasses.field(default_factory=dict)
    check_results: tuple[str, ...] = ()
    statements: tuple[PublicStatement, ...] = ()
    votes: tuple[tuple[int, int, int | None], ...] = ()
    announcements: tuple[tuple[int, str], ...] = ()
    private_notes: tuple[str, ...] = ()
    scratchpad: str = ""
    beliefs: Mapping[int, Mapping[str, float]] = dataclasses.field(default_factory=dict)
    suspicion: Mapping[int, float] = dataclasses.field(default_factory=dict)
    belief_text: str = ""
    earlier_messages: int = 0

    def __post_init__(self) -> None:
        n = self.num_players
        if self.role not in ROLES:
            raise ValueError(f"PlayerView: role must be one of {ROLES}, got {self.role!r}")
        if not 0 <= self.player < n:
            raise ValueError(f"PlayerView: player {self.player} is not in 0..{n - 1}")
        for name in ("alive", "partners"):
            bad = [p for p in getattr(self, name) if not 0 <= p < n]
            if bad:
                raise ValueError(f"PlayerView: {name} has unknown players {bad}")
        if self.partners and self.role != "werewolf":
            raise ValueError("PlayerView: only a werewolf has partners")
        object.__setattr__(self, "alive", tuple(self.alive))
        object.__setattr__(self, "partners", tuple(self.partners))
        object.__setattr__(self, "checks", _frozen_map(self.checks))
        object.__setattr__(
            self, "beliefs", _frozen_map({p: dict(d) for p, d in self.beliefs.items()})
        )
        object.__setattr__(self, "suspicion", _frozen_map(self.suspicion))

    def with_scratchpad(self, scratchpad: str) -> PlayerView:
        return dataclasses.replace(self, scratchpad=scratchpad)


# --- from the rules' knowledge ------------------------------------------------------


def _note(kind: str, rnd: int, data: Mapping[str, Any], me: int) -> str | None:
    """A private event in words (None for events that say nothing new)."""
    name = prompts.player_name
    if kind == "wolf_vote":
        who = "You" if data["player"] == me else name(data["player"])
        return f"Night {rnd}: {who} chose to attack {name(data['target'])}."
    if kind in ("victim", "witch_victim") and data["target"] is not None:
        return f"Night {rnd}: the werewolves attacked {name(data['target'])}."
    if kind == "protect":
        return f"Night {rnd}: you protected {name(data['target'])}."
    if kind == "witch_save" and data["used"]:
        return f"Night {rnd}: you used your healing potion."
    if kind == "witch_poison" and data["target"] is not None:
        return f"Night {rnd}: you poisoned {name(data['target'])}."
    return None


def _announcement(kind: str, data: Mapping[str, Any]) -> str | None:
    roles = data.get("roles") or {}

    def who(p: int) -> str:
        r = roles.get(str(p))
        return f"{prompts.player_name(p)} ({r})" if r else prompts.player_name(p)

    if kind == "deaths":
        dead = list(data["players"])
        return (
            "Found dead this morning: " + ", ".join(who(p) for p in dead) + "."
            if dead
            else "Nobody died last night."
        )
    if kind == "exile":
        p = data["player"]
        return f"{who(p)} was exiled." if p is not None else "Nobody was exiled."
    return None


def view_from_knowledge(
    knowledge: Knowledge,
    *,
    texts: Mapping[int, str] | None = None,
    scratchpad: str = "",
    beliefs: Mapping[int, Mapping[str, float]] | None = None,
    suspicion: Mapping[int, float] | None = None,
    belief_text: str = "",
    history_limit: int | None = None,
) -> PlayerView:
    """The :class:`PlayerView` of a player from the rules' :class:`~games.werewolf.rules.Knowledge`.

    Statements are the public ``speech`` events in order; statement id ``i`` is
    the ``i``-th speech of the game (the same id for every player, since speech
    is public). Their words come from ``texts`` (id -> statement text); a speech
    without text (e.g. from a rule-based player) gets the flat rendering of its
    act (:func:`prompts.plain_statement`).

    The *public messages* are, in order, the announcements (deaths, exiles), the
    statements and each day's vote tally (one message per day). With
    ``history_limit=K`` only the last K of them are kept (the rest are counted
    in ``earlier_messages``); private facts, checks, the scratchpad, beliefs and
    suspicion are never cut.

    Args:
      knowledge: ``rules.knowledge(state, player)``.
      texts: Statement texts by statement id.
      scratchpad: The player's private notes.
      beliefs: Opponent-model beliefs ``{player: {role: probability}}``.
      suspicion: The player's deception scores ``{speaker: score}``.
      belief_text: An opponent model's own belief lines (see :class:`PlayerView`).
      history_limit: Keep only the last this many public messages (None: all).
    """
    from games.werewolf.rules import action_from_json

    if history_limit is not None and history_limit < 1:
        raise ValueError(f"view_from_knowledge: history_limit must be >= 1, got {history_limit}")

    texts = texts or {}
    me = knowledge.player
    # Public messages in order, as (kind, value); cut to the window below.
    messages: list[tuple[str, Any]] = []
    notes: list[str] = []
    num_speeches = 0
    for e in knowledge.events:
        if e.kind == "speech":
            act = action_from_json(e.data["act"])
            i = num_speeches
            num_speeches += 1
            text = texts.get(i) or prompts.plain_statement(act_dict(act))
            messages.append(
                ("statement", PublicStatement(i, e.round, int(e.data["player"]), act, text))
            )
        elif e.kind == "votes":
            tally = [
                (e.round, int(v), t)
                for v, t in sorted(e.data["votes"].items(), key=lambda kv: int(kv[0]))
            ]
            messages.append(("votes", tally))
        elif e.visible_to is None:
            line = _announcement(e.kind, e.data)
            if line is not None:
                messages.append(("announcement", (e.round, line)))
        else:
            line = _note(e.kind, e.round, e.data, me)
            if line is not None:
                notes.append(line)
    earlier = 0
    if history_limit is not None and len(messages) > history_limit:
        earlier = len(messages) - history_limit
        messages = messages[earlier:]
    statements = [v for k, v in messages if k == "statement"]
    votes: list[tuple[int, int, int | None]] = [x for k, v in messages if k == "votes" for x in v]
    announcements = [v for k, v in messages if k == "announcement"]
    return PlayerView(
        player=me,
        role=str(knowledge.role),
        num_players=knowledge.config.num_players,
        alive=knowledge.living(),
        round=knowledge.round,
        partners=knowledge.partners,
        checks=dict(knowledge.checks),
        check_results=tuple(knowledge.config.check_results),
        statements=tuple(statements),
        votes=tuple(votes),
        announcements=tuple(announcements),
        private_notes=tuple(notes),
        scratchpad=scratchpad,
        beliefs=beliefs or {},
        suspicion=suspicion or {},
        belief_text=belief_text,
        earlier_messages=earlier,
    )


def partner_votes(knowledge: Knowledge) -> dict[int, int]:
    """Tonight's choices of the other werewolves (``{partner: target}``), for :func:`night_kill`."""
    return {
        int(e.data["player"]): int(e.data["target"])
        for e in knowledge.events
        if e.kind == "wolf_vote"
        and e.round == knowledge.round
        and e.data["player"] != knowledge.player
    }


def tonight_victim(knowledge: Knowledge) -> int | None:
    """Tonight's victim as the player was told (the witch), else None."""
    victim = None
    for e in knowledge.events:
        # Werewolves see ``victim``; the witch is told through ``witch_victim``.
        if e.kind in ("victim", "witch_victim") and e.round == knowledge.round:
            victim = e.data["target"]
    return victim


def speech_menu(legal: Sequence[SpeechAct]) -> dict[str, list[Any]]:
    """``acts``, ``tones``, ``targets`` and ``roles`` for :func:`speak` from the legal speech acts.

    Targets are those of accuse / defend (the living others); a share_check is
    offered about the same players, with the results of the view's
    ``check_results``. The tone ``any`` (no steering) is offered only when it is
    the only legal tone: a model choosing its own tone picks a concrete one.
    """
    kinds = {x.kind for x in legal}
    acts = [a for a in SPEECH_ACTS if a in kinds]
    tones = [t for t in TONES if t != "any" and any(x.tone == t for x in legal)]
    if not tones and any(x.tone == "any" for x in legal):
        tones = ["any"]
    targets = sorted({x.target for x in legal if x.kind in ("accuse", "defend")} - {None})
    roles = [r for r in ROLES if any(x.kind == "claim" and x.role == r for x in legal)]
    return {"acts": acts, "tones": tones, "targets": targets, "roles": roles}


# --- rendering the context ---------------------------------------------------------


def _knowledge_text(view: PlayerView) -> str:
    lines = [f"You are {prompts.player_name(view.player)}, {prompts.with_article(view.role)}."]
    for p, result in sorted(view.checks.items()):
        lines.append(f"Your check of {prompts.player_name(p)}: {result}.")
    lines.extend(view.private_notes)
    sus = prompts.suspicion_text(view.suspicion)
    if sus:
        lines.append(sus)
    return "\n".join(lines)


def _history_text(view: PlayerView) -> str:
    rounds = sorted(
        {d for d, _ in view.announcements}
        | {s.round for s in view.statements}
        | {d for d, _, _ in view.votes}
    )
    if not rounds:
        return "(nothing yet)"
    out = []
    if view.earlier_messages:
        out.append(f"({view.earlier_messages} earlier public messages not shown)")
    for d in rounds:
        out.append(f"Round {d}:")
        out.extend(f"  {text}" for r, text in view.announcements if r == d)
        out.extend(
            f"  {prompts.player_name(s.speaker)} said: {s.text}"
            for s in view.statements
            if s.round == d
        )
        votes = [(v, t) for r, v, t in view.votes if r == d]
        if votes:
            out.append(
                "  Votes: "
                + "; ".join(
                    f"{prompts.player_name(v)} -> "
                    + (prompts.player_name(t) if t is not None else "nobody")
                    for v, t in votes
                )
            )
    return "\n".join(out)


def context_fields(view: PlayerView) -> dict[str, Any]:
    """The fields every Werewolf prompt takes (:data:`prompts.CONTEXT_FIELDS` and extras)."""
    return {
        "name": prompts.player_name(view.player),
        "num_players": view.num_players,
        "role": view.role,
        "identity": prompts.identity_text(view.role, view.partners),
        "round": view.round,
        "alive_text": prompts.players_text(view.alive),
        "knowledge": _knowledge_text(view),
        "history": _history_text(view),
        "scratchpad": view.scratchpad or "(empty)",
        "belief_lines": view.belief_text or prompts.belief_lines(view.beliefs),
        "player": view.player,
        "alive": list(view.alive),
        "partners": list(view.partners),
        "checks": {str(p): r for p, r in view.checks.items()},
        "statements": [s.to_fields() for s in view.statements],
        "votes": [{"round": d, "voter": v, "target": t} for d, v, t in view.votes],
        "beliefs": {str(p): dict(d) for p, d in view.beliefs.items()},
        "suspicion": {str(p): float(s) for p, s in view.suspicion.items()},
    }


def call_seed(base: int, *parts: Any) -> int:
    """A deterministic seed in ``[0, 2**31)`` from a base seed and labels (round, player, task)."""
    payload = repr((int(base), *parts)).encode("utf-8")
    return int.from_bytes(hashlib.sha256(payload).digest()[:4], "little") & 0x7FFFFFFF


def make_call(template: PromptTemplate, fields: Mapping[str, Any], *, seed: int) -> Call[Any]:
    """Renders ``template`` and attaches the task's parser and fallback."""
    request = template.render(fields, seed=seed)
    return Call(
        request=request,
        parser=parsing.parser_for(request),
        fallback=parsing.FALLBACKS[request.task],
    )


def _check_role(fn: str, view: PlayerView, roles: tuple[str, ...]) -> None:
    if view.role not in roles:
        raise ValueError(
            f"{fn}: player {view.player} is a {view.role}; only {' or '.join(roles)} acts here"
        )


def _check_options(fn: str, view: PlayerView, options: Sequence[int]) -> list[int]:
    opts = [int(p) for p in options]
    if not opts:
        raise ValueError(f"{fn}: no options for player {view.player}; the rules must offer one")
    bad = [p for p in opts if not 0 <= p < view.num_players]
    if bad:
        raise ValueError(f"{fn}: options name unknown players {bad}")
    return opts


# --- steps -------------------------------------------------------------------------


def night_kill(
    view: PlayerView,
    options: Sequence[int],
    *,
    partner_votes: Mapping[int, int] | None = None,
    seed: int,
) -> Step[int | None]:
    """A werewolf's night target, seeing its partners' choices so far."""
    _check_role("night_kill", view, ("werewolf",))
    opts = _check_options("night_kill", view, options)
    votes = dict(partner_votes or {})
    fields = context_fields(view) | {
        "options": opts,
        "options_text": prompts.players_text(opts),
        "partner_votes": {str(p): t for p, t in votes.items()},
        "partner_votes_text": "; ".join(
            f"{prompts.player_name(p)} -> {prompts.player_name(t)}"
            for p, t in sorted(votes.items())
        )
        or "none yet",
    }
    return (yield make_call(prompts.NIGHT_KILL, fields, seed=seed))


def night_protect(view: PlayerView, options: Sequence[int], *, seed: int) -> Step[int | None]:
    """The doctor's or guard's protection (the rules leave out a guard's repeat)."""
    _check_role("night_protect", view, ("doctor", "guard"))
    opts = _check_options("night_protect", view, options)
    fields = context_fields(view) | {"options": opts, "options_text": prompts.players_text(opts)}
    return (yield make_call(prompts.NIGHT_PROTECT, fields, seed=seed))


def night_check(view: PlayerView, options: Sequence[int], *, seed: int) -> Step[int | None]:
    """The seer's check."""
    _check_role("night_check", view, ("seer",))
    opts = _check_options("night_check", view, options)
    fields = context_fields(view) | {
        "options": opts,
        "options_text": prompts.players_text(opts),
        "check_kind": prompts.check_kind_text(view.check_results),
    }
    return (yield make_call(prompts.NIGHT_CHECK, fields, seed=seed))


def night_witch(
    view: PlayerView,
    options: Sequence[int],
    *,
    victim: int | None,
    can_save: bool,
    can_poison: bool,
    seed: int,
) -> Step[parsing.WitchChoice]:
    """The witch's night: save tonight's victim and/or poison one of ``options``.

    One call decides both potions; the runner applies ``save`` at the rules'
    save step and ``poison`` at the poison step.
    """
    _check_role("night_witch", view, ("witch",))
    opts = _check_options("night_witch", view, options) if can_poison else []
    victim_text, potions_text = prompts.witch_texts(victim, can_save, can_poison)
    fields = context_fields(view) | {
        "options": opts,
        "options_text": prompts.players_text(opts) if can_poison else "nobody",
        "victim": victim,
        "can_save": bool(can_save),
        "can_poison": bool(can_poison),
        "victim_text": victim_text,
        "potions_text": potions_text,
    }
    return (yield make_call(prompts.NIGHT_WITCH, fields, seed=seed))


def bid(view: PlayerView, *, seed: int) -> Step[int]:
    """The player's bid (0..10) to speak next."""
    return (yield make_call(prompts.BID, context_fields(view), seed=seed))


def speak(
    view: PlayerView,
    *,
    acts: Sequence[str],
    tones: Sequence[str],
    targets: Sequence[int],
    roles: Sequence[str],
    seed: int,
) -> Step[Speech]:
    """The player's turn: choose a speech act (and tone), then say it.

    Args:
      view: The speaker's view.
      acts: Legal speech acts (``rules.SPEECH_ACTS`` or a subset).
      tones: Tones to choose from (one tone to impose it).
      targets: Legal targets of accuse / defend / share_check.
      roles: Roles the player may claim.
      seed: The seed of the choice; the statement uses a derived one.
    """
    if not acts or not tones:
        raise ValueError("speak: acts and tones must be non-empty; pass the legal ones")
    bad = [a for a in acts if a not in SPEECH_ACTS] + [t for t in tones if t not in TONES]
    bad += [r for r in roles if r not in ROLES]
    if bad:
        raise ValueError(
            f"speak: unknown acts, tones or roles {bad}; see rules.SPEECH_ACTS/TONES/ROLES"
        )
    targets = _check_options("speak", view, targets) if targets else []
    roles = list(roles)
    results = list(view.check_results)
    fields = context_fields(view) | {
        "acts": list(acts),
        "tones": list(tones),
        "targets": targets,
        "roles": roles,
        "results": results,
        "options_text": prompts.speech_options_text(acts, tones, targets, roles, results),
    }
    act = yield make_call(prompts.SPEECH_ACT, fields, seed=seed)
    text = yield from statement(view, act, seed=call_seed(seed, "statement"))
    return Speech(act=act, text=text)


def statement(view: PlayerView, act: SpeechAct, *, seed: int) -> Step[str]:
    """The words of a chosen speech act, in its tone (the second half of :func:`speak`)."""
    ad = act_dict(act)
    fields = context_fields(view) | {
        "act": ad,
        "tone": act.tone,
        "act_text": prompts.act_text(ad),
        "tone_line": prompts.tone_line(act.tone),
    }
    return (yield make_call(prompts.STATEMENT, fields, seed=seed))


def vote(view: PlayerView, options: Sequence[int], *, seed: int) -> Step[int | None]:
    """The player's vote to exile one of ``options``."""
    opts = _check_options("vote", view, options)
    fields = context_fields(view) | {"options": opts, "options_text": prompts.players_text(opts)}
    return (yield make_call(prompts.VOTE, fields, seed=seed))


def update_scratchpad(view: PlayerView, phase: str, *, seed: int) -> Step[str]:
    """The player's new private notes after ``phase`` (e.g. ``"day 2"``)."""
    fields = context_fields(view) | {"phase": phase}
    return (yield make_call(prompts.SCRATCHPAD, fields, seed=seed))


def _self_call(view: PlayerView, s: PublicStatement, seed: int) -> Call[Any]:
    ad = act_dict(s.act)
    return make_call(
        prompts.SELF_ANALYSIS,
        context_fields(view)
        | {"act": ad, "act_text": prompts.act_text(ad), "statement_text": s.text},
        seed=seed,
    )


def _peer_call(view: PlayerView, s: PublicStatement, seed: int) -> Call[Any]:
    return make_call(
        prompts.PEER_ANALYSIS,
        context_fields(view)
        | {
            "speaker": s.speaker,
            "speaker_name": prompts.player_name(s.speaker),
            "act": act_dict(s.act),
            "statement_text": s.text,
        },
        seed=seed,
    )


def analyse_statement(
    views: Mapping[int, PlayerView], statement: PublicStatement, *, seed: int
) -> Step[tuple[SelfAnalysis | None, tuple[PeerAnalysis, ...]]]:
    """The speaker's self-analysis and every other player's peer analysis, as one batch.

    Args:
      views: Views of the analysts: the speaker (for the self-analysis; left out
        when the speaker is no LLM player) and every observer (the living players);
        the speaker's view must include the statement it just made.
      statement: The statement analysed.
      seed: Base seed; each analyst gets a derived one.

    Returns:
      The self-analysis (``None`` if its answer fell back or the speaker was
      not among ``views``) and the peer analyses that parsed, in player order.
    """
    observers = sorted(p for p in views if p != statement.speaker)
    has_self = statement.speaker in views
    calls = (
        [_self_call(views[statement.speaker], statement, call_seed(seed, "self"))]
        if has_self
        else []
    )
    calls += [_peer_call(views[o], statement, call_seed(seed, "peer", o)) for o in observers]
    if not calls:
        return None, ()
    answers = yield calls
    own = answers[0] if has_self else None
    peer_answers = answers[1:] if has_self else answers
    self_rec = (
        SelfAnalysis(
            statement=statement.statement,
            speaker=statement.speaker,
            deceptive=own.deceptive,
            kind=own.kind,
            confidence=own.confidence,
        )
        if own is not None
        else None
    )
    peers = tuple(
        PeerAnalysis(
            statement=statement.statement,
            observer=o,
            speaker=statement.speaker,
            deceptive=a.deceptive,
            confidence=a.confidence,
            suspicion=a.suspicion,
            reasoning=a.reasoning,
        )
        for o, a in zip(observers, peer_answers, strict=True)
        if a is not None
    )
    return self_rec, peers


# --- one decision of the rules ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Decision:
    """A rules action chosen by the LLM player.

    Attributes:
      action: A legal ``rules`` action.
      text: The statement's words (speeches only; ``None`` for a defaulted
        speech: use :func:`prompts.plain_statement` of the act).
      defaulted: True when the model's answer fell back and no legal action
        followed from it, so a seeded random legal action was taken instead.
    """

    action: Action
    text: str | None = None
    defaulted: bool = False


_TARGET_STEPS = {
    "night_wolves": "kill",
    "night_doctor": "protect",
    "night_guard": "protect",
    "night_seer": "check",
    "day_vote": "vote",
}


def decide(
    knowledge: Knowledge,
    legal: Sequence[Action],
    *,
    seed: int,
    rng: np.random.Generator,
    texts: Mapping[int, str] | None = None,
    scratchpad: str = "",
    beliefs: Mapping[int, Mapping[str, float]] | None = None,
    suspicion: Mapping[int, float] | None = None,
    belief_text: str = "",
    history_limit: int | None = None,
) -> Step[Decision]:
    """The LLM player's action at a rules decision point (``knowledge.phase``).

    Phases: ``night_wolves`` (:func:`night_kill`, with the partners' choices),
    ``night_doctor`` / ``night_guard`` (:func:`night_protect`), ``night_seer``
    (:func:`night_check`), ``night_witch_save`` and ``night_witch_poison``
    (:func:`night_witch`, asked once per step: the save step asks about the
    healing potion only, the poison step about the poison only, and its prompt
    already shows whether she saved), ``day_bid`` (:func:`bid`), ``day_speak``
    (:func:`speak`, with :func:`speech_menu` of the legal acts) and ``day_vote``
    (:func:`vote`).

    A fallback answer that gives no legal action (``None`` for a target: the
    rules have no abstention) becomes a legal action drawn with ``rng`` and is
    marked ``defaulted``; the call itself is already counted as a fallback.

    Args:
      knowledge: ``rules.knowledge(state, player)`` of the acting player.
      legal: ``rules.legal_actions(state)``.
      seed: The seed of the call.
      rng: The seat's generator (for defaulted actions only).
      texts, scratchpad, beliefs, suspicion, belief_text, history_limit: As for
        :func:`view_from_knowledge`.

    Raises:
      ValueError: no legal action, or a phase that is not a player decision.
    """
    if not legal:
        raise ValueError("decide: no legal actions; it is not this player's turn")
    view = view_from_knowledge(
        knowledge,
        texts=texts,
        scratchpad=scratchpad,
        beliefs=beliefs,
        suspicion=suspicion,
        belief_text=belief_text,
        history_limit=history_limit,
    )
    phase = knowledge.phase
    targets = [a.player for a in legal if isinstance(a, Target)]

    def default() -> Decision:
        return Decision(legal[int(rng.integers(len(legal)))], defaulted=True)

    if phase in _TARGET_STEPS:
        kind = _TARGET_STEPS[phase]
        if kind == "kill":
            step = night_kill(view, targets, partner_votes=partner_votes(knowledge), seed=seed)
        elif kind == "protect":
            step = night_protect(view, targets, seed=seed)
        elif kind == "check":
            step = night_check(view, targets, seed=seed)
        else:
            step = vote(view, targets, seed=seed)
        choice = yield from step
        return Decision(Target(choice)) if choice in targets else default()
    if phase == "night_witch_save":
        choice = yield from night_witch(
            view,
            [],
            victim=tonight_victim(knowledge),
            can_save=any(isinstance(a, Save) for a in legal),
            can_poison=False,
            seed=seed,
        )
        return Decision(Save() if choice.save else Skip())
    if phase == "night_witch_poison":
        choice = yield from night_witch(
            view,
            targets,
            victim=tonight_victim(knowledge),
            can_save=False,
            can_poison=bool(targets),
            seed=seed,
        )
        return Decision(Target(choice.poison) if choice.poison in targets else Skip())
    if phase == "day_bid":
        amount = yield from bid(view, seed=seed)
        return Decision(Bid(amount)) if Bid(amount) in legal else default()
    if phase == "day_speak":
        speech = yield from speak(view, **speech_menu(legal), seed=seed)
        if speech.act not in legal:
            return default()
        return Decision(speech.act, text=speech.text)
    raise ValueError(f"decide: phase {phase!r} is not a player decision")
