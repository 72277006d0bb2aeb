"""The action abstraction of the Werewolf day: tones times act tokens.

An act token names a speech act by a slot of the speaker's own suspicion ranking;
:mod:`games.werewolf.day.steps` describes the tree these actions move in.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from games.werewolf.rules import ROLES, TONES, Config, SpeechAct

__all__ = [
    "DEFAULT_ACTS",
    "DEFAULT_TONES",
    "SLOTS",
    "Abstraction",
    "concrete_act",
    "split_tokens",
]


SLOTS = ("most", "most2", "least", "least2")
DEFAULT_TONES = TONES
DEFAULT_ACTS = ("nothing", "accuse:most", "accuse:least", "defend:most")


def split_tokens(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"calm/any"`` or ``"calm,any"`` (or a sequence) as a tuple of stripped tokens."""
    if isinstance(text, str):
        return tuple(t.strip() for t in text.replace(",", "/").split("/") if t.strip())
    return tuple(text)


# --- the action abstraction ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Abstraction:
    """Which tones and speech acts a speaker chooses from (see :mod:`games.werewolf.day.steps`).

    Attributes:
      tones: Tones, a subset of ``rules.TONES`` in any order.
      acts: Act tokens: ``nothing``, ``claim:<role>``, ``accuse:<slot>``,
        ``defend:<slot>``, ``check:<slot>:<result>``; slots in :data:`SLOTS`.
    """

    tones: tuple[str, ...] = DEFAULT_TONES
    acts: tuple[str, ...] = DEFAULT_ACTS

    def __post_init__(self) -> None:
        object.__setattr__(self, "tones", split_tokens(self.tones))
        object.__setattr__(self, "acts", split_tokens(self.acts))
        if not self.tones or not self.acts:
            raise ValueError("Abstraction: give at least one tone and one act")
        bad = [t for t in self.tones if t not in TONES]
        if bad or len(set(self.tones)) != len(self.tones):
            raise ValueError(
                f"Abstraction: tones must be distinct, from {TONES}; got {list(self.tones)}"
            )
        if len(set(self.acts)) != len(self.acts):
            raise ValueError(f"Abstraction: acts must be distinct; got {list(self.acts)}")
        for token in self.acts:
            _parse_token(token)

    @property
    def num_actions(self) -> int:
        return len(self.tones) * len(self.acts)

    def decode(self, action: int) -> tuple[str, str]:
        """``(tone, act token)`` of an action id."""
        if not 0 <= action < self.num_actions:
            raise ValueError(f"Abstraction.decode: action {action} not in [0, {self.num_actions})")
        return self.tones[action // len(self.acts)], self.acts[action % len(self.acts)]

    def action(self, tone: str, token: str) -> int:
        """The action id of ``(tone, token)``."""
        if tone not in self.tones or token not in self.acts:
            raise ValueError(
                f"Abstraction.action: ({tone!r}, {token!r}) is not in the abstraction "
                f"(tones {list(self.tones)}, acts {list(self.acts)})"
            )
        return self.tones.index(tone) * len(self.acts) + self.acts.index(token)

    def baseline_action(self) -> int:
        """The baseline: tone ``any`` and act ``nothing`` ("say nothing new")."""
        if "any" not in self.tones or "nothing" not in self.acts:
            raise ValueError(
                "Abstraction.baseline_action: the baseline needs tone 'any' and act 'nothing'; "
                "add them to tones and acts"
            )
        return self.action("any", "nothing")

    def check(self, config: Config) -> None:
        """Raises ValueError when a token names a role or result the preset does not have."""
        for token in self.acts:
            kind, slot, extra = _parse_token(token)
            present = [r for r in ROLES if config.roles.count(r) > 0]
            if kind == "claim" and extra not in present:
                raise ValueError(
                    f"Abstraction: claim:{extra} names no role of this preset; roles are {present}"
                )
            if kind == "share_check" and extra not in config.check_results:
                raise ValueError(
                    f"Abstraction: check result {extra!r} is not one of this preset's "
                    f"{config.check_results}"
                )


@functools.lru_cache(maxsize=256)
def _parse_token(token: str) -> tuple[str, str | None, str | None]:
    """``(rules kind, slot, role or result)`` of an act token."""
    parts = token.split(":")
    head = parts[0]
    if head == "nothing" and len(parts) == 1:
        return "nothing", None, None
    if head == "claim" and len(parts) == 2:
        return "claim", None, parts[1]
    if head in ("accuse", "defend") and len(parts) == 2 and parts[1] in SLOTS:
        return head, parts[1], None
    if head == "check" and len(parts) == 3 and parts[1] in SLOTS:
        return "share_check", parts[1], parts[2]
    raise ValueError(
        f"Abstraction: bad act token {token!r}; use nothing, claim:<role>, accuse:<slot>, "
        f"defend:<slot> or check:<slot>:<result> with slot in {SLOTS}"
    )


def concrete_act(token: str, tone: str, ranking: Sequence[int]) -> SpeechAct | None:
    """The rules speech act of a token for a speaker with this suspicion ranking.

    Args:
      token: An act token of the abstraction (``accuse:most`` ...).
      tone: The statement's tone.
      ranking: The speaker's living others, most suspected first.

    Returns:
      The speech act, or None when the ranking has no such slot (too few others).
    """
    kind, slot, extra = _parse_token(token)
    if kind == "nothing":
        return SpeechAct("nothing", tone)
    if kind == "claim":
        return SpeechAct("claim", tone, role=extra)
    assert slot is not None  # accuse, defend and check name a slot (_parse_token)
    index = {"most": 0, "most2": 1, "least": -1, "least2": -2}[slot]
    if (index >= 0 and index >= len(ranking)) or (index < 0 and -index > len(ranking)):
        return None
    target = ranking[index]
    if kind == "share_check":
        return SpeechAct("share_check", tone, target=target, result=extra)
    return SpeechAct(kind, tone, target=target)


#: The former private name of :func:`concrete_act`.
_concrete = concrete_act
