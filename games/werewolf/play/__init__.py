"""Playing Werewolf games: the runner (play, JSONL logs, replay) and the transcript."""
