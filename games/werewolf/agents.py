"""Werewolf agents: who plays a seat, as one named combination.

An **agent** is a backend spec (any registered backend; default: the command's
``--backend``), an opponent model (the belief provider that fills the seat's
prompts, :mod:`games.werewolf.players.beliefs`) and a tone/act policy at day
speeches: the model's own choice, or a CFR-solved policy read from a
``gt-llm werewolf solve`` folder (:mod:`games.werewolf.players.cfr_policy`). The
agent ``rules`` seats rule-based players (no model, no prompts).

An agent is written ``[NAME=]BASE[+cfr:FOLDER][@BACKEND]``:

* ``gratr`` — GRATR beliefs, the model's own tones and acts, ``--backend``;
* ``none@scripted:rules-v2/alt`` — no opponent model, another backend;
* ``cfrG=gratr+cfr:results/werewolf_day`` — GRATR beliefs, and at every day
  speech the (tone, act) drawn from the folder's CFR policy for ``gratr``
  listeners; the model only words it;
* ``rules`` — rule-based players.

The name (``NAME=``; by default the opponent model, ``+cfr`` for a policy and
``@`` the backend's public label with other characters as ``-``, e.g.
``none@scripted-rules-v2-b``) names the agent in every file; it may hold
letters, digits and ``._+@-`` only, since it names log folders.

Requests of one game are routed to the backend of the seat that makes them
(:func:`seat_of_request`): a player's own tasks carry its seat (``player``),
an opponent model's extraction the observer's name (``self_id``). Each backend
has its own model behind the call cache, so answers of different backends are
cached apart (the cache key holds backend and model).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from games.werewolf.actions import ROLES
from games.werewolf.config import team_of
from games.werewolf.players.prompts import player_name
from games.werewolf.players.seat_models import check_model_name
from gt_llm.chat import ChatRequest
from gt_llm.registry import check_spec
from gt_llm.routing import UnroutedRequest
from gt_llm.safety import public_spec

__all__ = [
    "RULES",
    "Agent",
    "parse_agent",
    "parse_agents",
    "distinct_backends",
    "seat_of_request",
    "team_of_request",
]

#: The agent of rule-based players.
RULES = "rules"
_NAME = re.compile(r"^[A-Za-z0-9._+@-]{1,64}$")
_CFR = "+cfr:"


@dataclasses.dataclass(frozen=True)
class Agent:
    """One agent (see the module docstring).

    Attributes:
      name: Its name in every file.
      opponent: The opponent model's registered name (None for ``rules``).
      backend: The backend spec (None: the command's ``--backend``; None for ``rules``).
      policy: The ``werewolf solve`` folder of its CFR day policy (None: the
        model's own choice).
    """

    name: str
    opponent: str | None
    backend: str | None = None
    policy: str | None = None

    @property
    def rules(self) -> bool:
        """Whether the agent seats rule-based players."""
        return self.opponent is None

    def backend_or(self, default: str) -> str | None:
        """The backend spec its seats call (``default`` when it names none; None for rules)."""
        return None if self.rules else (self.backend or default)

    def to_json(self, default_backend: str | None = None) -> dict[str, Any]:
        backend = self.backend_or(default_backend) if default_backend else self.backend
        return {
            "name": self.name,
            "opponent_model": self.opponent,
            "backend": public_spec(backend) if backend else None,
            "policy": "cfr" if self.policy else ("rules" if self.rules else "own"),
            "policy_folder": self.policy,
        }


def parse_agent(text: str, *, flag: str = "--agents") -> Agent:
    """``[NAME=]BASE[+cfr:FOLDER][@BACKEND]`` as an :class:`Agent` (checked, no call made).

    Raises:
      ValueError: naming ``flag``, the agent and the fix.
    """
    raw = text.strip()
    name, eq, rest = raw.partition("=")
    if not eq:
        name, rest = "", raw
    body, at, backend = rest.partition("@")
    base, cfr, folder = body.partition(_CFR)
    base = base.strip()
    if not base:
        raise ValueError(f"{flag}: agent {raw!r} names no opponent model; e.g. gratr or rules")
    if base == RULES:
        if cfr or at:
            raise ValueError(
                f"{flag}: agent {raw!r}: rule-based players take no backend and no policy; "
                "write rules"
            )
        agent = Agent(name=name.strip() or RULES, opponent=None)
    else:
        check_model_name(f"{flag} agent {raw!r}", base)
        if cfr and not folder.strip():
            raise ValueError(f"{flag}: agent {raw!r}: +cfr: needs a werewolf solve folder")
        if at:
            if not backend.strip():
                raise ValueError(f"{flag}: agent {raw!r}: @ needs a backend spec, e.g. @scripted")
            try:
                check_spec(backend.strip())
            except ValueError as exc:
                raise ValueError(f"{flag}: agent {public_spec(raw)!r}: {exc}") from None
        default = base + ("+cfr" if cfr else "")
        if at:  # the backend's public label, as a file name
            default += "@" + re.sub(r"[^A-Za-z0-9._-]+", "-", public_spec(backend.strip()))
        agent = Agent(
            name=name.strip() or default,
            opponent=base,
            backend=backend.strip() or None,
            policy=folder.strip() or None,
        )
    if not _NAME.match(agent.name):
        raise ValueError(
            f"{flag}: agent name {agent.name!r} may hold letters, digits and ._+@- only "
            f"(it names log folders); name it: NAME={public_spec(raw)}"
        )
    return agent


def parse_agents(text: str, *, flag: str = "--agents", minimum: int = 2) -> tuple[Agent, ...]:
    """Comma-separated agents, at least ``minimum`` of them, with distinct names.

    Raises:
      ValueError: naming ``flag`` and the fix.
    """
    items = [t for t in (s.strip() for s in str(text).split(",")) if t]
    agents = tuple(parse_agent(t, flag=flag) for t in items)
    names = [a.name for a in agents]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{flag}: agents named twice: {dup}; give each a NAME= of its own")
    if len(agents) < minimum:
        raise ValueError(
            f"{flag}: give at least {minimum} agents, comma-separated, e.g. gratr,none,rules"
        )
    return agents


def seat_of_request(request: ChatRequest) -> int:
    """The seat on whose behalf a Werewolf request is made (the routing rule).

    A player's own tasks (``werewolf.*``) carry its seat as ``player``; an
    opponent model's extraction (``opponents.*``) carries the observer's name
    as ``self_id`` (``"Player 3"`` is seat 2).

    Raises:
      UnroutedRequest: a task of neither kind, or one without its seat.
    """
    fields: Mapping[str, Any] = request.fields
    if request.task.startswith("werewolf.") and isinstance(fields.get("player"), int):
        return int(fields["player"])
    if request.task.startswith("opponents."):
        m = re.fullmatch(r"Player (\d+)", str(fields.get("self_id", "")))
        if m:
            return int(m.group(1)) - 1
    raise UnroutedRequest(
        f"seat_of_request: task {request.task!r} names no seat (werewolf tasks carry "
        f"'player', opponent-model tasks 'self_id' such as {player_name(0)!r})"
    )


def team_of_request(request: ChatRequest) -> str:
    """The team (``werewolves`` or ``villagers``) of the seat a Werewolf request is made for.

    A player's own tasks carry its role (``role``), an opponent model's extraction
    the observer's (``self_role``): the routing rule of ``werewolf play
    --team-backends``, which needs no knowledge of the deal.

    Raises:
      UnroutedRequest: a task of neither kind, or one without a known role.
    """
    key = "role" if request.task.startswith("werewolf.") else "self_role"
    role = request.fields.get(key) if request.task.startswith(("werewolf.", "opponents.")) else None
    if role not in ROLES:
        raise UnroutedRequest(
            f"team_of_request: task {request.task!r} names no role of its seat "
            "(werewolf tasks carry 'role', opponent-model tasks 'self_role')"
        )
    return team_of(str(role))


def distinct_backends(agents: Sequence[Agent], default: str) -> list[str]:
    """The backend specs the agents call, each once, in order (rule-based agents call none)."""
    out: list[str] = []
    for a in agents:
        b = a.backend_or(default)
        if b is not None and b not in out:
            out.append(b)
    return out
