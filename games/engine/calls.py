"""The call driver of games built from LLM calls.

A game step (one move and everything that follows it: the message, the checks,
the evaluations) is written as a *generator*: it yields a :class:`Call` — an
LLM request with the parser of its answer and the documented fallback — or a
list of Calls that do not depend on each other, and it receives the parsed
value (a list of values for a list). When it is done it returns its result
(usually the next game state) through ``StopIteration``.

Two drivers run steps: :func:`run_sync` runs one step, answering its calls as
they come (an OpenSpiel state uses it), and :func:`run_batched` runs many
steps together, every round of their calls sent as one concurrent,
de-duplicated batch (the tree builder uses it) whatever their tasks and parsers
(each request keeps its own parser and fallback; the re-ask loop is
:func:`gt_llm.parsing.complete_parsed_batch`). Parse errors are re-asked with
a deterministic new seed (:class:`gt_llm.parsing.ParsePolicy`), then fall
back; every fallback is logged and counted in :class:`gt_llm.parsing.ParseStats`.

Writing steps as generators keeps the game logic sequential and readable while
the drivers decide how to batch — the same step code serves a single game and
a tree of thousands of branches. A step that needs no call (a vote counted by
the rules, a root built from a seed) may simply return its result: the
drivers take any value that is not a generator as an already finished step.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Generator, Sequence
from typing import Any, Generic, TypeVar, overload

from gt_llm.chat import ChatModel, ChatRequest
from gt_llm.parsing import Parsed, ParsePolicy, ParseStats, complete_parsed_batch

__all__ = ["Call", "Step", "StepYield", "run_batched", "run_sync"]

T = TypeVar("T")
R = TypeVar("R")


@dataclasses.dataclass(frozen=True)
class Call(Generic[T]):
    """One LLM call a step needs.

    Attributes:
      request: The chat request.
      parser: Turns the answer text into a value or raises
        :class:`gt_llm.errors.ParseError` (the answer is then re-asked).
      fallback: The documented value used after every re-ask failed; it gets
        the request.
      finish: Optional hook from the :class:`gt_llm.parsing.Parsed` answer (value,
        last response, attempts, whether it fell back) to the value sent back to
        the step; by default the parsed value. A game uses it when a failed parse
        should still pass something on (for example the raw text of the last
        answer).
    """

    request: ChatRequest
    parser: Callable[[str], T]
    fallback: Callable[[ChatRequest], T]
    finish: Callable[[Parsed[T]], Any] | None = None


#: What a step yields: one :class:`Call`, or a list of Calls that do not depend on
#: each other (answered together, in order).
StepYield = Call[Any] | list[Call[Any]]

#: A step: yields :data:`StepYield` values, receives the parsed value of each (a list
#: of values, in order, for a list of Calls), and returns its result of type ``R``.
Step = Generator[StepYield, Any, R]


def _answer(
    model: ChatModel,
    calls: Sequence[Call[Any]],
    policy: ParsePolicy,
    stats: ParseStats,
    max_concurrency: int | None,
) -> list[Any]:
    """Values for calls; identical requests are sent once; all of them in one batch."""
    unique: dict[str, Call[Any]] = {}
    keys = []
    for c in calls:
        k = model.cache_key(c.request)
        # The first Call of a request decides its parser: the same request asked twice
        # in a round is one LLM call.
        unique.setdefault(k, c)
        keys.append(k)
    # One batch with a parser and fallback per request, so calls of different tasks
    # (or Werewolf's per-request option parsers) still go out together.
    firsts = list(unique.values())
    parsed = complete_parsed_batch(
        model,
        [c.request for c in firsts],
        [c.parser for c in firsts],
        fallback=[c.fallback for c in firsts],
        policy=policy,
        stats=stats,
        max_concurrency=max_concurrency,
    )
    values: dict[str, Parsed[Any]] = dict(zip(unique, parsed, strict=True))
    out = []
    for k, c in zip(keys, calls, strict=True):
        p = values[k]
        out.append(c.finish(p) if c.finish is not None else p.value)
    return out


# The overloads type both uses: a step (``R`` is what it returns) and a step-or-result
# (``Step[R] | R``, as GameLogic.step returns); one signature with ``Step[R] | R`` alone
# would leave ``R`` unsolved for a plain step.
@overload
def run_sync(
    gen: Step[R],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
) -> R: ...


@overload
def run_sync(
    gen: Step[R] | R,
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
) -> R: ...


def run_sync(
    gen: Any,
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
) -> Any:
    """Runs one step, answering its calls as they come; returns the step's result.

    ``gen`` may also be the result of a step that makes no call (returned as it is).
    """
    return run_batched([gen], model, policy=policy, stats=stats)[0]


@overload
def run_batched(
    gens: Sequence[Step[R]],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    on_round: Callable[[int], None] | None = None,
) -> list[R]: ...


@overload
def run_batched(
    gens: Sequence[Step[R] | R],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    on_round: Callable[[int], None] | None = None,
) -> list[R]: ...


def run_batched(
    gens: Sequence[Any],
    model: ChatModel,
    *,
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
    on_round: Callable[[int], None] | None = None,
) -> list[Any]:
    """Runs many steps together: each round's calls go out as one batch.

    Args:
      gens: Step generators, or results of steps that make no call (any
        value that is not a generator is its own result).
      model: The chat model (usually cached).
      policy: Re-ask policy for parse errors (default :class:`ParsePolicy`).
      stats: Parse counters to update.
      max_concurrency: Bound on concurrent calls.
      on_round: Called with the number of calls of each round (progress).

    Returns:
      The steps' results, in the order of ``gens``.

    Raises:
      TypeError: a step yielded something other than a Call or a list of Calls.
    """
    policy = policy or ParsePolicy()
    stats = stats if stats is not None else ParseStats()
    results: list[Any] = [None] * len(gens)
    running: dict[int, Step[Any]] = {}
    pending: dict[int, Any] = {}
    for i, g in enumerate(gens):
        if not isinstance(g, types.GeneratorType):
            results[i] = g  # a step that made no call: its result as it is
            continue
        running[i] = g
        try:
            pending[i] = next(g)
        except StopIteration as stop:
            results[i] = stop.value
    while pending:
        flat: list[Call[Any]] = []
        spans: dict[int, tuple[int, int, bool]] = {}
        for i, y in pending.items():
            calls = y if isinstance(y, list) else [y]
            for c in calls:
                if not isinstance(c, Call):
                    raise TypeError(
                        f"run_batched: a step yielded {type(c).__name__}; "
                        "yield a Call or a list of Calls"
                    )
            spans[i] = (len(flat), len(flat) + len(calls), isinstance(y, list))
            flat.extend(calls)
        answers = _answer(model, flat, policy, stats, max_concurrency) if flat else []
        if on_round is not None:
            on_round(len(flat))
        nxt: dict[int, Any] = {}
        for i, (a, b, is_list) in spans.items():
            value = answers[a:b] if is_list else answers[a]
            try:
                nxt[i] = running[i].send(value)
            except StopIteration as stop:
                results[i] = stop.value
        pending = nxt
    return results
