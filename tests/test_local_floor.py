"""The local benchmark's floor: what a path that answers bit for bit must still evaluate.

``benchmarks/local_model.py`` prints the wall time no bit-identical path can go
below; its prompt count takes from each prompt only what an earlier prompt of
the set lets any such path skip: all of a prompt asked before (its evaluated
state kept), else the whole 16-token blocks it shares (never the last token).
A count that skipped more would make the floor look lower than it is.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script extends sys.path
    spec = importlib.util.spec_from_file_location(
        "local_model_floor_under_test", ROOT / "benchmarks" / "local_model.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_repeated_prompt_is_skipped_whole_and_a_shared_prefix_by_whole_blocks(bench):
    first = tuple(range(40))
    assert bench._reusable(40, 40) == 40  # asked before: nothing to evaluate
    assert bench._reusable(35, 45) == 32  # two whole blocks of the 35 shared tokens
    assert bench._reusable(40, 41) == 32  # the last token is always evaluated
    assert bench._reusable(15, 30) == 0  # less than a block
    prompts = [first, first, first[:35] + (999,) * 10, (7,) * 20, first + (5,)]
    ceiling = bench.reuse(prompts, bench._reusable)
    assert ceiling.length == 40 + 40 + 45 + 20 + 41
    assert ceiling.any_earlier == 0 + 40 + 32 + 0 + 32
