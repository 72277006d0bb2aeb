"""The engine shared by games built from LLM calls.

``games.engine.calls`` drives steps (generators of LLM calls);
``games.engine.protocol`` states what a game implements; ``games.engine.tree``
expands game trees over LLM calls; ``games.engine.spiel`` holds the OpenSpiel
side (shared models, root cache, string observer); ``games.engine.registry``
lists the games and their CLI commands; ``games.engine.cli_options`` defines
the options every game's CLI shares.
"""
