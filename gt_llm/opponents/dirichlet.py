"""Dirichlet belief revision over a finite set of opponent types.

Following Lindström et al. (belief revision in fruit trading, Sect. 2.1 and
3.3): the belief about a subject is ``Dir(alpha)`` over K hypotheses, with
``alpha = (1, ..., 1)`` when there is no prior. Each piece of evidence that
points to hypothesis k does ``alpha_k += 1`` (the conjugate update for one
categorical observation), and the belief used in play is the categorical
``p = alpha / sum(alpha)`` (the posterior mean).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from gt_llm.opponents.base import Belief, Evidence, OpponentModel


@dataclasses.dataclass(frozen=True)
class DirichletBelief(OpponentModel):
    """Per-subject Dirichlet concentration parameters over shared hypotheses.

    Attributes:
      hypotheses: The K types (e.g. the fruits an opponent may want).
      alphas: Concentration parameters per subject (subjects not yet seen have
        the prior).
      prior: The prior concentration (``1.0`` gives alpha = (1, ..., 1)).
      evidence: Evidence observed so far, per subject.
    """

    name = "dirichlet"

    hypotheses: tuple[str, ...]
    alphas: Mapping[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    prior: float = 1.0
    evidence: Mapping[str, tuple[Evidence, ...]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.hypotheses) < 2 or len(set(self.hypotheses)) != len(self.hypotheses):
            raise ValueError("DirichletBelief: need at least two distinct hypotheses")
        if self.prior <= 0:
            raise ValueError(f"DirichletBelief: prior must be > 0, got {self.prior}")
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        object.__setattr__(self, "alphas", MappingProxyType(dict(self.alphas)))
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))

    def alpha(self, subject: str) -> np.ndarray:
        """The concentration parameters for ``subject``."""
        default = (self.prior,) * len(self.hypotheses)
        return np.asarray(self.alphas.get(subject, default), dtype=float)

    def probabilities(self, subject: str) -> np.ndarray:
        """``p = alpha / sum(alpha)``."""
        a = self.alpha(subject)
        return a / a.sum()

    def observe(self, evidence: Evidence) -> DirichletBelief:
        if evidence.value not in self.hypotheses:
            raise ValueError(
                f"DirichletBelief.observe: {evidence.value!r} is not one of {self.hypotheses}"
            )
        a = self.alpha(evidence.subject)
        a[self.hypotheses.index(evidence.value)] += 1.0
        alphas = dict(self.alphas)
        alphas[evidence.subject] = tuple(float(x) for x in a)
        ev = dict(self.evidence)
        ev[evidence.subject] = tuple(ev.get(evidence.subject, ())) + (evidence,)
        return dataclasses.replace(self, alphas=alphas, evidence=ev)

    def observe_all(self, evidence: Sequence[Evidence]) -> DirichletBelief:
        model = self
        for e in evidence:
            model = model.observe(e)
        return model

    def belief(self, subject: str) -> Belief:
        p = self.probabilities(subject)
        return Belief(
            subject=subject,
            distribution=MappingProxyType(
                {h: float(x) for h, x in zip(self.hypotheses, p, strict=True)}
            ),
            evidence=tuple(self.evidence.get(subject, ())),
        )

    def snapshot(self) -> dict[str, Any]:
        subjects = sorted(set(self.alphas) | set(self.evidence))
        return {
            "model": self.name,
            "hypotheses": list(self.hypotheses),
            "prior": self.prior,
            "subjects": {
                s: {
                    "alpha": [float(x) for x in self.alpha(s)],
                    "p": [float(x) for x in self.probabilities(s)],
                    "evidence": [e.value for e in self.evidence.get(s, ())],
                }
                for s in subjects
            },
        }
