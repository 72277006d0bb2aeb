"""OpenSpiel games of gt-llm and the engine they share.

Importing ``games`` imports every game subpackage (:func:`games.engine.registry.discover_games`):
each registers itself with pyspiel and with the game registry, which is where
``gt-llm`` finds the ``gt-llm <game> ...`` commands and the conformance suite
finds its games. A game that fails to import is reported in one line; the
others still load. Adding a game is adding a folder here (see
``docs/adding-a-game.md``).
"""

from games.engine.registry import add_command_parsers, discover_games

__all__ = ["add_command_parsers"]

discover_games(__name__, __path__)
