"""Werewolf belief providers: one seat's opponent model fed from what the seat sees.

A :class:`SeatBeliefs` holds one seat's opponent model
(``none``, ``dirichlet``, ``gratr``, ``native-rag`` or ``rerank-rag``, built by
:func:`~games.werewolf.players.seat_models.make_seat_model`) and turns the rules' events *that seat can see*
into :class:`gt_llm.opponents.Evidence`:

* **public statements** (``speech``): every model gets the statement as a
  ``message`` (the same history for all). ``gratr`` and ``dirichlet``
  additionally ask the LLM GRATR's two extraction prompts (identity judgments
  ``[Player][identity][confidence][analysis]`` and intents
  ``[Role1][Type][Role2][Reason][Score]``, ``002`` appendix 1-2) about each
  statement of another player (a judgment naming a role that is not in play
  is dropped); the two requests of every statement are one
  batch (:meth:`SeatBeliefs.observe`), and the runner may run the steps of
  several seats together so that their requests form one batch. A statement
  that says nothing new is not sent. A team check's "not a werewolf" is asked
  as a defence of the target (the extraction's identities are roles, and a
  check result ``not_werewolf`` is none).
* **votes** (``votes``): a message each, and, as structured evidence, an
  Attack intent of the voter towards the target with credibility
  ``-vote_credibility`` (a vote is an action, not words: no LLM is asked).
* **seer checks** (the seer's private ``check`` events), **revealed roles**
  (``deaths`` / ``exile`` with ``reveal_roles``) and a werewolf's **partners**
  are certain facts: identity evidence with ``certain=True``, pinned by every
  model (``none`` and the retrieval baselines keep facts too) and never
  overwritten. What they rule out is a negative fact (``negated=True``): a
  werewolf knows every non-partner is not a werewolf, and a team check that
  finds "not a werewolf" certifies exactly that — both pin the village side
  without naming a role.
* announcements (deaths, exiles) are messages.

:mod:`games.werewolf.players.seat_models` builds the models (the prior, the
alignment, Dirichlet's threshold; also for the day study); this module
re-exports its names.

The prompt fields (:meth:`SeatBeliefs.consult`) are the model's
:class:`~gt_llm.opponents.PromptFields` (GRATR: per player the inferred
identity, ally / adversary / unsure by epsilon, the trust and the evidence
chains; Dirichlet: the most likely roles with probabilities; baselines: the
history and the retrieved messages) plus ``beliefs``, the per-player role
distribution that the stand-in reads (:func:`belief_map`: the model's one
reading, ``belief(p).distribution``; for the retrieval baselines the reading
of what they retrieved for this decision) and ``known``, what the seat knows
for sure (:func:`known_roles`, the same for every model). Every model consults
with the same goal text per decision kind (:func:`decision_kind`: night
action, vote, statement; :func:`goal_text`), which is the retrieval
baselines' query.

Events are time-stamped with the rules' round (a night and the following day),
so GRATR's decay (Eq. 4, by time step) decays per round.

:meth:`SeatBeliefs.observe` is the step form of
:func:`gt_llm.opponents.extract_statement_evidence` (same requests, parsers and
"no evidence" fallback), so that the engine batches it.
:class:`games.werewolf.players.table_beliefs.TableBeliefs` puts a
:class:`SeatBeliefs` behind the LLM game loop's per-seat hook and renders the
fields as the prompt's belief text.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from games.engine.calls import Call, Step
from games.werewolf.players import prompts
from games.werewolf.players.seat_models import (
    WOLF,
    BeliefSettings,
    check_model_name,
    hypotheses_of,
    make_seat_model,
    role_prior,
    seat_context,
)
from games.werewolf.rules import ROLES, SPECIAL_ROLES, Config, Event
from gt_llm.opponents import (
    Evidence,
    OpponentContext,
    OpponentModel,
    ParsedRecords,
    PromptFields,
    SpeechAct,
    StatementArgs,
    identity_label,
    identity_request,
    intent_request,
    intents_to_evidence,
    judgments_to_evidence,
    parse_identity_judgments,
    parse_intents,
    read_identity_judgments,
    read_intents,
)

__all__ = [
    "BeliefSettings",
    "EXTRACTING_MODELS",
    "SEAT_EVENT_KINDS",
    "SeatBeliefs",
    "VILLAGE_SIDE",
    "belief_map",
    "check_model_name",
    "decision_kind",
    "goal_text",
    "hypotheses_of",
    "identity_labels",
    "known_roles",
    "make_seat_beliefs",
    "make_seat_model",
    "retrieval_reading",
    "seat_events",
    "role_prior",
    "seat_context",
]

#: The models that ask the LLM to extract evidence from statements.
EXTRACTING_MODELS = ("gratr", "dirichlet", "bayes")
#: The retrieval baselines (their belief reading comes from what they retrieve).
RETRIEVAL_MODELS = ("native-rag", "rerank-rag")
#: Odds factor per net accusation in a retrieved message (:func:`retrieval_reading`).
RETRIEVAL_ODDS = 2.0
#: Message kinds that count against / for the subject in :func:`retrieval_reading`.
_AGAINST = ("accuse", "vote", "share_check:werewolf")
_FOR = ("defend", "share_check:not_werewolf")
#: What a seat knows of a player whose side, not role, is certain.
VILLAGE_SIDE = "village side"


#: Decision kinds and what each asks (the retrieval baselines' query per kind).
_KIND_GOALS = {
    "night": "choose whom to target tonight",
    "vote": "choose whom to vote out",
    "statement": "decide what to say and about whom",
}


def decision_kind(phase: str) -> str:
    """The kind of decision a rules phase asks for: ``night``, ``vote`` or ``statement``."""
    if phase.startswith("night"):
        return "night"
    if phase == "day_vote" or phase == "vote":
        return "vote"
    return "statement"


def goal_text(seat: int, role: str, phase: str) -> str:
    """The decision's goal text, the same for every model (the RAG query, GRATR's goal).

    One text per decision kind (:func:`decision_kind`), so that the retrieval
    baselines retrieve for a night action, a vote or a statement separately.
    """
    side = "find and protect the other werewolves" if role == WOLF else "find the werewolves"
    kind = decision_kind(phase)
    return (
        f"{prompts.player_name(seat)} is {prompts.with_article(role)} and must {side}: "
        f"{_KIND_GOALS[kind]} ({kind})."
    )


def _speech_act(speaker: str, act: Mapping[str, Any]) -> SpeechAct | None:
    """The extraction's speech act of a rules speech act (None: nothing to extract)."""
    kind = act["kind"]
    target = prompts.player_name(act["target"]) if act.get("target") is not None else ""
    if kind == "claim":
        return SpeechAct("claim", speaker, role=str(act["role"]))
    if kind in ("accuse", "defend"):
        return SpeechAct(kind, speaker, target=target)
    if kind == "share_check":
        if act["result"] in ROLES:
            return SpeechAct("share_check", speaker, target=target, role=str(act["result"]))
        return SpeechAct("defend", speaker, target=target)  # "not a werewolf" (module doc)
    return None


def _empty(_request: Any) -> ParsedRecords:
    return ParsedRecords(())


@dataclasses.dataclass(frozen=True)
class SeatBeliefs:
    """One seat's opponent model and how much of the seat's event stream it has seen.

    Attributes:
      seat: The observer.
      role: Its role.
      config: The game's rules settings.
      model: The opponent model (an immutable value).
      settings: Shared settings.
      statements: Public statements seen so far (statement ids are speech counts).
      last_evidence: The evidence the last :meth:`observe` gave the model (for logs).
    """

    seat: int
    role: str
    config: Config
    model: OpponentModel
    settings: BeliefSettings = BeliefSettings()
    statements: int = 0
    last_evidence: tuple[Evidence, ...] = ()

    @property
    def name(self) -> str:
        return self.model.name

    # -- events -> evidence ---------------------------------------------------

    def _request_pair(self, statement: str, act: SpeechAct, sid: int) -> list[Call]:
        ctx = self.model_context
        hyps = ctx.hypotheses
        unique = tuple(r for r in SPECIAL_ROLES if self.config.roles.count(r) == 1)
        assert ctx.self_id is not None  # a seat's context names the seat (seat_context)
        common = StatementArgs(
            players=ctx.players,
            self_id=ctx.self_id,
            self_role=self.role,
            unique=unique,
            impostor=WOLF,
            statement=statement,
            act=act,
            seed=sid,
        )
        players = ctx.players
        if self.settings.structured:
            ident = identity_request(identities=hyps, structured=True, **common)
            inten = intent_request(structured=True, **common)
            return [
                Call(ident, functools.partial(read_identity_judgments, ident), _empty),
                Call(inten, functools.partial(read_intents, inten), _empty),
            ]
        return [
            Call(
                identity_request(identities=hyps, **common),
                # Any role parses (a claim of a role not in play is a valid record);
                # judgments about roles outside the hypotheses are dropped in observe.
                lambda t: parse_identity_judgments(t, players=players, identities=ROLES),
                _empty,
            ),
            Call(intent_request(**common), lambda t: parse_intents(t, players=players), _empty),
        ]

    @property
    def model_context(self) -> OpponentContext:
        return self.model.context  # type: ignore[attr-defined]

    def evidence_of(
        self, events: Sequence[Event], texts: Mapping[int, str]
    ) -> tuple[list[list[Evidence] | tuple[str, SpeechAct, int, int]], int]:
        """Evidence per event in order; a statement to extract is a placeholder tuple.

        Returns:
          The items (lists of evidence, or ``(statement, act, round, speaker)`` for
          the LLM to extract) and the statement count after the events.
        """
        name = prompts.player_name
        me = self.seat
        items: list[Any] = []
        sid = self.statements
        extract = self.name in EXTRACTING_MODELS
        for e in events:
            d = e.data
            rnd = int(e.round)
            if e.kind == "speech":
                speaker = int(d["player"])
                act = d["act"]
                text = texts.get(sid) or prompts.plain_statement(
                    {k: act.get(k) for k in ("kind", "tone", "target", "role", "result")}
                )
                subject = name(act["target"]) if act.get("target") is not None else name(speaker)
                mkind = str(act["kind"])
                if mkind == "share_check":
                    mkind += ":" + ("werewolf" if act.get("result") == WOLF else "not_werewolf")
                msg = Evidence(
                    subject=subject,
                    value=mkind,
                    kind="message",
                    actor=name(speaker),
                    step=rnd,
                    text=f"{name(speaker)}: {text}",
                    source="statement",
                )
                items.append([msg])
                sact = _speech_act(name(speaker), act)
                if extract and speaker != me and sact is not None:
                    items.append((text, sact, rnd, sid))
                sid += 1
            elif e.kind == "votes":
                ev = []
                for v, t in sorted(d["votes"].items(), key=lambda kv: int(kv[0])):
                    voter, target = name(int(v)), name(int(t))
                    ev.append(
                        Evidence(
                            subject=target,
                            value="vote",
                            kind="message",
                            actor=voter,
                            step=rnd,
                            text=f"{voter} voted to exile {target}.",
                            source="vote",
                        )
                    )
                    if int(v) != int(t):
                        ev.append(
                            Evidence(
                                subject=target,
                                value="Attack",
                                kind="intent",
                                actor=voter,
                                credibility=-self.settings.vote_credibility,
                                step=rnd,
                                source="vote",
                            )
                        )
                items.append(ev)
            elif e.kind == "check" and int(d["player"]) == me:
                result = str(d["result"])
                if result in ROLES:
                    items.append([self._fact(int(d["target"]), result, rnd, "seer_check")])
                else:  # a team check's "not a werewolf": the village side, no role
                    items.append([self._fact(int(d["target"]), WOLF, rnd, "seer_check", True)])
            elif e.kind == "partners" and self.role == WOLF:
                wolves = {int(p) for p in d["werewolves"]}
                items.append(
                    [
                        self._fact(p, WOLF, rnd, "partners", p not in wolves)
                        for p in range(self.config.num_players)
                        if p != me
                    ]
                )
            elif e.kind in ("deaths", "exile") and e.visible_to is None:
                ev = []
                who = d["players"] if e.kind == "deaths" else [d["player"]]
                for p in who:
                    if p is None:
                        continue
                    verb = "was found dead" if e.kind == "deaths" else "was exiled"
                    ev.append(
                        Evidence(
                            subject=name(int(p)),
                            kind="message",
                            step=rnd,
                            text=f"{name(int(p))} {verb}.",
                            source="moderator",
                        )
                    )
                for p, r in (d.get("roles") or {}).items():
                    if int(p) != me and r in self.model_context.hypotheses:
                        ev.append(self._fact(int(p), str(r), rnd, "revealed"))
                if ev:
                    items.append(ev)
        return items, sid

    def _fact(
        self, player: int, role: str, rnd: int, source: str, negated: bool = False
    ) -> Evidence:
        return Evidence(
            subject=prompts.player_name(player),
            value=role,
            source=source,
            step=rnd,
            certain=True,
            negated=negated,
        )

    def observe(self, events: Sequence[Event], texts: Mapping[int, str]) -> Step[SeatBeliefs]:
        """Observes new events of the seat's view, in order.

        Yields one list of calls: the two extraction requests of every statement
        to extract (nothing for models that extract nothing). Returns the updated
        provider; its :attr:`last_evidence` lists what the model was given.

        Args:
          events: Events the seat saw and the provider has not (in game order).
          texts: Statement texts by statement id (missing: the act's flat rendering).
        """
        items, sid = self.evidence_of(events, texts)
        pending = [it for it in items if isinstance(it, tuple)]
        answers: list[Any] = []
        if pending:
            answers = yield [
                c for (text, act, _, s) in pending for c in self._request_pair(text, act, s)
            ]
        observed: list[Evidence] = []
        j = 0
        for it in items:
            if isinstance(it, tuple):
                _text, act, rnd, _s = it
                ident, inten = answers[2 * j], answers[2 * j + 1]
                j += 1
                hyps = self.model_context.hypotheses
                judged = [j for j in ident.items if j.identity in hyps]
                observed += judgments_to_evidence(judged, step=rnd, speaker=act.speaker)
                observed += intents_to_evidence(inten.items, step=rnd)
            else:
                observed += it
        model = self.model.observe_all(observed)
        return dataclasses.replace(self, model=model, statements=sid, last_evidence=tuple(observed))

    # -- prompt fields ----------------------------------------------------------

    def decide(self, *, phase: str, subjects: Sequence[int]) -> tuple[SeatBeliefs, PromptFields]:
        """The decision alone: the model consulted for ``phase`` about ``subjects``.

        Returns the provider after it (GRATR adds its Eq. 9 feedback) and the
        model's prompt fields, without the readings :meth:`consult` adds.
        """
        names = [prompts.player_name(p) for p in subjects]
        c = self.model.consult(goal=goal_text(self.seat, self.role, phase), subjects=names)
        return dataclasses.replace(self, model=c.model), c.fields

    def consult(self, *, phase: str, subjects: Sequence[int]) -> tuple[SeatBeliefs, dict[str, Any]]:
        """The prompt fields for a decision about ``subjects`` (players ids).

        Returns:
          The provider after the decision (GRATR adds its Eq. 9 feedback) and
          ``{"opponent": PromptFields, "beliefs": {player: {role: p}},
          "labels": {player: role or "unsure"}, "known": {player: text}}``, all read
          from that provider's model.
        """
        new, opponent = self.decide(phase=phase, subjects=subjects)
        beliefs = belief_map(new, subjects, opponent)
        return new, {
            "opponent": opponent,
            "beliefs": beliefs,
            "labels": identity_labels(new.model, beliefs),
            "known": known_roles(new.model, subjects),
        }


def identity_labels(
    model: OpponentModel, beliefs: Mapping[int, Mapping[str, float]]
) -> dict[int, str]:
    """Per player the label of its reading (:func:`gt_llm.opponents.identity_label`).

    The likeliest role when its odds grew at least
    :data:`gt_llm.opponents.IDENTITY_ODDS_RATIO` times over the model's reference
    (its prior with what is ruled out for certain), else ``unsure``: the same rule for every model, on the distribution the stand-in
    reads (a retrieval baseline's retrieval reading included).
    """
    return {
        p: identity_label(dist, model.reference(prompts.player_name(p)))
        for p, dist in beliefs.items()
    }


#: The rules events a seat's model takes (:func:`seat_events`).
SEAT_EVENT_KINDS = ("speech", "votes", "check", "partners", "deaths", "exile")


def seat_events(events: Sequence[Event], seat: int) -> list[Event]:
    """What a seat's model is fed of a rules event stream, in order.

    The events the seat saw of the kinds the arena gives its providers —
    statements and votes (:class:`~games.werewolf.players.table_beliefs.TableBeliefs`'s
    public observations; a vote for nobody is none) and the seat's checks,
    partners, deaths and exiles (its private facts and announcements): the
    evidence of every seat's model, in the arena as it happens and in the day
    study's roots, which replay the arena's table step by step, the seat's
    decisions included (:mod:`games.werewolf.players.table_replay`; tested to
    agree belief by belief). This stream alone, without the decisions, is the
    reference ``benchmarks/day_roots_vs_arena.py`` shows beside them.
    """
    out = []
    for e in events:
        if not e.seen_by(seat) or e.kind not in SEAT_EVENT_KINDS:
            continue
        if e.kind == "votes":
            votes = {v: t for v, t in e.data["votes"].items() if t is not None}
            if not votes:
                continue
            e = Event("votes", e.round, {"votes": votes}, e.visible_to)
        out.append(e)
    return out


def known_roles(model: OpponentModel, subjects: Sequence[int]) -> dict[int, str]:
    """What the seat knows for sure about ``subjects``: a role, or ``village side``.

    Read from ``model.belief(p)`` (pinned beliefs only), so every model — which
    all keep the certain facts — gives the same answer for the same seat.
    """
    out: dict[int, str] = {}
    for p in subjects:
        b = model.belief(prompts.player_name(p))
        if not b.pinned or not b.distribution:
            continue
        top = b.most_likely()
        if len(top) == 1 and b.distribution[top[0]] >= 1.0:
            out[p] = top[0]
        elif b.distribution.get(WOLF, 0.0) == 0.0:
            out[p] = VILLAGE_SIDE
    return out


def retrieval_reading(
    distribution: Mapping[str, float], retrieved: Sequence[Mapping[str, Any]], subject: str
) -> dict[str, float]:
    """A retrieval baseline's belief about ``subject`` from the messages it retrieved.

    The odds of ``werewolf`` are multiplied by :data:`RETRIEVAL_ODDS` per
    retrieved message against the subject (an accusation, a vote, a check
    that found a werewolf) and divided by it per message for it (a defence, a
    check that found no werewolf); the other roles keep their proportions. A
    pinned 0 or 1 stays.
    """
    pw = float(distribution.get(WOLF, 0.0))
    if pw <= 0.0 or pw >= 1.0:
        return dict(distribution)
    net = sum(
        (m["kind"] in _AGAINST) - (m["kind"] in _FOR)
        for m in retrieved
        if m.get("subject") == subject
    )
    odds = pw / (1.0 - pw) * RETRIEVAL_ODDS**net
    new = odds / (1.0 + odds)
    scale = (1.0 - new) / (1.0 - pw)
    return {h: (new if h == WOLF else v * scale) for h, v in distribution.items()}


def belief_map(
    beliefs: SeatBeliefs, subjects: Sequence[int], fields: PromptFields
) -> dict[int, dict[str, float]]:
    """The per-player role distribution the stand-in reads: one reading per model.

    Every model: ``model.belief(p).distribution`` (the prior with the certain
    facts for ``none``; the posterior mean for ``dirichlet``; GRATR's trust
    reading, hole 12 in ``docs/gratr.md``). The retrieval baselines
    add what they retrieved for this decision (:func:`retrieval_reading`).
    """
    model = beliefs.model
    retrieved = fields["retrieved"] if beliefs.name in RETRIEVAL_MODELS else None
    out: dict[int, dict[str, float]] = {}
    for p in subjects:
        name = prompts.player_name(p)
        dist = dict(model.belief(name).distribution)
        if not dist:
            continue
        if retrieved is not None:
            dist = retrieval_reading(dist, retrieved, name)
        out[p] = dist
    return out


def make_seat_beliefs(
    name: str,
    config: Config,
    seat: int,
    role: str,
    settings: BeliefSettings = BeliefSettings(),  # noqa: B008 - frozen, so a shared default is safe
    *,
    chat: Any = None,
) -> SeatBeliefs:
    """Builds ``seat``'s provider around :func:`make_seat_model`.

    Raises:
      ValueError: an unknown model name or role.
    """
    model = make_seat_model(name, config, seat, role, settings, chat=chat)
    return SeatBeliefs(seat=seat, role=role, config=config, model=model, settings=settings)
