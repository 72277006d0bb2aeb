"""Werewolf: pure rules, the OpenSpiel game ``python_werewolf``, scripted players, runner."""

from games.werewolf import game  # noqa: F401  (registers python_werewolf)
