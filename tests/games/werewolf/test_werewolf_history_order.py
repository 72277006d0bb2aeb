"""A prompt's history lists each round's events in the order they happened."""

from __future__ import annotations

import pytest

from games.werewolf import rules
from games.werewolf.play.runner import play_game
from games.werewolf.players.view import _history_text, view_from_knowledge


def _kind(line: str) -> str:
    if " said: " in line:
        return "speech"
    if line.startswith("Votes: "):
        return "votes"
    if "exiled" in line:
        return "exile"
    return "deaths"


@pytest.mark.parametrize(("preset", "seed"), [("arena", 3), ("gratr", 5), ("arena", 11)])
def test_history_follows_the_event_order(preset, seed):
    config = rules.preset(preset)
    final = play_game(config, seed=seed).final
    exiles = 0
    for p in range(config.num_players):
        k = rules.knowledge(final, p)
        text = _history_text(view_from_knowledge(k))
        got: list[tuple[int, str]] = []
        rnd = 0
        for line in text.splitlines():
            if line.startswith("Round "):
                rnd = int(line.split()[1].rstrip(":"))
            elif line.startswith("  "):
                got.append((rnd, _kind(line.strip())))
        # What happened, in the order of the seat's events (one "Votes:" line per round).
        want: list[tuple[int, str]] = []
        for e in k.events:
            if e.kind == "speech" or (e.kind in ("deaths", "exile") and e.visible_to is None):
                want.append((e.round, e.kind))
            elif e.kind == "votes" and (e.round, "votes") not in want:
                want.append((e.round, "votes"))
        assert got == want, (preset, seed, p)
        # In particular an exile comes after the votes (and statements) that led to it.
        for i, (r, kind) in enumerate(got):
            if kind == "exile":
                exiles += 1
                before = [x for x in got[:i] if x[0] == r]
                assert ("votes" in [x[1] for x in before]) and before[-1][1] == "votes"
    assert exiles > 0  # the games did exile someone, so the order was tested
