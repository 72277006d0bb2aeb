"""The OpenSpiel adapter ``python_fruit_trading`` and its materialised trees.

The checks every game gets (``random_sim_test``, determinism, hidden private
information, perfect recall, builder tree equals materialised tree) are in
``test_conformance.py``; these are the fruit-trading specifics.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401
import solvers
from games.fruit_trading.dialogue import Config
from games.fruit_trading.game import FruitTradingGame
from games.fruit_trading.rules import TONES, make_scenario
from games.fruit_trading.tree import build_subgames
from solvers import CHANCE, DECISION, TERMINAL


def _load(**params) -> pyspiel.Game:
    args = ",".join(
        f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in params.items()
    )
    return pyspiel.load_game(f"python_fruit_trading({args})")


def test_registered_and_loadable():
    assert "python_fruit_trading" in pyspiel.registered_names()
    game = pyspiel.load_game("python_fruit_trading(init=3,beliefs=true,max_messages=4)")
    assert isinstance(game, FruitTradingGame)
    assert game.config.beliefs is True and game.config.max_messages == 4
    assert game.num_players() == 2
    assert game.get_type().short_name == "python_fruit_trading"


def test_actions_are_the_four_tones_and_seeds_are_uniform():
    game = _load(init=1, max_messages=3, num_seeds=3)
    assert game.num_distinct_actions() == len(TONES) == 4
    state = game.new_initial_state()
    # The opening is fixed; player 2 decides first.
    assert state.current_player() == 1
    assert state.legal_actions() == [0, 1, 2, 3]
    assert [state.action_to_string(1, a) for a in range(4)] == [f"tone={t}" for t in TONES]
    state.apply_action(TONES.index("calm"))
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == [0, 1, 2]
    assert all(p == pytest.approx(1 / 3) for _, p in outcomes)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "seed=2"


def test_whole_game_starts_with_a_chance_node_over_inits():
    game = _load(init=-1, num_inits=3, max_messages=3)
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [
        (0, pytest.approx(1 / 3)),
        (1, pytest.approx(1 / 3)),
        (2, pytest.approx(1 / 3)),
    ]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "init=2"
    state.apply_action(2)
    assert state.dialogue.scenario == make_scenario(2)


def test_invalid_parameters():
    with pytest.raises(ValueError, match="num_seeds"):
        FruitTradingGame({"num_seeds": 0})
    with pytest.raises(ValueError, match="num_inits"):
        FruitTradingGame({"init": -1, "num_inits": 0})
    with pytest.raises(ValueError, match="max_messages"):
        FruitTradingGame({"max_messages": 1})
    with pytest.raises(ValueError, match="payoff"):
        FruitTradingGame({"payoff": "guess"})


def _tone_line(info_state: str) -> str:
    lines = [ln for ln in info_state.splitlines() if ln.startswith("Your tones so far:")]
    assert len(lines) == 1
    return lines[0]


@pytest.mark.parametrize("opponent_tone", ["submissive", "assertive", "calm"])
def test_information_state_hides_opponent_tone(opponent_tone):
    game = _load(init=0, max_messages=3)
    sc = make_scenario(0)
    state = game.new_initial_state()
    assert state.current_player() == 1
    assert _tone_line(state.information_state_string(1)) == "Your tones so far: (none)"
    assert _tone_line(state.information_state_string(0)) == f"Your tones so far: {sc.opening_tone}"
    state.apply_action(TONES.index(opponent_tone))
    state.apply_action(0)
    assert not state.is_terminal()
    assert state.current_player() == 0
    own = state.information_state_string(0)
    other = state.information_state_string(1)
    # Player 1 sees only its own (opening) tone, not player 2's.
    assert _tone_line(own) == f"Your tones so far: {sc.opening_tone}"
    assert _tone_line(other) == f"Your tones so far: {opponent_tone}"
    if sc.opening_tone != opponent_tone:
        assert opponent_tone not in _tone_line(own)
    # Own private information is there; the opponent's is not.
    assert own.startswith(f"You are {sc.players[0].name} (player 1).")
    assert sc.players[0].describe() in own
    assert sc.players[1].describe() not in own or sc.players[1] == sc.players[0]
    assert other.startswith(f"You are {sc.players[1].name} (player 2).")
    # Both see the same dialogue.
    assert own.split("Dialogue:\n", 1)[1] == other.split("Dialogue:\n", 1)[1]


def test_whole_game_infosets_stay_within_one_init():
    # These three initialisations give each player different private information.
    for p in range(2):
        assert len({make_scenario(i).players[p] for i in range(3)}) == 3
    tree = solvers.materialize(_load(init=-1, num_inits=3, max_messages=3))
    # The root's children are the initialisations; every infoset stays inside one.
    root_child = np.full(tree.num_nodes, -1)
    for n in range(1, tree.num_nodes):
        p = tree.parent[n]
        root_child[n] = n if p == 0 else root_child[p]
    for s in range(tree.num_infosets):
        nodes = tree.infoset_nodes[tree.infoset_node_ptr[s] : tree.infoset_node_ptr[s + 1]]
        assert len({int(root_child[n]) for n in nodes}) == 1


def test_chance_nodes_have_num_seeds_uniform_outcomes():
    tree = solvers.materialize(_load(init=1, max_messages=3, num_seeds=3))
    chance = np.nonzero(tree.kind == CHANCE)[0]
    assert chance.size > 0
    for c in chance:
        kids = range(tree.first_child[c], tree.first_child[c] + tree.num_children[c])
        assert tree.num_children[c] == 3
        assert [int(tree.action[k]) for k in kids] == [0, 1, 2]
        np.testing.assert_allclose(tree.chance_prob[list(kids)], 1 / 3)
    dec = np.nonzero(tree.kind == DECISION)[0]
    assert all(tree.num_children[d] == 4 for d in dec)


def test_last_decision_can_change_the_payoff(scripted):
    """No dead final move: at some last-level decision, the tone changes the expected returns."""
    found = 0
    for sg in build_subgames(range(8), Config(max_messages=3), scripted, progress=False):
        tree = sg.tree
        for d in np.nonzero(tree.kind == DECISION)[0]:
            chances = range(tree.first_child[d], tree.first_child[d] + tree.num_children[d])
            leaves = [
                list(range(tree.first_child[c], tree.first_child[c] + tree.num_children[c]))
                for c in chances
            ]
            # The last decision: the message it steers is message max_messages.
            if tree.depth[d] != 2 * (sg.config.max_messages - 2):
                continue
            assert all(tree.kind[n] == TERMINAL for kids in leaves for n in kids)
            expected = [tuple(np.mean([tree.returns[n] for n in kids], axis=0)) for kids in leaves]
            found += len(set(expected)) > 1
    assert found > 0


def _small_game_string() -> str:
    # A master seed no other test uses: its requests are not yet in the process-wide cache.
    return "python_fruit_trading(init=1,max_messages=3,num_seeds=1,scenario_seed=9173)"


def test_no_cache_parameter_still_calls_the_model_once_per_request():
    """Without cache=..., OpenSpiel's Python CFR, MCCFR and MCTS on the game cost one
    backend call per distinct request (a process-wide in-memory cache)."""
    from open_spiel.python.algorithms import cfr, mcts, outcome_sampling_mccfr

    from gt_llm.cache import CachedModel

    game = pyspiel.load_game(_small_game_string())
    model = game.model
    assert isinstance(model, CachedModel) and model.path == ":memory:"
    before = (model.stats().misses, len(model))
    solver = cfr.CFRSolver(game)
    solver.evaluate_and_update_policy()
    after_one = model.stats()
    # Every backend call stored one new answer: no request went out twice.
    assert after_one.misses - before[0] == len(model) - before[1] > 0
    for _ in range(2):
        solver.evaluate_and_update_policy()
    mc = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(20):
        mc.iteration()
    bot = mcts.MCTSBot(
        game,
        2.0,
        10,
        mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
        random_state=np.random.RandomState(0),
    )
    bot.step(game.new_initial_state())
    after = model.stats()
    assert after.misses == after_one.misses  # the whole tree was already asked once
    assert after.hits > after_one.hits
    # A second load of the same game shares the cache: no new call at all.
    again = pyspiel.load_game(_small_game_string())
    cfr.CFRSolver(again).evaluate_and_update_policy()
    assert again.model.stats().misses == after.misses


def test_public_observation_hides_own_valuations():
    game = pyspiel.load_game("python_fruit_trading(init=1,max_messages=3)")
    state = game.new_initial_state()
    private = game.make_py_observer()
    public = game.make_py_observer(
        pyspiel.IIGObservationType(
            public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE
        )
    )
    own = state.dialogue.scenario.players[1].describe()
    assert own in private.string_from(state, 1)
    assert private.string_from(state, 1) == state.information_state_string(1)
    pub = public.string_from(state, 1)
    assert "Valuations" not in pub and "Endowment" not in pub and "tones" not in pub
    assert state.dialogue.dialogue_text() in pub
    assert public.string_from(state, 0) == pub  # the same for both players


def test_information_state_string_at_a_chance_node_is_the_players_only():
    game = pyspiel.load_game("python_fruit_trading(init=1,max_messages=3)")
    state = game.new_initial_state()
    state.apply_action(0)  # a tone: the seed chance node follows
    assert state.is_chance_node()
    with pytest.raises(pyspiel.SpielError, match="pass player=0 or 1"):
        state.information_state_string()
    assert state.information_state_string(1).startswith("You are")
    # As in OpenSpiel's C++ games (kuhn_poker fails the same way).
    kuhn = pyspiel.load_game("kuhn_poker").new_initial_state()
    with pytest.raises(pyspiel.SpielError):
        kuhn.information_state_string()


def test_utility_bounds_hold_for_every_payoff():
    """Exact payoffs of every feasible trade of many scenarios are within the bounds,
    and an LLM payoff outside them is clipped."""
    import dataclasses
    import itertools

    from games.fruit_trading.dialogue import DialogueState, PayoffRecord
    from games.fruit_trading.rules import PAYOFF_BOUND, Trade

    game = pyspiel.load_game("python_fruit_trading(init=1,max_messages=3)")
    lo, hi = game.min_utility(), game.max_utility()
    assert (lo, hi) == (-PAYOFF_BOUND, PAYOFF_BOUND)
    extreme = 0
    for init in range(40):
        sc = make_scenario(init)
        e0, e1 = sc.players[0].endowment, sc.players[1].endowment
        for g0 in itertools.product(*(range(n + 1) for n in e0)):
            for g1 in itertools.product(*(range(n + 1) for n in e1)):
                t = Trade(gives=(g0, g1))
                for p in range(2):
                    x = t.payoff(p, sc.players[p])
                    assert lo <= x <= hi
                    extreme = max(extreme, abs(x))
    assert extreme > PAYOFF_BOUND // 2  # the check saw large payoffs, not only zeros
    state = DialogueState(scenario=make_scenario(0), config=Config())
    wild = dataclasses.replace(
        state,
        agreement=True,
        payoff=PayoffRecord(message=2, llm=(1e6, -77.0), exact=None, trade_text="", feasible=None),
    )
    assert wild.returns() == (hi, lo)
    # Every terminal of a materialised subgame, too.
    tree = solvers.materialize(game)
    term = tree.returns[tree.terminals]
    assert np.all(term >= lo) and np.all(term <= hi)
