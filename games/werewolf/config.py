"""Werewolf's table settings: role counts, rule options and the two presets (pure).

:class:`Config` is one game's settings (validated when built; :meth:`Config.as_dict`
and :meth:`Config.from_dict` are its JSON form in logs and manifests), :data:`PRESETS`
the arena and GRATR tables. :mod:`games.werewolf.rules` re-exports everything here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from games.werewolf.actions import ROLES, SPECIAL_ROLES, TEAM_RESULTS

__all__ = [
    "Config",
    "DRAW",
    "MAX_PLAYERS",
    "PRESETS",
    "RoleSet",
    "VILLAGERS",
    "WEREWOLVES",
    "preset",
    "team_of",
]

WEREWOLVES = "werewolves"
VILLAGERS = "villagers"
DRAW = "draw"


@dataclass(frozen=True)
class RoleSet:
    """How many players hold each role."""

    werewolf: int = 2
    villager: int = 4
    seer: int = 1
    doctor: int = 1
    witch: int = 0
    guard: int = 0

    def __post_init__(self) -> None:
        for role in ROLES:
            n = getattr(self, role)
            if not isinstance(n, int) or n < 0:
                raise ValueError(f"RoleSet: {role} count must be an integer >= 0, got {n!r}")
        for role in SPECIAL_ROLES:
            if getattr(self, role) > 1:
                raise ValueError(
                    f"RoleSet: at most one {role} (got {getattr(self, role)}); "
                    "set the extra players to villager"
                )
        if self.num_players > MAX_PLAYERS:
            raise ValueError(
                f"RoleSet: {self.num_players} players, more than the {MAX_PLAYERS} a table seats"
            )
        if self.werewolf < 1:
            raise ValueError("RoleSet: needs at least one werewolf")
        if self.werewolf >= self.num_players - self.werewolf:
            raise ValueError(
                f"RoleSet: {self.werewolf} werewolves among {self.num_players} players already "
                "win at the start; add villagers or remove werewolves"
            )

    @property
    def num_players(self) -> int:
        return sum(getattr(self, r) for r in ROLES)

    def count(self, role: str) -> int:
        return getattr(self, role)

    def as_dict(self) -> dict[str, int]:
        return {r: getattr(self, r) for r in ROLES}

    @classmethod
    def parse(cls, spec: str) -> RoleSet:
        """``"werewolf:2,seer:1,doctor:1,villager:4"`` -> RoleSet (unnamed roles 0).

        Entries may also be separated by ``/`` (OpenSpiel game strings split on commas).
        """
        counts = dict.fromkeys(ROLES, 0)
        for part in filter(None, (p.strip() for p in re.split(r"[,/]", spec))):
            role, _, n = part.partition(":")
            if role not in counts or not n.strip().isdigit():
                raise ValueError(
                    f"RoleSet.parse: bad entry {part!r}; use role:count with role in {ROLES}"
                )
            counts[role] = int(n)
        return cls(**counts)


#: Most players at one table (prompts, trees and logs grow with it; a bound readers check).
MAX_PLAYERS = 32


@dataclass(frozen=True)
class Config:
    """Settings of one game."""

    roles: RoleSet = field(default_factory=RoleSet)
    seer_reveals: str = "role"  # "role" (arena) or "team" (gratr: werewolf / not)
    debate_turns: int = 3
    exile: str = "majority"  # or "plurality"
    max_rounds: int = 10
    reveal_roles: bool = False

    def __post_init__(self) -> None:
        if self.seer_reveals not in ("role", "team"):
            raise ValueError(
                f"Config: seer_reveals must be 'role' or 'team', got {self.seer_reveals!r}"
            )
        if self.exile not in ("majority", "plurality"):
            raise ValueError(f"Config: exile must be 'majority' or 'plurality', got {self.exile!r}")
        if not 0 <= self.debate_turns <= 50:
            raise ValueError(f"Config: debate_turns must be in [0, 50], got {self.debate_turns}")
        if not 1 <= self.max_rounds <= 100:
            raise ValueError(f"Config: max_rounds must be in [1, 100], got {self.max_rounds}")

    @property
    def num_players(self) -> int:
        return self.roles.num_players

    @property
    def check_results(self) -> tuple[str, ...]:
        """What the seer can learn (and claim to have learnt)."""
        return ROLES if self.seer_reveals == "role" else TEAM_RESULTS

    @property
    def roles_in_play(self) -> tuple[str, ...]:
        """The roles at least one player holds, in ``ROLES`` order."""
        return tuple(r for r in ROLES if self.roles.count(r) > 0)

    @property
    def results_in_play(self) -> tuple[str, ...]:
        """The :attr:`check_results` a check of this table can give: a role nobody holds
        is never one (with ``seer_reveals="team"`` both results stay)."""
        return tuple(r for r in self.check_results if r not in ROLES or r in self.roles_in_play)

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["roles"] = self.roles.as_dict()
        return d

    @classmethod
    def from_dict(cls, d: object) -> Config:
        """The config :meth:`as_dict` wrote (``d``: any JSON value; it is checked).

        Raises:
          ValueError: ``d`` is not such a mapping (unknown or missing fields, wrong types).
        """
        if not isinstance(d, Mapping) or not isinstance(d.get("roles"), Mapping):
            raise ValueError("Config.from_dict: expected an object with a 'roles' object")
        try:
            return cls(**{**d, "roles": RoleSet(**d["roles"])})
        except TypeError as exc:
            raise ValueError(f"Config.from_dict: {exc}") from None


PRESETS: dict[str, Config] = {
    "arena": Config(RoleSet(werewolf=2, villager=4, seer=1, doctor=1), seer_reveals="role"),
    "gratr": Config(
        RoleSet(werewolf=3, villager=2, seer=1, doctor=0, witch=1, guard=1), seer_reveals="team"
    ),
}


def preset(name: str, **overrides: Any) -> Config:
    """A preset config (``arena`` or ``gratr``) with optional field overrides."""
    if name not in PRESETS:
        raise ValueError(f"preset: unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return dataclasses.replace(PRESETS[name], **overrides)


def team_of(role: str) -> str:
    return WEREWOLVES if role == "werewolf" else VILLAGERS
