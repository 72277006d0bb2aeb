"""One conformance suite, run over every game in the registry.

As PettingZoo's test runner does for its environments: each registered game
(:mod:`games.engine.registry`) supplies small parameters and gets the same
checks — ``pyspiel.random_sim_test``; determinism (the same seed twice gives
the same trajectory, information states and returns); hidden private
information (no player's information state holds another player's private
information); perfect recall of the materialised tree; and the game's own
tree builder gives the tree ``solvers.materialize`` walks.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers every game)
import solvers
from games.engine.registry import GameSpec, registered_game_specs
from solvers import DECISION

SPECS = registered_game_specs()
CASES = [
    pytest.param(spec, gs, id=f"{spec.name}:{gs}")
    for spec in SPECS
    for gs in spec.conformance.game_strings
]
TREE_CASES = [
    pytest.param(spec, gs, id=f"{spec.name}:{gs}")
    for spec in SPECS
    for gs in spec.conformance.tree_game_strings
]
BUILDER_CASES = [
    pytest.param(spec, gs, id=f"{spec.name}:{gs}")
    for spec in SPECS
    if spec.conformance.build_tree is not None
    for gs in spec.conformance.tree_game_strings
]


def test_every_registered_game_is_covered():
    assert SPECS, "no game registered"
    for spec in SPECS:
        assert spec.short_name in pyspiel.registered_names(), spec.name
        for gs in spec.conformance.game_strings + spec.conformance.tree_game_strings:
            assert pyspiel.load_game(gs).get_type().short_name == spec.short_name, gs


@pytest.mark.parametrize("spec, game_string", CASES)
def test_random_sim_test(spec: GameSpec, game_string: str):
    pyspiel.random_sim_test(
        pyspiel.load_game(game_string),
        num_sims=spec.conformance.num_sims,
        serialize=False,
        verbose=False,
    )


def _trajectory(game: pyspiel.Game, seed: int) -> list[tuple]:
    """A random play-through: every action with every player's information state."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    out = []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            action = int(rng.choice(outcomes, p=probs))
        else:
            action = int(rng.choice(state.legal_actions()))
        infos = tuple(
            state.information_state_string(p) if not state.is_chance_node() else ""
            for p in range(game.num_players())
        )
        out.append((state.current_player(), action, infos))
        state.apply_action(action)
    out.append(("returns", tuple(state.returns())))
    return out


@pytest.mark.parametrize("spec, game_string", CASES)
def test_determinism_same_seed_same_trajectory(spec: GameSpec, game_string: str):
    for seed in range(spec.conformance.num_sims):
        # Two game objects: nothing is shared between them but the (cached) model.
        first = _trajectory(pyspiel.load_game(game_string), seed)
        second = _trajectory(pyspiel.load_game(game_string), seed)
        assert first == second
        assert len(first) >= 2


@pytest.mark.parametrize("spec, game_string", CASES)
def test_private_information_stays_hidden(spec: GameSpec, game_string: str):
    private_info = spec.conformance.private_info
    if private_info is None:
        pytest.fail(f"{spec.name}: ConformanceParams.private_info is required to check this")
    game = pyspiel.load_game(game_string)
    n = game.num_players()
    checked = 0
    for seed in range(spec.conformance.num_sims):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                secrets = [set(private_info(state, p)) for p in range(n)]
                for q in range(n):
                    info = state.information_state_string(q)
                    for p in range(n):
                        # A secret q holds as well (the same valuation, say) is not leaked.
                        for secret in secrets[p] - secrets[q] if p != q else ():
                            assert secret not in info, (p, q, secret)
                            checked += 1
                for p in range(n):
                    for secret in secrets[p]:
                        assert secret in state.information_state_string(p), (p, secret)
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
    assert checked > 0, "no private information to check: give other game strings"


def _own_history(tree: solvers.GameTree, node: int, player: int) -> tuple:
    """The (infoset key, action) sequence of ``player`` on the path to ``node``."""
    hist = []
    n = node
    while tree.parent[n] >= 0:
        p = int(tree.parent[n])
        if tree.kind[p] == DECISION and tree.player[p] == player:
            hist.append((tree.infoset_keys[tree.infoset[p]], int(tree.action[n])))
        n = p
    return tuple(reversed(hist))


@pytest.mark.parametrize("spec, game_string", TREE_CASES)
def test_perfect_recall(spec: GameSpec, game_string: str):
    tree = solvers.materialize(pyspiel.load_game(game_string))
    assert tree.num_infosets > 1
    for s in range(tree.num_infosets):
        nodes = tree.infoset_nodes[tree.infoset_node_ptr[s] : tree.infoset_node_ptr[s + 1]]
        player = int(tree.infoset_player[s])
        assert all(int(tree.player[n]) == player for n in nodes)
        histories = {_own_history(tree, int(n), player) for n in nodes}
        assert len(histories) == 1, tree.infoset_keys[s][:200]


@pytest.mark.parametrize("spec, game_string", BUILDER_CASES)
def test_builder_tree_equals_materialized_tree(spec: GameSpec, game_string: str):
    game = pyspiel.load_game(game_string)
    built = spec.conformance.build_tree(game)
    walked = solvers.materialize(game)
    assert built.num_nodes == walked.num_nodes
    assert built.num_terminals == walked.num_terminals
    np.testing.assert_array_equal(
        np.bincount(built.kind, minlength=3), np.bincount(walked.kind, minlength=3)
    )
    assert set(built.infoset_keys) == set(walked.infoset_keys)
    assert sorted(map(tuple, built.returns[built.terminals])) == sorted(
        map(tuple, walked.returns[walked.terminals])
    )
    nc_b = solvers.nash_conv(built, solvers.uniform_policy(built)).nash_conv
    nc_w = solvers.nash_conv(walked, solvers.uniform_policy(walked)).nash_conv
    assert nc_b == pytest.approx(nc_w, abs=1e-9)
    cfr_b = solvers.CFRSolver(built).run(50).average_policy()
    cfr_w = solvers.CFRSolver(walked).run(50).average_policy()
    assert solvers.nash_conv(built, cfr_b).nash_conv == pytest.approx(
        solvers.nash_conv(walked, cfr_w).nash_conv, abs=1e-9
    )
    # The same policy per information-state string.
    pb = dict(zip(built.infoset_keys, cfr_b.probs, strict=True))
    pw = dict(zip(walked.infoset_keys, cfr_w.probs, strict=True))
    for k in pb:
        np.testing.assert_allclose(pb[k], pw[k], atol=1e-9)
