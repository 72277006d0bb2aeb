"""A study's noise checks spread over threads give the numbers of one thread.

``build_and_solve`` checks its trees' noise (label null, seed bootstrap) on
several threads when the work is large enough, as the CFR solves run; every
tree's random streams come from its index, so neither the threads nor the
order (largest tree first) may change a number. Synthetic trees of the
fruit-trading shape stand in for a study's.
"""

from __future__ import annotations

import types

import numpy as np

import solvers
from games.engine import pipeline
from solvers.noise import NoiseSettings, StudyNoise
from solvers.policy import pure_policy
from solvers.synthetic import fruit_shaped_tree, layered_tree


def _first_action(tree: solvers.GameTree) -> solvers.TreePolicy:
    return pure_policy(tree, lambda _key, legal: legal[0])


def _noise(trees: list[solvers.GameTree], processes: int) -> StudyNoise:
    curves = solvers.cfr_curves(trees, _first_action, 20, processes=1)
    study = pipeline._noise(
        None,  # the game and model only build held-out trees, which are off here
        [types.SimpleNamespace(tree=t) for t in trees],
        curves,
        None,
        baseline=_first_action,
        iterations=20,
        cfr_variant="cfr",
        settings=NoiseSettings(permutations=29, bootstrap=6, seed=5),
        eval_seeds=0,
        stats=None,
        max_concurrency=None,
        processes=processes,
        progress=False,
        label="",
    )
    return study


def test_noise_checks_on_three_threads_equal_one_thread_tree_by_tree():
    # Trees of different sizes, so that largest-first reorders them; equally likely
    # chance outcomes (LLM seeds), so that the bootstrap has samples to redraw.
    small, big, bigger = (
        layered_tree(np.random.default_rng(seed), players=players, random_chance=False)
        for seed, players in ((9, (0, 1)), (1, (0, 1, 0)), (2, (0, 1, 0)))
    )
    trees = [small, big, small, bigger]
    one, three = _noise(trees, 1), _noise(trees, 3)
    assert three.to_dict() == one.to_dict()
    assert len(one.trees) == 4 and one.settings.bootstrap == 6
    for a, b in zip(one.trees, three.trees, strict=True):
        assert np.array_equal(a.null, b.null) and a.null.size == 29
    # In the study's order: the two copies of the small tree differ only by their
    # streams (their index), so their nulls and bootstrap intervals differ.
    assert not np.array_equal(one.trees[0].null, one.trees[2].null)
    assert None not in one.trees[0].cfr_gain_ci95
    assert one.trees[0].cfr_gain_ci95 != one.trees[2].cfr_gain_ci95


def test_the_threads_follow_processes_or_the_work():
    trees = [fruit_shaped_tree(i) for i in range(4)]
    settings = NoiseSettings(permutations=999, bootstrap=200)
    assert pipeline._noise_threads(trees, 1000, settings, 1) == 1
    assert pipeline._noise_threads(trees, 1000, settings, 3) == 3
    # Small work stays on the calling thread (as the CFR solves do).
    tiny = NoiseSettings(permutations=1, bootstrap=0)
    assert pipeline._noise_threads(trees[:1], 1, tiny, None) == 1
