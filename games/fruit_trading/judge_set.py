"""The agreement judge's labelled set: fruit-trading dialogues with gold labels.

The set (``games/fruit_trading/data/judge_set.json``, package data, read with
:mod:`importlib.resources`; :func:`load_judge_set`) holds fruit-trading
dialogues written for this project, each with a gold label (did the last
message accept a specific trade the other player proposed?) and, for an
agreement, the agreed trade as :class:`~games.fruit_trading.rules.Trade`
holds it. :mod:`games.fruit_trading.judge_check` asks a judge about every
dialogue and scores its answers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from importlib import resources
from typing import Any

from games.fruit_trading.rules import FRUITS, PrivateInfo, Trade

__all__ = [
    "CATEGORIES",
    "JudgeDialogue",
    "JudgeSet",
    "load_judge_set",
    "parse_judge_set",
]

#: The set's categories, in the order reports list them.
CATEGORIES: tuple[str, ...] = (
    "acceptance",
    "refusal",
    "counter_offer",
    "proposal_no_reply",
    "ambiguous",
    "junk",
)
_RESOURCE = ("games.fruit_trading", "data", "judge_set.json")


@dataclasses.dataclass(frozen=True)
class JudgeDialogue:
    """One labelled dialogue.

    Attributes:
      id: Its name in the set.
      category: One of :data:`CATEGORIES`.
      players: The two players, the first speaker first.
      endowments: Each player's count of each fruit (the summary's bounds).
      messages: ``(sender, text)`` per message; senders alternate, the first player first.
      agreement: The gold label: the last message accepts a specific trade the
        other player proposed.
      trade: For an agreement, the agreed trade; else None.
      rule: For an ambiguous dialogue, the name of the rule that labels it.
    """

    id: str
    category: str
    players: tuple[str, str]
    endowments: tuple[tuple[int, int, int], tuple[int, int, int]]
    messages: tuple[tuple[str, str], ...]
    agreement: bool
    trade: Trade | None = None
    rule: str | None = None

    def turns(self) -> list[dict[str, str]]:
        """The messages as the game's requests carry them (``sender``, ``receiver``, ``text``)."""
        other = {self.players[0]: self.players[1], self.players[1]: self.players[0]}
        return [{"sender": s, "receiver": other[s], "text": t} for s, t in self.messages]

    def texts(self) -> list[str]:
        return [t for _, t in self.messages]

    def infos(self) -> tuple[PrivateInfo, PrivateInfo]:
        """The players' private information as far as the judge needs it (the endowments)."""
        a, b = (
            PrivateInfo(n, e, (0, 0, 0)) for n, e in zip(self.players, self.endowments, strict=True)
        )
        return a, b


@dataclasses.dataclass(frozen=True)
class JudgeSet:
    """The labelled set: its dialogues, the rules of its ambiguous ones, and its hash."""

    dialogues: tuple[JudgeDialogue, ...]
    rules: Mapping[str, str]
    version: int
    sha256: str

    def counts(self) -> dict[str, Any]:
        """Dialogues, agreements and dialogues per category."""
        cats = Counter(d.category for d in self.dialogues)
        return {
            "dialogues": len(self.dialogues),
            "agreements": sum(d.agreement for d in self.dialogues),
            "categories": {c: cats.get(c, 0) for c in CATEGORIES},
        }


def _basket(value: Any, where: str) -> tuple[int, int, int]:
    if (
        not isinstance(value, list)
        or len(value) != len(FRUITS)
        or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value)
    ):
        raise ValueError(
            f"parse_judge_set: {where} must be {len(FRUITS)} counts >= 0 "
            f"({', '.join(FRUITS)}), got {value!r}; fix the set"
        )
    return (value[0], value[1], value[2])


def _dialogue(raw: Mapping[str, Any]) -> JudgeDialogue:
    name = str(raw.get("id", "?"))
    try:
        players = tuple(str(p) for p in raw["players"])
        if len(players) != 2 or players[0] == players[1]:
            raise ValueError(f"parse_judge_set: {name}: give two different players; fix the set")
        endow = raw["endowments"]
        if not isinstance(endow, list) or len(endow) != 2:
            raise ValueError(f"parse_judge_set: {name}: give two endowments; fix the set")
        endowments = (
            _basket(endow[0], f"{name} endowment 1"),
            _basket(endow[1], f"{name} endowment 2"),
        )
        messages = tuple((str(m["sender"]), str(m["text"])) for m in raw["messages"])
        if not messages or any(s not in players for s, _ in messages):
            raise ValueError(
                f"parse_judge_set: {name}: every message needs a sender among {players}; "
                "fix the set"
            )
        trade = None
        if raw.get("trade") is not None:
            gives = raw["trade"]["gives"]
            trade = Trade(
                (_basket(gives[0], f"{name} trade 1"), _basket(gives[1], f"{name} trade 2"))
            )
        agreement = raw["agreement"]
        if not isinstance(agreement, bool) or agreement != (trade is not None):
            raise ValueError(
                f"parse_judge_set: {name}: agreement must be true with a trade or false "
                "without one; fix the set"
            )
        category = str(raw["category"])
        if category not in CATEGORIES:
            raise ValueError(
                f"parse_judge_set: {name}: unknown category {category!r}; use one of "
                f"{', '.join(CATEGORIES)}"
            )
        return JudgeDialogue(
            id=name,
            category=category,
            players=(players[0], players[1]),
            endowments=endowments,
            messages=messages,
            agreement=agreement,
            trade=trade,
            rule=None if raw.get("rule") is None else str(raw["rule"]),
        )
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(
            f"parse_judge_set: dialogue {name} lacks or misshapes {exc}; each needs id, "
            "category, players, endowments, messages (sender, text), agreement and trade"
        ) from None


def parse_judge_set(data: Mapping[str, Any], *, sha256: str = "") -> JudgeSet:
    """The set from its JSON document (checked: shapes, categories, unique ids, rules named).

    Raises:
      ValueError: a malformed dialogue, a repeated id, or a rule the set does not define.
    """
    dialogues = tuple(_dialogue(raw) for raw in data["dialogues"])
    ids = [d.id for d in dialogues]
    if len(set(ids)) != len(ids):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"parse_judge_set: repeated ids {repeated}; give each dialogue its own")
    rules = {str(k): str(v) for k, v in data.get("rules", {}).items()}
    unknown = sorted({d.rule for d in dialogues if d.rule is not None and d.rule not in rules})
    if unknown:
        raise ValueError(f"parse_judge_set: rules {unknown} are not defined; add them to rules")
    return JudgeSet(dialogues, rules, int(data.get("version", 0)), sha256)


def load_judge_set() -> JudgeSet:
    """The shipped set (package data ``games/fruit_trading/data/judge_set.json``)."""
    package, *parts = _RESOURCE
    data = resources.files(package).joinpath(*parts).read_bytes()
    return parse_judge_set(json.loads(data), sha256=hashlib.sha256(data).hexdigest())
