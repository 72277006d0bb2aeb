"""The ``none`` opponent model: the plain LLM with the last K messages.

GRATR's baseline (Sect. 4.1 of the GRATR paper: "pure LLMs", history window
K = 15): no trust, no retrieval, no inference. It keeps the message history
and gives the last K messages to the prompt; identity judgments and intents
leave it unchanged. It does keep what the seat knows for sure (certain facts,
:class:`~gt_llm.opponents.common.FactsMixin`), so its ``belief`` is the prior
with those facts applied.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gt_llm.opponents.base import (
    Belief,
    Consultation,
    Evidence,
    OpponentContext,
    OpponentModel,
)
from gt_llm.opponents.common import (
    FactsMixin,
    HistoryMixin,
)


@dataclasses.dataclass(frozen=True)
class PlainHistory(FactsMixin, HistoryMixin, OpponentModel):
    """Keeps the last K messages and the certain facts; infers nothing."""

    name = "none"

    context: OpponentContext = OpponentContext()
    history: tuple[Evidence, ...] = ()
    facts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    excluded: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)

    def observe(self, evidence: Evidence) -> PlainHistory:
        return self._observe_message(evidence)._with_fact(evidence)

    def belief(self, subject: str) -> Belief:
        self.context.check_subject("PlainHistory.belief", subject)
        return self._fact_belief(subject)

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        return self._consultation()

    def snapshot(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "k": self.context.k,
            "facts": dict(self.facts),
            "excluded": {s: sorted(x) for s, x in sorted(self.excluded.items())},
            "history": [e.to_dict() for e in self.history],
        }


def make_plain(context: OpponentContext) -> PlainHistory:
    """Factory registered as ``none``."""
    return PlainHistory(context=context)
