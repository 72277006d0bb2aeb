"""The benchmark's memory model counts what the solver's passes touch.

``benchmarks/_solver_cases.streamed_bytes`` is the denominator of the
bandwidth ratio that ``benchmarks/solvers.py`` reports: a count that is too
large flatters the solver. Here every pass of a ``cfr_curves`` iteration is
replayed in plain Python over a small tree, recording each (array, index)
the kernel reads or writes, and the distinct elements' bytes must equal the
model's count exactly.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import solvers
from solvers import _kernels
from solvers.synthetic import fruit_shaped_tree, layered_tree

CHANCE, TERMINAL, DECISION = _kernels.CHANCE, _kernels.TERMINAL, _kernels.DECISION


def _cases():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "_solver_cases.py"
    spec = importlib.util.spec_from_file_location("_solver_cases_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Bytes per element of each array, as curves_run allocates them (int32 sequence ids).
SIZE = {
    "kind": 1,
    "player": 4,
    "parent": 4,
    "child_rank": 4,
    "chance_prob": 8,
    "infoset": 4,
    "first_child": 4,
    "num_children": 4,
    "own": 8,
    "cf": 8,
    "val": 8,
    "chance_reach": 8,
    "seq": 4,
    "reach": 8,
}


def _replayed_bytes(tree) -> int:
    """Distinct bytes per pass, from a plain-Python replay of the kernels' loops."""
    kind, player, parent = tree.kind, tree.player, tree.parent
    child_rank, first_child, num_children = tree.child_rank, tree.first_child, tree.num_children
    p, n = tree.num_players, tree.num_nodes
    m = _kernels.internal_end(kind, parent)
    ends = np.empty(p, dtype=np.int64)
    _kernels.reach_ends(tree.kernel_arrays, p, ends)
    passes = []
    for pl in range(p):
        forward = {("own", 0), ("cf", 0)}
        for h in range(1, int(ends[pl])):
            q = parent[h]
            forward |= {("parent", h), ("kind", q), ("own", h), ("cf", h)}
            if kind[q] == CHANCE:
                forward.add(("chance_prob", h))
            else:
                forward |= {("infoset", q), ("child_rank", h), ("player", q)}
        backward = set()
        for h in range(m - 1, -1, -1):
            backward.add(("kind", h))
            if kind[h] == TERMINAL:
                continue
            backward |= {("first_child", h), ("num_children", h), ("val", h)}
            kids = range(first_child[h], first_child[h] + num_children[h])
            backward |= {("val", z) for z in kids}
            if kind[h] == CHANCE:
                backward |= {("chance_prob", z) for z in kids}
            else:
                backward |= {("infoset", h), ("player", h)}
                if player[h] == pl:
                    backward |= {("own", h), ("cf", h)}
        passes += [forward, backward]
    metrics = set()
    for h in range(m):
        metrics.add(("kind", h))
        if kind[h] == TERMINAL:
            continue
        metrics |= {("first_child", h), ("num_children", h)}
        metrics.add(("chance_reach", h))
        metrics |= {(name, (h, c)) for name in ("seq", "reach") for c in range(p)}
        if kind[h] == DECISION:
            metrics |= {("infoset", h), ("player", h)}
        for z in range(first_child[h], first_child[h] + num_children[h]):
            metrics.add(("kind", z))
            if kind[h] == CHANCE:
                metrics.add(("chance_prob", z))
            if kind[z] == TERMINAL:
                metrics |= {("val", (c, z)) for c in range(p)}  # the returns
            else:
                metrics |= {("reach", (z, c)) for c in range(p)}
    passes.append(metrics)
    assert child_rank.shape[0] == n  # every node has its rank (read at decision children)
    return sum(SIZE[name] for touched in passes for name, _ in touched)


@pytest.mark.parametrize(
    "build",
    [
        lambda: fruit_shaped_tree(1),
        lambda: layered_tree(
            np.random.default_rng(0), players=(0, 1, 0), num_actions=3, num_outcomes=2
        ),
        lambda: layered_tree(
            np.random.default_rng(1), players=(0, 1, 0, 1), num_actions=2, num_outcomes=3
        ),
        lambda: layered_tree(
            np.random.default_rng(2), players=(0, 1, 2, 0), num_actions=2, num_outcomes=2
        ),
    ],
    ids=["fruit", "layered-010", "layered-0101", "layered-3p"],
)
def test_streamed_bytes_equal_a_replay_of_the_passes(build):
    tree = build().collapsed
    model = _cases().streamed_bytes(tree) * tree.num_nodes
    assert model == pytest.approx(_replayed_bytes(tree), rel=0, abs=1e-6)


def test_streamed_bytes_do_not_bill_skipped_nodes():
    # A tree whose last decision level is player 0's: player 1's forward pass stops early,
    # so the model must be below one that bills every pass for the whole interior.
    tree = layered_tree(np.random.default_rng(0), players=(0, 1, 0), num_actions=3, num_outcomes=2)
    walked = tree.collapsed
    ends = np.empty(2, dtype=np.int64)
    _kernels.reach_ends(walked.kernel_arrays, 2, ends)
    assert ends[1] < _kernels.internal_end(walked.kind, walked.parent)
    model = _cases().streamed_bytes(walked) * walked.num_nodes
    assert model == pytest.approx(_replayed_bytes(walked), rel=0, abs=1e-6)
    solvers.cfr_curves([tree], [solvers.uniform_policy(tree)], 2)  # the modelled run works
