"""Dirichlet belief revision over a finite set of hypotheses, per other player.

Following Lindström et al. (belief revision in fruit trading, Sect. 2.1 and
3.3): the belief about a subject is ``Dir(alpha)`` over K hypotheses (fruits in
fruit trading, roles in Werewolf), with ``alpha = (1, ..., 1)`` when there is
no prior. Each identity judgment that points to hypothesis k does
``alpha_k += 1`` (the conjugate update for one categorical observation), and
the belief used in play is the categorical ``p = alpha / sum(alpha)`` (the
posterior mean).

The prior: with ``context.prior`` (e.g. the role counts among the other
players, in Werewolf), ``alpha_0 = prior * K * base`` where ``base`` is that
prior normalised to sum 1 — the prior mean is the base rate and the total
concentration is the paper's K, so one judgment moves it as much as under
the uniform prior. Without it, ``alpha_0 = (prior, ..., prior)``.

Two documented extensions, off by default so that the paper's rule is the
default:

* ``threshold``: a judgment counts only when its confidence (``weight``) is at
  least the threshold (a bold guess below it is recorded but adds nothing);
* ``confidence_weighted``: a counted judgment adds its confidence instead of 1
  (the fractional-count variant of the conjugate update).

A hypothesis the observer knows to be impossible — ruled out by a negative
fact, or given no weight by ``context.prior`` (in Werewolf: the observer's own
role when it is the only one) — has probability 0 whatever the judgments say
(:meth:`DirichletBelief.impossible`); the others keep their posterior-mean
proportions.

A certain fact (a seer's check, a revealed role: ``Evidence.certain``) pins the
distribution at that hypothesis with probability 1; later judgments about the
subject are still recorded but never move it. A negative fact
(``Evidence.negated``: "not a werewolf") sets that hypothesis's probability
to 0 for good and renormalises the rest. Intent evidence does not bear on
identities here; messages only feed the last-K history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from gt_llm.opponents.base import (
    Belief,
    Consultation,
    Evidence,
    OpponentContext,
    OpponentModel,
    PlayerView,
    identity_label,
)
from gt_llm.opponents.common import (
    HistoryMixin,
    side_of,
    top_probabilities,
    used_counts,
)


@dataclasses.dataclass(frozen=True)
class DirichletBelief(HistoryMixin, OpponentModel):
    """Per-subject Dirichlet concentration parameters over shared hypotheses.

    Attributes:
      hypotheses: The K types (e.g. the fruits an opponent may want).
      alphas: Concentration parameters per subject (subjects not yet seen have
        the prior).
      prior: The prior concentration (``1.0`` gives alpha = (1, ..., 1)).
      evidence: Identity evidence observed so far, per subject.
      threshold: Minimum confidence for a judgment to count (0: all count).
      confidence_weighted: Add the confidence instead of 1.
      facts: Pinned hypotheses per subject (certain facts).
      excluded: Hypotheses ruled out per subject (negative facts).
      context: Players, self id and history window.
      history: The last K messages.
      top_n: How many hypotheses the prompt fields list per player.
    """

    name = "dirichlet"

    hypotheses: tuple[str, ...]
    alphas: Mapping[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    prior: float = 1.0
    evidence: Mapping[str, tuple[Evidence, ...]] = dataclasses.field(default_factory=dict)
    threshold: float = 0.0
    confidence_weighted: bool = False
    facts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    excluded: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    context: OpponentContext = OpponentContext()
    history: tuple[Evidence, ...] = ()
    top_n: int = 3

    def __post_init__(self) -> None:
        if len(self.hypotheses) < 2 or len(set(self.hypotheses)) != len(self.hypotheses):
            raise ValueError("DirichletBelief: need at least two distinct hypotheses")
        if self.prior <= 0:
            raise ValueError(f"DirichletBelief: prior must be > 0, got {self.prior}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"DirichletBelief: threshold must be in [0, 1], got {self.threshold}")
        if self.top_n < 1:
            raise ValueError(f"DirichletBelief: top_n must be >= 1, got {self.top_n}")
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        object.__setattr__(self, "alphas", MappingProxyType(dict(self.alphas)))
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))
        object.__setattr__(self, "excluded", MappingProxyType(dict(self.excluded)))

    def prior_alpha(self) -> np.ndarray:
        """alpha_0: ``prior`` each, or ``prior * K * base rate`` with ``context.prior``."""
        k = len(self.hypotheses)
        weights = self.context.prior
        if not weights:
            return np.full(k, float(self.prior))
        base = np.asarray([float(weights.get(h, 0.0)) for h in self.hypotheses])
        return self.prior * k * base / base.sum()

    def subject_prior_alpha(self, subject: str) -> np.ndarray:
        """alpha_0 for ``subject``: the base rate of the roles other players have not used up.

        With a count prior (Werewolf), a role that certain facts give to other
        players is taken from its count (:func:`gt_llm.opponents.common.used_counts`):
        the prior mean is the remaining base rate, the concentration unchanged.
        """
        used = used_counts(self.context, self.facts, subject)
        if not used:
            return self.prior_alpha()
        k = len(self.hypotheses)
        counts = [float(self.context.prior.get(h, 0.0)) - used.get(h, 0.0) for h in self.hypotheses]
        base = np.maximum(np.asarray(counts), 0.0)
        if base.sum() <= 0:  # facts that contradict the counts: keep the prior
            return self.prior_alpha()
        return self.prior * k * base / base.sum()

    def alpha(self, subject: str) -> np.ndarray:
        """The concentration parameters for ``subject`` (a copy): its prior plus its counts."""
        if subject in self.alphas:
            counted = np.asarray(self.alphas[subject], dtype=float) - self.prior_alpha()
            return self.subject_prior_alpha(subject) + counted
        return self.subject_prior_alpha(subject)

    def probabilities(self, subject: str) -> np.ndarray:
        """``p = alpha / sum(alpha)`` without ruled-out hypotheses, or one-hot on a fact."""
        if subject in self.facts:
            p = np.zeros(len(self.hypotheses))
            p[self.hypotheses.index(self.facts[subject])] = 1.0
            return p
        a = self.alpha(subject)
        out = self.impossible(subject)
        a = np.where([h in out for h in self.hypotheses], 0.0, a)
        if a.sum() <= 0:  # the prior gave the remaining hypotheses no mass
            a = np.asarray([0.0 if h in out else 1.0 for h in self.hypotheses])
        return a / a.sum()

    def impossible(self, subject: str) -> frozenset[str]:
        """The hypotheses the observer knows ``subject`` cannot have (probability 0).

        Those a negative fact rules out, and those the context's prior gives no
        weight once other players' certain roles are taken from it (in Werewolf
        the seat's own role when it is the only one of it — a doctor knows
        nobody else is the doctor — and a role whose count facts used up). A
        judgment naming one is recorded (and counted in ``alpha``) but never
        gives it mass.
        """
        out = self.excluded.get(subject, frozenset())
        prior = self.context.prior
        if prior:
            used = used_counts(self.context, self.facts, subject)
            left = {h: float(prior.get(h, 0.0)) - used.get(h, 0.0) for h in self.hypotheses}
            if any(v > 0 for h, v in left.items() if h not in out):
                out = out | {h for h, v in left.items() if v <= 0.0}
            else:
                out = out | {h for h in self.hypotheses if float(prior.get(h, 0.0)) <= 0.0}
        return out

    def observe(self, evidence: Evidence) -> DirichletBelief:
        self.context.check_subject("DirichletBelief.observe", evidence.subject)
        if evidence.kind == "message":
            return dataclasses.replace(self, history=self._with_message(evidence))
        if evidence.kind != "identity":
            return self
        if evidence.value not in self.hypotheses:
            raise ValueError(
                f"DirichletBelief.observe: {evidence.value!r} is not one of {self.hypotheses}"
            )
        s = evidence.subject
        ev = dict(self.evidence)
        ev[s] = tuple(ev.get(s, ())) + (evidence,)
        if evidence.certain and evidence.negated:
            excluded = dict(self.excluded)
            excluded[s] = excluded.get(s, frozenset()) | {evidence.value}
            return dataclasses.replace(self, evidence=ev, excluded=excluded)
        if evidence.certain:
            facts = dict(self.facts)
            # The first certain fact stays: a later "certain" contradiction is a bug upstream.
            facts.setdefault(s, evidence.value)
            return dataclasses.replace(self, evidence=ev, facts=facts)
        if s in self.facts or evidence.weight < self.threshold:
            return dataclasses.replace(self, evidence=ev)
        a = np.asarray(self.alphas[s], dtype=float) if s in self.alphas else self.prior_alpha()
        a[self.hypotheses.index(evidence.value)] += (
            evidence.weight if self.confidence_weighted else 1.0
        )
        alphas = dict(self.alphas)
        alphas[s] = tuple(float(x) for x in a)
        return dataclasses.replace(self, alphas=alphas, evidence=ev)

    def belief(self, subject: str) -> Belief:
        self.context.check_subject("DirichletBelief.belief", subject)
        p = self.probabilities(subject)
        dist = {h: float(x) for h, x in zip(self.hypotheses, p, strict=True)}
        # A negative fact pins too when what remains is one side (a werewolf's non-partners).
        side = subject in self.excluded and side_of(self.context, dist) != 0.0
        return Belief(
            subject=subject,
            distribution=dist,
            evidence=tuple(self.evidence.get(subject, ())),
            pinned=subject in self.facts or side,
        )

    def reference(self, subject: str) -> dict[str, float]:
        """The prior mean with the impossible hypotheses removed (no judgment counted)."""
        a = self.subject_prior_alpha(subject)
        out = self.impossible(subject)
        a = np.where([h in out for h in self.hypotheses], 0.0, a)
        if a.sum() <= 0:
            a = np.asarray([0.0 if h in out else 1.0 for h in self.hypotheses])
        return {h: float(x) for h, x in zip(self.hypotheses, a / a.sum(), strict=True)}

    def _player_view(self, subject: str) -> PlayerView:
        b = self.belief(subject)
        return {
            "player": subject,
            # "unsure" unless the likeliest role beat its prior odds by the ratio (identity_label).
            "identity": identity_label(b.distribution, self.reference(subject)),
            "probabilities": top_probabilities(b.distribution, self.top_n),
            "stance": "unsure",
            "trust": None,
            "chains": [],
            "pinned": b.pinned,
        }

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        seen = set(self.alphas) | set(self.evidence) | set(self.facts)
        who = list(subjects) if subjects is not None else self.context.others(seen)
        return self._consultation(players=[self._player_view(s) for s in who])

    def snapshot(self) -> dict[str, Any]:
        subjects = sorted(set(self.alphas) | set(self.evidence))
        return {
            "model": self.name,
            "hypotheses": list(self.hypotheses),
            "prior": self.prior,
            "threshold": self.threshold,
            "confidence_weighted": self.confidence_weighted,
            "facts": dict(self.facts),
            "excluded": {s: sorted(x) for s, x in sorted(self.excluded.items())},
            "prior_alpha": [float(x) for x in self.prior_alpha()],
            "subjects": {
                s: {
                    "alpha": [float(x) for x in self.alpha(s)],
                    "p": [float(x) for x in self.probabilities(s)],
                    "evidence": [e.value for e in self.evidence.get(s, ())],
                }
                for s in subjects
            },
            "history": [e.to_dict() for e in self.history],
        }


def make_dirichlet(context: OpponentContext) -> DirichletBelief:
    """Factory registered as ``dirichlet`` (the paper's rule: prior 1, +1 per guess)."""
    return DirichletBelief(hypotheses=context.hypotheses, context=context)
