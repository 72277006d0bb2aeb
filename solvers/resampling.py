"""The seed bootstrap's draw: a tree whose sampled chance outcomes are drawn again.

A chat game's LLM seeds (and roots drawn from many) are chance nodes whose
outcomes are equally likely: samples. Efron's bootstrap applied at every such
node redraws its outcomes with replacement, as multinomial counts that become
the children's probabilities; chance nodes with unequal probabilities are a
model's stated probabilities, not samples, and keep them. Used by the seed
bootstrap (:func:`solvers.noise.seed_bootstrap`) and the held-out interval
(:func:`solvers.held_out.held_out_gain`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from solvers.tree import CHANCE, GameTree

__all__ = ["bootstrap_tree", "sample_nodes"]


def sample_nodes(tree: GameTree) -> np.ndarray:
    """Chance nodes whose outcomes are equally likely (samples), with more than one child."""
    chance = np.nonzero((tree.kind == CHANCE) & (tree.num_children > 1))[0]
    keep = []
    for c in chance:
        a = tree.first_child[c]
        p = tree.chance_prob[a : a + tree.num_children[c]]
        if np.allclose(p, p[0], rtol=0.0, atol=1e-12):
            keep.append(c)
    return np.asarray(keep, dtype=np.int64)


def bootstrap_tree(
    tree: GameTree, rng: np.random.Generator, nodes: np.ndarray | None = None
) -> GameTree:
    """``tree`` with the outcomes of its sample chance nodes drawn again with replacement.

    Each chance node with ``k`` equally likely outcomes gets multinomial(k, 1/k)
    counts, divided by ``k``, as its children's probabilities (an outcome drawn
    twice weighs 2/k, one not drawn 0). Other nodes keep theirs.

    Args:
      tree: The tree.
      rng: The random stream.
      nodes: The sample chance nodes (default: found again; pass them when
        resampling one tree many times).
    """
    nodes = sample_nodes(tree) if nodes is None else nodes
    probs = tree.chance_prob.copy()
    for k in np.unique(tree.num_children[nodes]):
        group = nodes[tree.num_children[nodes] == k]
        counts = rng.multinomial(int(k), np.full(int(k), 1.0 / k), size=group.size)
        idx = tree.first_child[group][:, None] + np.arange(int(k))[None, :]
        probs[idx] = counts / float(k)
    # Derived arrays (the collapsed tree the kernels walk) are cached per instance and
    # rebuilt for the copy: only the chance probabilities differ.
    return dataclasses.replace(tree, chance_prob=probs)
