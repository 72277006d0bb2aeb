"""The memory of the Werewolf commands, from their settings alone.

Checked before the first model call (``werewolf play --games``, ``arena``,
``solve``), so that a size flag that cannot fit is refused in one line naming
the flag, instead of growing until the machine runs out of memory after paid
calls.

* **Series and arena.** Every finished game's result (final state, counters,
  deception summary) is kept until the summary is written: about 144 KB a
  game measured (``werewolf play --games 220`` vs ``--games 20`` with the
  stand-in: 29 MB more peak memory), 256 KiB counted, above a measured base.
* **Solve.** The CFR curves of every day tree are kept: the same count as the
  fruit-trading experiment (:func:`games.engine.resources.curves_bytes`
  float64 values per tree and iteration, every iteration recorded).
"""

from __future__ import annotations

from games.engine.resources import curves_bytes, format_count, require_memory

__all__ = ["check_games", "check_solve", "games_bytes", "solve_bytes"]

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
