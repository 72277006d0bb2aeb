"""Werewolf: pure rules, the OpenSpiel game ``python_werewolf``, rule-based players, runner.

Importing this package registers ``python_werewolf`` with pyspiel, the game's spec
(``gt-llm werewolf`` and its conformance parameters) with :mod:`games.engine.registry`,
and the scripted stand-in's answers to the Werewolf prompts (:mod:`games.werewolf.players.stand_in`) with
the scripted backend.
"""

from __future__ import annotations

import argparse

import games.werewolf.day.game  # noqa: F401  (registers python_werewolf_day and its spec)
from games.engine.registry import ConformanceParams, GameSpec, register_game_spec
from games.werewolf import game
from games.werewolf.game import WerewolfGame, private_info
from games.werewolf.players import stand_in  # noqa: F401  (registers scripted answers)
from games.werewolf.redeal import redeal
from games.werewolf.rules import ROLES, SPEECH_ACTS, TONES, Config, RoleSet, preset

__all__ = ["ROLES", "SPEECH_ACTS", "TONES", "Config", "RoleSet", "WerewolfGame", "preset"]


def _add_parser(subparsers: argparse._SubParsersAction) -> None:
    from games.werewolf.cli import add_parser

    add_parser(subparsers)


register_game_spec(
    GameSpec(
        name="werewolf",
        short_name=game.SHORT_NAME,
        help="Werewolf: play, watch and replay games (rule-based players, a human seat)",
        add_parser=_add_parser,
        conformance=ConformanceParams(
            game_strings=(
                "python_werewolf(preset=arena,debate_turns=1,max_rounds=3)",
                "python_werewolf(preset=gratr,debate_turns=1,max_rounds=3)",
                "python_werewolf(roles=werewolf:1/seer:1/villager:3,exile=plurality,reveal_roles=true)",
            ),
            # Small enough to materialise whole: no debate, one round.
            tree_game_strings=(
                "python_werewolf(roles=werewolf:1/seer:1/villager:2,debate_turns=0,max_rounds=1)",
            ),
            private_info=private_info,
            num_sims=3,
            # The indistinguishable check: every node of one random game, every seat, one
            # re-deal each (about 500 re-dealt histories and 2 s per eight-seat string).
            redeal=redeal,
            redeal_games=1,
            redeals_per_node=1,
        ),
        commands=(
            (
                *("werewolf", "play", "--max-rounds", "2", "--debate-turns", "1"),
                *("--log", "{tmp}/game.jsonl", "--out", "{tmp}/play"),
            ),
            ("werewolf", "replay", "{tmp}/game.jsonl"),
            ("werewolf", "summary", "{tmp}/game.jsonl"),
            (
                *("werewolf", "play", "--games", "2", "--max-rounds", "2", "--debate-turns", "1"),
                *("--no-progress", "--out", "{tmp}/series"),
            ),
            (
                *("werewolf", "solve", "--days", "1", "--speakers", "1", "--iterations", "5"),
                *(
                    "--models",
                    "none,gratr",
                    "--deals",
                    "2",
                    "--no-progress",
                    "--out",
                    "{tmp}/solve",
                ),
            ),
            (
                *(
                    "werewolf",
                    "arena",
                    "--models",
                    "gratr,none",
                    "--games",
                    "2",
                    "--max-rounds",
                    "2",
                ),
                *("--debate-turns", "1", "--no-progress", "--out", "{tmp}/arena"),
            ),
            (
                *("werewolf", "graph", "{tmp}/arena/logs/gratr_vs_none/game_0000.jsonl"),
                *("--player", "1", "--step", "10", "--out", "{tmp}/graph.json"),
            ),
            ("werewolf", "view", "{tmp}/game.jsonl", "--out", "{tmp}/game.html"),
            ("werewolf", "view", "{tmp}/series"),
            ("werewolf", "view", "{tmp}/arena", "--no-games"),
            ("werewolf", "view", "{tmp}/solve"),
            (
                *("werewolf", "tournament", "--agents", "gratr,none@scripted:rules-v2/b,rules"),
                *("--games", "2", "--max-rounds", "1", "--debate-turns", "1", "--bootstrap", "50"),
                *("--no-progress", "--out", "{tmp}/tournament"),
            ),
            ("werewolf", "view", "{tmp}/tournament", "--no-games"),
        ),  # fmt: skip
    )
)
