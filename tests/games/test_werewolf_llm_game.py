"""Whole games of LLM players (scripted stand-in model) on the Werewolf rules.

The loop below is a test-only driver that wires the LLM player steps to the
pure rules; the real game loop is the runner's. It checks that the steps
produce legal actions in every phase, that the scripted stand-in plays
sensibly enough for games to end with a result, and that deception tracking
runs on real statements.
"""

from __future__ import annotations

import numpy as np
import pytest

import games.werewolf.scripted_llm  # noqa: F401  (registers the scripted answers)
import gt_llm
from games.engine.calls import run_batched, run_sync
from games.werewolf import players, rules
from games.werewolf.deception import DeceptionTracker, StatementRecord, tracker_from_events
from games.werewolf.rules import Target
from gt_llm.parsing import ParseStats


def oracle_beliefs(state, p):
    """An exact opponent model for a non-werewolf: the true werewolves at 0.9."""
    if state.roles[p] == "werewolf":
        return {}
    return {
        q: (
            {"werewolf": 0.9, "villager": 0.1}
            if r == "werewolf"
            else {"villager": 0.9, "werewolf": 0.1}
        )
        for q, r in enumerate(state.roles)
        if q != p
    }


def play(preset: str, seed: int, model, stats: ParseStats, *, oracle: bool = False):
    """Plays one game; returns (final state, deception tracker, statement texts).

    Independent decisions (every bid, every vote, the scratchpads) go out as one
    batch. With ``oracle``, every non-werewolf's prompts carry the exact beliefs.
    """
    rng = np.random.default_rng(seed)
    cfg = rules.preset(preset, max_rounds=6, debate_turns=2)
    state = rules.initial_state(cfg)
    n = cfg.num_players
    tracker = DeceptionTracker(num_players=n)
    texts: dict[int, str] = {}
    pads = dict.fromkeys(range(n), "")
    notes_round = 1

    def extra(p):
        return dict(
            texts=texts,
            scratchpad=pads[p],
            suspicion=tracker.scores_of(p),
            beliefs=oracle_beliefs(state, p) if oracle else None,
        )

    def view(p):
        return players.view_from_knowledge(rules.knowledge(state, p), **extra(p))

    while rules.current_player(state) != rules.TERMINAL:
        actor = rules.current_player(state)
        if actor == rules.CHANCE:
            outs = rules.chance_outcomes(state)
            probs = np.array([p for _, p in outs])
            k = rng.choice(len(outs), p=probs / probs.sum())
            state = rules.apply(state, actor, outs[k][0])
            continue
        if state.round > notes_round and state.phase == "night_wolves":
            # Scratchpads after each day, for every living player, as one batch.
            living = state.living()
            gens = [
                players.update_scratchpad(view(p), f"round {notes_round}", seed=seed + p)
                for p in living
            ]
            for p, pad in zip(living, run_batched(gens, model, stats=stats), strict=True):
                pads[p] = pad
            notes_round = state.round
        s = players.call_seed(seed, state.num_steps)
        if state.phase in ("day_bid", "day_vote"):
            # Every living player's bid (or vote) as one batch.
            queue = list(state.queue)
            gens = []
            for p in queue:
                k = rules.knowledge(state, p)
                legal = rules.legal_actions(state) if p == actor else _legal_for(state, p)
                gens.append(
                    players.decide(k, legal, seed=players.call_seed(s, p), rng=rng, **extra(p))
                )
            for p, d in zip(queue, run_batched(gens, model, stats=stats), strict=True):
                assert not d.defaulted
                state = rules.apply(state, p, d.action)
            continue
        legal = rules.legal_actions(state)
        d = run_sync(
            players.decide(rules.knowledge(state, actor), legal, seed=s, rng=rng, **extra(actor)),
            model,
            stats=stats,
        )
        assert not d.defaulted and d.action in legal
        if state.phase != "day_speak":
            state = rules.apply(state, actor, d.action)
            continue
        truth = rules.is_deceptive_in_truth(state, actor, d.action)
        state = rules.apply(state, actor, d.action)
        sid = len(tracker.statements)
        texts[sid] = d.text
        views = {p: view(p) for p in state.living()}
        stmt = views[actor].statements[sid]
        tracker = tracker.add_statement(
            StatementRecord(sid, actor, state.round, d.text, truth, players.act_dict(d.action))
        )
        own, peers = run_sync(players.analyse_statement(views, stmt, seed=s), model, stats=stats)
        if own is not None:
            tracker = tracker.add_self(own)
        for a in peers:
            tracker = tracker.add_peer(a)
    return state, tracker, texts


def _legal_for(state, p):
    """The legal actions of ``p`` in a simultaneous step (bids, votes), before its turn."""
    if state.phase == "day_bid":
        return [rules.Bid(b) for b in range(rules.MAX_BID + 1)]
    return [Target(q) for q in state.living() if q != p]


@pytest.fixture(scope="module")
def scripted():
    return gt_llm.load_model("scripted")


@pytest.mark.parametrize("preset", ["arena", "gratr"])
def test_scripted_llm_games_end_and_track_deception(preset, scripted):
    winners = []
    for seed in range(3):
        stats = ParseStats()
        state, tracker, texts = play(preset, seed, scripted, stats)
        assert state.winner in (rules.WEREWOLVES, rules.VILLAGERS, rules.DRAW)
        winners.append(state.winner)
        # The scripted answers always parse.
        assert stats.to_dict()["total_fallbacks"] == 0
        summary = tracker.summary()
        assert summary.total_statements == len(tracker.statements) > 0
        # Self-reports agree with the rules' truth exactly (the stand-in is honest).
        d = summary.self_detection
        assert d.false_positives == d.false_negatives == 0
        # Rebuilt from its log events, the tracker is the same.
        again = tracker_from_events(tracker.events(), tracker.num_players)
        assert again.summary() == summary
    # Same seed, same game.
    state2, tracker2, texts2 = play(preset, 2, scripted, ParseStats())
    assert (state2.events, tracker2, texts2) == (state.events, tracker, texts)


def test_better_beliefs_give_better_votes(scripted):
    """Villagers fed exact beliefs win more games than villagers without beliefs."""
    wins = {False: 0, True: 0}
    for oracle in (False, True):
        for seed in range(12):
            state, _, _ = play("arena", seed, scripted, ParseStats(), oracle=oracle)
            wins[oracle] += state.winner == rules.VILLAGERS
    assert wins[True] > wins[False]
    assert wins[True] >= 11  # measured: 100 of 100 seeds with exact beliefs


def dealt(preset="arena", roles=("werewolf", "werewolf", "seer", "doctor") + ("villager",) * 4):
    cfg = rules.preset(preset)
    state = rules.initial_state(cfg)
    for r in roles:
        state = rules.apply(state, rules.CHANCE, rules.ROLES.index(r))
    return state


def test_views_from_rules_knowledge_hide_what_a_player_cannot_know():
    state = dealt()
    assert state.phase == "night_wolves"
    state = rules.apply(state, 0, Target(4))
    wolf1 = rules.knowledge(state, 1)
    assert players.partner_votes(wolf1) == {0: 4}
    v1 = players.view_from_knowledge(wolf1)
    assert v1.partners == (0,) and "Night 1: Player 1 chose to attack Player 5." in v1.private_notes
    state = rules.apply(state, 1, Target(4))  # victim 4
    state = rules.apply(state, 3, Target(4))  # the doctor protects 4
    state = rules.apply(state, 2, Target(0))  # the seer checks a werewolf
    seer = players.view_from_knowledge(rules.knowledge(state, 2))
    assert seer.checks == {0: "werewolf"} and seer.check_results == rules.ROLES
    villager = players.view_from_knowledge(rules.knowledge(state, 5))
    assert villager.partners == () and not villager.checks and not villager.private_notes
    assert villager.announcements == ((1, "Nobody died last night."),)
    # Day: bids, then a speech whose text the runner supplies by statement id.
    for p in state.living():
        state = rules.apply(state, p, rules.Bid(10 if p == 2 else 0))
    legal = rules.legal_actions(state)
    menu = players.speech_menu(legal)
    assert menu["acts"] == list(rules.SPEECH_ACTS) and "any" not in menu["tones"]
    assert menu["targets"] == [0, 1, 3, 4, 5, 6, 7] and menu["roles"] == list(rules.ROLES)
    act = rules.SpeechAct("share_check", "assertive", target=0, result="werewolf")
    state = rules.apply(state, 2, act)
    v5 = players.view_from_knowledge(rules.knowledge(state, 5), texts={0: "P1 is a wolf!"})
    assert v5.statements == (players.PublicStatement(0, 1, 2, act, "P1 is a wolf!"),)
    plain = players.view_from_knowledge(rules.knowledge(state, 5))
    assert plain.statements[0].text == "I checked Player 1 last night: werewolf."


def test_witch_sees_tonight_victim():
    state = dealt("gratr", ("werewolf",) * 3 + ("witch", "guard", "seer", "villager", "villager"))
    for w in (0, 1, 2):
        state = rules.apply(state, w, Target(6))
    state = rules.apply(state, 4, Target(3))  # guard
    state = rules.apply(state, 5, Target(0))  # seer
    assert state.phase == "night_witch_save"
    k = rules.knowledge(state, 3)
    assert players.tonight_victim(k) == 6
    assert players.tonight_victim(rules.knowledge(state, 7)) is None
