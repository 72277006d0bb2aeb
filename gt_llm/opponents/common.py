"""What several belief models share, apart from the interface (:mod:`gt_llm.opponents.base`).

What other players hold for certain, used up from a count prior
(:func:`used_counts`), the side a distribution puts a player on
(:func:`side_of`), GRATR's stance by ε (:func:`stance_of`), the last-K
message history (:func:`append_history`), and the two mixins of the models
that keep no beliefs or only messages (:class:`FactsMixin`,
:class:`HistoryMixin`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gt_llm.opponents.base import (
    Belief,
    Consultation,
    Evidence,
    MessageView,
    OpponentContext,
    PlayerView,
    Stance,
    message_view,
    prior_distribution,
)


def stance_of(trust: float | None, epsilon: float) -> Stance:
    """GRATR's reading of a trust value: ally above ε, adversary below -ε, else unsure."""
    if trust is None:
        return "unsure"
    if trust > epsilon:
        return "ally"
    if trust < -epsilon:
        return "adversary"
    return "unsure"


def top_probabilities(distribution: Mapping[str, float], n: int = 3) -> dict[str, float]:
    """The ``n`` most likely hypotheses with their probabilities (ties in stored order)."""
    items = list(distribution.items())
    order = sorted(range(len(items)), key=lambda i: -items[i][1])
    return {items[i][0]: float(items[i][1]) for i in order[:n]}


def append_history(
    history: tuple[Evidence, ...], e: Evidence, k: int, *, keep_all: bool = False
) -> tuple[Evidence, ...]:
    """``history`` with message ``e`` appended, cut to the last ``k`` unless ``keep_all``."""
    hist = history + (e,)
    if keep_all:
        return hist
    # Only the retrieval baselines need every message; the others keep the last K.
    return hist[-k:] if k else ()


def used_counts(
    context: OpponentContext, facts: Mapping[str, str], subject: str
) -> dict[str, float]:
    """Per hypothesis, how many players other than ``subject`` (and the observer) hold it for certain.

    Only for a count prior: ``context.prior`` gives how many of the other
    players have each hypothesis and ``context.players`` is fixed (Werewolf's
    role counts). Then a role that certain facts give to other players is used
    up that many times for ``subject`` (:func:`prior_distribution`'s ``used``).
    Empty otherwise (fruit trading: hypotheses are not counts).
    """
    if not context.prior or not context.players:
        return {}
    out: dict[str, float] = {}
    for who, h in facts.items():
        if who != subject and who != context.self_id and h in context.prior:
            out[h] = out.get(h, 0.0) + 1.0
    return out


def side_of(context: OpponentContext, distribution: Mapping[str, float]) -> float:
    """+1 / -1 when every hypothesis with mass is on the ally / adversary side, else 0."""
    signs = {
        (a > 0) - (a < 0)
        for h, p in distribution.items()
        if p > 0
        for a in (float(context.alignment.get(h, 0.0)),)
    }
    return float(signs.pop()) if len(signs) == 1 else 0.0


class FactsMixin:
    """Certain facts for models that keep no beliefs (``none``, the retrieval baselines).

    Such a model still knows what its seat knows for sure: ``belief(p)`` is the
    context's prior with the facts applied (a fact is one-hot, a negative fact
    removes a hypothesis), pinned when it fixes the role or the side. Subclasses
    are frozen dataclasses with ``context``, ``facts`` and ``excluded`` fields.
    """

    context: OpponentContext
    facts: Mapping[str, str]
    excluded: Mapping[str, frozenset[str]]

    def _with_fact(self, e: Evidence) -> Any:
        """``self`` with a certain identity fact (others: ``self``); the first fact stays."""
        if e.kind != "identity" or not e.certain or e.subject in self.facts:
            return self
        if e.negated:
            excluded = dict(self.excluded)
            excluded[e.subject] = excluded.get(e.subject, frozenset()) | {e.value}
            return dataclasses.replace(self, excluded=excluded)  # type: ignore[type-var]
        return dataclasses.replace(self, facts={**self.facts, e.subject: e.value})  # type: ignore[type-var]

    def reference(self, subject: str) -> dict[str, float]:
        """The prior with what is ruled out about ``subject`` for certain (no evidence)."""
        used = used_counts(self.context, self.facts, subject)
        return prior_distribution(self.context, None, self.excluded.get(subject, ()), used)

    def _fact_belief(self, subject: str, evidence: tuple[Evidence, ...] = ()) -> Belief:
        used = used_counts(self.context, self.facts, subject)
        dist = prior_distribution(
            self.context, self.facts.get(subject), self.excluded.get(subject, ()), used
        )
        pinned = subject in self.facts or (
            subject in self.excluded and side_of(self.context, dist) != 0.0
        )
        return Belief(subject=subject, distribution=dist, evidence=evidence, pinned=pinned)


class HistoryMixin:
    """The last-K message history every model shows (shared, not copied per model).

    Subclasses are frozen dataclasses with ``context`` and ``history`` fields.
    """

    context: OpponentContext
    history: tuple[Evidence, ...]

    def _with_message(self, e: Evidence, *, keep_all: bool = False) -> tuple[Evidence, ...]:
        return append_history(self.history, e, self.context.k, keep_all=keep_all)

    def _history_views(self) -> list[MessageView]:
        k = self.context.k
        return [message_view(e) for e in (self.history[-k:] if k else ())]

    def _observe_message(self, evidence: Evidence, *, keep_all: bool = False) -> Any:
        """``observe`` of a model that only keeps messages: other kinds change nothing."""
        self.context.check_subject(f"{type(self).__name__}.observe", evidence.subject)
        if evidence.kind != "message":
            return self
        return dataclasses.replace(self, history=self._with_message(evidence, keep_all=keep_all))  # type: ignore[type-var]

    def _consultation(
        self,
        *,
        retrieved: Sequence[MessageView] = (),
        players: Sequence[PlayerView] = (),
    ) -> Consultation:
        """The prompt fields every model fills (name, last-K history) plus its own parts."""
        fields = {
            "model": self.name,  # type: ignore[attr-defined]
            "history": self._history_views(),
            "retrieved": list(retrieved),
            "players": list(players),
        }
        return Consultation(model=self, fields=fields)  # type: ignore[arg-type]


__all__ = [
    "FactsMixin",
    "HistoryMixin",
    "append_history",
    "side_of",
    "stance_of",
    "top_probabilities",
    "used_counts",
]
