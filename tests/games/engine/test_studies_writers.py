"""The experiment machinery games share: ``solvers.studies`` and ``solvers.writers``.

(Here with the game tests because the experiments of the games are their users;
the fruit-trading regression test checks them end to end.)
"""

from __future__ import annotations

import json

import numpy as np
import pyspiel
import pytest

import solvers
from solvers import studies, writers


def test_first_ess_iteration_and_per_tree_form():
    its = np.array([1, 2, 5, 10])
    assert studies.first_ess_iteration(its, [0, 0.1, 0.3, 0.4], [0.5, 0.2, 0.2, 0.1]) == 5
    assert studies.first_ess_iteration(its, [0, 0, 0, 0], [0, 0, 0, 0]) is None


def test_levels_and_mapped_policy_on_kuhn():
    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    levels = studies.decision_levels(tree)
    assert levels[0] == 0
    dec = tree.infoset >= 0
    # Kuhn poker: at most three decisions on a path (check, bet, call/fold).
    assert set(levels[dec].tolist()) == {0, 1, 2}
    pol = solvers.uniform_policy(tree)
    dists = studies.level_distributions(tree, pol)
    for d in dists.values():
        np.testing.assert_allclose(d, [0.5, 0.5])
    mapped = studies.mapped_policy(tree, {0: np.array([1.0, 0.0])}, default_action=1)
    solvers.check_policy(tree, mapped)
    first = tree.infoset[0] if tree.infoset[0] >= 0 else tree.infoset[np.argmax(dec)]
    assert mapped.probs[first].tolist() == [1.0, 0.0]
    later = [
        s
        for s in range(tree.num_infosets)
        if levels[tree.infoset_nodes[tree.infoset_node_ptr[s]]] > 0
    ]
    assert all(mapped.probs[s].tolist() == [0.0, 1.0] for s in later)


def test_generalisation_of_identical_trees_transfers_exactly():
    tree = solvers.materialize(pyspiel.load_game("kuhn_poker"))
    pol = solvers.CFRSolver(tree).run(20).average_policy()

    def base(t):
        return solvers.pure_policy(t, lambda key, legal: legal[0])

    res = studies.generalisation_study([tree, tree], [pol, pol], base, default_action=0)
    assert res.matrix.shape == (2, 2)
    own = solvers.cfr_gain(tree, pol, base(tree)).cfr_gain
    np.testing.assert_allclose(res.own_gain, [own, own])
    d = res.to_dict()
    assert d["summary"]["own_gain_mean"] == pytest.approx(own)
    with pytest.raises(ValueError, match="generalisation_study: give one policy per tree"):
        studies.generalisation_study([tree], [], base, default_action=0)


def test_writers_are_atomic_and_strict(tmp_path):
    p = writers.write_csv(tmp_path / "t.csv", [{"a": 1, "b": float("nan")}, {"a": 2, "b": 0.5}])
    assert p.read_bytes() == b"a,b\r\n1,\r\n2,0.5\r\n"
    writers.write_json(tmp_path / "s.json", {"x": [np.float64("inf"), np.int64(3)]})
    assert json.loads((tmp_path / "s.json").read_text()) == {"x": [None, 3]}
    assert sorted(f.name for f in tmp_path.iterdir()) == ["s.json", "t.csv"]  # no temp files
    assert writers.write_csv(tmp_path / "e.csv", []).read_text() == ""
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="run_x: output folder .* is not writable"):
        writers.check_writable(tmp_path / "file" / "sub", caller="run_x")
