"""OpenSpiel games of gt-llm. Importing ``games`` registers every game with pyspiel."""

from games import fruit_trading, werewolf  # noqa: F401
