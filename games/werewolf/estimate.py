"""The work and memory of the Werewolf commands, from their settings alone.

Checked and printed before the first model call (``werewolf play``,
``arena``, ``solve``; the line of
:meth:`games.engine.resources.WorkEstimate.describe`), so that a size flag
that cannot fit is refused in one line naming the flag, instead of growing
until the machine runs out of memory after paid calls.

Work (model requests, cached ones included):

* **Games.** About :data:`CALLS_PER_GAME` requests per game of a preset
  (measured with the stand-in, ``werewolf play --games 5``: 153.8 per arena
  game, 187.8 per gratr game), scaled by players / 8 and by
  (debate turns + 1) / 4 (every living player bids and speaks each turn,
  then votes). An arena plays ``--games`` per pair of models.
* **Solve.** With ``A`` = tones x acts actions and ``S`` seeds a day tree has
  at most ``sum_{k<K} (AS)^k (1 + A) + (AS)^K`` nodes; each of its
  ``A S sum_{k<K} (AS)^k`` statements costs one statement request plus
  ``(L - 1) x {0, 1, 2}`` extraction requests (listeners' model none /
  dirichlet / gratr) and each of its ``(AS)^K`` leaves ``L`` vote requests,
  with ``L`` = players - day living players. The tree's batches send
  identical requests once, and with the stand-in (whose texts repeat across
  branches) about :data:`DISTINCT_SHARE` of these are distinct (measured,
  1 day, tones any,calm: 307 of 520 with listeners ``none``, 595 of 1,384
  with ``gratr``; the defaults: 6,177 of 11,088); the estimate is that share.
  A real LLM repeats itself less, so it may ask up to 1 / 0.6 times more.

* **Series and arena.** Every finished game's result (final state, counters,
  deception summary) is kept until the summary is written: about 144 KB a
  game measured (``werewolf play --games 220`` vs ``--games 20`` with the
  stand-in: 29 MB more peak memory), 256 KiB counted, above a measured base.
* **Solve.** The CFR curves of every day tree are kept: the same count as the
  fruit-trading experiment (:func:`games.engine.resources.curves_bytes`
  float64 values per tree and iteration, every iteration recorded).
"""

from __future__ import annotations

from games.engine.resources import (
    CallShape,
    WorkEstimate,
    curves_bytes,
    format_count,
    require_memory,
)

__all__ = [
    "CALLS_PER_GAME",
    "CALL_SHAPE",
    "check_games",
    "check_solve",
    "day_tree_nodes",
    "estimate_games",
    "estimate_solve",
    "games_bytes",
    "solve_bytes",
]

#: A Werewolf call on the bundled SmolLM2 (``benchmarks/local_model.py``, the first 60
#: distinct requests of a scripted arena game, two workers with reuse): 30,199 prompt
#: tokens (503 a call), 28,567 of them evaluated (each seat's prompt differs early, so
#: little is reused), 2,219 generated.
CALL_SHAPE = CallShape(prompt_tokens=503, completion_tokens=37, reused_share=0.05)

#: Model requests per game at 8 players and 3 debate turns, by preset (measured, stand-in).
CALLS_PER_GAME = {"arena": 154, "gratr": 188}
#: Share of a day tree's requests that are distinct (measured with the stand-in).
DISTINCT_SHARE = 0.6
#: Extraction requests per listener and statement, by listeners' opponent model.
EXTRACTIONS = {"none": 0, "dirichlet": 1, "gratr": 2, "bayes": 2}

#: Bytes counted per finished game kept in memory (measured about 144 KB).
BYTES_PER_GAME = 256 * 1024
#: Interpreter, libraries, the model and one game in flight (measured 176 MiB peak for
#: ``werewolf play --games 20`` with the stand-in; benchmarks/estimates.py).
BASE_BYTES = 192 * 2**20
#: The same for ``werewolf solve``, which also loads the solver kernels and builds trees
#: (measured 433 MiB for ``--days 4 --iterations 2000``).
SOLVE_BASE_BYTES = 400 * 2**20


def games_bytes(games: int) -> int:
    """Peak memory of a series or arena of ``games`` games, about."""
    return BASE_BYTES + games * BYTES_PER_GAME


def check_games(games: int, *, flag: str = "--games") -> None:
    """Refuses, in one line naming ``flag``, more games than memory can keep.

    Raises:
      ValueError: the estimate exceeds the available memory.
    """
    shown = format_count(games)
    require_memory(games_bytes(games), what=f"{flag} {shown}", fix=f"lower {flag}")


def solve_bytes(trees: int, iterations: int) -> int:
    """Peak memory of ``werewolf solve`` with ``trees`` day trees, about (curves dominate)."""
    return SOLVE_BASE_BYTES + curves_bytes(trees, iterations)


def check_solve(*, days: int, models: int, iterations: int) -> None:
    """Refuses, in one line naming ``--iterations``, curves that cannot fit in memory.

    Raises:
      ValueError: the estimate exceeds the available memory.
    """
    shown = format_count(iterations)
    require_memory(
        solve_bytes(days * models, iterations),
        what=f"--iterations {shown} x --days {days} x {models} model(s)",
        fix="lower --iterations or --days",
    )


def estimate_games(
    *, games: int, preset: str, players: int, debate_turns: int, asks_model: bool = True
) -> WorkEstimate:
    """Work and memory of ``games`` games (a series, or an arena's pairs x games).

    Args:
      games: Games played.
      preset: Rules preset (its measured requests per game; unknown ones count as arena).
      players: Seats per game.
      debate_turns: Debate turns per day.
      asks_model: False for rule players, who make no request.
    """
    per_game = CALLS_PER_GAME.get(preset, CALLS_PER_GAME["arena"]) if asks_model else 0
    calls = round(games * per_game * players / 8 * (debate_turns + 1) / 4)
    return WorkEstimate(
        trees=games,
        nodes_per_tree=0,
        nodes=0,
        model_calls=calls,
        node_iterations=0,
        memory_bytes=games_bytes(games),
        unit="game" if games == 1 else "games",
    )


def day_tree_nodes(*, actions: int, seeds: int, speakers: int) -> int:
    """Nodes of one day tree, at most: ``sum_{k<K} (AS)^k (1 + A) + (AS)^K``."""
    branch = actions * seeds
    return sum(branch**k for k in range(speakers)) * (1 + actions) + branch**speakers


def estimate_solve(
    *,
    days: int,
    models: tuple[str, ...],
    actions: int,
    seeds: int,
    speakers: int,
    living: int,
    iterations: int,
    eval_seeds: int = 0,
    bootstrap: int = 0,
) -> WorkEstimate:
    """Work and memory of ``werewolf solve`` (see the module docstring).

    Held-out trees (``eval_seeds`` per statement) add their nodes and calls; each
    seed-bootstrap replicate re-solves a tree.

    Args:
      days: Days solved.
      models: Listeners' opponent models (one tree per day and model).
      actions: Actions per turn (tones x acts).
      seeds: LLM seeds per statement.
      speakers: Speaking turns K per day.
      living: Living players on the day solved.
      iterations: CFR iterations per tree.
    """
    per_tree = day_tree_nodes(actions=actions, seeds=seeds, speakers=speakers)
    trees = days * len(models)
    calls = days * _calls_per_day(models, actions, seeds, speakers, living)
    held = 0
    if eval_seeds:
        held = trees * day_tree_nodes(actions=actions, seeds=eval_seeds, speakers=speakers)
        calls += days * _calls_per_day(models, actions, eval_seeds, speakers, living)
    return WorkEstimate(
        trees=trees,
        nodes_per_tree=per_tree,
        nodes=trees * per_tree + held,
        model_calls=round(calls * DISTINCT_SHARE),
        node_iterations=trees * per_tree * iterations * (1 + bootstrap),
        memory_bytes=solve_bytes(trees, iterations),
        unit="day trees",
    )


def _calls_per_day(
    models: tuple[str, ...], actions: int, seeds: int, speakers: int, living: int
) -> int:
    """Requests of one day's trees, one per model, before de-duplication."""
    branch = actions * seeds
    statements = actions * seeds * sum(branch**k for k in range(speakers))
    leaves = branch**speakers
    return sum(statements * (1 + (living - 1) * EXTRACTIONS[m]) + leaves * living for m in models)
