"""The noise checks on fruit-trading trees of the scripted stand-in: calibration, power, reports."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import gt_llm
import solvers
from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from games.fruit_trading.rules import TONES
from games.fruit_trading.studies import any_baseline
from gt_llm.chat import ChatModel
from solvers.noise import (
    NoiseSettings,
    label_permutation_test,
    random_relabelling,
    relabel_actions,
    study_noise,
    tree_held_out,
    tree_noise,
)
from solvers.synthetic import planted_action_cost

ANY = TONES.index("any")


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    """Four stand-in subgames (3 messages, 2 seeds), with held-out trees and every check on."""
    out = tmp_path_factory.mktemp("fruit_noise")
    return out, run_experiment(_settings(out))


def _settings(out) -> ExperimentSettings:
    return ExperimentSettings(
        inits=4,
        iterations=60,
        out=str(out),
        progress=False,
        max_messages=3,
        variants=("tone",),
        generalisation=False,
        whole_game=False,
        eval_seeds=2,
        permutations=99,
        bootstrap=10,
    )


def test_label_null_keeps_its_level_on_relabelled_stand_in_trees(stand_in):
    # Null trees: each stand-in tree with its tones relabelled at random at every decision.
    _, result = stand_in
    trees = [sg.tree for sg in result.subgames["tone"]]
    rng = np.random.default_rng(12)
    n, alpha, rejections = 120, 0.05, 0
    for k in range(n):
        tree = trees[k % len(trees)]
        null_tree = relabel_actions(tree, random_relabelling(tree, rng))
        pol = solvers.CFRSolver(null_tree).run(60).average_policy()
        _, _, p = label_permutation_test(
            null_tree, pol, any_baseline(null_tree), permutations=99, rng=rng
        )
        rejections += p <= alpha
    se = (alpha * (1 - alpha) / n) ** 0.5
    assert abs(rejections / n - alpha) <= 2 * se


def test_label_null_finds_a_tone_effect_planted_in_stand_in_trees(stand_in):
    # "any" made costly for whoever chooses it. One small tree has few information sets,
    # so its smallest attainable p is about (1/4)^(decisive sets); the study's mean finds it.
    _, result = stand_in
    settings = NoiseSettings(permutations=199, bootstrap=0, seed=3)
    trees = []
    for i, sg in enumerate(result.subgames["tone"]):
        tree = planted_action_cost(sg.tree, ANY, 20.0)
        pol = solvers.CFRSolver(tree).run(60).average_policy()
        trees.append(tree_noise(tree, pol, any_baseline, iterations=60, settings=settings, index=i))
    study = study_noise(trees, settings)
    assert study.mean_p_value is not None and study.mean_p_value <= 0.01
    assert all(t.p_value is not None and t.p_value <= 0.2 for t in trees)
    unplanted = [
        tree_noise(
            sg.tree,
            solvers.CFRSolver(sg.tree).run(60).average_policy(),
            any_baseline,
            iterations=60,
            settings=settings,
            index=i,
        )
        for i, sg in enumerate(result.subgames["tone"])
    ]
    # The planted cost moves every tree's p-value down.
    assert all(a.p_value <= b.p_value for a, b in zip(trees, unplanted, strict=True))


def test_summary_tables_and_lines_carry_the_noise_checks(stand_in):
    out, result = stand_in
    summary = json.loads((out / "summary.json").read_text())
    noise = summary["variants"]["tone"]["noise"]
    assert noise["permutations"] == 99 and noise["bootstrap"] == 10
    assert noise["cfr_gain"]["n"] == 4 and len(noise["cfr_gain"]["ci95"]) == 2
    assert noise["above_noise"]["of"] == 4
    assert 0 < noise["mean_cfr_gain_p_value"] <= 1
    for t in noise["per_tree"]:
        assert 1 / 100 <= t["p_value"] <= 1
        assert t["null_cfr_gain"]["permutations"] == 99
        held = t["held_out"]
        assert held is not None and held["unmatched_infosets"] >= 0
        lo, hi = t["cfr_gain_ci95"]
        assert lo is not None and lo <= hi
    assert noise["held_out_cfr_gain"]["n"] == 4
    final = summary["variants"]["tone"]["final"]
    assert final["n"] == 4 and final["cfr_gain_ci95"][0] <= final["cfr_gain_mean"]
    tables = (out / "tables.md").read_text()
    assert "**Above noise?**" in tables and "±" not in tables
    assert result.summary["timings"]["noise_tone_s"] > 0


def test_held_out_trees_use_other_seeds_than_the_solved_ones(stand_in):
    # The held-out calls are distinct requests: the run made more calls than its trees alone.
    _, result = stand_in
    calls = result.summary["llm_calls"]
    assert calls["misses"] > 0
    solved_nodes = sum(t["nodes"] for t in result.summary["variants"]["tone"]["trees"])
    assert solved_nodes > 0


class _Served(ChatModel):
    """The stand-in presented as a remote model: the held-out trees are built in a thread."""

    remote = True

    def __init__(self, inner: ChatModel) -> None:
        self.inner, self.backend, self.model = inner, inner.backend, inner.model
        self.max_concurrency = 8

    def complete(self, request):
        return self.inner.complete(request)


def test_held_out_trees_built_beside_the_noise_checks_give_the_same_numbers(stand_in, tmp_path):
    _, result = stand_in
    served = run_experiment(_settings(tmp_path), model=_Served(gt_llm.load_model("scripted")))
    one_go, beside = (r.summary["variants"]["tone"] for r in (result, served))
    assert beside["noise"] == one_go["noise"]
    assert beside["trees"] == one_go["trees"]
    assert one_go["noise"]["held_out_cfr_gain"]["n"] == 4


def test_tree_held_out_is_tree_noise_held_out_part(stand_in):
    _, result = stand_in
    sg = result.subgames["tone"][0]
    settings = NoiseSettings(permutations=9, bootstrap=5, seed=3)
    policy = any_baseline(sg.tree)
    eval_tree = result.subgames["tone"][1].tree
    whole = tree_noise(
        sg.tree,
        policy,
        any_baseline,
        iterations=20,
        settings=settings,
        index=2,
        eval_tree=eval_tree,
    )
    part = tree_noise(sg.tree, policy, any_baseline, iterations=20, settings=settings, index=2)
    held = tree_held_out(sg.tree, policy, eval_tree, any_baseline, settings=settings, index=2)
    joined = dataclasses.replace(part, held_out=held)
    assert joined.to_dict() == whole.to_dict() and whole.held_out is not None
    assert np.array_equal(joined.null, whole.null)
