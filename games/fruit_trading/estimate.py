"""The work and memory of a fruit-trading experiment, from its settings alone.

Checked before the first model call (``gt-llm fruit-trading run``), so that a
run that cannot fit is refused in one line rather than after paid calls.

* **Nodes.** A subgame of ``M`` messages has ``M - 1`` tone decisions (4
  tones), each followed by the LLM-seed chance node (``S`` seeds); without
  early agreements it has ``sum_{k<M} (4S)^k`` dialogue states and
  ``4 * sum_{k<M-1} (4S)^k`` chance nodes. This is the exact maximum (checked
  against built trees in the tests); agreements make trees smaller (the
  paper's defaults: at most 877 nodes, 665 on average with the stand-in).
* **Model calls, at most** (:func:`max_calls_per_tree`). A message is one
  call; once both players have spoken the agreement question follows in both
  label orders (2); an agreement asks the trade summary in both orders (2)
  and, for a stated trade, each player's payoff calculation and its reading
  (4), and ends the dialogue; otherwise a belief variant asks the receiver's
  guess (1). So a step asks at most :data:`MAX_CALLS_PER_STEP` calls, the fixed
  opening at most 2, and a subgame at most ``2 + 9 * sum_{1<=k<M} (4S)^k``;
  held-out trees the same with their seeds, and the judge's check its
  requests; the whole-game study rebuilds every subgame with fixed names and
  shared pools (new prompts: as many calls again). Each request counts once:
  an unusable answer re-asked adds a call, and answers from the cache are free.
* **Model calls, about** (the time estimate's count). About
  :data:`CALLS_PER_NODE` calls per node of the largest trees at two messages,
  halving every two messages more (agreements end dialogues early, so trees
  fill less of the maximum), twice that with the whole-game study. Measured on
  the stand-in (6 initialisations, both variants, no whole game, the judge's
  256 included): 482, 1,654, 9,649 and 51,568 calls at 2, 3, 4 and 5 messages
  (estimated 537, 2,253, 9,729 and 48,778), 21,342 at 4 with the whole game
  (19,202); the quickstart's run made 112,630 (94,972). On SmolLM2, whose
  dialogues rarely agree, trees are fuller: the README's third command made
  2,313 (1,640). The bound held on all of them.
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

__all__ = ["CALL_SHAPE", "WorkEstimate", "check_fits", "estimate_work", "max_calls_per_tree"]

#: A fruit-trading call on the bundled SmolLM2 (``benchmarks/local_model.py``, the first 200
#: distinct requests of the README's third command's tree, two workers with reuse):
#: 52,191 prompt tokens (261 a call), 20,223 of them evaluated, 4,592 generated.
CALL_SHAPE = CallShape(prompt_tokens=261, completion_tokens=23, reused_share=0.61)

#: Bytes counted per tree node (dialogue state, texts, tree arrays); see the module docstring.
BYTES_PER_NODE = 1536
#: Model calls per node of the largest trees at two messages (measured with the stand-in).
CALLS_PER_NODE = 1.8
#: Calls one message step can ask: the message, the agreement question in two orders, the
#: trade summary in two orders, and two players' payoff calculations and readings.
MAX_CALLS_PER_STEP = 9
#: Calls the fixed opening can ask: the message and a belief variant's guess.
MAX_CALLS_OPENING = 2
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


def max_calls_per_tree(max_messages: int, num_seeds: int, num_tones: int = len(TONES)) -> int:
    """Model calls one subgame can ask, at most (module docstring), each counted once.

    Args:
      max_messages: Messages per negotiation.
      num_seeds: LLM seeds per message.
      num_tones: Tones per decision.
    """
    branch = num_tones * num_seeds
    steps = sum(branch**k for k in range(1, max_messages))
    return MAX_CALLS_OPENING + MAX_CALLS_PER_STEP * steps


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
    # The whole-game study rebuilds the subgames with other names: as many calls again.
    bound = trees * max_calls_per_tree(max_messages, num_seeds) * (2 if whole_game else 1)
    bound += judge_calls
    if eval_seeds:
        bound += trees * max_calls_per_tree(max_messages, eval_seeds)
    return WorkEstimate(
        trees=trees,
        nodes_per_tree=per_tree,
        nodes=nodes + held,
        model_calls=round(calls),
        max_model_calls=bound,
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
