"""An exact Bayesian reference model: the posterior over every deal a seat cannot rule out.

Where the context holds a count prior (Werewolf: how many of the other players
have each role, :func:`gt_llm.opponents.deals.count_prior`), the model keeps
the deals consistent with the seat's certain knowledge
(:func:`gt_llm.opponents.deals.enumerate_deals`: facts fix players, negative
facts rule roles out, the counts hold, so a used-up role gets no mass by
construction) with the uniform prior over them, and weighs each deal by the
likelihood of what was said and done under it. A belief about a player is
that player's marginal. The evidence is the same :class:`Evidence` every
model reads (the same extraction); its likelihoods are explicit and stated
here, with the gains of :class:`BayesParams`:

* **A judgment** "X is r" of confidence w: L = 1 + g_j w on the deals where X
  is r, 1 elsewhere — from the observer itself (its own reading) and from an
  honest speaker; a speaker of the deceiving side (``deceivers``: Werewolf's
  werewolves) says nothing about the truth (L = 1 on those deals). A source's
  latest judgment about X replaces its earlier ones (a restated opinion is
  not new evidence).
* **A claim about oneself** "I am r": L = 1 + g_j w where the claimer is r,
  *and* where it is a deceiver claiming a role of the other side (a bluff
  costs a werewolf nothing): cheap talk, so a claim never clears a player.
* **An intent** of A towards X (an accusation, a defence or a vote, credibility
  c): L = 1 + g_i |c| on the deals where it fits A's side — an honest A
  accuses deceivers and defends the rest; a deceiving A accuses the rest and
  defends its partners — 1 elsewhere.
* **A fact** (``certain``) removes the deals that contradict it.

Without a count prior (fruit trading: one opponent, fruits as hypotheses)
each subject is its own deal: p(h) is proportional to prior(h) times the
judgments' likelihoods (every source honest, intents uninformative).

The model is a yardstick, not the truth: its likelihoods are a stated,
simple model of play. It is exact *for* that model, which is what makes the
other models' Brier and log-loss gaps to it readable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
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
    prior_distribution,
)
from gt_llm.opponents.common import (
    HistoryMixin,
    append_history,
    side_of,
    top_probabilities,
)
from gt_llm.opponents.deals import count_prior, enumerate_deals

__all__ = ["BayesModel", "BayesParams", "make_bayes"]


@dataclasses.dataclass(frozen=True)
class BayesParams:
    """The likelihoods' constants (module docstring).

    Attributes:
      judgment_gain: g_j: a judgment of confidence 1 doubles the odds of its role.
      intent_gain: g_i: an intent of strength 1 doubles the odds of the deals it fits.
      deceivers: The hypotheses whose holders speak against the truth (Werewolf's
        werewolves); none present in the context: every source is honest.
      top_n: How many hypotheses the prompt fields list per player.
    """

    judgment_gain: float = 1.0
    intent_gain: float = 1.0
    deceivers: tuple[str, ...] = ("werewolf",)
    top_n: int = 3

    def __post_init__(self) -> None:
        if self.judgment_gain < 0 or self.intent_gain < 0:
            raise ValueError("BayesParams: judgment_gain and intent_gain must be >= 0")
        if self.top_n < 1:
            raise ValueError(f"BayesParams: top_n must be >= 1, got {self.top_n}")


# eq=False: two models are equal only when they are the same object (compare snapshots).
@dataclasses.dataclass(frozen=True, eq=False)
class BayesModel(HistoryMixin, OpponentModel):
    """The exact posterior over deals (an immutable value; see the module docstring).

    Attributes:
      context: Players, self id, hypotheses, count prior, history window.
      params: The likelihoods' constants.
      facts: Certain roles per player.
      excluded: Roles each player is known not to have.
      judgments: The latest uncertain judgment per (source, subject); source "" is
        the observer itself.
      intents: Every intent observed, oldest first.
      observations: Per subject the identity evidence about it (for :meth:`belief`).
      history: The last K messages.
    """

    name = "bayes"

    context: OpponentContext = OpponentContext()
    params: BayesParams = BayesParams()
    facts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    excluded: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    judgments: Mapping[tuple[str, str], Evidence] = dataclasses.field(default_factory=dict)
    intents: tuple[Evidence, ...] = ()
    observations: Mapping[str, tuple[Evidence, ...]] = dataclasses.field(default_factory=dict)
    history: tuple[Evidence, ...] = ()
    _cache: dict[Any, Any] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for name in ("facts", "excluded", "judgments", "observations"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    # -- updates ------------------------------------------------------------

    def observe(self, evidence: Evidence) -> BayesModel:
        return self.observe_all((evidence,))

    def observe_all(self, evidence: Iterable[Evidence]) -> BayesModel:
        facts, excluded = dict(self.facts), dict(self.excluded)
        judgments, obs = dict(self.judgments), dict(self.observations)
        intents, history = list(self.intents), self.history
        for e in evidence:
            self._check(e)
            if e.kind == "message":
                history = append_history(history, e, self.context.k)
            elif e.kind == "intent":
                intents.append(e)
            else:
                obs[e.subject] = obs.get(e.subject, ()) + (e,)
                if e.certain and e.negated:
                    excluded[e.subject] = excluded.get(e.subject, frozenset()) | {e.value}
                elif e.certain:
                    facts.setdefault(e.subject, e.value)  # the first fact stays
                else:
                    judgments.pop((e.actor, e.subject), None)  # the latest goes last
                    judgments[(e.actor, e.subject)] = e
        return dataclasses.replace(
            self,
            facts=facts,
            excluded=excluded,
            judgments=judgments,
            intents=tuple(intents),
            observations=obs,
            history=history,
        )

    def _check(self, e: Evidence) -> None:
        where = "BayesModel.observe"
        self.context.check_subject(where, e.subject)
        if e.kind == "intent":
            self.context.check_subject(where, e.actor)
        hyps = self.context.hypotheses
        if e.kind == "identity" and e.value not in hyps:
            raise ValueError(f"{where}: {e.value!r} is not one of {hyps}")

    # -- the posterior ------------------------------------------------------

    def _others(self) -> list[str]:
        return self.context.others(self.observations)

    def _deals(self) -> np.ndarray | None:
        # The deals left by the facts (None without a count prior).
        if "deals" not in self._cache:
            counts = count_prior(self.context)
            deals = None
            if counts is not None:
                others = self._others()
                deals = enumerate_deals(
                    others,
                    self.context.hypotheses,
                    counts,
                    {p: h for p, h in self.facts.items() if p in others},
                    {p: x for p, x in self.excluded.items() if p in others},
                )
                if len(deals) == 0:  # facts that contradict the counts: per subject instead
                    deals = None
            self._cache["deals"] = deals
        return self._cache["deals"]

    def _deceiver_mask(self) -> np.ndarray:
        hyps = self.context.hypotheses
        return np.asarray([h in self.params.deceivers for h in hyps])

    def _log_weights(self, deals: np.ndarray) -> np.ndarray:
        # log of the likelihood of every judgment and intent, per deal.
        others = {p: i for i, p in enumerate(self._others())}
        hyps = {h: i for i, h in enumerate(self.context.hypotheses)}
        wolf = self._deceiver_mask()
        has_deceivers = bool(wolf.any())
        me, my_role = self.context.self_id, self.context.self_role
        logw = np.zeros(len(deals))
        gj, gi = self.params.judgment_gain, self.params.intent_gain
        for (actor, subject), e in self.judgments.items():
            if subject not in others or actor == me:
                continue  # about the observer, or the observer's own words: nothing learnt
            col = deals[:, others[subject]]
            fits = col == hyps[e.value]
            if actor == subject:  # a claim about oneself: true, or a deceiver's bluff
                if has_deceivers and not wolf[hyps[e.value]]:
                    fits = fits | wolf[col]
            elif actor in others and has_deceivers:  # a speaker: informative when honest
                fits = fits & ~wolf[deals[:, others[actor]]]
            logw += np.log1p(gj * e.weight * fits)
        if has_deceivers:
            for e in self.intents:
                if e.actor == me or e.actor not in others or e.credibility == 0.0:
                    continue
                hostile = e.credibility < 0
                if e.subject in others:
                    s_wolf = wolf[deals[:, others[e.subject]]]
                else:  # the observer itself
                    s_wolf = np.full(len(deals), my_role in self.params.deceivers)
                a_wolf = wolf[deals[:, others[e.actor]]]
                fits = (hostile == s_wolf) ^ a_wolf
                logw += np.log1p(gi * abs(e.credibility) * fits)
        return logw

    def _marginals(self, *, evidence: bool = True) -> dict[str, dict[str, float]] | None:
        # Per other player its marginal over the deals (None without a count prior).
        key = ("marginals", evidence)
        if key not in self._cache:
            deals = self._deals()
            out = None
            if deals is not None:
                logw = self._log_weights(deals) if evidence else np.zeros(len(deals))
                w = np.exp(logw - logw.max())
                hyps = self.context.hypotheses
                out = {}
                for j, p in enumerate(self._others()):
                    m = np.bincount(deals[:, j], weights=w, minlength=len(hyps))
                    m = m / m.sum()  # a role every deal gives is exactly 1
                    out[p] = {h: float(x) for h, x in zip(hyps, m, strict=True)}
            self._cache[key] = out
        return self._cache[key]

    def _independent(self, subject: str, *, evidence: bool = True) -> dict[str, float]:
        # Without a count prior: prior(h) times every source's latest judgment, per subject.
        base = prior_distribution(
            self.context, self.facts.get(subject), self.excluded.get(subject, ())
        )
        if not evidence or subject in self.facts or not base:
            return base
        w = dict(base)
        for (_, s), e in self.judgments.items():
            if s == subject and e.value in w:
                w[e.value] *= 1.0 + self.params.judgment_gain * e.weight
        total = sum(w.values())
        return {h: v / total for h, v in w.items()}

    def distribution(self, subject: str) -> dict[str, float]:
        """The posterior of ``subject``'s role (its marginal over the deals)."""
        hyps = self.context.hypotheses
        if subject == self.context.self_id and self.context.self_role in hyps:
            return {h: float(h == self.context.self_role) for h in hyps}
        if self.facts.get(subject) in hyps:
            return {h: float(h == self.facts[subject]) for h in hyps}
        marg = self._marginals()
        if marg is not None and subject in marg:
            return dict(marg[subject])
        return self._independent(subject)

    def reference(self, subject: str) -> dict[str, float]:
        """The posterior from the facts alone (no judgment or intent): the deals' marginal."""
        marg = self._marginals(evidence=False)
        if marg is not None and subject in marg:
            return dict(marg[subject])
        return self._independent(subject, evidence=False)

    def belief(self, subject: str) -> Belief:
        self.context.check_subject("BayesModel.belief", subject)
        dist = self.distribution(subject)
        pinned = subject in self.facts or (
            bool(dist) and (max(dist.values()) >= 1.0 - 1e-12 or side_of(self.context, dist) != 0)
        )
        return Belief(
            subject=subject,
            distribution=dist,
            evidence=tuple(self.observations.get(subject, ())),
            pinned=pinned,
        )

    # -- prompt fields ------------------------------------------------------

    def _player_view(self, subject: str) -> PlayerView:
        b = self.belief(subject)
        return {
            "player": subject,
            "identity": identity_label(b.distribution, self.reference(subject)),
            "probabilities": top_probabilities(b.distribution, self.params.top_n),
            "stance": "unsure",
            "trust": None,
            "chains": [],
            "pinned": b.pinned,
        }

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        who = list(subjects) if subjects is not None else self._others()
        return self._consultation(players=[self._player_view(s) for s in who])

    def snapshot(self) -> dict[str, Any]:
        deals = self._deals()
        return {
            "model": self.name,
            "params": dataclasses.asdict(self.params),
            "self_id": self.context.self_id,
            "deals": None if deals is None else len(deals),
            "facts": dict(self.facts),
            "excluded": {s: sorted(x) for s, x in sorted(self.excluded.items())},
            "judgments": [e.to_dict() for e in self.judgments.values()],
            "intents": len(self.intents),
            "subjects": {p: self.distribution(p) for p in self._others()},
            "history": [e.to_dict() for e in self.history],
        }


def make_bayes(context: OpponentContext) -> BayesModel:
    """Factory registered as ``bayes`` (gains 1: a full-strength item doubles the odds)."""
    return BayesModel(context=context)
