"""Gambit .efg export: the pyspiel.load_efg_game and pygambit.read_efg round trips."""

import numpy as np
import pygambit  # a dev dependency (pyproject extras "dev")
import pyspiel
import pytest

import solvers
from solvers.efg import sanitize_label
from solvers.synthetic import fruit_shaped_tree


def round_trip(tree):
    text = solvers.to_efg(tree)
    game = pyspiel.load_efg_game(text)
    return game, solvers.materialize(game)


def assert_same_values(tree, back, seed=0):
    assert back.num_nodes == tree.num_nodes
    assert back.num_infosets == tree.num_infosets
    assert back.num_players == tree.num_players
    rng = np.random.default_rng(seed)
    for _ in range(2):
        probs = rng.random((tree.num_infosets, tree.max_actions))
        policy = solvers.normalize_policy(tree, probs)
        # Information sets and actions come back in the same order (preorder, legal order).
        back_policy = solvers.TreePolicy(policy.probs)
        np.testing.assert_allclose(
            solvers.expected_values(back, back_policy),
            solvers.expected_values(tree, policy),
            atol=1e-12,
        )
        np.testing.assert_allclose(
            solvers.nash_conv(back, back_policy).per_player,
            solvers.nash_conv(tree, policy).per_player,
            atol=1e-12,
        )


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"])
def test_round_trip_openspiel_games(name):
    game = pyspiel.load_game(name)
    tree = solvers.materialize(game)
    efg_game, back = round_trip(tree)
    assert_same_values(tree, back)
    uniform = solvers.uniform_policy(back)
    from open_spiel.python import policy as os_policy

    expected = pyspiel.nash_conv(
        efg_game,
        os_policy.python_policy_to_pyspiel_policy(
            solvers.to_tabular_policy(back, uniform, efg_game)
        ),
    )
    assert solvers.nash_conv(tree, solvers.uniform_policy(tree)).nash_conv == pytest.approx(
        expected, abs=1e-9
    )


def test_round_trip_fruit_shaped_and_cfr():
    tree = fruit_shaped_tree(3)
    _, back = round_trip(tree)
    assert_same_values(tree, back)
    a = solvers.CFRSolver(tree).run(20).average_policy()
    b = solvers.CFRSolver(back).run(20).average_policy()
    np.testing.assert_allclose(a.probs, b.probs, atol=1e-12)


def test_round_trip_with_conflicting_action_labels():
    # Action ids 3,5 then 4,5: plain labels would be misnumbered by OpenSpiel's parser.
    b = solvers.TreeBuilder(2)
    root = b.add_chance()
    x = b.add_decision(0, "x", [3, 5], parent=root, action=9, prob=0.3)
    y = b.add_decision(1, "y", [4, 5], parent=root, action=2, prob=0.7)
    b.add_terminal([1, -1], parent=x, action=3)
    b.add_terminal([2, -3], parent=x, action=5)
    b.add_terminal([-1, 4], parent=y, action=4)
    b.add_terminal([0.125, 1e-7], parent=y, action=5)
    tree = b.build()
    text = solvers.to_efg(tree)
    assert text.startswith("EFG 2 R")
    _, back = round_trip(tree)
    assert_same_values(tree, back)
    np.testing.assert_allclose(back.chance_prob[1:3], tree.chance_prob[1:3])


# --- Gambit (pygambit) round trips -------------------------------------------------------------


def read_gambit(tree):
    import io

    return pygambit.read_efg(io.StringIO(solvers.to_efg(tree)))


def gambit_to_policy(tree, game, profile):
    """Our TreePolicy from a Gambit behaviour profile, matched by player, label and action label."""
    isets = {
        (int(player_index), iset.label): iset
        for player_index, player in enumerate(game.players)
        for iset in player.infosets
    }
    probs = np.zeros((tree.num_infosets, tree.max_actions))
    for s, key in enumerate(tree.infoset_keys):
        iset = isets[(int(tree.infoset_player[s]), sanitize_label(key))]
        by_label = {action.label: float(profile[action]) for action in iset.actions}
        for j, a in enumerate(tree.legal_actions(s)):
            probs[s, j] = by_label[str(a)]
    return solvers.TreePolicy(probs)


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"])
def test_gambit_reads_openspiel_games(name):
    tree = solvers.materialize(pyspiel.load_game(name))
    game = read_gambit(tree)
    assert len(game.players) == tree.num_players
    assert sum(len(p.infosets) for p in game.players) == tree.num_infosets
    assert len(game.outcomes) == tree.num_terminals


def test_gambit_lcp_equilibrium_of_kuhn_is_ours_too():
    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    game = read_gambit(tree)
    result = pygambit.nash.lcp_solve(game, rational=True)
    assert result.equilibria
    profile = result.equilibria[0]
    assert float(profile.payoff(list(game.players)[0])) == pytest.approx(-1 / 18, abs=1e-12)
    policy = gambit_to_policy(tree, game, profile)
    assert solvers.nash_conv(tree, policy).nash_conv == pytest.approx(0.0, abs=1e-12)
    values = solvers.expected_values(tree, policy)
    assert values[0] == pytest.approx(-1 / 18, abs=1e-12)
    assert values[1] == pytest.approx(1 / 18, abs=1e-12)


def test_chance_probabilities_sum_to_exactly_one():
    from fractions import Fraction

    for probs in ([1 / 3, 1 / 3, 1 / 3], [0.1, 0.2, 0.7], [0.4000707853732506, 0.5999292146267494]):
        numbers = solvers.efg.chance_numbers(probs)
        assert sum(Fraction(x) for x in numbers) == 1
        for x, p in zip(numbers[:-1], probs[:-1], strict=True):
            assert float(Fraction(x)) == p  # the float is reproduced exactly
        assert float(Fraction(numbers[-1])) == pytest.approx(probs[-1], abs=1e-15)
    assert solvers.efg.chance_numbers([1 / 3, 1 / 3, 1 / 3]) == ["1/3", "1/3", "1/3"]
    with pytest.raises(ValueError, match="to_efg"):
        solvers.efg.chance_numbers([0.7, 0.7, 0.0])


def test_gambit_reads_fruit_shaped_tree_with_awkward_labels():
    # Keys with line breaks, runs of spaces, quotes, tabs and non-ASCII text, as LLM dialogues have.
    tree = fruit_shaped_tree(5)
    rename = {
        key: f'\n  {key}\nsaid: "let\'s trade"\t\t{i % 3} ✓ é  \n'
        for i, key in enumerate(tree.infoset_keys)
    }
    b = solvers.TreeBuilder(tree.num_players, game_name="fruit\nshaped ✓")
    ids = {}
    for h in range(tree.num_nodes):
        kw = {}
        if h:
            kw = {"parent": ids[int(tree.parent[h])], "action": int(tree.action[h])}
            if tree.kind[tree.parent[h]] == solvers.CHANCE:
                kw["prob"] = float(tree.chance_prob[h])
        if tree.kind[h] == solvers.TERMINAL:
            ids[h] = b.add_terminal(tree.returns[h], **kw)
        elif tree.kind[h] == solvers.CHANCE:
            ids[h] = b.add_chance(**kw)
        else:
            s = int(tree.infoset[h])
            ids[h] = b.add_decision(
                int(tree.player[h]), rename[tree.infoset_keys[s]], tree.legal_actions(s), **kw
            )
    awkward = b.build()
    game = read_gambit(awkward)
    labels = [iset.label for player in game.players for iset in player.infosets]
    assert len(labels) == awkward.num_infosets
    assert all(label == label.strip() and "  " not in label and label.isascii() for label in labels)
    # Gambit's own solver accepts it: a uniform profile has the values we compute.
    profile = game.mixed_behavior_profile()
    ours = solvers.expected_values(awkward, solvers.uniform_policy(awkward))
    for i, player in enumerate(game.players):
        assert float(profile.payoff(player)) == pytest.approx(ours[i], abs=1e-9)
    # And OpenSpiel still loads the same text with the same values.
    _, back = round_trip(awkward)
    assert_same_values(awkward, back)
