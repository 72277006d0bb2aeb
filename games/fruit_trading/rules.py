"""Pure rules of the fruit-trading negotiation (no pyspiel, no LLM).

The game of Lindström et al., "Outsmarting Willful-thinking Opponents:
Bayesian Belief Revision for Adversarial Reasoning in LLMs" (FOI/KTH), built
on the chat-games fruit trade of Gemp et al., "Steering Language Models with
Game-Theoretic Solvers" (arXiv:2402.01704):

* three fruits; per initialisation three endowments (each fruit U{1,2}) and
  three valuations (each fruit U{0,4}) are drawn, and each player is assigned
  one endowment and one valuation from those, and a name;
* a trade says what each player gives; a player's payoff is the value of its
  basket after the trade minus before (0 when no trade is agreed).

Everything random is drawn from ``numpy.random.default_rng([seed, init])``,
so initialisation ``i`` is the same on every machine.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import numpy as np

FRUITS: tuple[str, ...] = ("apples", "bananas", "oranges")
TONES: tuple[str, ...] = ("assertive", "calm", "submissive", "any")
#: Tones a model may pick when told to use "any" tone.
CONCRETE_TONES: tuple[str, ...] = ("assertive", "calm", "submissive")
NAMES: tuple[str, ...] = (
    "Alice", "Bob", "Carol", "David", "Emma", "Felix", "Grace", "Henry", "Ida", "James",
    "Karin", "Liam", "Maja", "Nils", "Olivia", "Peter", "Quinn", "Rosa", "Simon", "Tara",
)  # fmt: skip

#: The names of the ``names="fixed"`` setting: the same two players in every
#: initialisation, so that information states can be shared across them.
FIXED_NAMES: tuple[str, str] = ("Alice", "Bob")
#: How players are named: ``random`` (the paper: two names drawn per
#: initialisation) or ``fixed`` (:data:`FIXED_NAMES` everywhere).
NAMINGS: tuple[str, ...] = ("random", "fixed")
#: Where the three endowments and three valuations come from: drawn for each
#: initialisation (``per_init``, this reproduction's default) or drawn once per
#: master seed and shared by every initialisation (``shared``), so that players
#: of different initialisations can hold the same private information.
POOLINGS: tuple[str, ...] = ("per_init", "shared")

#: Largest |payoff| of any trade: receiving at most 2 of each of the 3 fruits, each
#: worth at most 4, or giving as much away (endowments U{1,2}, valuations U{0,4}).
PAYOFF_BOUND: int = 2 * 3 * 4

_SINGULAR = {"apples": "apple", "bananas": "banana", "oranges": "orange"}


def fruit_word(fruit: str, count: int) -> str:
    """``fruit_word("apples", 1) == "apple"``."""
    return _SINGULAR[fruit] if count == 1 else fruit


def fruit_index(word: str) -> int:
    """Index of a fruit named in singular or plural, any case.

    Raises:
      ValueError: not a fruit of the game.
    """
    w = word.strip().lower()
    for i, f in enumerate(FRUITS):
        if w in (f, _SINGULAR[f]):
            return i
    raise ValueError(f"fruit_index: unknown fruit {word!r}; expected one of {FRUITS}")


@dataclasses.dataclass(frozen=True)
class PrivateInfo:
    """A player's private information."""

    name: str
    endowment: tuple[int, int, int]
    valuation: tuple[int, int, int]

    def value(self, basket: Sequence[int]) -> int:
        return int(np.dot(self.valuation, basket))

    def most_wanted(self) -> tuple[str, ...]:
        """The highest-valued fruit(s); several on a tie."""
        top = max(self.valuation)
        return tuple(f for f, v in zip(FRUITS, self.valuation, strict=True) if v == top)

    def describe(self) -> str:
        """The text block a prompt shows for this information."""
        endow = "\n".join(f"{f}: {n}" for f, n in zip(FRUITS, self.endowment, strict=True))
        vals = "\n".join(f"{f}: {v}" for f, v in zip(FRUITS, self.valuation, strict=True))
        return f"Fruit Endowment:\n{endow}\n\nFruit Valuations:\n{vals}"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "endowment": list(self.endowment),
            "valuation": list(self.valuation),
        }


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One game initialisation: both players' private info and the opening tone."""

    init: int
    players: tuple[PrivateInfo, PrivateInfo]
    opening_tone: str

    def to_dict(self) -> dict:
        return {
            "init": self.init,
            "players": [p.to_dict() for p in self.players],
            "opening_tone": self.opening_tone,
        }


def make_scenario(
    init: int, *, seed: int = 0, names: str = "random", pools: str = "per_init"
) -> Scenario:
    """Initialisation ``init`` of the experiment with master seed ``seed``.

    ``names="fixed"`` names the players :data:`FIXED_NAMES` in every
    initialisation; everything else (endowments, valuations, opening tone) is
    the same as with the paper's random names. ``pools="shared"`` assigns the
    endowments and valuations from pools drawn once from ``seed``
    (:data:`POOLINGS`); the assignment and the opening tone are unchanged.

    Raises:
      ValueError: negative ``init`` or an unknown ``names``.
    """
    if init < 0:
        raise ValueError(f"make_scenario: init must be >= 0, got {init}")
    if names not in NAMINGS:
        raise ValueError(f"make_scenario: names must be one of {NAMINGS}, got {names!r}")
    if pools not in POOLINGS:
        raise ValueError(f"make_scenario: pools must be one of {POOLINGS}, got {pools!r}")
    rng = np.random.default_rng([seed, init])
    endowments = rng.integers(1, 3, size=(3, len(FRUITS)))  # U{1,2}
    valuations = rng.integers(0, 5, size=(3, len(FRUITS)))  # U{0,4}
    if pools == "shared":  # the per-init draws above still advance rng: same stream
        pool_rng = np.random.default_rng([seed])
        endowments = pool_rng.integers(1, 3, size=(3, len(FRUITS)))
        valuations = pool_rng.integers(0, 5, size=(3, len(FRUITS)))
    drawn = rng.choice(len(NAMES), size=2, replace=False)  # drawn always: same stream
    chosen = FIXED_NAMES if names == "fixed" else (NAMES[int(drawn[0])], NAMES[int(drawn[1])])
    players = []
    for p in range(2):
        e = endowments[int(rng.integers(3))]
        v = valuations[int(rng.integers(3))]
        players.append(
            PrivateInfo(
                name=chosen[p],
                endowment=(int(e[0]), int(e[1]), int(e[2])),
                valuation=(int(v[0]), int(v[1]), int(v[2])),
            )
        )
    tone = TONES[int(rng.integers(len(TONES)))]
    return Scenario(init=init, players=(players[0], players[1]), opening_tone=tone)


@dataclasses.dataclass(frozen=True)
class Trade:
    """What each of the two players gives (counts per fruit); each receives the other's."""

    gives: tuple[tuple[int, int, int], tuple[int, int, int]]

    def receives(self, player: int) -> tuple[int, int, int]:
        return self.gives[1 - player]

    def is_empty(self) -> bool:
        return not any(any(g) for g in self.gives)

    def payoff(self, player: int, info: PrivateInfo) -> int:
        """Value of the basket after minus before, for ``player`` with ``info``."""
        return info.value(self.receives(player)) - info.value(self.gives[player])

    def feasible(self, infos: Sequence[PrivateInfo]) -> bool:
        """Whether each player gives no more than it has."""
        return all(
            all(g <= e for g, e in zip(self.gives[p], infos[p].endowment, strict=True))
            for p in range(2)
        )

    def is_exchange(self, infos: Sequence[PrivateInfo]) -> bool:
        """Whether this is a real exchange: each player gives something, no fruit goes
        both ways for a player (what one gives is what the other receives, so the two
        sides differ), and each gives no more than it has."""
        return (
            all(any(g) for g in self.gives)
            and not any(a and b for a, b in zip(self.gives[0], self.gives[1], strict=True))
            and self.feasible(infos)
        )


def basket_text(counts: Sequence[int]) -> str:
    """``(1, 0, 2) -> "1 apple and 2 oranges"``; ``"nothing"`` when empty."""
    parts = [f"{n} {fruit_word(f, n)}" for f, n in zip(FRUITS, counts, strict=True) if n > 0]
    if not parts:
        return "nothing"
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


_ITEM = re.compile(r"(\d+)\s+(apples?|bananas?|oranges?)", re.IGNORECASE)


def parse_basket(text: str) -> tuple[int, int, int]:
    """Counts of each fruit named as ``<n> <fruit>`` in ``text`` (summed)."""
    counts = [0, 0, 0]
    for n, word in _ITEM.findall(text):
        counts[fruit_index(word)] += int(n)
    return (counts[0], counts[1], counts[2])


#: Words a count may be written as in a dialogue (``"two apples"``, ``"an orange"``).
NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
#: ``<count> <fruit>`` (:func:`quantities`): group 1 the count, group 2 the fruit word.
QUANTITY_PATTERN = re.compile(
    r"\b(\d+|" + "|".join(NUMBER_WORDS) + r")\s+(apples?|bananas?|oranges?)\b", re.IGNORECASE
)


def count_value(word: str) -> int:
    """The number a count of :data:`QUANTITY_PATTERN` stands for (``"two"`` -> 2, ``"an"`` -> 1)."""
    n = NUMBER_WORDS.get(word.lower())
    return int(word) if n is None else n


def quantities(text: str) -> set[tuple[int, str]]:
    """The quantities of fruit a text names: ``(count, fruit)`` for each ``<count> <fruit>``.

    A count is a number in digits or a word of :data:`NUMBER_WORDS` (``a`` and
    ``an`` count one), directly followed by a fruit in the singular or plural,
    any case; the fruit is given by its name in :data:`FRUITS`. ``"I give you
    an apple for 2 bananas"`` names ``{(1, "apples"), (2, "bananas")}``; ``"some
    apples"`` or ``"2 of my apples"`` name none.
    """
    return {
        (count_value(count), FRUITS[fruit_index(word)])
        for count, word in QUANTITY_PATTERN.findall(text)
    }


def trade_stated(trade: Trade, messages: Sequence[str]) -> bool:
    """Whether the dialogue states ``trade``: one message names every quantity of it.

    The quantities of a trade are ``(count, fruit)`` for every fruit either
    player gives (a fruit goes one way only in an exchange); the trade is
    stated when some single message names all of them (:func:`quantities`),
    so a trade pieced together from several proposals, or one whose counts
    appear nowhere, is not. Who gives which is not checked: the words around
    the counts decide that, and no pattern reads them reliably. A trade in
    which nobody gives anything is never stated.
    """
    wanted = {(n, FRUITS[i]) for basket in trade.gives for i, n in enumerate(basket) if n > 0}
    return bool(wanted) and any(wanted <= quantities(m) for m in messages)


def trade_summary_lines(trade: Trade, names: Sequence[str]) -> str:
    """The trade in the chat-games format ``Player X: Receives ... Gives ...``."""
    return "\n".join(
        f"Player {names[p]}: Receives {basket_text(trade.receives(p))} "
        f"Gives {basket_text(trade.gives[p])}"
        for p in range(2)
    )


_PLAYER_LINE = re.compile(
    r"Player\s+(?P<name>[A-Za-z]+)\s*:\s*Receives\s+(?P<recv>.*?)\s+Gives\s+(?P<give>.*)$",
    re.IGNORECASE | re.MULTILINE,
)


def parse_trade_lines(text: str, names: Sequence[str]) -> Trade:
    """Parses ``Player X: Receives ... Gives ...`` lines into a :class:`Trade`.

    Raises:
      ValueError: a player's line is missing, or the two lines contradict
        each other (what one receives is not what the other gives).
    """
    gives: dict[int, tuple[int, int, int]] = {}
    recv: dict[int, tuple[int, int, int]] = {}
    for m in _PLAYER_LINE.finditer(text):
        name = m.group("name")
        if name not in names:
            continue
        p = list(names).index(name)
        gives[p] = parse_basket(m.group("give"))
        recv[p] = parse_basket(m.group("recv"))
    if set(gives) != {0, 1}:
        raise ValueError(f"parse_trade_lines: expected a line for each of {list(names)}")
    if recv[0] != gives[1] or recv[1] != gives[0]:
        raise ValueError("parse_trade_lines: the two players' lines do not match")
    return Trade(gives=(gives[0], gives[1]))
