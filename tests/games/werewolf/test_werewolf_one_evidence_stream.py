"""The arena and the day study build every seat's model from one stream, decisions included.

An arena game is played on the scripted stand-in with every seat on one
opponent model (:class:`~games.werewolf.arena.table.ArenaTable`: its seats
take their facts before each step, hear the statements and votes after it,
and read their models at every decision, which adds GRATR's Eq. 9 feedback).
At the start of every day's debate each seat's model is kept, and the day
study's root of that day is rebuilt from the game's records
(:func:`~games.werewolf.day.roots.records_deal_step`, the builder of
``werewolf solve``'s roots): every (seat, subject) distribution and identity
label is the same, exactly, for every registered model. Exactly, not
approximately: both sides run the same model code on the same evidence and
the same decisions in the same order.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.arena.table import DayStartTable
from games.werewolf.day.roots import records_deal_step, root_step
from games.werewolf.day.state import DaySettings
from games.werewolf.play.runner import play_game
from games.werewolf.players.beliefs import BeliefSettings, make_seat_beliefs, seat_events
from games.werewolf.players.table_replay import statement_texts
from gt_llm.opponents import opponent_models

#: The models compared, those of them that are registered.
MODELS = [m for m in ("none", "dirichlet", "gratr", "bayes") if m in opponent_models()]
#: Games whose GRATR seats reach day 3 (by then GRATR's decisions have changed its models);
#: one per preset in the default run, the rest with the slow tests.
_SLOW = pytest.mark.slow
GAMES = [
    ("arena", 7),
    pytest.param("arena", 9, marks=_SLOW),
    pytest.param("arena", 10, marks=_SLOW),
    ("gratr", 2),
    pytest.param("gratr", 1, marks=_SLOW),
    pytest.param("gratr", 4, marks=_SLOW),
]


def arena_game(config, seed, name, chat):
    """One arena game with every seat on ``name``: the day-start models and the records."""
    table = DayStartTable(
        chat,
        config,
        seed=seed,
        wolf_model=name,
        leader_model=name,
        settings=BeliefSettings(),
        max_concurrency=None,
    )
    records: list[dict[str, Any]] = []
    play_game(config, seed=seed, table=table, on_record=records.append)
    return table.day_models, records


def subjects(config, p):
    return [f"Player {q + 1}" for q in range(config.num_players) if q != p]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize(("preset", "seed"), GAMES)
def test_day_roots_equal_the_arenas_models_at_every_day(preset, seed, name, scripted):
    config = rules.preset(preset)
    arena, records = arena_game(config, seed, name, scripted)
    assert arena, "the game reached no day"
    texts = statement_texts(records)
    compared = 0
    for day in sorted(arena):
        settings = DaySettings(config=config, day=day, opponent_model=name, speakers=1)
        # The records' own deal: the arena seat's models are of that deal.
        root = run_sync(records_deal_step(settings, seed, records, texts=texts), scripted)
        assert [p for p, m in enumerate(root.models) if m is not None] == list(root.root.living)
        for p in root.root.living:
            got, want = root.models[p], arena[day][p]
            assert got is not None
            for s in subjects(config, p):
                dist, arena_dist = got.belief(s).distribution, want.belief(s).distribution
                assert dict(dist) == dict(arena_dist), (day, p, s)
                assert got.identity(s) == want.identity(s), (day, p, s)
                compared += 1
    assert compared > 0


def test_gratrs_roots_carry_its_decisions(scripted):
    """Without the seats' decisions GRATR's roots would differ after day 1 (the test has teeth).

    The day study's roots (``werewolf solve``: seeded rule-based games) against
    the same seats fed only the evidence (every event the seat saw, no decision).
    """
    config = rules.preset("gratr")
    differ = 0
    for day in (2, 3):
        settings = DaySettings(config=config, day=day, opponent_model="gratr", speakers=1, deals=0)
        for seed in range(8):
            try:
                state = run_sync(root_step(settings, seed), scripted).deals[0]
            except ValueError:  # the game ends before the day
                continue
            root = state.root
            for p in root.living:
                model = state.models[p]
                assert model is not None
                fed = make_seat_beliefs(
                    "gratr", config, p, root.role(p), BeliefSettings(structured=True)
                )
                fed = run_sync(fed.observe(seat_events(root.start.events, p), {}), scripted)
                differ += sum(
                    dict(model.belief(s).distribution) != dict(fed.model.belief(s).distribution)
                    for s in subjects(config, p)
                )
    assert differ > 0
