"""GRATR's evidence extraction: requests, parsers and conversion to :class:`Evidence`.

The prompt appendix of the first version of the GRATR paper (Zhu et al.,
appendices 1-2) asks the LLM for two line formats, which we follow exactly:

* identity judgments ``[Player][identity][confidence][analysis]``, confidence
  0-10, ``unsure`` when the statement does not tell;
* intents ``[Role1][Type][Role2][Reason][Score]``, Type one of Attack / Defend /
  Deceive, score 0-10; the credibility of the edge (Role1, Role2) is
  +score/10 for Defend and -score/10 for Attack and Deceive (a deception counts
  against the deceiver's relation to the deceived).

Several records may share a line (the appendix's own example does).

Parse policy (skip-and-count): a line whose bracket groups do not form whole
records, or a record with an unknown player, an unknown identity / type, or a
number outside 0-10, is skipped and counted in ``ParsedRecords.skipped``; the
parser raises :class:`~gt_llm.errors.ParseError` when an answer yields no valid
record at all and is not the explicit empty answer ``none`` (so the re-ask
policy of :mod:`gt_llm.parsing` applies), or on any malformed record with
``strict=True``. Types are recognised by their first three letters, case
-insensitively (the appendix's own example misspells Defend as "Defind").

The requests carry the statement's structured speech act (:class:`SpeechAct`)
as a typed field, so that the scripted stand-in (``gt_llm.opponents.scripted``)
answers from it and never from the prompt text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Generic, Literal, TypedDict, TypeVar

from gt_llm.chat import ChatModel, ChatRequest
from gt_llm.errors import ParseError
from gt_llm.opponents.base import UNSURE, Evidence
from gt_llm.opponents.prompts import INTENT_TYPES as _INTENT_TYPES
from gt_llm.opponents.prompts import OPPONENT_PROMPTS
from gt_llm.parsing import ParsePolicy, ParseStats, complete_parsed, parse_number

T = TypeVar("T")

#: Speech-act kinds a game reports for a statement.
ActKind = Literal["claim", "accuse", "defend", "share_check", "reveal", "nothing"]
ACT_KINDS: tuple[str, ...] = ("claim", "accuse", "defend", "share_check", "reveal", "nothing")

INTENT_TYPES: tuple[str, ...] = _INTENT_TYPES
#: Sign of the credibility of each intent type (GRATR Sect. 3.2: negative = hostile).
INTENT_SIGN: dict[str, float] = {"Attack": -1.0, "Defend": 1.0, "Deceive": -1.0}

_GROUP = re.compile(r"\[([^\[\]]*)\]")


@dataclasses.dataclass(frozen=True)
class SpeechAct:
    """What a statement does, as the game knows it (typed; for the scripted stand-in).

    Attributes:
      kind: ``claim`` (speaker claims ``role``), ``accuse`` / ``defend`` (speaker
        towards ``target``), ``share_check`` (speaker says ``target`` is ``role``),
        ``reveal`` (the moderator states ``target`` is ``role``), ``nothing``.
      speaker: Who speaks.
      target: Whom it is about (``""`` for claims and nothing).
      role: The role claimed or reported (``""`` if none).
    """

    kind: ActKind
    speaker: str
    target: str = ""
    role: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ACT_KINDS:
            raise ValueError(f"SpeechAct: kind must be one of {ACT_KINDS}, got {self.kind!r}")
        if self.kind in ("accuse", "defend", "share_check", "reveal") and not self.target:
            raise ValueError(f"SpeechAct: a {self.kind!r} act needs a target")
        if self.kind in ("claim", "share_check", "reveal") and not self.role:
            raise ValueError(f"SpeechAct: a {self.kind!r} act needs a role")

    def to_fields(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "speaker": self.speaker,
            "target": self.target,
            "role": self.role,
        }


@dataclasses.dataclass(frozen=True)
class IdentityJudgment:
    """One ``[Player][identity][confidence][analysis]`` record."""

    player: str
    identity: str
    confidence: float
    analysis: str


@dataclasses.dataclass(frozen=True)
class Intent:
    """One ``[Role1][Type][Role2][Reason][Score]`` record."""

    actor: str
    type: str
    target: str
    reason: str
    score: float

    @property
    def credibility(self) -> float:
        """+score/10 for Defend, -score/10 for Attack and Deceive."""
        return INTENT_SIGN[self.type] * self.score / 10.0


@dataclasses.dataclass(frozen=True)
class ParsedRecords(Generic[T]):
    """The valid records of an answer and how many malformed ones were skipped."""

    items: tuple[T, ...]
    skipped: int = 0


def _canonical(value: str, options: Sequence[str]) -> str | None:
    v = value.strip()
    if not options:
        return v or None
    for o in options:
        if v.lower() == o.lower():
            return o
    return None


def _score(text: str) -> float | None:
    try:
        x = parse_number(text)
    except ParseError:
        return None
    return x if 0.0 <= x <= 10.0 else None


def _records(text: str, size: int) -> tuple[list[list[str]], int]:
    records: list[list[str]] = []
    skipped = 0
    for line in text.splitlines():
        groups = _GROUP.findall(line)
        if not groups:
            continue  # prose around the records is tolerated
        if len(groups) % size:
            skipped += 1
            continue
        records.extend(groups[i : i + size] for i in range(0, len(groups), size))
    return records, skipped


def _finish(
    items: list[T], skipped: int, text: str, expected: str, strict: bool
) -> ParsedRecords[T]:
    if strict and skipped:
        raise ParseError(f"only well-formed {expected} records", text)
    if not items and text.strip().strip("[]").strip().lower() != "none":
        raise ParseError(f"at least one {expected} record (or 'none')", text)
    return ParsedRecords(tuple(items), skipped)


def parse_identity_judgments(
    text: str,
    *,
    players: Sequence[str] = (),
    identities: Sequence[str] = (),
    strict: bool = False,
) -> ParsedRecords[IdentityJudgment]:
    """Parses ``[Player][identity][confidence][analysis]`` records (module docstring).

    Args:
      text: The answer.
      players: Valid player names (empty: any).
      identities: Valid identities besides ``unsure`` (empty: any).
      strict: Raise on any malformed record instead of skipping it.

    Raises:
      ParseError: no valid record and not ``none``; or, with ``strict``, any malformed record.
    """
    records, skipped = _records(text, 4)
    options = tuple(identities) + (UNSURE,) if identities else ()
    items = []
    for player, identity, conf, analysis in records:
        p = _canonical(player, players)
        ident = _canonical(identity, options)
        c = _score(conf)
        if p is None or ident is None or c is None:
            skipped += 1
            continue
        items.append(IdentityJudgment(p, ident, c, analysis.strip()))
    return _finish(items, skipped, text, "[Player][identity][confidence][analysis]", strict)


def _intent_type(value: str) -> str | None:
    head = value.strip().lower()[:3]
    for t in INTENT_TYPES:
        if len(head) == 3 and t.lower().startswith(head):
            return t
    return None


def parse_intents(
    text: str, *, players: Sequence[str] = (), strict: bool = False
) -> ParsedRecords[Intent]:
    """Parses ``[Role1][Type][Role2][Reason][Score]`` records (module docstring).

    Raises:
      ParseError: no valid record and not ``none``; or, with ``strict``, any malformed record.
    """
    records, skipped = _records(text, 5)
    items = []
    for actor, typ, target, reason, score in records:
        a = _canonical(actor, players)
        b = _canonical(target, players)
        t = _intent_type(typ)
        s = _score(score)
        if a is None or b is None or t is None or s is None:
            skipped += 1
            continue
        items.append(Intent(a, t, b, reason.strip(), s))
    return _finish(items, skipped, text, "[Role1][Type][Role2][Reason][Score]", strict)


def read_identity_judgments(request: ChatRequest, text: str) -> ParsedRecords[IdentityJudgment]:
    """The records of a structured identity answer, validated by the task's answer format.

    Raises:
      ParseError: not a JSON object of the format (players and identities among
        the request's options, confidences whole numbers from 0 to 10).
    """
    fmt = OPPONENT_PROMPTS["opponents.identity"].answer_format(request.fields)
    return ParsedRecords(
        tuple(
            IdentityJudgment(r["player"], r["identity"], float(r["confidence"]), r["analysis"])
            for r in fmt.read(text)["judgments"]
        )
    )


def read_intents(request: ChatRequest, text: str) -> ParsedRecords[Intent]:
    """The records of a structured intent answer (as :func:`read_identity_judgments`)."""
    fmt = OPPONENT_PROMPTS["opponents.intent"].answer_format(request.fields)
    return ParsedRecords(
        tuple(
            Intent(r["actor"], r["type"], r["target"], r["reason"], float(r["score"]))
            for r in fmt.read(text)["intents"]
        )
    )


def read_relevance(request: ChatRequest, text: str) -> float:
    """The relevance of a structured rerank answer (a whole number from 0 to 10)."""
    fmt = OPPONENT_PROMPTS["opponents.rerank"].answer_format(request.fields)
    return float(fmt.read(text)["relevance"])


def judgments_to_evidence(
    judgments: Sequence[IdentityJudgment],
    *,
    step: int,
    speaker: str = "",
    certain: bool = False,
    source: str = "llm_identity",
) -> tuple[Evidence, ...]:
    """Identity evidence (weight = confidence / 10); ``unsure`` judgments carry none.

    Args:
      judgments: Parsed records.
      step: The time step.
      speaker: Whose statement they came from (``""``: the moderator or the observer).
      certain: Facts (e.g. the moderator's announcement).
      source: Label for logs.
    """
    return tuple(
        Evidence(
            subject=j.player,
            value=j.identity,
            source=source,
            step=step,
            weight=j.confidence / 10.0,
            kind="identity",
            actor=speaker,
            certain=certain,
        )
        for j in judgments
        if j.identity != UNSURE
    )


def intents_to_evidence(
    intents: Sequence[Intent], *, step: int, source: str = "llm_intent"
) -> tuple[Evidence, ...]:
    """Intent evidence on the edge (actor, target), credibility ±score/10."""
    return tuple(
        Evidence(
            subject=i.target,
            value=i.type,
            source=source,
            step=step,
            kind="intent",
            actor=i.actor,
            credibility=i.credibility,
        )
        for i in intents
    )


class _StatementArgsRequired(TypedDict):
    players: Sequence[str]
    self_id: str
    self_role: str
    statement: str
    act: SpeechAct


class StatementArgs(_StatementArgsRequired, total=False):
    """The keyword arguments :func:`identity_request` and :func:`intent_request` share.

    A caller asking both prompts about one statement builds them once and passes
    them as ``**args`` to each (``unique``, ``impostor`` and ``seed`` are optional).
    """

    unique: Sequence[str]
    impostor: str
    seed: int


def _common_fields(
    *, players: Sequence[str], self_id: str, self_role: str, statement: str, act: SpeechAct
) -> dict[str, object]:
    return {
        "players": list(players),
        "players_text": ", ".join(players),
        "self_id": self_id,
        "self_role": self_role or "unknown",
        "speaker": act.speaker,
        "statement": statement,
        "act": act.to_fields(),
    }


def _liar_fields(unique: Sequence[str], impostor: str) -> dict[str, object]:
    """What tells a lie apart, for both extraction prompts: unique identities, the impostor."""
    return {
        "unique": list(unique),
        "unique_text": ", ".join(unique) or "none",
        "impostor": impostor or "none",
    }


def identity_request(
    *,
    players: Sequence[str],
    self_id: str,
    self_role: str,
    identities: Sequence[str],
    unique: Sequence[str] = (),
    impostor: str = "",
    statement: str,
    act: SpeechAct,
    seed: int = 0,
    structured: bool = False,
) -> ChatRequest:
    """The identity-judgment request (task ``opponents.identity``).

    Args:
      players: Every player's name.
      self_id: The observer.
      self_role: The observer's own identity (``""`` if it has none to tell).
      identities: The identity options.
      unique: Identities only one player has (a second claimant is lying).
      impostor: The identity a liar most likely has (``""``: none).
      statement: The statement text.
      act: Its structured speech act.
      seed: Sampling seed.
      structured: Ask for the JSON answer (the request carries its schema).
    """
    fields = _common_fields(
        players=players, self_id=self_id, self_role=self_role, statement=statement, act=act
    )
    fields |= {"options": list(identities), "options_text": ", ".join(identities)}
    fields |= _liar_fields(unique, impostor)
    return OPPONENT_PROMPTS.render("opponents.identity", fields, seed=seed, structured=structured)


def intent_request(
    *,
    players: Sequence[str],
    self_id: str,
    self_role: str,
    unique: Sequence[str] = (),
    impostor: str = "",
    statement: str,
    act: SpeechAct,
    seed: int = 0,
    structured: bool = False,
) -> ChatRequest:
    """The intent request (task ``opponents.intent``); arguments as :func:`identity_request`."""
    fields = _common_fields(
        players=players, self_id=self_id, self_role=self_role, statement=statement, act=act
    )
    fields |= _liar_fields(unique, impostor)
    return OPPONENT_PROMPTS.render("opponents.intent", fields, seed=seed, structured=structured)


def rerank_request(
    *,
    goal: str,
    focus: Sequence[str],
    speaker: str,
    target: str,
    step: int,
    message: str,
    seed: int = 0,
    structured: bool = False,
) -> ChatRequest:
    """The relevance-scoring request of the rerank baseline (task ``opponents.rerank``)."""
    fields = {
        "goal": goal or "(no goal given)",
        "focus": list(focus),
        "focus_text": ", ".join(focus) or "nobody in particular",
        "speaker": speaker or "moderator",
        "target": target or speaker or "moderator",
        "step": int(step),
        "message": message,
    }
    return OPPONENT_PROMPTS.render("opponents.rerank", fields, seed=seed, structured=structured)


def extract_statement_evidence(
    chat: ChatModel,
    *,
    players: Sequence[str],
    self_id: str,
    self_role: str,
    identities: Sequence[str],
    statement: str,
    act: SpeechAct,
    step: int,
    unique: Sequence[str] = (),
    impostor: str = "",
    seed: int = 0,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    structured: bool = False,
) -> tuple[Evidence, ...]:
    """Algorithm 1, line 1: asks both extraction prompts about one statement.

    Each answer is parsed with the skip-and-count parsers, re-asked per
    ``policy`` when nothing valid came back, and falls back to *no evidence*
    (logged and counted in ``stats`` by :mod:`gt_llm.parsing`) after that.
    Identity judgments come from the speaker's statement (``actor`` = speaker),
    except for a moderator's ``reveal``, whose judgments are certain facts.
    With ``structured`` both requests ask for the JSON records, read by
    :func:`read_identity_judgments` and :func:`read_intents`.

    Returns:
      The identity evidence followed by the intent evidence.
    """
    common = StatementArgs(
        players=players,
        self_id=self_id,
        self_role=self_role,
        unique=unique,
        impostor=impostor,
        statement=statement,
        act=act,
        seed=seed,
    )
    none: ParsedRecords = ParsedRecords(())
    ident_req = identity_request(identities=identities, structured=structured, **common)
    inten_req = intent_request(structured=structured, **common)
    ident = complete_parsed(
        chat,
        ident_req,
        (lambda t: read_identity_judgments(ident_req, t))
        if structured
        else (lambda t: parse_identity_judgments(t, players=players, identities=identities)),
        fallback=lambda _r: none,
        policy=policy,
        stats=stats,
    ).value
    inten = complete_parsed(
        chat,
        inten_req,
        (lambda t: read_intents(inten_req, t))
        if structured
        else (lambda t: parse_intents(t, players=players)),
        fallback=lambda _r: none,
        policy=policy,
        stats=stats,
    ).value
    reveal = act.kind == "reveal"
    return judgments_to_evidence(
        ident.items, step=step, speaker="" if reveal else act.speaker, certain=reveal
    ) + intents_to_evidence(inten.items, step=step)


def parse_relevance(text: str) -> float:
    """Reads ``Relevance: N`` with N in 0-10.

    Raises:
      ParseError: no such number, or out of range.
    """
    x = parse_number(text, label="relevance")
    if not 0.0 <= x <= 10.0:
        raise ParseError("a relevance from 0 to 10", text)
    return x


__all__ = [
    "ACT_KINDS",
    "INTENT_SIGN",
    "INTENT_TYPES",
    "IdentityJudgment",
    "extract_statement_evidence",
    "Intent",
    "ParsedRecords",
    "SpeechAct",
    "StatementArgs",
    "identity_request",
    "intent_request",
    "intents_to_evidence",
    "judgments_to_evidence",
    "parse_identity_judgments",
    "parse_intents",
    "parse_relevance",
    "read_identity_judgments",
    "read_intents",
    "read_relevance",
    "rerank_request",
]
