"""The arena and the day study build every seat's model from one stream.

A seeded rule-based game is fed to each seat's arena provider
(:class:`~games.werewolf.players.table_beliefs.TableBeliefs`, as the arena's
table feeds it: private facts before each decision, statements and votes as
public observations after each step) and, at the start of every day's debate,
compared with the day study's root models (``werewolf solve``): every
(seat, subject) distribution agrees, votes included.
"""

from __future__ import annotations

import pytest

from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.day.roots import day_start, root_step
from games.werewolf.day.state import DaySettings
from games.werewolf.play.runner import play_game
from games.werewolf.players.beliefs import make_seat_beliefs
from games.werewolf.players.table import PublicObservation
from games.werewolf.players.table_beliefs import TableBeliefs
from games.werewolf.players.view import act_dict


def arena_models_by_day(config, seed, name, chat):
    """Each seat's arena-fed model at the start of every day's debate, by day."""
    records: list[dict] = []
    play_game(config, seed=seed, on_record=records.append)
    state = rules.initial_state(config)
    adapters: dict[int, TableBeliefs] = {}
    sid = 0
    out = {}
    for rec in records:
        if rec["type"] == "chance":
            state = rules.apply(state, rules.CHANCE, rec["outcome"])
            continue
        if rec["type"] != "action":
            continue
        if not adapters:
            adapters = {
                p: TableBeliefs(make_seat_beliefs(name, config, p, r), chat)
                for p, r in enumerate(state.roles)
            }
        for p, a in adapters.items():  # before each decision: the seat's new facts
            a.add_private(rules.knowledge(state, p).events)
            run_sync(a.flush(), chat)
        if state.phase == "day_bid" and state.debate_turn == 0 and state.round not in out:
            out[state.round] = {p: a.state.model for p, a in adapters.items()}
        before = state
        action = rules.action_from_json(rec["action"])
        state = rules.apply(state, rec["player"], action)
        if isinstance(action, rules.SpeechAct):
            obs = PublicObservation(
                "statement", before.round, rec["player"], action.target, act_dict(action), "", sid
            )
            sid += 1
            for a in adapters.values():
                a.observe(obs)
        for e in state.events[len(before.events) :]:
            if e.kind == "votes":
                for v, t in sorted(e.data["votes"].items(), key=lambda kv: int(kv[0])):
                    for a in adapters.values():
                        a.observe(PublicObservation("vote", e.round, int(v), t))
        for a in adapters.values():
            run_sync(a.flush(), chat)
    return out


@pytest.mark.parametrize("name", ["gratr", "dirichlet", "none"])
@pytest.mark.parametrize(("preset", "seed"), [("arena", 1), ("gratr", 2)])
def test_day_study_and_arena_agree_on_every_belief_at_every_day(preset, seed, name, scripted):
    config = rules.preset(preset)
    arena = arena_models_by_day(config, seed, name, scripted)
    days = [d for d in sorted(arena) if day_start(config, seed, d) is not None]
    assert len(days) >= 2  # day 1 and at least one later day, whose models saw votes
    compared = 0
    for day in days:
        settings = DaySettings(config=config, day=day, opponent_model=name, speakers=1)
        root = run_sync(root_step(settings, seed), scripted)
        for p, model in enumerate(root.models):
            if model is None:
                continue
            for q in range(config.num_players):
                if q == p:
                    continue
                subject = f"Player {q + 1}"
                got = dict(model.belief(subject).distribution)
                want = dict(arena[day][p].belief(subject).distribution)
                assert got == pytest.approx(want, abs=1e-12), (day, p, q)
                compared += 1
    assert compared > 0
