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

Players to choose from (night targets, protections, checks, the witch's poison,
vote candidates, speech-act targets) are listed in an order seeded by the rest of
the request (:mod:`games.werewolf.players.order`); the schema's enum follows it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from games.engine.calls import Call, Step
from games.werewolf.deception.tracking import PeerAnalysis, SelfAnalysis
from games.werewolf.players import parsing, prompts
from games.werewolf.players.order import offer_order
from games.werewolf.players.view import (
    PlayerView,
    PublicStatement,
    Speech,
    act_dict,
    context_fields,
    partner_votes,
    speech_menu,
    tonight_victim,
    view_from_knowledge,
)
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
    "analyse_statement",
    "Decision",
    "bid",
    "call_seed",
    "decide",
    "make_call",
    "night_check",
    "night_kill",
    "night_protect",
    "night_witch",
    "speak",
    "statement",
    "with_offered",
    "update_scratchpad",
    "vote",
]


def call_seed(base: int, *parts: Any) -> int:
    """A deterministic seed in ``[0, 2**31)`` from a base seed and labels (round, player, task)."""
    payload = repr((int(base), *parts)).encode("utf-8")
    return int.from_bytes(hashlib.sha256(payload).digest()[:4], "little") & 0x7FFFFFFF


def make_call(
    template: PromptTemplate, fields: Mapping[str, Any], *, seed: int, structured: bool = False
) -> Call[Any]:
    """Renders ``template`` (with its answer schema when ``structured``) and attaches the
    task's parser and fallback."""
    request = template.render(fields, seed=seed, structured=structured)
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


def _listed(
    template: PromptTemplate, fields: Mapping[str, Any], key: str, choices: Sequence[int], seed: int
) -> list[int]:
    """``choices`` in the order ``template``'s request lists them under ``key``.

    The order is seeded by the request's other ``fields``, the choices themselves
    (ascending) and ``seed`` (:func:`~games.werewolf.players.order.offer_order`).
    """
    canonical = {**fields, key: sorted(int(p) for p in choices)}
    return offer_order(choices, task=template.task, fields=canonical, seed=seed)


def _with_options(
    template: PromptTemplate, fields: Mapping[str, Any], options: Sequence[int], seed: int
) -> dict[str, Any]:
    """``fields`` with ``options`` and ``options_text``, the players in the request's order."""
    listed = _listed(template, fields, "options", options, seed)
    return {**fields, "options": listed, "options_text": prompts.players_text(listed)}


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
        "partner_votes": {str(p): t for p, t in votes.items()},
        "partner_votes_text": "; ".join(
            f"{prompts.player_name(p)} -> {prompts.player_name(t)}"
            for p, t in sorted(votes.items())
        )
        or "none yet",
    }
    fields = _with_options(prompts.NIGHT_KILL, fields, opts, seed)
    return (yield make_call(prompts.NIGHT_KILL, fields, seed=seed, structured=view.structured))


def night_protect(view: PlayerView, options: Sequence[int], *, seed: int) -> Step[int | None]:
    """The doctor's or guard's protection (the rules leave out a guard's repeat)."""
    _check_role("night_protect", view, ("doctor", "guard"))
    opts = _check_options("night_protect", view, options)
    fields = _with_options(prompts.NIGHT_PROTECT, context_fields(view), opts, seed)
    return (yield make_call(prompts.NIGHT_PROTECT, fields, seed=seed, structured=view.structured))


def night_check(view: PlayerView, options: Sequence[int], *, seed: int) -> Step[int | None]:
    """The seer's check."""
    _check_role("night_check", view, ("seer",))
    opts = _check_options("night_check", view, options)
    fields = context_fields(view) | {"check_kind": prompts.check_kind_text(view.check_results)}
    fields = _with_options(prompts.NIGHT_CHECK, fields, opts, seed)
    return (yield make_call(prompts.NIGHT_CHECK, fields, seed=seed, structured=view.structured))


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
        "victim": victim,
        "can_save": bool(can_save),
        "can_poison": bool(can_poison),
        "victim_text": victim_text,
        "potions_text": potions_text,
    }
    fields = _with_options(prompts.NIGHT_WITCH, fields, opts, seed)  # none: "nobody"
    return (yield make_call(prompts.NIGHT_WITCH, fields, seed=seed, structured=view.structured))


def bid(view: PlayerView, *, seed: int) -> Step[int]:
    """The player's bid (0..10) to speak next."""
    return (
        yield make_call(prompts.BID, context_fields(view), seed=seed, structured=view.structured)
    )


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
        "roles": roles,
        "results": results,
    }
    targets = _listed(prompts.SPEECH_ACT, fields, "targets", targets, seed)
    fields |= {
        "targets": targets,
        "options_text": prompts.speech_options_text(acts, tones, targets, roles, results),
    }
    act = yield make_call(prompts.SPEECH_ACT, fields, seed=seed, structured=view.structured)
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
    return (yield make_call(prompts.STATEMENT, fields, seed=seed, structured=view.structured))


def vote(view: PlayerView, options: Sequence[int], *, seed: int) -> Step[int | None]:
    """The player's vote to exile one of ``options``."""
    opts = _check_options("vote", view, options)
    fields = _with_options(prompts.VOTE, context_fields(view), opts, seed)
    return (yield make_call(prompts.VOTE, fields, seed=seed, structured=view.structured))


def update_scratchpad(view: PlayerView, phase: str, *, seed: int) -> Step[str]:
    """The player's new private notes after ``phase`` (e.g. ``"day 2"``)."""
    fields = context_fields(view) | {"phase": phase}
    return (yield make_call(prompts.SCRATCHPAD, fields, seed=seed, structured=view.structured))


def _self_call(view: PlayerView, s: PublicStatement, seed: int) -> Call[Any]:
    ad = act_dict(s.act)
    return make_call(
        prompts.SELF_ANALYSIS,
        context_fields(view)
        | {"act": ad, "act_text": prompts.act_text(ad), "statement_text": s.text},
        seed=seed,
        structured=view.structured,
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
        structured=view.structured,
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
      offered: The players the prompt listed to choose from, in the order it
        listed them (night targets, protections, checks and votes; empty for
        other decisions).
    """

    action: Action
    text: str | None = None
    defaulted: bool = False
    offered: tuple[int, ...] = ()


_TARGET_STEPS = {
    "night_wolves": "kill",
    "night_doctor": "protect",
    "night_guard": "protect",
    "night_seer": "check",
    "day_vote": "vote",
}


def with_offered(step: Step[int | None]) -> Step[tuple[int | None, tuple[int, ...]]]:
    """Runs a one-call target step; also returns the players its request listed, in order."""
    call = next(step)
    assert isinstance(call, Call)  # a target step asks one call
    answer = yield call
    try:
        step.send(answer)
    except StopIteration as stop:
        return stop.value, tuple(int(p) for p in call.request.fields["options"])
    raise RuntimeError("with_offered: a target step asked a second call")


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
    structured: bool = False,
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
      texts, scratchpad, beliefs, suspicion, belief_text, history_limit, structured: As
        for :func:`view_from_knowledge`.

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
        structured=structured,
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
        choice, offered = yield from with_offered(step)
        return Decision(Target(choice), offered=offered) if choice in targets else default()
    if phase == "night_witch_save":
        witch = yield from night_witch(
            view,
            [],
            victim=tonight_victim(knowledge),
            can_save=any(isinstance(a, Save) for a in legal),
            can_poison=False,
            seed=seed,
        )
        return Decision(Save() if witch.save else Skip())
    if phase == "night_witch_poison":
        witch = yield from night_witch(
            view,
            targets,
            victim=tonight_victim(knowledge),
            can_save=False,
            can_poison=bool(targets),
            seed=seed,
        )
        return Decision(Target(witch.poison) if witch.poison in targets else Skip())
    if phase == "day_bid":
        amount = yield from bid(view, seed=seed)
        return Decision(Bid(amount)) if Bid(amount) in legal else default()
    if phase == "day_speak":
        acts = [a for a in legal if isinstance(a, SpeechAct)]  # every legal action here
        menu = speech_menu(acts, in_play=knowledge.config.roles_in_play)
        speech = yield from speak(view, **menu, seed=seed)
        if speech.act not in legal:
            return default()
        return Decision(speech.act, text=speech.text)
    raise ValueError(f"decide: phase {phase!r} is not a player decision")
