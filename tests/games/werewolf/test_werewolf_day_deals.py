"""The day tree's root chance node over deals, and information states blind to the deal.

A day tree solved for one fixed deal is clairvoyant (the payoffs tell the seats
who the werewolves are); the root is a chance node over the role assignments
consistent with the public history (:mod:`games.werewolf.deals`), and a seat's
information state holds only what it knows (:mod:`games.werewolf.day.infosets`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from games.engine.calls import run_sync
from games.engine.conformance import redeal_differences
from games.werewolf import rules
from games.werewolf.day import build, roots
from games.werewolf.day.abstraction import Abstraction
from games.werewolf.day.game import WerewolfDayGame
from games.werewolf.day.infosets import day_redeal, seat_view
from games.werewolf.day.state import DaySettings, DayState, DealChance
from games.werewolf.day.steps import DayLogic
from games.werewolf.deals import (
    consistent_deals,
    public_deals,
    public_knowledge,
    records_history,
)
from games.werewolf.rules import Config, RoleSet
from gt_llm.registry import load_model

ARENA = rules.preset("arena")
SMALL = Config(roles=RoleSet(werewolf=1, villager=3, seer=0, doctor=0, witch=0, guard=0))


def _history(config: Config, seed: int, day: int = 1) -> tuple[int, ...]:
    records = roots.game_records(config, seed)
    found = roots._day_start_and_bids(config, records, day)
    assert found is not None
    return records_history(config, records, found[1])


def _settings(**kw) -> DaySettings:
    base = dict(
        config=ARENA,
        speakers=2,
        order="seats",
        num_seeds=1,
        opponent_model="none",
        abstraction=Abstraction(tones=("any",), acts=("nothing", "accuse:most")),
        deals=4,
    )
    return DaySettings(**{**base, **kw})


# --- the deals ----------------------------------------------------------------------


def test_public_deals_keep_every_public_fact():
    history = _history(ARENA, 0)
    deals = public_deals(ARENA, history, 8, seed=0)
    assert len(deals.roles) == 8 and not deals.enumerated
    # Night 1 killed one non-werewolf: 8!/(2!4!) deals, 6 of 8 seats may be that victim's role.
    assert deals.consistent == 840 * 6 // 8
    real = roots._day_start_and_bids(ARENA, roots.game_records(ARENA, 0), 1)[1]
    public = [str(e) for e in real.events if e.visible_to is None]
    for roles, h in zip(deals.roles, deals.histories, strict=True):
        assert sorted(roles) == sorted(real.roles)
        state = rules.initial_state(ARENA)
        for action in h:
            actor = rules.current_player(state)
            move = action if actor == rules.CHANCE else rules.decode_action(8, action)
            state = rules.apply(state, actor, move)
        assert state.roles == roles
        assert [str(e) for e in state.events if e.visible_to is None] == public
        assert state.alive == real.alive
        dead = [p for p, a in enumerate(state.alive) if not a]
        assert all(roles[p] != "werewolf" for p in dead)


def test_few_consistent_deals_are_enumerated():
    history = _history(SMALL, 0)
    known = public_knowledge(SMALL, history)
    every = consistent_deals(SMALL, known)
    # Four seats, one werewolf, one villager died at night: the werewolf is one of the 3 others.
    assert len(every) == 3
    deals = public_deals(SMALL, history, 4, seed=0)
    assert deals.enumerated and deals.roles == tuple(every)


def test_public_deals_are_deterministic_and_depend_on_the_seed():
    history = _history(ARENA, 1)
    a = public_deals(ARENA, history, 4, seed=1)
    assert a == public_deals(ARENA, history, 4, seed=1)
    assert a.roles != public_deals(ARENA, history, 4, seed=2).roles


def test_public_deals_refuse_k_below_one():
    with pytest.raises(ValueError, match="k must be >= 1"):
        public_deals(ARENA, _history(ARENA, 0), 0, seed=0)


def test_deals_zero_keeps_the_seeded_games_own_deal():
    settings = _settings(deals=0)
    chance = run_sync(roots.root_step(settings, 0), load_model("scripted"))
    assert isinstance(chance, DealChance) and chance.fixed and len(chance.deals) == 1
    real = roots.day_start(ARENA, 0, 1)
    assert real is not None
    assert chance.deals[0].root.start.roles == real[0].roles


# --- the tree -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def day_tree():
    settings = _settings()
    (sg,) = build.build_days(settings, [0], load_model("scripted"), progress=False)
    return settings, sg


def test_the_root_is_a_chance_node_over_the_deals(day_tree):
    settings, sg = day_tree
    tree = sg.tree
    assert tree.kind[0] == 1 or int(tree.player[0]) < 0  # the root is chance
    chance = sg.day_root
    assert [k for k, _ in chance.probabilities()] == [0, 1, 2, 3]
    first = int(tree.first_child[0])
    assert np.allclose(tree.chance_prob[first : first + 4], 0.25)


def test_two_deals_a_seat_cannot_tell_apart_share_its_information_state(day_tree):
    settings, sg = day_tree
    logic = DayLogic(settings)
    deals = sg.day_root.deals
    speaker = deals[0].speaker()
    views = [seat_view(d, speaker) for d in deals]
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4) if views[i] == views[j]]
    assert pairs, "no two deals this seat cannot tell apart (another seed is needed)"
    for i, j in pairs:
        assert logic.information_state(deals[i], speaker) == logic.information_state(
            deals[j], speaker
        )
    apart = [(i, j) for i in range(4) for j in range(i + 1, 4) if views[i] != views[j]]
    for i, j in apart:  # what the seat knows differs (its role, its checks): different states
        assert logic.information_state(deals[i], speaker) != logic.information_state(
            deals[j], speaker
        )
    # In the tree: the first decision's nodes of those deals are one information set.
    index = sg.tree.key_to_infoset
    i, j = pairs[0]
    assert (
        index[logic.information_state(deals[i], speaker)]
        == index[logic.information_state(deals[j], speaker)]
    )


def test_information_sets_span_more_than_one_deal_below_the_root(day_tree):
    _, sg = day_tree
    per_turn = sg.deals_per_infoset()
    assert set(per_turn) == {0, 1}
    assert all(x > 1.0 for x in per_turn.values()), per_turn
    # Every information set holds one seat with one role.
    assert all(len(f.deals) >= 1 for f in sg.infosets.values())


def test_the_words_are_not_in_the_information_state(day_tree):
    settings, sg = day_tree
    logic = DayLogic(settings)
    for state in sg.states():
        if isinstance(state, DayState) and state.statements and not state.is_terminal():
            key = logic.information_state(state, state.speaker())
            assert all(s.text not in key for s in state.statements if s.text)


# --- the conformance check ------------------------------------------------------------


_GAME = (
    "python_werewolf_day(game_seed=0,speakers=2,num_seeds=1,tones=any,"
    "acts=nothing/accuse:most,deals=4,order=seats)"
)


@dataclasses.dataclass(frozen=True)
class _DealNamingLogic(DayLogic):
    """A planted leak: the information state names the deal."""

    def information_state(self, state, player):
        key = super().information_state(state, player)
        return key if isinstance(state, DealChance) else f"{key}\ndeal {state.root.deal}"


@dataclasses.dataclass(frozen=True)
class _RoleNamingLogic(DayLogic):
    """A planted leak: the information state names the speaker's role."""

    def information_state(self, state, player):
        key = super().information_state(state, player)
        if isinstance(state, DealChance) or state.is_terminal():
            return key
        return f"{key}\nspeaker is {state.root.role(state.speaker())}"


def _game(logic_class=None) -> WerewolfDayGame:
    import pyspiel

    game = pyspiel.load_game(_GAME)
    if logic_class is not None:
        game.logic = logic_class(game.logic.settings)
    return game


def test_the_day_game_passes_the_re_deal_check():
    stats, diff = redeal_differences(_game(), day_redeal, num_games=2, per_node=3)
    assert diff is None
    assert stats.compared > 0


@pytest.mark.parametrize("planted", [_DealNamingLogic, _RoleNamingLogic])
def test_the_re_deal_check_fails_a_deal_dependent_information_state(planted):
    stats, diff = redeal_differences(_game(planted), day_redeal, num_games=2, per_node=3)
    assert diff is not None, stats
    # The engine's observation string is its information state: the first compared.
    assert diff.kind in ("observation_string", "information_state_string")
    assert diff.original != diff.redealt
