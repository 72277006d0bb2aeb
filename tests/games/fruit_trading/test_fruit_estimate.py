"""The fruit-trading work estimate: its call count is a bound, its "about" a calibration."""

from __future__ import annotations

import re

import pytest

from games.fruit_trading.estimate import (
    MAX_CALLS_OPENING,
    MAX_CALLS_PER_STEP,
    estimate_work,
    max_calls_per_tree,
)
from tests.cli_runner import run_cli


def test_the_call_bound_by_hand():
    # 2 messages, 1 seed: the opening, then 4 tones x 1 seed steps of at most 9 calls.
    assert max_calls_per_tree(2, 1) == MAX_CALLS_OPENING + MAX_CALLS_PER_STEP * 4 == 38
    # 3 messages, 2 seeds: 8 steps after the opening, 64 after those.
    assert max_calls_per_tree(3, 2) == 2 + 9 * (8 + 64)
    est = estimate_work(
        inits=3, iterations=10, variants=2, max_messages=3, num_seeds=2, eval_seeds=1,
        whole_game=True, judge_calls=256,
    )  # fmt: skip
    per_tree = max_calls_per_tree(3, 2)
    # Subgames, the whole game's rebuilt subgames, held-out trees and the judge's check.
    assert est.max_model_calls == 6 * per_tree * 2 + 6 * max_calls_per_tree(3, 1) + 256
    assert est.model_calls < est.max_model_calls
    assert "at most" in est.describe() and f"{est.max_model_calls:,}" in est.describe()


def _calls(stderr: str, stdout: str) -> tuple[int, int]:
    bound = re.search(r"at most ([\d,]+) model calls", stderr)
    made = re.search(r"LLM calls: (\d+) made", stdout)
    assert bound and made, (stderr, stdout)
    return int(bound.group(1).replace(",", "")), int(made.group(1))


@pytest.mark.parametrize(
    "flags",
    [
        ("--max-messages", "2", "--num-seeds", "1"),
        ("--max-messages", "3", "--num-seeds", "2", "--no-whole-game"),
        ("--max-messages", "3", "--num-seeds", "1", "--eval-seeds", "2"),
    ],
    ids=["two-messages-whole-game", "three-messages", "held-out-seeds"],
)
def test_calls_made_stay_within_the_printed_bound(tmp_path, flags):
    argv = ["fruit-trading", "run", "--inits", "2", "--iterations", "5", "--permutations",
            "0", "--bootstrap", "0", "--no-generalisation", *flags, "--out", str(tmp_path / "r")]  # fmt: skip
    result = run_cli(argv)
    assert result.returncode == 0, result.stderr
    bound, made = _calls(result.stderr, result.stdout)
    assert 0 < made <= bound
