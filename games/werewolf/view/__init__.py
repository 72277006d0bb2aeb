"""Werewolf result pages: a game, a results folder's index, a day study.

Self-contained HTML files (:mod:`games.engine.html_page`) written by
``gt-llm werewolf view``; :func:`display_game` shows a game in a notebook.
"""

from games.werewolf.view.beliefs import encode_snapshots, replay_beliefs
from games.werewolf.view.index import folder_kind, write_folder_pages
from games.werewolf.view.page import display_game, game_page, write_game_page
from games.werewolf.view.timeline import game_data, log_counts, read_records

__all__ = [
    "display_game",
    "encode_snapshots",
    "folder_kind",
    "game_data",
    "game_page",
    "log_counts",
    "read_records",
    "replay_beliefs",
    "write_folder_pages",
    "write_game_page",
]
