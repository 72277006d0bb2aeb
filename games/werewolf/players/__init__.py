"""Werewolf players: the LLM player's tasks, prompts and parsing, the LLM table, the
stand-in's answers, rule-based and human players, and the belief providers."""
