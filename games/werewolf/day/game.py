"""The OpenSpiel game ``python_werewolf_day`` and its registration.

Importing this module registers the game with pyspiel and its spec (conformance
parameters) with :mod:`games.engine.registry`; :mod:`games.werewolf.day.steps`
describes the tree.
"""

from __future__ import annotations

import functools
from typing import Any

import pyspiel

from games.engine.registry import ConformanceParams, GameSpec, register_game_spec
from games.engine.spiel import (
    EngineGame,
    EngineState,
    engine_game_info,
    engine_game_type,
    shared_model,
)
from games.werewolf import rules
from games.werewolf.day.abstraction import DEFAULT_ACTS, DEFAULT_TONES, Abstraction, split_tokens
from games.werewolf.day.infosets import day_redeal
from games.werewolf.day.roots import day_roots, root_step
from games.werewolf.day.state import SHORT_NAME, DayNode, DaySettings, DealChance
from games.werewolf.day.steps import DayLogic
from games.werewolf.rules import Config
from gt_llm.chat import ChatModel

__all__ = [
    "WerewolfDayGame",
    "private_info",
]


_MAX_GAMES = 10_000

# --- the OpenSpiel game ----------------------------------------------------------

DEFAULT_PARAMS: dict[str, Any] = {
    "preset": "arena",
    "day": 1,
    "game_seed": 0,
    "num_games": 30,
    "speakers": 2,
    "order": "bids",
    "opponent_model": "none",
    "tones": "/".join(DEFAULT_TONES),
    "acts": "/".join(DEFAULT_ACTS),
    "num_seeds": 2,
    "deals": 4,
    "structured": True,
    "backend": "scripted",
    "cache": "",
}


def _game_type(utility: pyspiel.GameType.Utility) -> pyspiel.GameType:
    return engine_game_type(
        SHORT_NAME,
        "Python Werewolf day (LLM tone and speech-act tree)",
        num_players=(3, 16),
        parameters=DEFAULT_PARAMS,
        utility=utility,
    )


_GAME_TYPE = _game_type(pyspiel.GameType.Utility.GENERAL_SUM)


def settings_from_params(params: dict[str, Any]) -> DaySettings:
    """The day settings of game parameters (see :mod:`games.werewolf.day.steps`)."""
    p = {**DEFAULT_PARAMS, **params}
    return DaySettings(
        config=rules.preset(str(p["preset"])),
        day=int(p["day"]),
        speakers=int(p["speakers"]),
        order=str(p["order"]),
        opponent_model=str(p["opponent_model"]),
        abstraction=Abstraction(
            tones=split_tokens(str(p["tones"])), acts=split_tokens(str(p["acts"]))
        ),
        num_seeds=int(p["num_seeds"]),
        structured=bool(p["structured"]),
        deals=int(p["deals"]),
    )


def utility_of(config: Config) -> pyspiel.GameType.Utility:
    """ZERO_SUM when the teams have equal size, else GENERAL_SUM (the payoffs' sum varies)."""
    wolves = config.roles.werewolf
    if wolves == config.num_players - wolves:
        return pyspiel.GameType.Utility.ZERO_SUM
    return pyspiel.GameType.Utility.GENERAL_SUM


class WerewolfDayGame(EngineGame[DayNode]):
    """One Werewolf day as an OpenSpiel game (see :mod:`games.werewolf.day.steps`)."""

    def __init__(self, params: dict[str, Any] | None = None, *, model: ChatModel | None = None):
        p = {**DEFAULT_PARAMS, **(params or {})}
        self.settings = settings_from_params(p)
        game_seed = int(p["game_seed"])
        if game_seed >= 0:
            self.seeds: tuple[int, ...] = (game_seed,)
        else:
            num_games = int(p["num_games"])
            if not 1 <= num_games <= _MAX_GAMES:
                raise ValueError(f"python_werewolf_day: num_games must be in [1, {_MAX_GAMES}]")
            self.seeds = tuple(day_roots(self.settings, num_games))
        self.setup_logic(
            DayLogic(self.settings),
            model if model is not None else shared_model(str(p["backend"]), str(p["cache"])),
            [functools.partial(root_step, self.settings, s) for s in self.seeds],
        )
        cfg = self.settings.config
        utility = utility_of(cfg)
        game_info = engine_game_info(
            num_actions=self.settings.abstraction.num_actions,
            max_chance_outcomes=max(self.settings.num_seeds, len(self.seeds), self.settings.deals),
            num_players=cfg.num_players,
            utility_bounds=(-1, 1),
            utility_sum=0.0 if utility == pyspiel.GameType.Utility.ZERO_SUM else None,
            # Per turn: the decision and its seed chance node; plus the deals' chance node.
            max_game_length=2 * self.settings.speakers + 1,
        )
        super().__init__(_game_type(utility), game_info, p)

    def root_label(self, index: int) -> str:
        return f"seed={self.seeds[index]} day={self.settings.day}"


class WerewolfDayState(EngineState[DayNode]):
    """A node of the day tree (``inner`` is the engine's :class:`DayState`)."""

    def __str__(self) -> str:
        if self.inner is None:
            return "(day not drawn)"
        if isinstance(self.inner, DealChance):
            return f"{self.inner.label()} (deal not drawn: {len(self.inner.deals)} deals)"
        s = self.inner
        roles = " ".join(f"P{p}:{r}" for p, r in enumerate(s.root.start.roles))
        lines = [f"{s.root.label()} {roles}"]
        lines += [f"P{x.speaker} {rules.action_to_string(x.act)}: {x.text}" for x in s.statements]
        if s.votes is not None:
            lines.append(f"votes {dict(s.votes)} exiled={s.exiled}")
        if self.pending is not None:
            lines.append(f"[pending action: {self.pending}]")
        return "\n".join(lines)


WerewolfDayGame.state_class = WerewolfDayState


def private_info(state: pyspiel.State, player: int) -> list[str]:
    """The lines of ``player``'s information state only it (and its partners) may know."""
    if state.inner is None or isinstance(state.inner, DealChance):
        return []
    return [
        str(e)
        for e in state.inner.root.start.events
        if e.visible_to is not None and player in e.visible_to
    ]


pyspiel.register_game(_GAME_TYPE, WerewolfDayGame)


# --- the registry ----------------------------------------------------------------


def _no_command(subparsers: Any) -> None:
    """The day's command is ``gt-llm werewolf solve`` (:mod:`games.werewolf.day.solve`)."""


register_game_spec(
    GameSpec(
        name="werewolf-day",
        short_name=SHORT_NAME,
        help="one Werewolf day as a tree of tone and speech-act decisions (gt-llm werewolf solve)",
        add_parser=_no_command,
        conformance=ConformanceParams(
            game_strings=(
                "python_werewolf_day(game_seed=0,speakers=2,num_seeds=1,tones=calm/any,deals=3)",
                "python_werewolf_day(game_seed=1,speakers=2,opponent_model=gratr,deals=2,"
                "acts=nothing/accuse:least/check:most:werewolf)",
                "python_werewolf_day(game_seed=-1,num_games=2,speakers=1,opponent_model=dirichlet,"
                "deals=2)",
                "python_werewolf_day(preset=gratr,game_seed=2,day=2,speakers=2,num_seeds=1,"
                "opponent_model=gratr,acts=nothing/claim:seer/defend:most2,deals=4)",
            ),
            tree_game_strings=(
                "python_werewolf_day(game_seed=0,speakers=2,num_seeds=1,tones=calm/any,"
                "acts=nothing/accuse:most,opponent_model=dirichlet,deals=3)",
                "python_werewolf_day(game_seed=-1,num_games=2,speakers=1,num_seeds=2,"
                "tones=assertive/any,opponent_model=gratr,deals=2)",
            ),
            private_info=private_info,
            num_sims=2,
            redeal=day_redeal,
            redeals_per_node=2,
        ),
    )
)
