"""Fruit trading: a two-player LLM negotiation as an OpenSpiel game.

Importing this package registers ``python_fruit_trading`` with pyspiel and the
scripted answers to its tasks.
"""

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
