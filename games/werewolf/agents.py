"""Werewolf agents: who plays a seat, as one named combination.

An **agent** is a backend spec (any registered backend; default: the command's
``--backend``), an opponent model (the belief provider that fills the seat's
prompts, :mod:`games.werewolf.players.beliefs`) and a tone/act policy at day
speeches: the model's own choice, a CFR-solved policy read from a
``gt-llm werewolf solve`` folder (:mod:`games.werewolf.players.cfr_policy`), or
the uniform policy over the same day abstraction (the control of a CFR
comparison). The agent ``rules`` seats rule-based players (no model, no prompts).

An agent is written ``[NAME=]BASE[+cfr:FOLDER|+uniform][@BACKEND]``:

* ``gratr`` — GRATR beliefs, the model's own tones and acts, ``--backend``;
* ``none@scripted:rules-v2/alt`` — no opponent model, another backend;
* ``cfrG=gratr+cfr:results/werewolf_day`` — GRATR beliefs, and at every day
  speech the (tone, act) drawn from the folder's CFR policy for ``gratr``
  listeners; the model only words it;
* ``gratr+uniform`` — GRATR beliefs, and at every day speech a (tone, act
  token) drawn uniformly from the day abstraction of the command's CFR agents
  (when they share one; else the default abstraction of
  :mod:`games.werewolf.day.abstraction`), made concrete and worded
  as a CFR agent's (:func:`games.werewolf.players.cfr_policy.uniform_day_policy`);
  the draw is seeded by the game's seed, the round, the turn and the seat;
* ``rules`` — rule-based players.

The name (``NAME=``; by default the opponent model, ``+cfr`` for a policy,
``+uniform`` for the uniform one and
``@`` the backend's public label with other characters as ``-``, e.g.
``none@scripted-rules-v2-b``) names the agent in every file; it may hold
letters, digits and ``._+@-`` only, since it names log folders, and no
``_vs_`` (nor start with ``vs_`` or end in ``_vs``): a pair's folder
``logs/<A>_vs_<B>`` then names one pair only. Only an ``=``
before any ``:``, ``?``, ``&`` or ``#`` ends a name: the ``=`` of a backend URL's
query (``none@openai:m@http://host/v1?key=K``) is part of the backend. In a list
of agents a comma inside a URL's user, password or query stays in it
(:func:`gt_llm.registry.split_spec_list`), so no part of a secret is ever read,
or shown, as an agent of its own.

Requests of one game are routed to the backend of the seat that makes them
(:func:`seat_of_request`): a player's own tasks carry its seat (``player``),
an opponent model's extraction the observer's name (``self_id``). Each backend
has its own model behind the call cache, so answers of different backends are
cached apart (the cache key holds backend, model and the server's endpoint:
two agents on two servers that serve one model name never share an answer).
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
from gt_llm.opponents import opponent_models
from gt_llm.registry import check_spec, split_spec_list
from gt_llm.routing import UnroutedRequest
from gt_llm.safety import public_spec

__all__ = [
    "PAIR_SEPARATOR",
    "RULES",
    "Agent",
    "parse_agent",
    "parse_agents",
    "distinct_backends",
    "shares_pair_folders",
    "seat_of_request",
    "team_of_request",
]

#: The agent of rule-based players.
RULES = "rules"
_NAME = re.compile(r"^[A-Za-z0-9._+@-]{1,64}$")
_CFR = "+cfr:"
_UNIFORM = "+uniform"
#: Joins the names of a pair's two agents in its log folder (``logs/<A>_vs_<B>``).
PAIR_SEPARATOR = "_vs_"
# Characters that end a name: whatever comes before the first '=' after one of them is
# no name (a backend spec, a URL, a query), so that '=' is not the name's.
_NOT_IN_NAME_PREFIX = frozenset(":?&#")


@dataclasses.dataclass(frozen=True)
class Agent:
    """One agent (see the module docstring).

    Attributes:
      name: Its name in every file.
      opponent: The opponent model's registered name (None for ``rules``).
      backend: The backend spec (None: the command's ``--backend``; None for ``rules``).
      policy: The ``werewolf solve`` folder of its CFR day policy (None: the
        model's own choice, or the uniform policy).
      uniform: Whether its day speeches follow the uniform policy (``+uniform``).
    """

    name: str
    opponent: str | None
    backend: str | None = None
    policy: str | None = None
    uniform: bool = False

    @property
    def day_policy(self) -> str:
        """``cfr``, ``uniform``, ``rules`` or ``own`` (the model's own tones and acts)."""
        if self.policy:
            return "cfr"
        if self.uniform:
            return "uniform"
        return "rules" if self.rules else "own"

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
            "policy": self.day_policy,
            "policy_folder": self.policy,
        }


def _split_name(raw: str) -> tuple[str | None, str]:
    """``(NAME, rest)`` of ``NAME=rest``; ``(None, raw)`` when no name is given.

    The ``=`` ends a name only if nothing before it belongs to a backend spec,
    URL or query (``:``, ``?``, ``&``, ``#``): ``none@openai:m@http://h/v1?key=K``
    names no agent, its ``=`` is the query's.
    """
    name, eq, rest = raw.partition("=")
    if not eq or _NOT_IN_NAME_PREFIX.intersection(name):
        return None, raw
    return name.strip(), rest


def shares_pair_folders(name: str) -> bool:
    """Whether an agent named ``name`` could make two pairs share a log folder.

    A pair's games go to ``logs/<A>_vs_<B>``: the folder names one pair only
    when :data:`PAIR_SEPARATOR` occurs in it once, i.e. when no name holds
    ``_vs_``, starts with ``vs_`` or ends in ``_vs`` (else ``x`` against
    ``y_vs_z`` and ``x_vs_y`` against ``z`` both write ``logs/x_vs_y_vs_z``).
    """
    sep = PAIR_SEPARATOR
    return sep in name or name.startswith(sep[1:]) or name.endswith(sep[:-1])


def _name_suggestion(name: str) -> str:
    """A name like ``name`` that may name a folder (``a/b`` -> ``a-b``), or ``NAME``."""
    safe = re.sub(r"[^A-Za-z0-9._+@-]+", "-", name).strip("-")[:64]
    return safe or "NAME"


def parse_agent(text: str, *, flag: str = "--agents") -> Agent:
    """``[NAME=]BASE[+cfr:FOLDER|+uniform][@BACKEND]`` as an :class:`Agent` (checked, no call).

    Every message shows the agent's public label (:func:`gt_llm.safety.public_spec`):
    no password or query value of a backend URL.

    Raises:
      ValueError: naming ``flag``, the agent and the fix.
    """
    raw = text.strip()
    shown = public_spec(raw)
    given, rest = _split_name(raw)
    if given is not None and not _NAME.match(given):
        raise ValueError(
            f"{flag}: agent name {given!r} may hold letters, digits and ._+@- only (it names "
            f"log folders), 1 to 64 of them; e.g. {_name_suggestion(given)}={public_spec(rest)}"
        )
    body, at, backend = rest.partition("@")
    base, cfr, folder = body.partition(_CFR)
    base = base.strip()
    uniform = base.endswith(_UNIFORM)
    if uniform:
        base = base[: -len(_UNIFORM)].strip()
        if cfr:
            raise ValueError(
                f"{flag}: agent {shown!r}: one day policy per agent; write either "
                f"{base}+cfr:FOLDER or {base}+uniform"
            )
    if not base:
        raise ValueError(f"{flag}: agent {shown!r} names no opponent model; e.g. gratr or rules")
    if base == RULES:
        if cfr or at or uniform:
            raise ValueError(
                f"{flag}: agent {shown!r}: rule-based players take no backend and no policy; "
                "write rules"
            )
        agent = Agent(name=given or RULES, opponent=None)
    else:
        check_model_name(f"{flag} agent {shown!r}", base)
        if cfr and not folder.strip():
            raise ValueError(f"{flag}: agent {shown!r}: +cfr: needs a werewolf solve folder")
        if at:
            if not backend.strip():
                raise ValueError(f"{flag}: agent {shown!r}: @ needs a backend spec, e.g. @scripted")
            try:
                check_spec(backend.strip())
            except ValueError as exc:
                raise ValueError(f"{flag}: agent {shown!r}: {exc}") from None
        default = base + ("+cfr" if cfr else "") + (_UNIFORM if uniform else "")
        if at:  # the backend's public label, as a file name
            default += "@" + re.sub(r"[^A-Za-z0-9._-]+", "-", public_spec(backend.strip()))
        agent = Agent(
            name=given or default,
            opponent=base,
            backend=backend.strip() or None,
            policy=folder.strip() or None,
            uniform=uniform,
        )
    if not _NAME.match(agent.name):  # a name made from a long backend label
        raise ValueError(
            f"{flag}: agent {shown!r}: its name {agent.name!r} would be more than 64 "
            f"characters (it names log folders); name it: NAME={shown}"
        )
    if shares_pair_folders(agent.name):
        suggestion = agent.name.replace("_vs", "-vs").replace("vs_", "vs-")
        raise ValueError(
            f"{flag}: agent name {agent.name!r} could make two pairs share a log folder "
            f"(logs/<A>{PAIR_SEPARATOR}<B>): a name may not hold {PAIR_SEPARATOR!r}, start "
            f"with 'vs_' or end in '_vs'; name it e.g. {suggestion}={public_spec(rest)}"
        )
    return agent


def _starts_agent(piece: str) -> bool:
    """Whether ``piece`` begins an agent (``[NAME=]BASE...`` with a known BASE, or rules)."""
    _, rest = _split_name(piece.strip())
    base = rest.partition("@")[0].partition(_CFR)[0].strip()
    base = base.removesuffix(_UNIFORM).strip()
    return base == RULES or base in opponent_models()


def parse_agents(text: str, *, flag: str = "--agents", minimum: int = 2) -> tuple[Agent, ...]:
    """Comma-separated agents, at least ``minimum`` of them, with distinct names.

    A comma inside a backend URL's user, password or query does not split the
    list (:func:`gt_llm.registry.split_spec_list`).

    Raises:
      ValueError: naming ``flag`` and the fix.
    """
    items = [t for t in split_spec_list(str(text), _starts_agent) if t]
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
