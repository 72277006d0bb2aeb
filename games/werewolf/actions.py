"""Werewolf's vocabulary and actions: roles, tones, speech acts, their ids and JSON (pure).

The actions a seat can take (:class:`Target`, :class:`Skip`, :class:`Save`,
:class:`Bid`, :class:`SpeechAct`), their OpenSpiel ids (:func:`encode_action`,
:func:`decode_action`: one id space per table size), their JSON form for logs
and their one-line descriptions. Which are legal when is :mod:`games.werewolf.rules`,
which re-exports everything here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Action",
    "Bid",
    "CHECK_RESULTS",
    "MAX_BID",
    "ROLES",
    "SPECIAL_ROLES",
    "SPEECH_ACTS",
    "Save",
    "Skip",
    "SpeechAct",
    "TEAM_RESULTS",
    "TONES",
    "Target",
    "action_from_json",
    "action_to_json",
    "action_to_string",
    "decode_action",
    "encode_action",
    "num_distinct_actions",
    "speech_act_from_json",
]

ROLES = ("villager", "werewolf", "seer", "doctor", "witch", "guard")
TONES = ("assertive", "calm", "submissive", "any")
SPEECH_ACTS = ("claim", "accuse", "defend", "share_check", "nothing")
CHECK_RESULTS = (*ROLES, "not_werewolf")
TEAM_RESULTS = ("werewolf", "not_werewolf")
SPECIAL_ROLES = ("seer", "doctor", "witch", "guard")
MAX_BID = 10


@dataclass(frozen=True)
class Target:
    """Choose a player: werewolf target, protect, unmask, poison or exile vote."""

    player: int


@dataclass(frozen=True)
class Skip:
    """Decline (the witch keeps a potion)."""


@dataclass(frozen=True)
class Save:
    """The witch saves tonight's victim."""


@dataclass(frozen=True)
class Bid:
    """Eagerness to speak next, 0-10."""

    amount: int

    def __post_init__(self) -> None:
        if not 0 <= self.amount <= MAX_BID:
            raise ValueError(f"Bid: amount must be in [0, {MAX_BID}], got {self.amount}")


@dataclass(frozen=True)
class SpeechAct:
    """A public statement, as a speech act with a tone.

    ``claim``: "I am ``role``"; ``accuse``: "``target`` is a werewolf"; ``defend``:
    "``target`` is not a werewolf"; ``share_check``: "I checked ``target``: ``result``"
    (which also claims the seer); ``nothing``: nothing new.
    """

    kind: str
    tone: str
    target: int | None = None
    role: str | None = None
    result: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SPEECH_ACTS:
            raise ValueError(f"SpeechAct: kind must be one of {SPEECH_ACTS}, got {self.kind!r}")
        if self.tone not in TONES:
            raise ValueError(f"SpeechAct: tone must be one of {TONES}, got {self.tone!r}")
        needs_target = self.kind in ("accuse", "defend", "share_check")
        if needs_target != (self.target is not None):
            raise ValueError(
                f"SpeechAct: {self.kind} {'needs' if needs_target else 'takes no'} target"
            )
        if (self.kind == "claim") != (self.role is not None) or (
            self.role is not None and self.role not in ROLES
        ):
            raise ValueError(f"SpeechAct: claim needs a role in {ROLES}; other kinds take none")
        if (self.kind == "share_check") != (self.result is not None) or (
            self.result is not None and self.result not in CHECK_RESULTS
        ):
            raise ValueError(
                f"SpeechAct: share_check needs a result in {CHECK_RESULTS}; other kinds take none"
            )

    def describe(self) -> str:
        if self.kind == "claim":
            return f"claims to be the {self.role}"
        if self.kind == "accuse":
            return f"accuses P{self.target} of being a werewolf"
        if self.kind == "defend":
            return f"defends P{self.target} (not a werewolf)"
        if self.kind == "share_check":
            return f"says they checked P{self.target}: {self.result}"
        return "says nothing new"


Action = Target | Skip | Save | Bid | SpeechAct


def action_to_json(action: Action) -> dict[str, Any]:
    """A structured action as a JSON-ready dict (``{"type": ..., fields...}``)."""
    d = {"type": type(action).__name__}
    d.update({k: v for k, v in dataclasses.asdict(action).items() if v is not None})
    return d


def action_from_json(d: Mapping[str, Any]) -> Action:
    kinds = {"Target": Target, "Skip": Skip, "Save": Save, "Bid": Bid, "SpeechAct": SpeechAct}
    if d.get("type") not in kinds:
        raise ValueError(f"action_from_json: unknown action type {d.get('type')!r}")
    return kinds[d["type"]](**{k: v for k, v in d.items() if k != "type"})


def speech_act_from_json(d: Mapping[str, Any]) -> SpeechAct:
    """The :class:`SpeechAct` of a JSON action (a ``speech`` event's ``act``).

    Raises:
      ValueError: the JSON is another kind of action.
    """
    act = action_from_json(d)
    if not isinstance(act, SpeechAct):
        raise ValueError(f"speech_act_from_json: not a speech act: {d.get('type')!r}")
    return act


# Integer encoding, used by the OpenSpiel adapter (N = number of players):
#   [0, N)            Target(p)
#   N                 Skip()
#   N + 1             Save()
#   [N+2, N+13)       Bid(0..10)
#   N + 13 + 4*s + t  SpeechAct with tone TONES[t] and "speech slot" s, where
#     s = 0                         nothing
#     s = 1 + i                     claim ROLES[i]                  (6 slots)
#     s = 7 + p                     accuse p                        (N slots)
#     s = 7 + N + p                 defend p                        (N slots)
#     s = 7 + 2N + 7*p + r          share_check p, CHECK_RESULTS[r] (7N slots)
def num_distinct_actions(num_players: int) -> int:
    return num_players + 13 + len(TONES) * (7 + 9 * num_players)


def encode_action(num_players: int, action: Action) -> int:
    """The integer id of a structured action (see the table above)."""
    n = num_players
    if isinstance(action, Target):
        return action.player
    if isinstance(action, Skip):
        return n
    if isinstance(action, Save):
        return n + 1
    if isinstance(action, Bid):
        return n + 2 + action.amount
    if isinstance(action, SpeechAct):
        if action.kind == "nothing":
            slot = 0
        elif action.kind == "claim":
            slot = 1 + ROLES.index(action.role)
        else:
            target = action.target
            assert target is not None  # accuse, defend and share_check name one (__post_init__)
            if action.kind == "accuse":
                slot = 7 + target
            elif action.kind == "defend":
                slot = 7 + n + target
            else:
                slot = 7 + 2 * n + 7 * target + CHECK_RESULTS.index(action.result)
        return n + 13 + len(TONES) * slot + TONES.index(action.tone)
    raise TypeError(f"encode_action: not an action: {action!r}")


def decode_action(num_players: int, action_id: int) -> Action:
    """The structured action of an integer id (inverse of :func:`encode_action`)."""
    n = num_players
    a = int(action_id)
    if not 0 <= a < num_distinct_actions(n):
        raise ValueError(f"decode_action: id {a} out of range for {n} players")
    if a < n:
        return Target(a)
    if a == n:
        return Skip()
    if a == n + 1:
        return Save()
    if a < n + 13:
        return Bid(a - n - 2)
    slot, t = divmod(a - n - 13, len(TONES))
    tone = TONES[t]
    if slot == 0:
        return SpeechAct("nothing", tone)
    if slot < 7:
        return SpeechAct("claim", tone, role=ROLES[slot - 1])
    if slot < 7 + n:
        return SpeechAct("accuse", tone, target=slot - 7)
    if slot < 7 + 2 * n:
        return SpeechAct("defend", tone, target=slot - 7 - n)
    p, r = divmod(slot - 7 - 2 * n, len(CHECK_RESULTS))
    return SpeechAct("share_check", tone, target=p, result=CHECK_RESULTS[r])


def action_to_string(action: Action) -> str:
    if isinstance(action, Target):
        return f"P{action.player}"
    if isinstance(action, Skip):
        return "skip"
    if isinstance(action, Save):
        return "save"
    if isinstance(action, Bid):
        return f"bid {action.amount}"
    return f"[{action.tone}] {action.describe()}"
