"""Every registered game passes the conformance runner (:mod:`games.engine.conformance`).

The games come from the registry alone: a new game folder under ``games/`` is
checked without an edit here. The runner runs every check on each game and
fails (never skips) a game that lacks what a check needs.
"""

from __future__ import annotations

import pytest

import games
from games.engine.conformance import conformance_cases
from games.engine.registry import broken_games, registered_game_specs
from tests.conftest import game_folders


@pytest.mark.parametrize("folder", game_folders())
def test_game_package_imports(folder):
    # A game folder whose import failed is not registered, so nothing below would check it;
    # this test carries the folder's name, so `pytest -k <folder>` selects it and fails.
    broken = [e.line() for e in broken_games() if e.name == folder]
    assert not broken, broken


def test_every_game_package_loaded():
    assert broken_games() == (), [e.line() for e in broken_games()]
    assert {"fruit-trading", "werewolf", "werewolf-day", "ultimatum"} <= {
        s.name for s in registered_game_specs()
    }, games.__name__


@pytest.mark.parametrize("case", conformance_cases(registered_game_specs()), ids=lambda c: c.id)
def test_conformance(case):
    case.run()
