"""Werewolf as an OpenSpiel game (``python_werewolf``).

A thin adapter over the pure rules of :mod:`games.werewolf.rules` (the deception
benchmark of ``003``: night, day, bidding 0-10, debate, vote; roles of GRATR ``002``).
Turn-based: every rules step has one actor, so each OpenSpiel node is one seat's
decision or a chance node (dealing a role to a seat, breaking a tie between
werewolf targets or top bids).

Parameters: ``preset`` (``arena`` or ``gratr``), and overrides ``roles``
(``"werewolf:2/seer:1/doctor:1/villager:4"``), ``debate_turns`` (-1: preset's),
``max_rounds`` (-1: preset's), ``exile`` (``""``, ``majority`` or ``plurality``),
``reveal_roles`` (reveal the roles of the dead; default false).

Actions: for N players, ``N + 13 + 4 * (7 + 9N)`` ids (337 for eight players) laid
out by :func:`~games.werewolf.rules.encode_action`:
``[0, N)`` target a seat (night target, protect, unmask, poison, exile vote);
``N`` skip; ``N+1`` the witch's save; ``N+2 .. N+12`` bids 0..10; then speech acts
``N + 13 + 4*slot + tone`` with slot 0 nothing, 1-6 claim a role, then accuse seat,
defend seat, and share_check (seat, result) for the 7 check results.  Use
:func:`encode_action` / :func:`decode_action` to convert.  Chance outcomes are role
indices (deal) or seats (tie-breaks): ``max(N, 6)`` outcomes.

Information state of a player: its seat, then every rules event it saw, in order
(its role, partners if a werewolf, its own night actions, checks and secret bids and
votes, and all public events).  Hidden roles never appear until the game is over.
Observation string: seat, role, round, phase (a night step's name only for the seat
acting in it, else ``night``), who lives, its partners and checks.
Returns: +1 to each player of the winning team, -1 to the others, 0 on a draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from games.werewolf import rules
from games.werewolf.rules import (
    Config,
    GameState,
    RoleSet,
    decode_action,
    encode_action,
    num_distinct_actions,
)

__all__ = [
    "SHORT_NAME",
    "WerewolfGame",
    "WerewolfState",
    "config_from_params",
    "decode_action",
    "encode_action",
    "private_info",
]

SHORT_NAME = "python_werewolf"
DEFAULT_PARAMS: dict[str, Any] = {
    "preset": "arena",
    "roles": "",
    "debate_turns": -1,
    "max_rounds": -1,
    "exile": "",
    "reveal_roles": False,
}
_MAX_PLAYERS = 16

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Werewolf (social deduction with speech acts)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_MAX_PLAYERS,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification=DEFAULT_PARAMS,
)


def config_from_params(params: dict[str, Any]) -> Config:
    """The rules config of game parameters (see the module docstring)."""
    p = {**DEFAULT_PARAMS, **params}
    overrides: dict[str, Any] = {}
    if p["roles"]:
        overrides["roles"] = RoleSet.parse(str(p["roles"]))
    if int(p["debate_turns"]) >= 0:
        overrides["debate_turns"] = int(p["debate_turns"])
    if int(p["max_rounds"]) >= 0:
        overrides["max_rounds"] = int(p["max_rounds"])
    if p["exile"]:
        overrides["exile"] = str(p["exile"])
    if p["reveal_roles"]:
        overrides["reveal_roles"] = bool(p["reveal_roles"])
    config = rules.preset(str(p["preset"]), **overrides)
    if config.num_players > _MAX_PLAYERS:
        raise ValueError(f"python_werewolf: at most {_MAX_PLAYERS} players")
    return config


def private_info(state: WerewolfState, player: int) -> list[str]:
    """The lines of ``player``'s information state that are not public: its role, its
    night actions and checks, secret bids and votes, and what it shares with its
    partners (werewolves) only.  No player outside an event's audience may see it."""
    return [
        str(e)
        for e in state.rules_state.events
        if e.visible_to is not None and player in e.visible_to
    ]


def _max_game_length(c: Config) -> int:
    n = c.num_players
    night = n + 1 + 4  # wolf votes, tie, doctor, guard, seer, witch (two steps) at most
    day = c.debate_turns * (n + 2) + n
    return n + c.max_rounds * (night + 1 + day)


class WerewolfGame(pyspiel.Game):
    """Werewolf with a configurable role set."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**DEFAULT_PARAMS, **(params or {})}
        self.config = config_from_params(params)
        n = self.config.num_players
        game_info = pyspiel.GameInfo(
            num_distinct_actions=num_distinct_actions(n),
            max_chance_outcomes=max(n, len(rules.ROLES)),
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=None,
            max_game_length=_max_game_length(self.config),
        )
        super().__init__(_GAME_TYPE, game_info, params)

    def new_initial_state(self) -> WerewolfState:
        return WerewolfState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> WerewolfObserver:
        return WerewolfObserver(iig_obs_type, params)


class WerewolfState(pyspiel.State):
    """A node: wraps an immutable :class:`~games.werewolf.rules.GameState`."""

    def __init__(self, game: WerewolfGame):
        super().__init__(game)
        self.rules_state: GameState = rules.initial_state(game.config)

    def current_player(self) -> int:
        return rules.current_player(self.rules_state)

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.current_player():  # turn-based: only the head of a secret step
            return []
        n = self.rules_state.num_players
        return sorted(encode_action(n, a) for a in rules.legal_actions(self.rules_state, player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return rules.chance_outcomes(self.rules_state)

    def _apply_action(self, action: int) -> None:
        s = self.rules_state
        actor = rules.current_player(s)
        move = int(action) if actor == rules.CHANCE else decode_action(s.num_players, action)
        self.rules_state = rules.apply(s, actor, move)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == rules.CHANCE:
            if self.rules_state.phase == "deal":
                return f"deal {rules.ROLES[action]}"
            return f"tie-break P{action}"
        return rules.action_to_string(decode_action(self.rules_state.num_players, action))

    def is_terminal(self) -> bool:
        return self.rules_state.is_terminal()

    def returns(self) -> list[float]:
        return rules.returns(self.rules_state)

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        lines = [f"P{player}"]
        lines += [str(e) for e in self.rules_state.events if e.seen_by(player)]
        return "\n".join(lines)

    def observation_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        k = rules.knowledge(self.rules_state, player)
        alive = "".join("1" if a else "0" for a in k.alive)
        checks = ",".join(f"P{t}={r}" for t, r in k.checks)
        partners = ",".join(f"P{p}" for p in k.partners)
        # Which night step it is (whose turn, whether the witch saved, a werewolf tie)
        # is known to the seat acting in it only; everyone else sees "night".
        phase = k.phase
        if phase.startswith("night") and player != self.current_player():
            phase = "night"
        return (
            f"P{player} role={k.role} round={k.round} phase={phase} alive={alive} "
            f"partners=[{partners}] checks=[{checks}]"
        )

    def __str__(self) -> str:
        s = self.rules_state
        roles = " ".join(f"P{p}:{r}{'' if s.alive[p] else '(dead)'}" for p, r in enumerate(s.roles))
        return f"round={s.round} phase={s.phase} winner={s.winner} {roles}"


class WerewolfObserver:
    """String-only observer: information state (perfect recall) or observation string."""

    def __init__(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"WerewolfObserver: observation parameters not supported: {params}")
        self.perfect_recall = iig_obs_type is None or iig_obs_type.perfect_recall
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: WerewolfState, player: int) -> None:
        pass

    def string_from(self, state: WerewolfState, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


pyspiel.register_game(_GAME_TYPE, WerewolfGame)
