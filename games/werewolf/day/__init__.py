"""The Werewolf day as a tree: one day's debate solved by CFR (``python_werewolf_day``,
``gt-llm werewolf solve``)."""
