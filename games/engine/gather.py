"""Several steps run side by side as one step: each round of their calls is one batch.

A step (:mod:`games.engine.calls`) yields a Call or a list of Calls and gets
the answers back. :func:`gather` runs many steps in lockstep: at every round it
asks the calls of every step still running as one list, and hands each step
its own answers, so the drivers batch them together (the Werewolf day's root
builds one root per deal this way).
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

from games.engine.calls import Call, Step

__all__ = ["gather"]


def gather(steps: Sequence[Step[Any] | Any]) -> Step[list[Any]]:
    """Runs ``steps`` together and returns their results, in order.

    Args:
      steps: Steps (generators), or finished results (any other value).

    Returns:
      Each step's result.
    """
    results: list[Any] = [None] * len(steps)
    # index -> (step, what it asked: a Call, or a list of Calls)
    running: dict[int, tuple[Step[Any], Call[Any] | list[Call[Any]]]] = {}
    for i, step in enumerate(steps):
        if not isinstance(step, types.GeneratorType):
            results[i] = step
            continue
        try:
            running[i] = (step, next(step))
        except StopIteration as stop:
            results[i] = stop.value
    while running:
        calls: list[Call[Any]] = []
        spans: list[tuple[int, int, int | None]] = []  # (index, first call, list length)
        for i, (_, asked) in running.items():
            if isinstance(asked, list):
                spans.append((i, len(calls), len(asked)))
                calls.extend(asked)
            else:
                spans.append((i, len(calls), None))
                calls.append(asked)
        answers = yield calls
        ahead: dict[int, tuple[Step[Any], Call[Any] | list[Call[Any]]]] = {}
        for i, first, n in spans:
            step = running[i][0]
            part = answers[first] if n is None else answers[first : first + n]
            try:
                ahead[i] = (step, step.send(part))
            except StopIteration as stop:
                results[i] = stop.value
        running = ahead
    return results
