"""The opponent-model interface shared by every belief model of the toolkit.

An opponent model is held by one observer (one player) and describes what it
believes about the other players. It is a *value*: every update returns a new
model and leaves the old one unchanged, so game states can branch (as game
trees do) without copying by hand. Every model can:

* ``observe(evidence)`` — take one piece of :class:`Evidence` (who did or said
  what to whom, with a credibility in [-1, 1] and a time step);
* ``belief(subject)`` — answer "what do I believe about / how far do I trust
  player X" with a frozen :class:`Belief` (a trust value, a distribution over
  hypotheses where the model has one, and the evidence behind it). It is the
  one reading of a model: prompts, stand-ins, studies and figures all use it,
  and reading never changes the model;
* ``consult(goal=..., subjects=...)`` — a *decision*: give the
  :class:`PromptFields` a prompt needs to steer the player (typed data, never
  sentences: the sentences live in a game's prompt book), together with the
  model after what the decision itself adds (GRATR's Eq. 9 feedback, as
  evidence; every other model returns itself);
* ``on_outcome(revealed, step=...)`` — update on an outcome (roles revealed);
* ``snapshot()`` — a JSON-ready dict for logs.

Models are built by name from a typed, frozen :class:`OpponentContext`
(:func:`gt_llm.opponents.make_opponent_model`).
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

if TYPE_CHECKING:
    from gt_llm.chat import ChatModel

#: What a piece of evidence is: an identity judgment about ``subject`` (``value`` is
#: a hypothesis), an intent of ``actor`` towards ``subject`` (``credibility`` carries
#: its sign and strength), or a plain message (``text``) for the history.
EvidenceKind = Literal["identity", "intent", "message"]
EVIDENCE_KINDS: tuple[str, ...] = ("identity", "intent", "message")

#: The answer to "how do I stand towards X" (GRATR's ally / adversary / unsure by ε).
Stance = Literal["ally", "adversary", "unsure"]

#: The identity a model reports when it has no evidence (GRATR appendix: "unsure").
UNSURE = "unsure"

#: How many times its odds must have grown over its reference odds (the prior with
#: what is ruled out for certain) for a model to name the likeliest hypothesis as the
#: player's identity: the evidence's Bayes factor for it (3: the start of "substantial"
#: on Jeffreys' scale); below it the label is :data:`UNSURE` (:func:`identity_label`).
IDENTITY_ODDS_RATIO = 3.0


def clamp_unit(x: float) -> float:
    """Clamps to [-1, 1]; NaN (never expected) raises instead of propagating."""
    if math.isnan(x):
        raise ValueError("clamp_unit: NaN trust value")
    return -1.0 if x < -1.0 else 1.0 if x > 1.0 else float(x)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One observation about ``subject``.

    The first four fields are the original call surface (fruit trading builds
    ``Evidence(subject=..., value=..., source=..., step=...)``): such evidence is
    an identity judgment of weight 1.

    Attributes:
      subject: The player the evidence is about (the target of an intent).
      value: For ``identity``: the hypothesis it points to (a role, a fruit); for
        ``intent``: the intent type (``Attack``/``Defend``/``Deceive``), for logs;
        for ``message``: what kind of message it is (a speech act, ``vote``), if known.
      source: Where it came from (``"llm_guess"``, ``"intent"``, ``"moderator"``).
      step: The time step (message number, day); decay and ordering use it.
      weight: Confidence in [0, 1] of an identity judgment.
      kind: ``"identity"``, ``"intent"`` or ``"message"``.
      actor: Who did or said it (``""``: the observer itself, or the moderator).
      credibility: For ``intent``: in [-1, 1], negative for hostility, positive
        for support, its magnitude the strength (GRATR's c(p_i, p_j)).
      certain: A fact (a seer's check, a revealed role): pinned, never overwritten.
      negated: With ``certain``: the fact is that ``subject`` is *not* ``value``
        (a werewolf knows its non-partners are not werewolves; a team check
        finds "not a werewolf").
      text: The message text, when there is one (the retrieval baselines use it).
    """

    subject: str
    value: str = ""
    source: str = ""
    step: int = 0
    weight: float = 1.0
    kind: EvidenceKind = "identity"
    actor: str = ""
    credibility: float = 0.0
    certain: bool = False
    negated: bool = False
    text: str = ""

    def __post_init__(self) -> None:
        if self.kind not in EVIDENCE_KINDS:
            raise ValueError(f"Evidence: kind must be one of {EVIDENCE_KINDS}, got {self.kind!r}")
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError(f"Evidence: weight must be in [0, 1], got {self.weight}")
        if not -1.0 <= self.credibility <= 1.0:
            raise ValueError(f"Evidence: credibility must be in [-1, 1], got {self.credibility}")
        if self.kind == "intent" and not self.actor:
            raise ValueError("Evidence: an intent needs an actor (who acted towards subject)")
        if self.kind == "identity" and not self.value:
            raise ValueError("Evidence: an identity judgment needs a value (the hypothesis)")
        if self.negated and not (self.certain and self.kind == "identity"):
            raise ValueError("Evidence: negated is for certain identity facts only")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for snapshots and logs)."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Belief:
    """A frozen answer about one subject.

    Attributes:
      subject: The player asked about.
      distribution: Probabilities over hypotheses, in hypothesis order; empty for
        models that keep none (``none``, the retrieval baselines).
      evidence: The evidence behind the answer, oldest first.
      value: Trust in [-1, 1] (GRATR's T(p)); ``None`` for models without one.
      pinned: Whether a certain fact fixes the answer.
    """

    subject: str
    distribution: Mapping[str, float] = dataclasses.field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    value: float | None = None
    pinned: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "distribution", MappingProxyType(dict(self.distribution)))
        object.__setattr__(self, "evidence", tuple(self.evidence))

    def most_likely(self, *, tol: float = 1e-12) -> tuple[str, ...]:
        """The hypotheses of highest probability (several on a tie), in stored order.

        Empty when the model keeps no distribution.
        """
        if not self.distribution:
            return ()
        top = max(self.distribution.values())
        return tuple(h for h, p in self.distribution.items() if p >= top - tol)


class MessageView(TypedDict):
    """One past message as a prompt shows it.

    ``subject`` is whom it is about and ``kind`` what it is (the message
    evidence's ``value``, e.g. a speech act ``accuse`` or ``vote``; empty when
    the game gives none), so that a reader can count what was retrieved.
    """

    step: int
    speaker: str
    text: str
    subject: str
    kind: str


class ChainView(TypedDict):
    """One GRATR evidence chain p_1 <- p_2 <- ... <- p_o (Eqs. 5-7; Eq. 8 weight, floored)."""

    players: list[str]
    edge_trusts: list[float]
    value: float
    u: float
    uncertainty: float
    weight: float
    floored: bool


class PlayerView(TypedDict):
    """What a model says about one player (GRATR appendix 3, one line per player).

    ``identity`` is the inferred hypothesis (or ``"unsure"``), ``probabilities`` the
    most likely hypotheses with their probabilities (empty without a distribution),
    ``stance`` ally / adversary / unsure by ε, ``trust`` T(p) or ``None``,
    ``chains`` the evidence chains behind the trust (GRATR only, else empty),
    ``pinned`` whether a certain fact fixes it.
    """

    player: str
    identity: str
    probabilities: dict[str, float]
    stance: str
    trust: float | None
    chains: list[ChainView]
    pinned: bool


class PromptFields(TypedDict):
    """The fields an opponent model gives a game's prompt (same keys for every model).

    ``model``: the registered name; ``history``: the last K messages;
    ``retrieved``: messages a retrieval baseline picked for this decision (else
    empty); ``players``: per-player views (empty for ``none`` and the baselines).
    """

    model: str
    history: list[MessageView]
    retrieved: list[MessageView]
    players: list[PlayerView]


def message_view(e: Evidence) -> MessageView:
    return {
        "step": int(e.step),
        "speaker": e.actor,
        "text": e.text,
        "subject": e.subject,
        "kind": e.value,
    }


@dataclasses.dataclass(frozen=True)
class OpponentContext:
    """What a factory needs to build an opponent model (typed, frozen).

    Attributes:
      players: Every player's id, including ``self_id`` (empty: subjects are
        accepted as they appear — the compatibility path does this).
      self_id: The observer's own id (``None`` when it is not a player of the graph).
      hypotheses: What a player may be (roles in Werewolf, fruits in fruit trading).
      k: The history window: the last K messages every model shows (paper: 15).
      top_k: How many messages the retrieval baselines put in the prompt.
      alignment: Per hypothesis, +1 if a player of that kind is the observer's ally,
        -1 if an adversary, 0 / missing if neither (fruits). GRATR turns identity
        judgments and certain facts into trust with it.
      self_role: The observer's own hypothesis, when it has one.
      prior: Per hypothesis a prior weight (e.g. how many players have each role
        among the others); empty: uniform. Dirichlet's prior mean and GRATR's
        side masses use it.
      chat: A chat model the rerank baseline may use to score relevance.
    """

    players: tuple[str, ...] = ()
    self_id: str | None = None
    hypotheses: tuple[str, ...] = ()
    k: int = 15
    top_k: int = 5
    alignment: Mapping[str, float] = dataclasses.field(default_factory=dict)
    self_role: str | None = None
    prior: Mapping[str, float] = dataclasses.field(default_factory=dict)
    chat: ChatModel | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        object.__setattr__(self, "alignment", MappingProxyType(dict(self.alignment)))
        object.__setattr__(self, "prior", MappingProxyType(dict(self.prior)))
        if len(set(self.players)) != len(self.players):
            raise ValueError("OpponentContext: players must be distinct")
        if len(set(self.hypotheses)) != len(self.hypotheses):
            raise ValueError("OpponentContext: hypotheses must be distinct")
        if self.self_id is not None and self.players and self.self_id not in self.players:
            raise ValueError(f"OpponentContext: self_id {self.self_id!r} is not among players")
        if self.k < 0 or self.top_k < 0:
            raise ValueError("OpponentContext: k and top_k must be >= 0")
        bad = {h: a for h, a in self.alignment.items() if h not in self.hypotheses}
        if bad:
            raise ValueError(f"OpponentContext: alignment names unknown hypotheses {sorted(bad)}")
        if any(not -1.0 <= a <= 1.0 for a in self.alignment.values()):
            raise ValueError("OpponentContext: alignment values must be in [-1, 1]")
        unknown = sorted(h for h in self.prior if h not in self.hypotheses)
        if unknown:
            raise ValueError(f"OpponentContext: prior names unknown hypotheses {unknown}")
        if any(w < 0 for w in self.prior.values()) or (
            self.prior and sum(self.prior.values()) <= 0
        ):
            raise ValueError("OpponentContext: prior weights must be >= 0 with a positive sum")

    def check_subject(self, where: str, subject: str) -> None:
        """Raises ValueError when ``players`` is fixed and does not hold ``subject``."""
        if self.players and subject not in self.players:
            raise ValueError(f"{where}: unknown player {subject!r}; players are {self.players}")

    def others(self, seen: Iterable[str] = ()) -> list[str]:
        """The players other than the observer (or, without a fixed list, those seen)."""
        pool = self.players if self.players else sorted(set(seen))
        return [p for p in pool if p != self.self_id]


@dataclasses.dataclass(frozen=True)
class Consultation:
    """The result of :meth:`OpponentModel.consult`.

    Attributes:
      model: The model after the consultation (the same object for models whose
        consultation adds nothing; GRATR adds its Eq. 9 feedback as evidence).
      fields: The prompt fields.
    """

    model: OpponentModel
    fields: PromptFields


class OpponentModel(abc.ABC):
    """What one observer believes about the other players (an immutable value)."""

    #: Registered name (``"none"``, ``"dirichlet"``, ``"gratr"``, ...).
    name: ClassVar[str] = ""

    @abc.abstractmethod
    def observe(self, evidence: Evidence) -> OpponentModel:
        """Returns the model updated with ``evidence`` (``self`` is unchanged)."""

    def observe_all(self, evidence: Iterable[Evidence]) -> OpponentModel:
        """Observes several pieces of evidence in order (models may do it in one copy)."""
        model: OpponentModel = self
        for e in evidence:
            model = model.observe(e)
        return model

    @abc.abstractmethod
    def belief(self, subject: str) -> Belief:
        """The current belief about ``subject``."""

    @abc.abstractmethod
    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        """The prompt fields for a decision, and the model after consulting.

        Args:
          goal: The decision's goal text (the retrieval baselines' query).
          subjects: The players the decision is about (default: every other player).
        """

    def prompt_fields(
        self, *, goal: str = "", subjects: Sequence[str] | None = None
    ) -> PromptFields:
        """``consult(...).fields``, dropping any update the consultation makes."""
        return self.consult(goal=goal, subjects=subjects).fields

    def on_outcome(self, revealed: Mapping[str, str], *, step: int) -> OpponentModel:
        """Updates on an outcome: each revealed ``player -> hypothesis`` becomes a fact."""
        return self.observe_all(
            Evidence(subject=p, value=h, source="outcome", step=step, certain=True)
            for p, h in revealed.items()
        )

    def reference(self, subject: str) -> dict[str, float]:
        """What the model believes of ``subject`` without evidence: its prior, minus
        what is ruled out for certain. :func:`identity_label` measures a belief's
        rise against it. Default: the context's prior (empty without a context).
        """
        context = getattr(self, "context", None)
        return prior_distribution(context) if context is not None else {}

    def identity(self, subject: str) -> str:
        """The identity label of ``subject``: :func:`identity_label` of its belief."""
        return identity_label(self.belief(subject).distribution, self.reference(subject))

    @abc.abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready description for logs."""

    def render(self, subject: str, template: str, **names: Any) -> str:
        """Fills ``template``'s ``{hypotheses}`` slot with the most likely hypotheses.

        Compatibility helper (fruit trading); new code passes :meth:`consult`'s
        fields to a prompt book instead.
        """
        return template.format(hypotheses=self.belief(subject).most_likely(), **names)


def prior_distribution(
    context: OpponentContext,
    fact: str | None = None,
    excluded: Iterable[str] = (),
    used: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The context's prior over hypotheses (uniform without one), with certain facts applied.

    A fact is one-hot; excluded hypotheses get 0 and the rest are renormalised.
    ``used`` (:func:`used_counts`) takes from each prior count what other
    players are known to hold, so a role whose count is used up gets 0 (two
    werewolves found: nobody else is a werewolf) and a partly used one its
    remaining share. Empty without hypotheses.
    """
    hyps = context.hypotheses
    if fact is not None and fact in hyps:
        return {h: float(h == fact) for h in hyps}
    out = set(excluded)
    w = {h: (float(context.prior.get(h, 0.0)) if context.prior else 1.0) for h in hyps}
    if used:
        left = {h: max(v - float(used.get(h, 0.0)), 0.0) for h, v in w.items()}
        if sum(v for h, v in left.items() if h not in out) > 0:
            w = left  # else the facts contradict the counts: keep the prior
    w = {h: (0.0 if h in out else v) for h, v in w.items()}
    if sum(w.values()) <= 0:
        w = {h: (0.0 if h in out else 1.0) for h in hyps}
    total = sum(w.values())
    return {h: v / total for h, v in w.items()} if total > 0 else {}


def identity_label(
    distribution: Mapping[str, float],
    reference: Mapping[str, float],
    odds_ratio: float = IDENTITY_ODDS_RATIO,
) -> str:
    """The identity a model names for a player, or :data:`UNSURE` (a label that may abstain).

    The likeliest hypothesis h (a unique maximum of ``distribution``), named
    when its odds p/(1-p) are at least ``odds_ratio`` times its odds under
    ``reference`` (the prior with the negative facts applied: what the
    observer would believe without any evidence) — the Bayes factor of the
    evidence for h against the rest. A certain fact (probability 1) is always
    named. One rule for every model and prior: a rare role needs the same
    weight of evidence as a common one, and a role that rose but is not the
    likeliest is never named. Without evidence the distribution is the
    reference, so the label is "unsure" — never the prior's most likely role.
    """
    if odds_ratio < 1.0:
        raise ValueError(f"identity_label: odds_ratio must be >= 1, got {odds_ratio}")
    if not distribution:
        return UNSURE
    certain = [h for h, p in distribution.items() if p >= 1.0 - 1e-12]
    if len(certain) == 1:
        return certain[0]
    top = max(distribution.values())
    best = [h for h, p in distribution.items() if p >= top - 1e-12]
    if len(best) != 1 or top <= 0.0:
        return UNSURE
    r = float(reference.get(best[0], 0.0))
    if r <= 0.0:  # evidence gave mass to what the reference rules out: no odds to compare
        return UNSURE
    if r >= 1.0 - 1e-12:
        return UNSURE  # not certain now, though the reference was: nothing was learnt for it
    return best[0] if top / (1.0 - top) >= odds_ratio * r / (1.0 - r) * (1 - 1e-12) else UNSURE


__all__ = [
    "Belief",
    "ChainView",
    "Consultation",
    "EVIDENCE_KINDS",
    "Evidence",
    "EvidenceKind",
    "MessageView",
    "OpponentContext",
    "OpponentModel",
    "PlayerView",
    "PromptFields",
    "Stance",
    "UNSURE",
    "IDENTITY_ODDS_RATIO",
    "identity_label",
    "prior_distribution",
    "clamp_unit",
    "message_view",
]
