"""Export of a :class:`GameTree` to the Gambit ``.efg`` extensive-form format.

The format (McKelvey, McLennan & Turocy, *Gambit: Software Tools for Game
Theory*; "The .efg file format" in the Gambit manual) lists the nodes in
depth-first preorder after a header ``EFG 2 R "title" { "Player 1" ... }``:

* ``c "" <infoset> "" { "<outcome>" <prob> ... } 0`` -- chance node;
* ``p "" <player> <infoset> "<name>" { "<action>" ... } 0`` -- decision node;
* ``t "" <outcome> "" { <payoff> ... }`` -- terminal node.

Players and information sets are numbered from 1. The text loads with
``pyspiel.load_efg_game(text)`` and with Gambit (``pygambit.read_efg``), and
gives the same values:

* Gambit reads numbers as exact rationals and requires each chance node's
  probabilities to sum to exactly one, so the last outcome of every chance
  node gets the exact complement of the others (it differs from the stored
  float by at most the tree's validation tolerance, ~1e-6, and usually not
  at all). The others are the simplest fractions that reproduce the floats
  (``1/3``; ``limit_denominator`` with a growing bound, below 2**31 for
  OpenSpiel's parser), or, where no such fraction exists, their ``repr``
  decimals (see :func:`chance_numbers`);
* payoffs are written with ``repr`` (the shortest decimal that round-trips);
* labels keep only what Gambit accepts (printable ASCII, single spaces, no
  leading or trailing space): line breaks and other whitespace become single
  spaces, double quotes become single quotes and non-ASCII characters are
  written as backslash escapes (``\\u2713``).

**Limits of Gambit on these trees.** Gambit's strategic-form computations
(``MixedStrategyProfile.max_regret()``, the strategic-form solvers)
enumerate reduced pure strategies, whose number is a product over a
player's information sets: the README's 229-node fruit-trading tree has 64
and 16,777,282 of them for its two players (about 1.07e9 profiles), and
``max_regret()`` fails with ``std::bad_alloc``. Read such exports in Gambit
for inspection or with behaviour-strategy tools; use :mod:`solvers` for
NashConv and CFR.

OpenSpiel's parser numbers action labels globally in order of first
appearance and then sorts each node's action ids, so a node must list its
labels in increasing global order. Labels are the action ids (``"3"``); where
that order would break, the information set (or chance node) gets fresh
labels ``"3~12"``, which keeps the loaded game faithful.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from solvers.game_tree import CHANCE, DECISION, GameTree

_MAX_DENOMINATOR = 2**31 - 1
_NOT_PRINTABLE = re.compile(r"[^\x21-\x7e]+")  # runs of anything but visible ASCII


def sanitize_label(text: str) -> str:
    """A label Gambit accepts: printable ASCII, single inner spaces, no quotes."""
    ascii_text = str(text).replace('"', "'").encode("ascii", "backslashreplace").decode("ascii")
    return _NOT_PRINTABLE.sub(" ", ascii_text).strip()


def _quote(text: str) -> str:
    return '"' + sanitize_label(text) + '"'


def _fraction(value: float) -> Fraction | None:
    """The simplest fraction whose float is ``value``, if one has an int32 denominator."""
    for bound in (10**3, 10**6, _MAX_DENOMINATOR):
        candidate = Fraction(value).limit_denominator(bound)
        if float(candidate) == value:
            return candidate
    return None


def _fraction_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def chance_numbers(probs: Iterable[float]) -> list[str]:
    """One chance node's outcome probabilities as ``.efg`` numbers summing to exactly one.

    Fractions (``1/3``) where one with a denominator below 2**31 (the limit of
    OpenSpiel's parser) reproduces each float and the last outcome's exact
    complement fits too; otherwise plain decimals (``repr`` digits, no
    exponent) with the last one the exact decimal complement of the others.

    Raises:
        ValueError: If the others already sum to more than one.
    """
    values = [float(p) for p in probs]
    fractions = [f for f in (_fraction(p) for p in values[:-1]) if f is not None]
    if len(fractions) == len(values[:-1]):  # every one reproduced by a fraction
        last_fraction = 1 - sum(fractions, Fraction(0))
        if last_fraction >= 0 and last_fraction.denominator <= _MAX_DENOMINATOR:
            return [_fraction_text(f) for f in [*fractions, last_fraction]]
    with decimal.localcontext() as context:
        context.prec = 1000  # exact for any sum of float reprs
        decimals = [decimal.Decimal(repr(p)) for p in values[:-1]]
        last = 1 - sum(decimals, decimal.Decimal(0))
    if last < 0:
        raise ValueError(
            f"to_efg: chance probabilities {values} sum to more than 1; normalise them"
        )
    return [format(d, "f") for d in [*decimals, last]]


class _Labels:
    """Simulates OpenSpiel's global label numbering to keep node order consistent."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def fits(self, labels: list[str]) -> bool:
        last = -1
        fresh = len(self.ids)
        for label in labels:
            if label in self.ids:
                value = self.ids[label]
            else:
                value = fresh
                fresh += 1
            if value <= last:
                return False
            last = value
        return True

    def commit(self, labels: list[str]) -> None:
        for label in labels:
            if label not in self.ids:
                self.ids[label] = len(self.ids)


def to_efg(tree: GameTree, *, title: str | None = None) -> str:
    """Writes ``tree`` as Gambit ``.efg`` text.

    Args:
        tree: The tree.
        title: Game title (default ``tree.game_name``).

    Returns:
        The ``.efg`` text; ``pyspiel.load_efg_game(text)`` and
        ``pygambit.read_efg(io.StringIO(text))`` load it.
    """
    n_players = tree.num_players
    names = " ".join(_quote(f"Player {i + 1}") for i in range(n_players))
    lines = [
        f"EFG 2 R {_quote(title if title is not None else tree.game_name)} {{ {names} }}",
        '""',
        "",
    ]

    # Per-player 1-based infoset numbers in order of first appearance (preorder).
    iset_number = np.zeros(tree.num_infosets, dtype=np.int64)
    next_number = [0] * n_players
    decision_labels: dict[int, list[str]] = {}
    decision_table = _Labels()
    chance_table = _Labels()
    chance_counter = 0
    outcome_counter = 0

    kind = tree.kind
    first_child = tree.first_child
    num_children = tree.num_children
    stack = [0]
    while stack:
        h = stack.pop()
        k = int(kind[h])
        fc = int(first_child[h])
        nc = int(num_children[h])
        if k == CHANCE:
            chance_counter += 1
            outcomes = [int(a) for a in tree.action[fc : fc + nc]]
            labels = [str(a) for a in outcomes]
            if not chance_table.fits(labels):
                labels = [f"{a}~c{chance_counter}" for a in outcomes]
            chance_table.commit(labels)
            numbers = chance_numbers(tree.chance_prob[fc : fc + nc])
            body = " ".join(f"{_quote(lab)} {p}" for lab, p in zip(labels, numbers, strict=True))
            lines.append(f"c {_quote('')} {chance_counter} {_quote('')} {{ {body} }} 0")
        elif k == DECISION:
            s = int(tree.infoset[h])
            p = int(tree.player[h])
            if iset_number[s] == 0:
                next_number[p] += 1
                iset_number[s] = next_number[p]
                acts = tree.legal_actions(s)
                labels = [str(a) for a in acts]
                if not decision_table.fits(labels):
                    labels = [f"{a}~{p + 1}.{iset_number[s]}" for a in acts]
                decision_table.commit(labels)
                decision_labels[s] = labels
            body = " ".join(_quote(lab) for lab in decision_labels[s])
            lines.append(
                f"p {_quote('')} {p + 1} {int(iset_number[s])} {_quote(tree.infoset_keys[s])} {{ {body} }} 0"
            )
        else:
            outcome_counter += 1
            payoffs = " ".join(repr(float(v)) for v in tree.returns[h])
            lines.append(f"t {_quote('')} {outcome_counter} {_quote('')} {{ {payoffs} }}")
        if nc:
            stack.extend(range(fc + nc - 1, fc - 1, -1))
    return "\n".join(lines) + "\n"
