"""Deception tracking of Werewolf statements and its summaries."""
