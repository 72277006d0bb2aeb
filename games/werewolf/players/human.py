"""A person in one seat, playing from a terminal (or any text stream).

The legal options are listed with numbers; the person types a number.  A speech
act is chosen field by field (kind, then target / role / result, then tone), each
step listing only choices that lead to a legal act.  Bad input (not a listed
number or label, or longer than :data:`MAX_ANSWER_CHARS`) is re-asked; the
end of input is an error (``ValueError``), never a silent default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO

import numpy as np

from games.werewolf.rules import (
    Action,
    Bid,
    Knowledge,
    SpeechAct,
    action_to_string,
)

__all__ = ["HumanPlayer"]

_QUESTIONS = {
    "night_wolves": "Night: which player should the werewolves kill?",
    "night_doctor": "Night: whom do you protect?",
    "night_guard": "Night: whom do you guard? (not the same player two nights running)",
    "night_seer": "Night: whose role do you check?",
    "night_witch_save": "Night: use your one save potion on tonight's victim?",
    "night_witch_poison": "Night: use your one poison?",
    "day_bid": "Day: how eager are you to speak next (0-10)?",
    "day_speak": "Day: your turn to speak.",
    "day_vote": "Day: whom do you vote to exile?",
}
_SPEECH_FIELDS = ("kind", "target", "role", "result", "tone")
#: Longest answer read as a choice: option labels and indexes are short. A longer line
#: (a pasted wall of digits) is refused and asked again, never converted.
MAX_ANSWER_CHARS = 64


class HumanPlayer:
    """Asks a person for each decision through ``read_line`` / ``write``."""

    name = "human"

    def __init__(self, read_line: Callable[[], str], write: Callable[[str], None]):
        self._read_line = read_line
        self._write = write

    @classmethod
    def from_streams(cls, stdin: IO[str], stdout: IO[str]) -> HumanPlayer:
        def write(text: str) -> None:
            stdout.write(text + "\n")
            stdout.flush()

        return cls(stdin.readline, write)

    def act(self, view: Knowledge, legal: Sequence[Action], rng: np.random.Generator) -> Action:
        self._write(f"-- P{view.player} ({view.role}), round {view.round}")
        self._write(_QUESTIONS.get(view.phase, view.phase))
        speech = [a for a in legal if isinstance(a, SpeechAct)]
        if legal and len(speech) == len(legal):
            return self._speech(speech)
        bids = [a for a in legal if isinstance(a, Bid)]
        if legal and len(bids) == len(legal):
            # Bids are their own numbers: one line instead of eleven.
            return bids[self._choose([str(b.amount) for b in bids], listed=False)]
        labels = [action_to_string(a) for a in legal]
        return legal[self._choose(labels)]

    def _speech(self, legal: list[SpeechAct]) -> SpeechAct:
        options = legal
        for field in _SPEECH_FIELDS:
            values = list(dict.fromkeys(getattr(a, field) for a in options))
            if len(values) > 1:
                labels = [f"P{v}" if field == "target" else str(v) for v in values]
                self._write(f"Choose the {field}:")
                value = values[self._choose(labels)]
                options = [a for a in options if getattr(a, field) == value]
        return options[0]

    def _choose(self, labels: Sequence[str], *, listed: bool = True) -> int:
        if listed:
            for i, label in enumerate(labels):
                self._write(f"  [{i}] {label}")
        else:
            self._write(f"  [0-{len(labels) - 1}]")
        while True:
            line = self._read_line()
            if not line:
                raise ValueError("HumanPlayer: input ended before the game did")
            text = line.strip()
            if len(text) > MAX_ANSWER_CHARS:
                self._write(
                    f"That answer is {len(text)} characters long; "
                    f"please type a number from 0 to {len(labels) - 1}."
                )
                continue
            # ASCII digits only: str.isdigit() also accepts characters int() refuses ("²").
            if text.isascii() and text.isdigit() and int(text) < len(labels):
                return int(text)
            if text in labels:
                return labels.index(text)
            self._write(f"Please type a number from 0 to {len(labels) - 1}.")
