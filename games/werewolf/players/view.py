"""What a Werewolf player knows at a decision, and how its prompts show it.

A :class:`PlayerView` is built from the rules' knowledge of one player
(:func:`view_from_knowledge`); :func:`context_fields` renders it as the fields of
the player's prompts (:mod:`games.werewolf.players.llm` has the steps that ask them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from games.werewolf.players import prompts
from games.werewolf.rules import ROLES, SPEECH_ACTS, TONES, Knowledge, SpeechAct

__all__ = [
    "PlayerView",
    "PublicStatement",
    "Speech",
    "partner_votes",
    "speech_menu",
    "tonight_victim",
    "view_from_knowledge",
    "act_dict",
    "context_fields",
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
      check_results: The results a check can give at this table (``rules`` decides
        per preset, e.g. the roles in play, or ``("werewolf", "not_werewolf")``;
        :attr:`~games.werewolf.config.Config.results_in_play`).
      statements: Public statements so far, in order.
      votes: Past day votes ``(round, voter, target or None)``, in order.
      announcements: Public announcements ``(round, text)`` (deaths, exiles), in order.
      announcement_at: Per announcement, how many of its round's public messages
        (statements, then the round's vote tally) came before it, so that the
        history shows each round's events in the order they happened (an exile
        after the statements and votes that led to it); empty: each round's
        announcements first.
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
      structured: The player's calls ask for JSON answers under each task's schema.
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
    announcement_at: tuple[int, ...] = ()
    private_notes: tuple[str, ...] = ()
    scratchpad: str = ""
    beliefs: Mapping[int, Mapping[str, float]] = dataclasses.field(default_factory=dict)
    suspicion: Mapping[int, float] = dataclasses.field(default_factory=dict)
    belief_text: str = ""
    earlier_messages: int = 0
    structured: bool = False

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
    structured: bool = False,
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
      structured: Ask for structured answers (see :class:`PlayerView`).
    """
    from games.werewolf.rules import speech_act_from_json

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
            act = speech_act_from_json(e.data["act"])
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
        announcement_at=_announcement_positions(messages),
        player=me,
        role=str(knowledge.role),
        num_players=knowledge.config.num_players,
        alive=knowledge.living(),
        round=knowledge.round,
        partners=knowledge.partners,
        checks=dict(knowledge.checks),
        check_results=knowledge.config.results_in_play,
        statements=tuple(statements),
        votes=tuple(votes),
        announcements=tuple(announcements),
        private_notes=tuple(notes),
        scratchpad=scratchpad,
        beliefs=beliefs or {},
        suspicion=suspicion or {},
        belief_text=belief_text,
        earlier_messages=earlier,
        structured=structured,
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


def speech_menu(
    legal: Sequence[SpeechAct], *, in_play: Sequence[str] | None = None
) -> dict[str, list[Any]]:
    """``acts``, ``tones``, ``targets`` and ``roles`` for :func:`speak` from the legal speech acts.

    Targets are those of accuse / defend (the living others); a share_check is
    offered about the same players, with the results of the view's
    ``check_results``. The tone ``any`` (no steering) is offered only when it is
    the only legal tone: a model choosing its own tone picks a concrete one.

    Args:
      legal: The legal speech acts.
      in_play: The roles some player holds at this table
        (:attr:`~games.werewolf.config.Config.roles_in_play`): only these are
        offered as claims, since a claim of a role nobody holds is a lie every
        player can see (the rules still allow it). None: every legal claim.
    """
    kinds = {x.kind for x in legal}
    acts = [a for a in SPEECH_ACTS if a in kinds]
    tones = [t for t in TONES if t != "any" and any(x.tone == t for x in legal)]
    if not tones and any(x.tone == "any" for x in legal):
        tones = ["any"]
    targets = sorted(
        {x.target for x in legal if x.kind in ("accuse", "defend") and x.target is not None}
    )
    roles = [
        r
        for r in ROLES
        if (in_play is None or r in in_play)
        and any(x.kind == "claim" and x.role == r for x in legal)
    ]
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


def _announcement_positions(messages: Sequence[tuple[str, Any]]) -> tuple[int, ...]:
    """Per announcement, its round's statements and vote tally before it (see PlayerView)."""
    seen: dict[int, int] = {}
    tallied: set[int] = set()
    out = []
    for kind, value in messages:
        if kind == "statement":
            seen[value.round] = seen.get(value.round, 0) + 1
        elif kind == "votes" and value and value[0][0] not in tallied:
            # One "Votes:" line per round, however many tallies it had.
            tallied.add(value[0][0])
            seen[value[0][0]] = seen.get(value[0][0], 0) + 1
        elif kind == "announcement":
            out.append(seen.get(value[0], 0))
    return tuple(out)


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
    at = view.announcement_at
    if len(at) != len(view.announcements):  # a view built without positions
        at = (0,) * len(view.announcements)
    for d in rounds:
        out.append(f"Round {d}:")
        # The round's statements and vote tally in order; each announcement goes in
        # after as many of them as came before it (chronological order).
        items = [
            f"  {prompts.player_name(s.speaker)} said: {s.text}"
            for s in view.statements
            if s.round == d
        ]
        votes = [(v, t) for r, v, t in view.votes if r == d]
        if votes:
            items.append(
                "  Votes: "
                + "; ".join(
                    f"{prompts.player_name(v)} -> "
                    + (prompts.player_name(t) if t is not None else "nobody")
                    for v, t in votes
                )
            )
        placed = [
            (min(pos, len(items)), text)
            for (r, text), pos in zip(view.announcements, at, strict=True)
            if r == d
        ]
        for i in range(len(items) + 1):
            out.extend(f"  {text}" for pos, text in placed if pos == i)
            if i < len(items):
                out.append(items[i])
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
