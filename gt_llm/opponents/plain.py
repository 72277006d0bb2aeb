"""The ``none`` opponent model: the plain LLM with the last K messages.

GRATR's baseline (Sect. 4.1 of the GRATR paper: "pure LLMs", history window
K = 15): no belief, no trust, no retrieval. It keeps the message history and
gives the last K messages to the prompt; identity and intent evidence leave it
unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from gt_llm.opponents.base import (
    Belief,
    Consultation,
    Evidence,
    HistoryMixin,
    OpponentContext,
    OpponentModel,
)


@dataclasses.dataclass(frozen=True)
class PlainHistory(HistoryMixin, OpponentModel):
    """Keeps the last K messages; believes nothing."""

    name = "none"

    context: OpponentContext = OpponentContext()
    history: tuple[Evidence, ...] = ()

    def observe(self, evidence: Evidence) -> PlainHistory:
        return self._observe_message(evidence)  # type: ignore[no-any-return]

    def belief(self, subject: str) -> Belief:
        self.context.check_subject("PlainHistory.belief", subject)
        return Belief(subject=subject)

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        return self._consultation()

    def snapshot(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "k": self.context.k,
            "history": [e.to_dict() for e in self.history],
        }


def make_plain(context: OpponentContext) -> PlainHistory:
    """Factory registered as ``none``."""
    return PlainHistory(context=context)
