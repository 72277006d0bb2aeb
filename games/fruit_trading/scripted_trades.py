"""The fruit-trading stand-in's negotiator: its styles per tone and its proposal search.

Part of the scripted stand-in (``scripted:rules-v2``, not an LLM; the rules
are described in :mod:`games.fruit_trading.scripted`, which writes and reads
the texts). A speaker in a :class:`Style` searches :data:`CANDIDATES` (a
basket of at most two fruit it owns for a basket of at most two other fruit)
for the best ``own gain + w(tone) * estimated opponent gain`` among trades
whose own gain reaches its aspiration (:func:`choose_trade`); a receiver
accepts an offer whose gain reaches :func:`acceptance_threshold`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from games.fruit_trading.rules import CONCRETE_TONES, FRUITS

Basket = tuple[int, int, int]


@dataclasses.dataclass(frozen=True)
class Style:
    """How a speaker negotiates in a tone.

    A speaker's *aspiration* is ``share * best + offset``, where ``best`` is the
    largest gain it could get from any candidate trade; it drops by
    :data:`SOFTENING` per message exchanged after the first. Proposals must
    reach it (the floor), and offers are accepted when they reach it shifted
    by the sender's tone as read from its text and by noise (the threshold).

    Attributes:
      voice: The concrete tone whose phrases the speaker writes.
      weight: ``w(tone)``, the weight of the opponent's estimated gain.
      share: Share of the best available gain the speaker aspires to.
      offset: Added to the aspiration (negative: ready to lose a little).
      read_shift: Threshold shift per sender tone read from the text.
    """

    voice: str
    weight: float
    share: float
    offset: float
    read_shift: Mapping[str, float]

    def aspiration(self, best: float, messages_so_far: int) -> float:
        return self.share * best + self.offset - softening(messages_so_far)


STYLES: dict[str, Style] = {
    # Never takes a first offer below its best; resists pressure, exploits meekness.
    "assertive": Style(
        "assertive", weight=0.1, share=1.0, offset=0.5,
        read_shift={"assertive": 1.0, "calm": 0.0, "submissive": 0.5},
    ),
    # Meets politeness halfway, bristles a little at pressure.
    "calm": Style(
        "calm", weight=0.5, share=0.6, offset=0.0,
        read_shift={"assertive": 0.5, "calm": 0.0, "submissive": -0.5},
    ),
    # Ready to lose a little to please, more so when pressed.
    "submissive": Style(
        "submissive", weight=1.0, share=0.25, offset=-2.0,
        read_shift={"assertive": -1.0, "calm": 0.0, "submissive": -0.5},
    ),
}  # fmt: skip


def blend_styles(mix: Sequence[float] | np.ndarray) -> Style:
    """The style of tone "any": a mix of the concrete tones' numbers.

    The paper's "any" lets the model choose a tone, not necessarily one of the
    three; the stand-in writes in the voice of the largest component.
    """
    w = np.asarray(mix, dtype=float)
    w = w / w.sum()
    parts = [STYLES[t] for t in CONCRETE_TONES]

    def avg(get) -> float:
        return float(sum(wi * get(p) for wi, p in zip(w, parts, strict=True)))

    return Style(
        voice=CONCRETE_TONES[int(np.argmax(w))],
        weight=avg(lambda p: p.weight),
        share=avg(lambda p: p.share),
        offset=avg(lambda p: p.offset),
        read_shift={t: avg(lambda p, t=t: p.read_shift[t]) for t in CONCRETE_TONES},
    )


#: Aspirations drop by this much per message exchanged after the first.
SOFTENING = 0.75
#: Estimated worth of a fruit to the opponent: without a belief (the mean of
#: U{0,4}), believed wanted, and not believed wanted.
PRIOR_WORTH, BELIEVED_WORTH, OTHER_WORTH = 2.0, 3.5, 1.25
#: Most fruit of one kind in a basket (endowments are 1 or 2 of each fruit).
MAX_PER_FRUIT = 2
#: Most fruit in a basket.
MAX_BASKET = 2


def _baskets() -> list[Basket]:
    """Non-empty baskets of at most MAX_BASKET fruit, MAX_PER_FRUIT of a kind."""
    out = []
    for counts in itertools.product(range(MAX_PER_FRUIT + 1), repeat=len(FRUITS)):
        if 1 <= sum(counts) <= MAX_BASKET:
            out.append(counts)
    return out  # type: ignore[return-value]


#: Every (give, receive) trade of the search, in a fixed order: two baskets with no
#: fruit in common. Feasibility for the speaker is checked later, so that each trade
#: keeps its index (and its tie-break noise) whatever the endowment.
CANDIDATES: tuple[tuple[Basket, Basket], ...] = tuple(
    (g, r)
    for g in _baskets()
    for r in _baskets()
    if not any(a and b for a, b in zip(g, r, strict=True))
)


def softening(messages_so_far: int) -> float:
    """How far aspirations have dropped after ``messages_so_far`` messages."""
    return SOFTENING * max(0, messages_so_far - 1)


def estimated_worth(believed_fruits: Sequence[str], trust: float | None = None) -> np.ndarray:
    """What each fruit is believed to be worth to the opponent.

    ``trust`` (in [-1, 1], or None for a model without trust) scales how far the
    belief moves the estimate away from the prior.
    """
    prior = np.full(len(FRUITS), PRIOR_WORTH)
    if not believed_fruits:
        return prior
    believed = np.array([BELIEVED_WORTH if f in believed_fruits else OTHER_WORTH for f in FRUITS])
    if trust is None:
        return believed
    w = (1.0 + min(1.0, max(-1.0, float(trust)))) / 2.0
    return w * believed + (1.0 - w) * prior


def _feasible(endowment: Sequence[int] | np.ndarray) -> list[int]:
    """Indices of the candidates whose given basket the speaker owns."""
    endow = np.asarray(endowment)
    return [i for i, (g, _) in enumerate(CANDIDATES) if np.all(np.asarray(g) <= endow)]


def _own_gains(idx: Sequence[int], valuation: Sequence[int] | np.ndarray) -> np.ndarray:
    vals = np.asarray(valuation, dtype=float)
    give = np.array([CANDIDATES[i][0] for i in idx], dtype=float)
    recv = np.array([CANDIDATES[i][1] for i in idx], dtype=float)
    return recv @ vals - give @ vals


def best_gain(
    endowment: Sequence[int] | np.ndarray, valuation: Sequence[int] | np.ndarray
) -> float:
    """The largest own gain of any candidate trade the speaker can make."""
    return float(_own_gains(_feasible(endowment), valuation).max())


def choose_trade(
    endowment: Sequence[int],
    valuation: Sequence[int],
    style: Style,
    believed_fruits: Sequence[str],
    messages_so_far: int,
    ties: np.ndarray,
    exclude: Sequence[tuple[Basket, Basket]] = (),
    trust: float | None = None,
) -> tuple[Basket, Basket]:
    """The trade (speaker gives, speaker receives) a speaker in ``style`` proposes.

    Maximises ``own gain + w(tone) * estimated opponent gain + tie noise`` over
    the feasible candidates whose own gain reaches the style's aspiration (or,
    if none does, the best own gain left); trades in ``exclude`` (the
    speaker's earlier proposals) are left out while others remain.
    """
    feasible = _feasible(endowment)
    best = float(_own_gains(feasible, valuation).max())
    idx = [i for i in feasible if CANDIDATES[i] not in set(exclude)] or feasible
    worth = estimated_worth(believed_fruits, trust)
    give = np.array([CANDIDATES[i][0] for i in idx], dtype=float)
    recv = np.array([CANDIDATES[i][1] for i in idx], dtype=float)
    own = _own_gains(idx, valuation)
    theirs = give @ worth - recv @ worth
    floor = min(style.aspiration(best, messages_so_far), float(own.max()))
    score = own + style.weight * theirs + ties[idx]
    score[own < floor] = -np.inf
    return CANDIDATES[idx[int(np.argmax(score))]]


def acceptance_threshold(
    style: Style, best: float, sender_tone: str | None, messages_so_far: int, noise: float
) -> float:
    """The least gain a receiver in ``style`` accepts (``best``: its best available gain)."""
    shift = style.read_shift.get(sender_tone, 0.0) if sender_tone else 0.0
    return style.aspiration(best, messages_so_far) + shift + noise


__all__ = [
    "BELIEVED_WORTH",
    "Basket",
    "CANDIDATES",
    "MAX_BASKET",
    "MAX_PER_FRUIT",
    "OTHER_WORTH",
    "PRIOR_WORTH",
    "SOFTENING",
    "STYLES",
    "Style",
    "acceptance_threshold",
    "best_gain",
    "blend_styles",
    "choose_trade",
    "estimated_worth",
    "softening",
]
