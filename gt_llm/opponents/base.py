"""The opponent-model interface shared by Dirichlet belief revision and GRATR.

An opponent model is held by one observer and describes what it believes
about the other players. It is a value: :meth:`OpponentModel.observe`
returns a *new* model, so game states can branch (as game trees do) without
copying by hand. It can:

* ``observe(evidence)`` — take one piece of evidence about a player;
* ``belief(subject)`` — report the belief about a player, with the evidence
  behind it;
* ``render(subject, template, **names)`` — put the belief into a prompt
  sentence (the sentence itself lives in the game's prompt book);
* ``snapshot()`` — a JSON-ready dict for logs.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One observation about ``subject``.

    Attributes:
      subject: The player the evidence is about (a name or id).
      value: What it points to (e.g. a hypothesis such as ``"apples"``).
      source: Where it came from (e.g. ``"llm_guess"``), for logs.
      step: When (e.g. the message number).
      weight: Strength in [0, 1] where the model uses one (GRATR's confidence).
    """

    subject: str
    value: str
    source: str = ""
    step: int = 0
    weight: float = 1.0


@dataclasses.dataclass(frozen=True)
class Belief:
    """A belief about one subject: a distribution over hypotheses and its evidence."""

    subject: str
    distribution: Mapping[str, float]
    evidence: tuple[Evidence, ...] = ()

    def most_likely(self, *, tol: float = 1e-12) -> tuple[str, ...]:
        """The hypotheses of highest probability (several on a tie), in stored order."""
        top = max(self.distribution.values())
        return tuple(h for h, p in self.distribution.items() if p >= top - tol)


class OpponentModel(abc.ABC):
    """What one observer believes about the other players."""

    #: Registered name (``"dirichlet"``, ``"gratr"``).
    name: ClassVar[str] = ""

    @abc.abstractmethod
    def observe(self, evidence: Evidence) -> OpponentModel:
        """Returns the model updated with ``evidence`` (``self`` is unchanged)."""

    @abc.abstractmethod
    def belief(self, subject: str) -> Belief:
        """The current belief about ``subject``."""

    def render(self, subject: str, template: str, **names: Any) -> str:
        """Fills ``template``'s ``{hypotheses}`` slot with the most likely hypotheses.

        The template gets ``hypotheses`` (the tuple of most likely ones) and
        ``names``; games supply the sentence from their prompt book.
        """
        return template.format(hypotheses=self.belief(subject).most_likely(), **names)

    @abc.abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready description for logs."""
