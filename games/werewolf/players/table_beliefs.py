"""One seat's opponent model in the LLM game loop, and the prompt's belief text.

:class:`TableBeliefs` puts a :class:`games.werewolf.players.beliefs.SeatBeliefs`
behind the LLM game loop's per-seat hook
(:class:`games.werewolf.players.table.BeliefProvider`): it queues what the seat
sees, gives it to the model as one step, and renders the model's prompt fields
as the prompt's belief text (:func:`render_fields`). Every consultation of a
decision is :func:`seat_decision`, which the day study's roots and tree call too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.engine.calls import Step, run_sync
from games.werewolf.players import prompts
from games.werewolf.players.beliefs import SeatBeliefs, decision_kind
from games.werewolf.rules import Event
from gt_llm.opponents import PromptFields

__all__ = [
    "CHAIN_TEXT",
    "KNOWN_FACT",
    "KNOWN_HEAD",
    "NO_FIELDS",
    "PLAYER_LINE",
    "RETRIEVED_HEAD",
    "STANCE_TEXT",
    "TableBeliefs",
    "other_seats",
    "render_fields",
    "seat_decision",
]

#: Sentences of the belief text (appendix 3's per-player reasoning fields, our words).
PLAYER_LINE = "{player}: {identity}{stance}{probabilities}{chains}"
STANCE_TEXT = "; {stance} (trust {trust:+.2f})"
CHAIN_TEXT = "{path} (value {value})"
RETRIEVED_HEAD = "Past messages most relevant to this decision:"
KNOWN_HEAD = "Known for certain: {facts}"
KNOWN_FACT = "{player} {what}"
NO_FIELDS = "(no opponent model)"
_PRIVATE_KINDS = ("check", "partners", "deaths", "exile")


def render_fields(fields: PromptFields, known: Mapping[int, str] | None = None) -> str:
    """The prompt's belief text from an opponent model's fields.

    Every model: first what the seat knows for sure (``known``, from
    :func:`~games.werewolf.players.beliefs.known_roles`: a role, or "village side"). Then GRATR: per player the
    inferred identity, ally / adversary / unsure, the trust and the evidence
    chains; Dirichlet: the identity and most likely roles with their
    probabilities; retrieval baselines: the retrieved messages; ``none``:
    nothing more (the history window is the prompt's own). A pinned player's
    identity is the known fact.
    """
    known = dict(known or {})
    lines = []
    if known:
        facts = "; ".join(
            KNOWN_FACT.format(player=prompts.player_name(p), what=w)
            for p, w in sorted(known.items())
        )
        lines.append(KNOWN_HEAD.format(facts=facts))
    for v in fields["players"]:
        q = int(v["player"].split()[-1]) - 1
        identity = v["identity"]
        if v["pinned"] and q in known:
            identity = known[q]
        probs = ""
        if v["probabilities"]:
            probs = "; " + ", ".join(f"{h} {p:.2f}" for h, p in v["probabilities"].items())
        chains = ""
        if v["chains"]:
            chains = "; chains: " + ", ".join(
                CHAIN_TEXT.format(path=" <- ".join(c["players"]), value=f"{c['value']:.2f}")
                for c in v["chains"]
            )
        stance = ""
        if v["trust"] is not None:
            stance = STANCE_TEXT.format(stance=v["stance"], trust=v["trust"])
        lines.append(
            PLAYER_LINE.format(
                player=v["player"],
                identity=identity + (" (certain)" if v["pinned"] else ""),
                stance=stance,
                probabilities=probs,
                chains=chains,
            )
        )
    if fields["retrieved"]:
        lines.append(RETRIEVED_HEAD)
        lines += [f"  {m['text']}" for m in fields["retrieved"]]
    return "\n".join(lines) if lines else NO_FIELDS


def other_seats(state: SeatBeliefs) -> list[int]:
    """Every seat but the observer's: whom the arena's decisions are about."""
    return [p for p in range(state.config.num_players) if p != state.seat]


def seat_decision(
    state: SeatBeliefs,
    phase: str,
    subjects: Sequence[int] | None = None,
    *,
    readings: bool = True,
) -> tuple[SeatBeliefs, dict[str, Any]]:
    """One decision of a seat: its model consulted for ``phase``'s kind of decision.

    The one consultation of a Werewolf decision: the arena's provider
    (:class:`TableBeliefs`, once per decision kind and new evidence), the day
    study's roots (which replay the arena's feeding,
    :mod:`games.werewolf.players.table_replay`) and the day tree's own
    decisions (:func:`games.werewolf.day.ranking.observer_beliefs`) all call
    it. The goal is the decision kind's (:func:`decision_kind`,
    :func:`~games.werewolf.players.beliefs.goal_text`), the same for every model.

    Args:
      state: The seat's provider.
      phase: A rules phase (``day_bid``, ``night_seer``, ...), or a decision kind.
      subjects: The seats the decision is about (default :func:`other_seats`, as
        the arena asks).
      readings: Whether to read the fields a prompt shows (off where only the
        model after the decision is used: the day tree's ranking).

    Returns:
      The provider after the decision (GRATR adds its Eq. 9 feedback; the other
      models are unchanged) and its fields (:meth:`SeatBeliefs.consult`; empty
      without ``readings``).
    """
    if subjects is None:
        subjects = other_seats(state)
    if not readings:
        return state.decide(phase=decision_kind(phase), subjects=subjects)[0], {}
    return state.consult(phase=decision_kind(phase), subjects=subjects)


class TableBeliefs:
    """One seat's :class:`~games.werewolf.players.beliefs.SeatBeliefs` behind the game loop's provider hook.

    Implements :class:`games.werewolf.players.table.BeliefProvider`: ``observe`` takes
    each public statement and vote (queued), :meth:`add_private` the seat's
    private facts and announcements (seer checks, partners, deaths, exiles with
    revealed roles) from its knowledge, :meth:`flush` is the step that gives the
    queue to the model (a runner runs the flushes of all seats as one batch; a
    read with a non-empty queue flushes it alone). ``beliefs(phase)`` /
    ``belief_lines(phase)`` consult the model once per decision kind and new
    evidence (:func:`seat_decision` of :func:`decision_kind`: the retrieval
    baselines retrieve per kind; GRATR's decision adds its Eq. 9 feedback, once
    per step) and give
    :func:`~games.werewolf.players.beliefs.belief_map` and :func:`render_fields` of the result.

    Attributes:
      state: The seat's :class:`SeatBeliefs` (replaced on every update).
      records: Log records not yet written (``belief_evidence``, ``belief_consult``:
        the runner emits them with the step and clears the list).
      consults: ``(labels, beliefs, infers)`` of each consultation not yet scored:
        per player its identity label and role distribution, and whether the
        model gives per-player views (infers identities).
    """

    def __init__(self, state: SeatBeliefs, chat: Any) -> None:
        self.state = state
        self.chat = chat
        self.queue: list[Event] = []
        self.texts: dict[int, str] = {}
        self.records: list[dict[str, Any]] = []
        self.consults: list[tuple[dict[int, str], dict[int, dict[str, float]], bool]] = []
        self._private_seen = 0
        self._fields: dict[str, dict[str, Any]] = {}

    @property
    def name(self) -> str:
        return self.state.name

    def observe(self, observation: Any) -> None:
        """Queues a :class:`~games.werewolf.players.table.PublicObservation`."""
        o = observation
        if o.kind == "statement":
            if o.statement is not None and o.text:
                self.texts[int(o.statement)] = o.text
            self.queue.append(Event("speech", o.round, {"player": o.actor, "act": dict(o.act)}))
        elif o.kind == "vote" and o.target is not None:
            self.queue.append(Event("votes", o.round, {"votes": {str(o.actor): int(o.target)}}))

    def add_private(self, events: Sequence[Event]) -> None:
        """Queues the new facts and announcements among the seat's visible ``events``."""
        new = events[self._private_seen :]
        self._private_seen = len(events)
        self.queue += [e for e in new if e.kind in _PRIVATE_KINDS]

    def flush(self) -> Step[None]:
        """Gives the queue to the model (yields the extraction calls, if any)."""
        if not self.queue:
            return None
        events, self.queue = self.queue, []
        self.state = yield from self.state.observe(events, self.texts)
        if self.state.last_evidence:
            self._fields = {}
            self.records.append(
                {
                    "type": "belief_evidence",
                    "evidence": [e.to_dict() for e in self.state.last_evidence],
                }
            )
        return None

    def _consult(self, phase: str) -> dict[str, Any]:
        if self.queue:
            run_sync(self.flush(), self.chat)
        kind = decision_kind(phase)
        if kind not in self._fields:
            self.state, fields = seat_decision(self.state, kind)
            self._fields[kind] = fields
            names = [prompts.player_name(p) for p in other_seats(self.state)]
            rec: dict[str, Any] = {"type": "belief_consult", "subjects": names, "kind": kind}
            floor = self.floor_count()
            if floor is not None:
                rec["floor_count"] = floor
            self.records.append(rec)
            self.consults.append(
                (
                    dict(fields["labels"]),
                    {q: dict(d) for q, d in fields["beliefs"].items()},
                    bool(fields["opponent"]["players"]),
                )
            )
        return self._fields[kind]

    def floor_count(self) -> dict[str, int] | None:
        """GRATR's Eq. 8 floor / Eq. 9 counts so far (None for the other models)."""
        count = getattr(self.state.model, "floor_count", None)
        return count.as_dict() if count is not None else None

    def beliefs(self, phase: str = "") -> Mapping[int, Mapping[str, float]]:
        return self._consult(phase)["beliefs"]

    def belief_lines(self, phase: str = "") -> str:
        f = self._consult(phase)
        return render_fields(f["opponent"], f["known"])
