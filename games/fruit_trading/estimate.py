"""The work and memory of a fruit-trading experiment, from its settings alone.

Checked before the first model call (``gt-llm fruit-trading run``), so that a
run that cannot fit is refused in one line rather than after paid calls.

* **Nodes.** A subgame of ``M`` messages has ``M - 1`` tone decisions (4
  tones), each followed by the LLM-seed chance node (``S`` seeds); without
  early agreements it has ``sum_{k<M} (4S)^k`` dialogue states and
  ``4 * sum_{k<M-1} (4S)^k`` chance nodes. This is the exact maximum (checked
  against built trees in the tests); agreements make trees smaller (the
  paper's defaults: at most 877 nodes, 665 on average with the stand-in).
* **Model calls.** About :data:`CALLS_PER_NODE` requests per node of the
  largest trees at two messages, halving every two messages more (agreements
  end dialogues early, so trees fill less of the maximum), and twice that
  with the whole-game study, which asks every subgame's requests again
  (answered by the cache). Measured with the stand-in
  (``benchmarks/estimates.py``; requests include cache hits): 40 at
  ``--max-messages 2``, 5,402 and 1,391 at 4, 184,012 at 6 (estimated 39,
  5,262, 1,316, 168,519) and 96,369 at the defaults (estimated 78,930).
  The earlier flat 1.2 per node was 2.9x too high at ``--max-messages 6``.
* **Memory.** Each node keeps its dialogue state and each variant keeps its
  curves, 7 float64 values per tree and recorded iteration (every iteration is
  recorded) plus per-iteration arrays and their CSV rows. Calibrated with
  ``benchmarks/estimates.py`` (peak RSS of real runs with the stand-in): about
  0.9 KB per counted node at ``--max-messages 6`` (1.5 KiB counted: trees with
  agreements are smaller than the maximum) and about 1.2 KB per iteration for
  one initialisation and two variants (64 per-iteration values per variant
  counted).
"""

from __future__ import annotations

from games.engine.resources import (
    CallShape,
    WorkEstimate,
    curves_bytes,
    format_count,
    require_memory,
)
from games.fruit_trading.rules import TONES

__all__ = ["CALL_SHAPE", "WorkEstimate", "check_fits", "estimate_work"]

#: A fruit-trading call on the bundled SmolLM2 (``benchmarks/local_model.py``, the first 200
#: distinct requests of the README's third command's tree, two workers with reuse):
#: 52,191 prompt tokens (261 a call), 20,223 of them evaluated, 4,592 generated.
CALL_SHAPE = CallShape(prompt_tokens=261, completion_tokens=23, reused_share=0.61)

#: Bytes counted per tree node (dialogue state, texts, tree arrays); see the module docstring.
BYTES_PER_NODE = 1536
#: Model requests per node of the largest trees at two messages (measured with the stand-in).
CALLS_PER_NODE = 1.5
#: Interpreter, libraries and compiled kernels.
BASE_BYTES = 400 * 2**20
#: Largest subgame a run may build (1.5 KiB a node: 150 GB). Beyond it the count is not
#: even computed: ``--max-messages 1000000`` is refused at once instead of hanging.
MAX_TREE_NODES = 10**8


def max_nodes(
    max_messages: int, num_seeds: int, num_tones: int = len(TONES), *, cap: int | None = None
) -> int:
    """The largest possible subgame (no early agreement), in nodes.

    Args:
      max_messages: Messages per negotiation.
      num_seeds: LLM seeds per message.
      num_tones: Tones per decision.
      cap: Stop counting once past it and return ``cap + 1`` (bounded work for
        absurd sizes); ``None`` counts exactly.
    """
    branch = num_tones * num_seeds
    total, level = 0, 1  # level = branch**k dialogue states at depth k
    for k in range(max_messages):
        total += level + (num_tones * level if k < max_messages - 1 else 0)
        if cap is not None and total > cap:
            return cap + 1
        level *= branch
    return total


def estimate_work(
    *,
    inits: int,
    iterations: int,
    variants: int,
    max_messages: int,
    num_seeds: int,
    whole_game: bool = False,
    eval_seeds: int = 0,
    bootstrap: int = 0,
    judge_calls: int = 0,
) -> WorkEstimate:
    """Estimates a run from its settings (see the module docstring).

    The held-out trees (``eval_seeds`` per decision) add their nodes and calls;
    each seed-bootstrap replicate re-solves a tree, adding its CFR work; the
    judge's check adds ``judge_calls``.

    Raises:
      ValueError: a subgame would exceed :data:`MAX_TREE_NODES` (names ``--max-messages``).
    """
    per_tree = max_nodes(max_messages, num_seeds, cap=MAX_TREE_NODES)
    if per_tree > MAX_TREE_NODES:
        raise ValueError(
            f"argument --max-messages: {max_messages} messages with --num-seeds {num_seeds} "
            f"make subgames of more than {MAX_TREE_NODES:,} nodes; lower --max-messages or "
            "--num-seeds"
        )
    trees = inits * variants
    nodes = trees * per_tree
    held = trees * max_nodes(max_messages, eval_seeds, cap=MAX_TREE_NODES) if eval_seeds else 0
    # Trees fill less of the maximum as dialogues lengthen; the whole game asks again.
    calls_per_node = CALLS_PER_NODE * 2 ** (-(max_messages - 2) / 2)
    calls = nodes * calls_per_node * (2 if whole_game else 1) + held * calls_per_node + judge_calls
    # Trees are built per variant and all kept until the end; so are the curves.
    memory = (
        BASE_BYTES
        + (nodes + held) * BYTES_PER_NODE
        + curves_bytes(trees, iterations, groups=variants)
    )
    return WorkEstimate(
        trees=trees,
        nodes_per_tree=per_tree,
        nodes=nodes + held,
        model_calls=round(calls),
        node_iterations=nodes * iterations * (1 + bootstrap),
        memory_bytes=memory,
    )


def check_fits(estimate: WorkEstimate, *, inits: int, iterations: int) -> None:
    """Refuses, in one line, a run whose memory estimate exceeds the available memory.

    Raises:
      ValueError: naming the flags and the fix.
    """
    shown = format_count(iterations)
    require_memory(
        estimate.memory_bytes,
        what=(
            f"--inits {inits} x --iterations {shown} "
            f"({estimate.trees:,} trees of up to {estimate.nodes_per_tree:,} nodes)"
        ),
        fix="lower --inits, --iterations, --max-messages or --num-seeds",
    )
