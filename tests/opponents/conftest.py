"""Fixtures of the opponent-model tests (helpers live in opponent_fixtures.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Make the helper module importable by name from the tests in this folder.
sys.path.insert(0, str(Path(__file__).parent))

from opponent_fixtures import werewolf_context  # noqa: E402

from gt_llm.opponents import OpponentContext  # noqa: E402


@pytest.fixture
def ctx() -> OpponentContext:
    return werewolf_context()
