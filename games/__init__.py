"""OpenSpiel games of gt-llm and the engine they share.

Importing ``games`` registers every game with pyspiel and with the game
registry (:mod:`games.engine.registry`), which is where ``gt-llm`` finds the
``gt-llm <game> ...`` commands and the conformance suite finds its games.
"""

from games import fruit_trading, werewolf  # noqa: F401
