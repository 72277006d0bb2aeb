"""Calls kept in flight: steps advanced as soon as their own calls return.

:func:`games.engine.calls.run_batched` runs steps in rounds: every round's
calls go out as one batch, and the next round waits for the slowest call of
this one. Against a served model, where a call is bound by latency, most of a
run then waits at these barriers. A :class:`Frontier` is the driver without
barriers (a work queue): each step is advanced as soon as the calls it yielded
are answered, a finished step may start new ones (the tree builder starts a
state's children as soon as the state exists), and up to ``max_concurrency``
calls are in flight at any time.

What it computes is what the rounds compute, whatever order the answers come
back in:

* every call is a pure function of its request, and a step sees only the
  answers to its own calls, so each step returns what it returns under
  :func:`~games.engine.calls.run_batched`;
* identical requests (the same cache key) are sent once per frontier: a
  request already in flight, or already answered, is not sent again, and the
  first :class:`~games.engine.calls.Call` of a request decides its parser and
  fallback (as within one round of ``run_batched``);
* an unparseable answer is re-asked with the deterministic seeds of
  :class:`~gt_llm.parsing.ParsePolicy`, then falls back, exactly as
  :func:`~gt_llm.parsing.complete_parsed_batch` does, and is counted in the
  same :class:`~gt_llm.parsing.ParseStats` counters. The counts do not depend
  on the order either: each distinct request is parsed once.

Step code and result callbacks run in the calling thread only; worker threads
make nothing but model calls. On a failed call no new call is sent, the calls
already running finish (their answers reach the cache), and the first error is
raised.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import queue
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from games.engine.calls import Call
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.errors import ParseError
from gt_llm.parsing import Parsed, ParsePolicy, ParseStats
from gt_llm.prompt_examples import repeats_named_value

__all__ = ["Frontier"]

logger = logging.getLogger(__name__)

#: Seconds between checks for an interrupt while waiting for an answer.
_POLL_SECONDS = 0.5


@dataclasses.dataclass(eq=False)
class _Task:
    """A running step: its generator, the answers of its current yield, its callback."""

    gen: Any
    done: Callable[[Any], None]
    values: list[Any] = dataclasses.field(default_factory=list)
    missing: int = 0
    is_list: bool = False


@dataclasses.dataclass(eq=False)
class _Request:
    """One distinct request (by cache key): its first Call, the steps waiting, its answer."""

    call: Call[Any]
    waiters: list[tuple[_Task, int, Call[Any]]] = dataclasses.field(default_factory=list)
    parsed: Parsed[Any] | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class _Attempt:
    """One model call: attempt ``attempt`` (0: the request itself) of a request."""

    request: _Request
    attempt: int
    chat: ChatRequest


class Frontier:
    """A work queue of steps whose calls are kept in flight (see the module docstring).

    Start steps with :meth:`start`, then :meth:`run` until every step (and every
    step their callbacks start) has finished.

    Args:
      model: The chat model (usually cached); it must be safe to call from
        several threads at once, as for ``complete_batch``.
      policy: Re-ask policy for parse errors (default :class:`ParsePolicy`).
      stats: Parse counters to update.
      max_concurrency: Most calls in flight at once (default: the model's own).
        With 1, calls are made one at a time in the calling thread.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        policy: ParsePolicy | None = None,
        stats: ParseStats | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self.model = model
        self.policy = policy or ParsePolicy()
        self.stats = stats if stats is not None else ParseStats()
        self.limit = max(1, int(max_concurrency or model.max_concurrency))
        self._requests: dict[str, _Request] = {}
        self._ready: collections.deque[_Attempt] = collections.deque()
        self._answers: queue.SimpleQueue[
            tuple[_Attempt, ChatResponse | None, BaseException | None]
        ] = queue.SimpleQueue()
        self._in_flight = 0
        self._error: BaseException | None = None
        #: Model calls made so far, and the most in flight at once.
        self.calls = 0
        self.peak = 0

    # -- steps ----------------------------------------------------------------------------

    def start(self, step: Any, done: Callable[[Any], None]) -> None:
        """Starts a step; ``done`` gets its result (in the calling thread, during :meth:`run`).

        A value that is not a generator is a finished step: ``done`` gets it at once.
        """
        if not isinstance(step, types.GeneratorType):
            done(step)
            return
        self._advance(_Task(step, done), None, first=True)

    def _advance(self, task: _Task, value: Any, *, first: bool = False) -> None:
        """Sends ``value`` into the step and registers the calls of its next yield."""
        try:
            out = next(task.gen) if first else task.gen.send(value)
        except StopIteration as stop:
            task.done(stop.value)
            return
        calls = out if isinstance(out, list) else [out]
        for c in calls:
            if not isinstance(c, Call):
                raise TypeError(
                    f"Frontier: a step yielded {type(c).__name__}; yield a Call or a list of Calls"
                )
        task.is_list = isinstance(out, list)
        task.values = [None] * len(calls)
        task.missing = len(calls)
        answered: list[tuple[int, Call[Any], Parsed[Any]]] = []
        for i, c in enumerate(calls):
            key = self.model.cache_key(c.request)
            req = self._requests.get(key)
            if req is None:
                # The first Call of a request decides its parser (as in one round of run_batched).
                req = self._requests[key] = _Request(c)
                self._ready.append(_Attempt(req, 0, c.request))
            if req.parsed is not None:
                answered.append((i, c, req.parsed))
            else:
                req.waiters.append((task, i, c))
        for i, c, parsed in answered:
            self._fill(task, i, c, parsed)

    def _fill(self, task: _Task, slot: int, call: Call[Any], parsed: Parsed[Any]) -> None:
        """One answer of a step's yield; the step moves on once it has them all."""
        task.values[slot] = call.finish(parsed) if call.finish is not None else parsed.value
        task.missing -= 1
        if task.missing == 0:
            self._advance(task, task.values if task.is_list else task.values[0])

    # -- calls ----------------------------------------------------------------------------

    def _answered(self, att: _Attempt, resp: ChatResponse) -> None:
        """Parses an answer: resolves its request, or re-asks it, or falls back."""
        req, task_name = att.request, att.request.call.request.task
        if att.attempt > 0:
            self.stats.add("reasks", task_name)
        call = req.call
        try:
            value = call.parser(resp.text)
        except ParseError as err:
            logger.debug("parse error on %s (attempt %d): %s", task_name, att.attempt, err)
            if att.attempt < self.policy.max_reasks:
                nxt = att.attempt + 1
                self._ready.append(_Attempt(req, nxt, self.policy.reask(call.request, nxt)))
                return
            fallback = call.fallback(call.request)
            self.stats.add("fallbacks", task_name)
            logger.warning(
                "parse fallback for task %s after %d attempts: using %r (last answer: %.120r)",
                task_name,
                self.policy.max_reasks + 1,
                fallback,
                resp.text,
            )
            self._resolve(req, Parsed(fallback, resp, self.policy.max_reasks + 1, True))
            return
        self.stats.add("parsed", task_name)
        if repeats_named_value((m.content for m in call.request.messages), resp.text):
            self.stats.add("copied", task_name)
        self._resolve(req, Parsed(value, resp, att.attempt + 1, False))

    def _resolve(self, req: _Request, parsed: Parsed[Any]) -> None:
        req.parsed = parsed
        waiters, req.waiters = req.waiters, []
        for task, slot, call in waiters:
            self._fill(task, slot, call, parsed)

    def _call(self, att: _Attempt) -> tuple[_Attempt, ChatResponse | None, BaseException | None]:
        try:
            return att, self.model.complete(att.chat), None
        except BaseException as exc:  # handed to the calling thread, which raises it
            return att, None, exc

    def _settle(self, answer: tuple[_Attempt, ChatResponse | None, BaseException | None]) -> None:
        att, resp, exc = answer
        if exc is not None:
            if self._error is None:
                self._error = exc
            return
        if self._error is None:
            assert resp is not None
            self._answered(att, resp)

    def run(self) -> None:
        """Runs until every started step has finished.

        Raises:
          Exception: the first error of a call (after the calls already running
            have finished) or of a step.
        """
        if self.limit == 1:
            while self._ready and self._error is None:
                att = self._ready.popleft()
                self._count_sent()
                self._settle(self._call(att))
                self._in_flight -= 1
        else:
            with ThreadPoolExecutor(max_workers=self.limit, thread_name_prefix="frontier") as pool:
                try:
                    self._run_pool(pool)
                finally:
                    # Whatever stopped the run (an error, Ctrl-C), the calls already
                    # running finish before the pool closes: their answers are cached.
                    self._ready.clear()
        if self._error is not None:
            raise self._error

    def _count_sent(self) -> None:
        self.calls += 1
        self._in_flight += 1
        self.peak = max(self.peak, self._in_flight)

    def _run_pool(self, pool: ThreadPoolExecutor) -> None:
        try:
            while True:
                while self._ready and self._in_flight < self.limit and self._error is None:
                    att = self._ready.popleft()
                    self._count_sent()
                    pool.submit(self._call, att).add_done_callback(
                        lambda f: self._answers.put(f.result())
                    )
                if self._in_flight == 0:
                    return
                answer = self._next_answer()
                self._in_flight -= 1
                self._settle(answer)
        except BaseException:
            self._ready.clear()
            while self._in_flight > 0:  # the running calls end; nothing new is sent
                self._next_answer()
                self._in_flight -= 1
            raise

    def _next_answer(self) -> tuple[_Attempt, ChatResponse | None, BaseException | None]:
        # A bounded wait, so that Ctrl-C reaches the calling thread between polls.
        while True:
            try:
                return self._answers.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
