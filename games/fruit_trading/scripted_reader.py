"""The stand-in's reading of a dialogue for the judge: the standing proposal, and its acceptance.

Part of the scripted stand-in (``scripted:rules-v2``, **not an LLM**; see
:mod:`games.fruit_trading.scripted`). The agreement judge and the trade summary
of the stand-in read any dialogue with these rules -- the stand-in's own
messages and the hand-written dialogues of the judge's labelled set
(:mod:`games.fruit_trading.judge_check`) alike. They are word patterns, so they
miss what a pattern cannot see (irony, a trade spread over sentences in unusual
words); ``gt-llm fruit-trading judge-check --backend scripted`` measures how
often.

* **Quantities** are ``<count> <fruit>`` (:data:`~games.fruit_trading.rules.QUANTITY_PATTERN`:
  digits or number words, ``a``/``an`` for one).
* **A proposal** is a sentence (split at ``. ! ? ;``, line breaks and "but")
  without a negation that names quantities on both sides of a connector
  ("for", "in exchange for", "in return for", "if you", "and I", ...). Which
  side the sender gives is read from the nearest cue before the first group
  ("I'll give you", "my", "you can have": the sender gives; "give me", "your",
  "I want": the sender receives), else from the cue after the connector, else
  the sender gives the first group ("2 apples for 1 banana"); the other group
  goes the other way. A message without such a sentence may still propose
  across sentences: every quantity then takes the side of the nearest cue
  before it ("I need 1 banana. I can offer 2 apples."). A message's proposal is
  its last one.
* **The standing proposal** is the latest proposal before the last message.
* **The last message accepts it** when the standing proposal is the other
  player's, the last message has an acceptance word ("deal", "I accept",
  "agreed", "sounds good", ...) outside a question, no refusal ("no deal",
  "not interested", ...) and no hedge or change ("how about", "instead",
  "but", "if you", "maybe", ...), and every quantity it names belongs to the
  standing proposal (it may restate it, not change it).

On the stand-in's own messages these rules give the same verdicts and trades
as its earlier, narrower reading (its fixed phrases "trade you ... for ..." and
"I accept"), so its runs are unchanged.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from games.fruit_trading.rules import FRUITS, QUANTITY_PATTERN, count_value, fruit_index

Basket = tuple[int, int, int]

__all__ = ["Proposal", "accepted_proposal", "message_proposal"]

#: Cues that the sender gives what follows, and that it receives what follows
#: (longer phrases first: the regex takes the first alternative that matches).
_GIVE_CUES = (
    "in exchange i give", "i'll give you", "i will give you", "i can give you", "i could give you",
    "i would give you", "i'd give you", "i give you", "i'll send you", "i can send you",
    "you can have", "you could have", "you'll get", "you will get", "you would get",
    "you'd get", "you get", "you receive", "i'll trade you", "i can trade you", "trade you",
    "i offer", "i can offer", "i'll offer", "offer you", "offering", "i'll give", "i give",
    "give you", "send you", "hand you", "from me", "swap my", "my",
)  # fmt: skip
_GET_CUES = (
    "give me", "send me", "hand me", "can i have", "could i have", "may i have",
    "i'd like", "i would like", "i want", "i need", "looking for", "i'll take", "i get",
    "i receive", "i'd get", "i would get", "in return for", "you give", "your", "for your",
)  # fmt: skip
_CUES = re.compile(
    r"\b(?:(?P<give>"
    + "|".join(re.escape(c) for c in sorted(_GIVE_CUES, key=len, reverse=True))
    + r")|(?P<get>"
    + "|".join(re.escape(c) for c in sorted(_GET_CUES, key=len, reverse=True))
    + r"))\b"
)
#: What joins the two sides of a proposal.
_CONNECTOR = re.compile(
    r"\b(?:in exchange for|in return for|in return|in exchange|for|if (?:you|i)|"
    r"and (?:you|i|in return)|while (?:you|i)|then (?:you|i))\b"
)
_SENTENCE = re.compile(r"[.!?;\n]+|\bbut\b|,\s*but\b")
_NEGATION = re.compile(r"\b(?:not|no|never|cannot)\b|n't\b")
_ACCEPT = re.compile(
    r"\b(?:deal|i accept|accepted|accept|agreed|i agree|agree|sounds good|sounds great|"
    r"works for me|that works|let's do it|let's do that|you're on|ok|okay|sure|yes|"
    r"gladly|happy to)\b"
)
_REFUSE = re.compile(
    r"\b(?:no deal|not interested|no thanks|no, thanks|decline|reject|refuse|"
    r"not accept|can't accept|cannot accept|won't accept|don't accept|can't agree|"
    r"cannot agree|don't agree|not a deal|not for me|too much|not enough|unfair)\b"
)
_HEDGE = re.compile(
    r"\b(?:how about|what about|instead|counter|maybe|perhaps|not sure|think about|"
    r"let me think|would you|could you|can you|if you|only if|unless|but|rather|"
    r"one condition|on condition)\b"
)


@dataclasses.dataclass(frozen=True)
class Proposal:
    """A trade a message proposes: what its sender gives and receives."""

    sender: str
    gives: Basket
    receives: Basket

    def quantities(self) -> set[tuple[int, str]]:
        """Its ``(count, fruit)`` quantities, both sides."""
        return {
            (n, FRUITS[i])
            for basket in (self.gives, self.receives)
            for i, n in enumerate(basket)
            if n > 0
        }


def _mentions(text: str) -> list[tuple[int, int, int]]:
    """(position, fruit index, count) of every quantity in a lower-cased text."""
    return [
        (m.start(), fruit_index(m.group(2)), count_value(m.group(1)))
        for m in QUANTITY_PATTERN.finditer(text)
    ]


def _last_cue(text: str, start: int, end: int) -> str | None:
    """``give`` or ``get``: the last cue in ``text[start:end]``."""
    side = None
    for m in _CUES.finditer(text, start, end):
        side = "give" if m.group("give") else "get"
    return side


def _basket(mentions: Sequence[tuple[int, int, int]]) -> Basket:
    counts = [0, 0, 0]
    for _, fruit, n in mentions:
        counts[fruit] += n
    return (counts[0], counts[1], counts[2])


def _disjoint(a: Basket, b: Basket) -> bool:
    return any(a) and any(b) and not any(x and y for x, y in zip(a, b, strict=True))


def _sentence_trade(sentence: str) -> tuple[Basket, Basket] | None:
    """(gives, receives) of a sentence that proposes a trade across a connector."""
    if _NEGATION.search(sentence):
        return None
    mentions = _mentions(sentence)
    if len(mentions) < 2:
        return None
    first, last = mentions[0][0], mentions[-1][0]
    split = next((c for c in _CONNECTOR.finditer(sentence, first, last) if c.start() > first), None)
    if split is None:
        return None
    group_a = [m for m in mentions if m[0] < split.start()]
    group_b = [m for m in mentions if m[0] >= split.end()]
    if not group_a or not group_b:
        return None
    side = _last_cue(sentence, 0, group_a[0][0])
    if side is None:
        after = _last_cue(sentence, split.start(), group_b[0][0])
        side = {"give": "get", "get": "give"}.get(after or "", "give")
    a, b = _basket(group_a), _basket(group_b)
    gives, receives = (a, b) if side == "give" else (b, a)
    return (gives, receives) if _disjoint(gives, receives) else None


def _message_trade(text: str) -> tuple[Basket, Basket] | None:
    """(gives, receives) across the sentences of a message: each quantity by its nearest cue."""
    if _NEGATION.search(text):
        return None
    sides: dict[str, list[tuple[int, int, int]]] = {"give": [], "get": []}
    for m in _mentions(text):
        side = _last_cue(text, 0, m[0])
        if side is None:
            return None
        sides[side].append(m)
    gives, receives = _basket(sides["give"]), _basket(sides["get"])
    return (gives, receives) if _disjoint(gives, receives) else None


def message_proposal(sender: str, text: str) -> Proposal | None:
    """The trade a message proposes (its last proposing sentence), if any."""
    low = text.lower()
    found = None
    for sentence in _SENTENCE.split(low):
        trade = _sentence_trade(sentence)
        if trade is not None:
            found = trade
    if found is None:
        found = _message_trade(low)
    return None if found is None else Proposal(sender, found[0], found[1])


def _accepts(text: str, standing: Proposal) -> bool:
    """Whether a message accepts ``standing`` as it is (see the module docstring)."""
    low = text.lower()
    if _REFUSE.search(low) or _HEDGE.search(low):
        return False
    parts = re.split(r"(?<=[.!?\n])", low)
    if not any(_ACCEPT.search(p) and not p.rstrip().endswith("?") for p in parts):
        return False
    named = {(n, FRUITS[f]) for _, f, n in _mentions(low)}
    return named <= standing.quantities()


def accepted_proposal(turns: Sequence[Mapping[str, Any]]) -> Proposal | None:
    """The other player's standing proposal when the last message accepts it, else None."""
    if len(turns) < 2:
        return None
    last = turns[-1]
    standing = None
    for t in reversed(turns[:-1]):
        standing = message_proposal(str(t["sender"]), str(t["text"]))
        if standing is not None:
            break
    if standing is None or standing.sender == str(last["sender"]):
        return None
    return standing if _accepts(str(last["text"]), standing) else None
