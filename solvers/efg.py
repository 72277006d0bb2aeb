"""Export of a :class:`GameTree` to the Gambit ``.efg`` extensive-form format.

The format (McKelvey, McLennan & Turocy, *Gambit: Software Tools for Game
Theory*; "The .efg file format" in the Gambit manual) lists the nodes in
depth-first preorder after a header ``EFG 2 R "title" { "Player 1" ... }``:

* ``c "" <infoset> "" { "<outcome>" <prob> ... } 0`` -- chance node;
* ``p "" <player> <infoset> "<name>" { "<action>" ... } 0`` -- decision node;
* ``t "" <outcome> "" { <payoff> ... }`` -- terminal node.

Players and information sets are numbered from 1. The text loads with
``pyspiel.load_efg_game(text)`` and gives the same values: probabilities and
payoffs are written with ``repr`` (shortest round-tripping decimal).

OpenSpiel's parser numbers action labels globally in order of first
appearance and then sorts each node's action ids, so a node must list its
labels in increasing global order. Labels are the action ids (``"3"``); where
that order would break, the information set (or chance node) gets fresh
labels ``"3~12"``, which keeps the loaded game faithful.
"""

from __future__ import annotations

import numpy as np

from solvers.tree import CHANCE, DECISION, GameTree


def _quote(text: str) -> str:
    return '"' + str(text).replace('"', "'").replace("\n", " ").replace("\r", " ") + '"'


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
        The ``.efg`` text; ``pyspiel.load_efg_game(text)`` loads it.
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
            acts = [int(a) for a in tree.action[fc : fc + nc]]
            labels = [str(a) for a in acts]
            if not chance_table.fits(labels):
                labels = [f"{a}~c{chance_counter}" for a in acts]
            chance_table.commit(labels)
            body = " ".join(
                f"{_quote(lab)} {float(p)!r}"
                for lab, p in zip(labels, tree.chance_prob[fc : fc + nc], strict=True)
            )
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
