"""Answers that cannot be stored or parsed, in every command that asks a model.

A loopback chat-completions server (tests/llm/fake_server.py) answers, in
turn, JSON holding an escaped lone surrogate (``"\\ud800"``: it used to be
parsed and quoted in the next prompt, whose cache key then failed), JSON
nested 3,000 levels deep (a ``RecursionError`` traceback), and a body whose
text holds a lone surrogate (an error of the backend). Each command finishes,
counts the bad answers as fallbacks, and an identical re-run finishes from
the cache alone: nothing cached poisons it. The shared layer's own tests are
in ``tests/llm/test_unusable_answers.py``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_server import Canned, FakeChatServer, completion_body  # noqa: E402

from tests.cli_runner import run_cli  # noqa: E402

#: Keys the commands' answer formats read as free text (Werewolf's and fruit trading's).
_KEYS = ("statement", "scratchpad", "message", "summary", "calculation", "reason")
BAD_ANSWERS = (
    # The escape as the model writes it: the answer is storable, its decoded value is not.
    "{" + ", ".join(f'"{k}": "I offer 1 apple \\ud800"' for k in _KEYS) + ', "bid": 3}',
    '{"statement": ' + "[" * 3000 + "]" * 3000 + "}",
    # A real lone surrogate in the text: the body carries it as the escape "\ud800".
    "{" + ", ".join(f'"{k}": "I offer 1 apple \ud800"' for k in _KEYS) + "}",
)


class BadAnswers(FakeChatServer):
    """Answers the k-th attempt at a prompt (a re-ask: same messages) with ``BAD_ANSWERS[k]``.

    So every decision that keeps failing meets every bad answer, whatever the
    order in which concurrent calls arrive.
    """

    def __init__(self) -> None:
        super().__init__()
        self.attempts: Counter[str] = Counter()

    def _next(self, body: Any) -> Canned:
        prompt = json.dumps(body.get("messages") if isinstance(body, dict) else body)
        with self._lock:
            k = self.attempts[prompt]
            self.attempts[prompt] += 1
        return Canned(body=completion_body(BAD_ANSWERS[k % len(BAD_ANSWERS)]))


COMMANDS = {
    "werewolf-play": ("werewolf", "play", "--max-rounds", "1", "--debate-turns", "1"),
    "werewolf-series": ("werewolf", "play", "--games", "2", "--max-rounds", "1",
                        "--debate-turns", "1"),
    "werewolf-arena": ("werewolf", "arena", "--models", "gratr,none", "--games", "1",
                       "--max-rounds", "1", "--debate-turns", "1"),
    "werewolf-solve": ("werewolf", "solve", "--days", "1", "--speakers", "1", "--iterations",
                       "5", "--models", "none", "--tones", "calm,any", "--acts", "nothing",
                       "--deals", "1"),
    "fruit-run": ("fruit-trading", "run", "--inits", "1", "--max-messages", "2", "--num-seeds",
                  "1", "--iterations", "5", "--variants", "tone", "--no-generalisation",
                  "--no-whole-game"),
    "ultimatum-solve": ("ultimatum", "solve", "--iterations", "5"),
}  # fmt: skip


def _where(name: str, tmp_path: Path) -> tuple[str, ...]:
    """Where the command writes: a single game's log (its cache beside), else ``--out``."""
    if name == "werewolf-play":
        return ("--log", str(tmp_path / "game.jsonl"))
    return ("--out", str(tmp_path / "out"))


@pytest.mark.parametrize("name", list(COMMANDS))
def test_unusable_answers_are_counted_fallbacks_and_never_poison_a_rerun(name, tmp_path):
    with BadAnswers() as server:
        argv = (*COMMANDS[name], *_where(name, tmp_path), "--no-progress",
                "--backend", f"openai:m@{server.url}/v1")  # fmt: skip
        first = run_cli(argv)
        asked = server.request_count
        again = run_cli(argv)
        for run in (first, again):
            assert run.returncode == 0, run.stderr[-2000:]
            assert "Traceback" not in run.stderr and "surrogates not allowed" not in run.stderr
            assert "parse fallback" in run.stderr  # counted and logged, never silent
        assert asked > 0 and server.request_count == asked  # the re-run: the cache alone
