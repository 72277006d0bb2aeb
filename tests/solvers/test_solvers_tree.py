"""Tests of the tree modules: materialize (walk), TreeBuilder, GameTree.from_arrays (canonical)."""

import numpy as np
import pyspiel
import pytest

import solvers
from solvers.synthetic import fruit_shaped_tree, layered_tree


def coin_guess_tree() -> solvers.GameTree:
    b = solvers.TreeBuilder(num_players=2, game_name="coin_guess")
    root = b.add_chance()
    for coin in (0, 1):
        d = b.add_decision(0, "guess", [0, 1], parent=root, action=coin, prob=0.5)
        for guess in (0, 1):
            win = 1.0 if guess == coin else -1.0
            b.add_terminal([win, -win], parent=d, action=guess)
    return b.build()


def test_materialize_kuhn_layout():
    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    assert tree.num_players == 2
    assert tree.num_nodes == 58
    assert tree.num_infosets == 12
    assert tree.num_terminals == 30
    assert tree.kind[0] == solvers.CHANCE
    # Breadth-first: parents precede children, children are contiguous.
    assert (tree.parent[1:] < np.arange(1, tree.num_nodes)).all()
    assert (np.diff(tree.depth) >= 0).all()
    for h in range(tree.num_nodes):
        kids = np.flatnonzero(tree.parent == h)
        if kids.size:
            assert kids[0] == tree.first_child[h] and kids.size == tree.num_children[h]
            assert (np.diff(kids) == 1).all()
    assert set(tree.infoset_keys) >= {"0", "1p", "2pb"}
    assert tree.legal_actions(tree.key_to_infoset["0"]) == (0, 1)
    np.testing.assert_allclose(tree.chance_prob[1:4], 1 / 3)
    with pytest.raises(ValueError):
        tree.kind[0] = 2  # read-only


def test_materialize_python_game_matches_cpp():
    import open_spiel.python.games  # noqa: F401  (registers python_kuhn_poker)

    py_tree = solvers.materialize(pyspiel.load_game("python_kuhn_poker"))
    cpp_tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    assert py_tree.num_nodes == cpp_tree.num_nodes
    assert py_tree.num_infosets == cpp_tree.num_infosets
    u_py = solvers.nash_conv(py_tree, solvers.uniform_policy(py_tree)).nash_conv
    assert u_py == pytest.approx(11 / 12, abs=1e-12)


def test_builder_example_and_values():
    tree = coin_guess_tree()
    assert tree.num_nodes == 7 and tree.num_infosets == 1
    assert tree.infoset_keys == ("guess",)
    np.testing.assert_allclose(
        solvers.expected_values(tree, solvers.uniform_policy(tree)), [0.0, 0.0]
    )
    # Unseen coin: no guess beats the uniform one in expectation.
    assert solvers.nash_conv(tree, solvers.uniform_policy(tree)).nash_conv == pytest.approx(
        0.0, abs=1e-15
    )


def test_from_arrays_any_node_order_gives_same_tree():
    b = solvers.TreeBuilder(2)
    root = b.add_decision(0, "r", [5, 7])
    c = b.add_chance(parent=root, action=7)
    b.add_terminal([1, 2], parent=root, action=5)
    d = b.add_decision(1, "x", [1, 0], parent=c, action=3, prob=0.25)
    b.add_terminal([0, 1], parent=c, action=4, prob=0.75)
    b.add_terminal([4, 4], parent=d, action=0)
    b.add_terminal([3, 3], parent=d, action=1)
    tree = b.build()
    # Children of decision nodes are ordered as the legal actions.
    assert list(tree.action[tree.first_child[0] : tree.first_child[0] + 2]) == [5, 7]
    x = tree.key_to_infoset["x"]
    dnode = tree.infoset_nodes[tree.infoset_node_ptr[x]]
    fc = tree.first_child[dnode]
    assert list(tree.action[fc : fc + 2]) == [1, 0]
    np.testing.assert_allclose(tree.returns[fc], [3, 3])
    np.testing.assert_allclose(
        solvers.expected_values(tree, solvers.uniform_policy(tree)),
        [0.5 * 1 + 0.5 * (0.25 * 3.5), 0.5 * 2 + 0.5 * (0.25 * 3.5 + 0.75)],
    )


def test_layered_tree_shape():
    tree = fruit_shaped_tree(0)
    assert tree.num_terminals == 512
    assert tree.num_nodes == 877
    assert tree.num_infosets == 1 + 2 + 16
    big = layered_tree(np.random.default_rng(1), players=(0, 1, 2), num_actions=2, num_outcomes=3)
    assert big.num_players == 3 and big.num_terminals == (2 * 3) ** 3


def test_simultaneous_game_rejected():
    with pytest.raises(ValueError, match="convert_to_turn_based"):
        solvers.materialize(pyspiel.load_game("matrix_rps"))
    tree = solvers.materialize(pyspiel.convert_to_turn_based(pyspiel.load_game("matrix_rps")))
    assert tree.num_terminals == 9


def test_sampled_chance_rejected():
    with pytest.raises(ValueError, match="SAMPLED_STOCHASTIC"):
        solvers.materialize(pyspiel.load_game("bridge_uncontested_bidding"))


def test_max_nodes_limit():
    with pytest.raises(ValueError, match="max_nodes=100"):
        solvers.materialize(pyspiel.load_game("leduc_poker"), max_nodes=100)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda a: a.update(parent=[-1, -1, 0]), "roots"),
        (lambda a: a.update(action=[-1, 9, 1]), "not a legal action"),
        (lambda a: a.update(action=[-1, 0, 0]), "two children for the same action"),
        (lambda a: a.update(infoset_actions=[[0, 1, 2]]), "legal actions"),
        (lambda a: a.update(parent=[2, 0, 1]), "roots|reachable|cycle"),
        (lambda a: a.update(infoset_keys=["a", "a"], infoset_actions=[[0, 1], [0, 1]]), "unique"),
    ],
)
def test_from_arrays_bad_input(mutate, match):
    args = dict(
        num_players=1,
        parent=[-1, 0, 0],
        kind=[solvers.DECISION, solvers.TERMINAL, solvers.TERMINAL],
        action=[-1, 0, 1],
        player=[0, -4, -4],
        chance_prob=[1.0, 1.0, 1.0],
        infoset=[0, -1, -1],
        returns=[[0.0], [1.0], [2.0]],
        infoset_keys=["a"],
        infoset_actions=[[0, 1]],
    )
    solvers.GameTree.from_arrays(**args)  # the unmodified input is valid
    mutate(args)
    with pytest.raises(ValueError, match=match):
        solvers.GameTree.from_arrays(**args)


def test_builder_bad_input():
    b = solvers.TreeBuilder(2)
    root = b.add_chance()
    with pytest.raises(ValueError, match="prob="):
        b.add_terminal([0, 0], parent=root, action=0)
    b.add_decision(0, "k", [0, 1], parent=root, action=0, prob=0.5)
    with pytest.raises(ValueError, match="same player and legal actions"):
        b.add_decision(0, "k", [0, 2], parent=root, action=1, prob=0.5)
    with pytest.raises(ValueError, match="already has a root"):
        b.add_chance()
    with pytest.raises(ValueError, match="one per player"):
        b.add_terminal([1.0], parent=root, action=3, prob=0.5)
    b2 = solvers.TreeBuilder(1)
    r = b2.add_chance()
    b2.add_terminal([1.0], parent=r, action=0, prob=0.5)
    with pytest.raises(ValueError, match="sum to"):
        b2.build()


def test_imperfect_recall_rejected():
    # Player 0 moves twice and forgets the first move: both second-move nodes share a key.
    b = solvers.TreeBuilder(1)
    root = b.add_decision(0, "first", [0, 1])
    for a in (0, 1):
        d = b.add_decision(0, "second", [0, 1], parent=root, action=a)
        for c in (0, 1):
            b.add_terminal([float(a + c)], parent=d, action=c)
    with pytest.raises(ValueError, match="perfect recall"):
        b.build()


def test_split_modules_keep_every_name_importable():
    from solvers import GameTree, TreeBuilder, builder, canonical, game_tree, materialize, walk
    from solvers.tree import (
        CHANCE,
        CHANCE_PLAYER,
        DECISION,
        DEFAULT_MAX_NODES,
        TERMINAL,
        TERMINAL_PLAYER,
    )
    from solvers.tree import GameTree as TreeGameTree
    from solvers.tree import TreeBuilder as TreeTreeBuilder
    from solvers.tree import materialize as tree_materialize

    assert GameTree is TreeGameTree is game_tree.GameTree
    assert TreeBuilder is TreeTreeBuilder is builder.TreeBuilder
    assert materialize is tree_materialize is walk.materialize
    assert (TERMINAL, CHANCE, DECISION, CHANCE_PLAYER, TERMINAL_PLAYER) == (0, 1, 2, -1, -4)
    assert DEFAULT_MAX_NODES == solvers.DEFAULT_MAX_NODES
    assert callable(canonical.canonical_fields) and callable(game_tree.canonical_tree)


def test_builder_rejects_an_illegal_action_when_it_is_added():
    b = solvers.TreeBuilder(2)
    root = b.add_decision(0, "r", [3, 5])
    with pytest.raises(ValueError, match=r"action=4 is not a legal action of parent 0"):
        b.add_terminal([0, 0], parent=root, action=4)
    with pytest.raises(ValueError, match="drop prob="):
        b.add_terminal([0, 0], parent=root, action=3, prob=0.5)


def test_builder_can_build_twice_and_keeps_growing():
    b = solvers.TreeBuilder(1)
    root = b.add_chance()
    b.add_terminal([1.0], parent=root, action=0, prob=1.0)
    first = b.build()
    assert first.num_nodes == 2
    with pytest.raises(ValueError, match="sum to"):
        b.add_terminal([3.0], parent=root, action=1, prob=0.5)
        b.build()
    second = solvers.TreeBuilder(1)
    r = second.add_chance()
    second.add_terminal([1.0], parent=r, action=0, prob=0.5)
    second.add_terminal([3.0], parent=r, action=1, prob=0.5)
    assert solvers.expected_values(second.build(), np.zeros((0, 1)))[0] == pytest.approx(2.0)
    assert first.returns[1, 0] == 1.0  # the first tree owns its arrays


def test_materialize_equals_from_arrays_in_another_order_on_leduc():
    tree = solvers.materialize(pyspiel.load_game("leduc_poker"))
    n = tree.num_nodes
    # Input order does not matter except among chance siblings (kept in input order):
    # give the nodes deepest level first, siblings in their order.
    perm = np.lexsort((np.arange(n), -tree.depth))
    position = np.empty(n, dtype=np.int64)
    position[perm] = np.arange(n)
    parent = np.where(tree.parent >= 0, position[np.maximum(tree.parent, 0)], -1)[perm]
    again = solvers.GameTree.from_arrays(
        num_players=tree.num_players,
        parent=parent,
        kind=tree.kind[perm],
        action=tree.action[perm],
        player=tree.player[perm],
        chance_prob=tree.chance_prob[perm],
        infoset=tree.infoset[perm],
        returns=tree.returns[perm],
        infoset_keys=tree.infoset_keys,
        infoset_actions=[tree.legal_actions(s) for s in range(tree.num_infosets)],
    )
    assert again.num_nodes == n
    for field in (
        "kind",
        "player",
        "parent",
        "action",
        "chance_prob",
        "infoset",
        "depth",
        "child_rank",
        "first_child",
        "br_order",
        "returns",
        "infoset_nodes",
    ):
        np.testing.assert_array_equal(getattr(again, field), getattr(tree, field), err_msg=field)
    assert again.infoset_keys == tree.infoset_keys


def test_game_tree_pickles_without_cached_views():
    import pickle

    tree = fruit_shaped_tree(1)
    _ = tree.kernel_arrays, tree.key_to_infoset
    back = pickle.loads(pickle.dumps(tree))
    assert "kernel_arrays" not in back.__dict__
    np.testing.assert_array_equal(back.br_order, tree.br_order)
    assert back.key_to_infoset == tree.key_to_infoset


def test_materialize_peak_memory_is_near_the_stored_size():
    # Loose bound (measured 1.7x on Leduc; the walk peaked at 6.5x before it reused the
    # builder's typed buffers). benchmarks/solvers.py reports the ratio on larger games.
    import tracemalloc

    solvers.materialize(pyspiel.load_game("kuhn_poker"))  # one-off imports and caches
    game = pyspiel.load_game("leduc_poker")
    tracemalloc.start()
    try:
        tree = solvers.materialize(game)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2.5 * tree.nbytes
