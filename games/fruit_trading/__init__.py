"""Fruit trading: a two-player LLM negotiation as an OpenSpiel game.

Importing this package registers ``python_fruit_trading`` with pyspiel, the
scripted answers to its tasks, and the game's spec (``gt-llm fruit-trading``
and its conformance parameters) with :mod:`games.engine.registry`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pyspiel

from games.engine.registry import ConformanceParams, GameSpec, register_game_spec
from games.fruit_trading import game, scripted  # noqa: F401
from games.fruit_trading.dialogue import Config, DialogueState
from games.fruit_trading.game import FruitTradingGame
from games.fruit_trading.rules import FRUITS, TONES, Scenario, make_scenario

__all__ = [
    "FRUITS",
    "TONES",
    "Config",
    "DialogueState",
    "FruitTradingGame",
    "Scenario",
    "make_scenario",
]


def _add_parser(subparsers: argparse._SubParsersAction) -> None:
    from games.fruit_trading.cli import add_parser

    add_parser(subparsers)


def _private_info(state: pyspiel.State, player: int) -> Sequence[str]:
    """A player's endowment and valuations (its private information)."""
    if state.dialogue is None:
        return []
    return [state.dialogue.scenario.players[player].describe()]


register_game_spec(
    GameSpec(
        name="fruit-trading",
        short_name=game.SHORT_NAME,
        help="fruit-trading negotiation: the belief-revision experiment",
        add_parser=_add_parser,
        conformance=ConformanceParams(
            game_strings=(
                "python_fruit_trading(init=1,max_messages=3)",
                "python_fruit_trading(init=3,beliefs=true,max_messages=4)",
                "python_fruit_trading(init=1,beliefs=true,max_messages=3,payoff=exact)",
                "python_fruit_trading(init=-1,num_inits=3,max_messages=3,beliefs=true)",
                "python_fruit_trading(init=2,max_messages=4,opponent_model=gratr,names=fixed)",
            ),
            tree_game_strings=(
                "python_fruit_trading(init=0,beliefs=true,max_messages=4)",
                "python_fruit_trading(init=1,max_messages=3)",
                "python_fruit_trading(init=7,max_messages=3)",
                "python_fruit_trading(init=-1,num_inits=3,max_messages=3,beliefs=true)",
            ),
            private_info=_private_info,
        ),
        commands=(
            (
                *(
                    "fruit-trading",
                    "run",
                    "--inits",
                    "1",
                    "--max-messages",
                    "3",
                    "--num-seeds",
                    "1",
                ),
                *("--iterations", "5", "--no-generalisation", "--no-whole-game"),
                *("--variants", "tone,tone+gratr", "--no-progress", "--out", "{tmp}/fruit"),
            ),
            ("fruit-trading", "figures", "--out", "{tmp}/fruit"),
            (
                *("fruit-trading", "compare", "{tmp}/fruit", "{tmp}/fruit", "--labels", "a,b"),
                *("--out", "{tmp}/compare"),
            ),
            ("fruit-trading", "view", "{tmp}/fruit", "--variant", "tone+gratr"),
            ("fruit-trading", "judge-check", "--no-progress", "--out", "{tmp}/judge"),
        ),
    )
)
