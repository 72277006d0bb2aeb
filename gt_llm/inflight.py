"""How many calls a run keeps in flight on a remote backend: mean and peak.

Against a served model (Groq, vLLM, any chat-completions server) a call is
bound by latency, and what decides a run's wall time is how many calls are
out at once. Every remote call (:meth:`gt_llm.backends.remote.RemoteChatModel.complete`,
retries and waits included) runs inside :func:`track`, which counts it in
the process-wide meter. A :func:`measure` block reads the meter over its own
span:

* ``mean`` -- the time-weighted average of calls in flight over the block's
  wall time (the sum of the calls' durations over the wall time: what a
  server with a fixed latency sees as requests × latency / wall time);
* ``peak`` -- the most calls in flight at one time during the block;
* ``calls`` and ``seconds`` -- the calls begun and the block's wall time.

Blocks may nest (a command's results folder around an experiment): each
reads its own span. The meter is the process's, since calls run in worker
threads that cannot see which block started them; a block therefore counts
every remote call made while it is open.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["InFlight", "Span", "measure", "start", "track"]


@dataclasses.dataclass(frozen=True)
class InFlight:
    """Calls in flight over one span of wall time.

    Attributes:
      calls: Calls begun during the span.
      seconds: The span's wall time.
      mean: Time-weighted mean of calls in flight over the span.
      peak: Most calls in flight at one time during the span.
    """

    calls: int
    seconds: float
    mean: float
    peak: int

    def to_json(self) -> dict[str, Any]:
        """The numbers as a JSON object (rounded for reading)."""
        return {
            "calls": self.calls,
            "seconds": round(self.seconds, 3),
            "mean": round(self.mean, 2),
            "peak": self.peak,
        }

    def line(self) -> str:
        """One line for the console: ``calls in flight: mean 41.3, peak 64 (...)``."""
        return (
            f"calls in flight: mean {self.mean:.1f}, peak {self.peak} "
            f"({self.calls} remote calls in {self.seconds:.1f} s)"
        )


class Span:
    """One :func:`measure` block's view of the meter; read it with :meth:`result`."""

    def __init__(self, meter: _Meter) -> None:
        self._meter = meter
        self._start, self._area0, self._calls0 = meter.snapshot()
        self.peak = 0  # set under the meter's lock when the span is registered
        self._end: tuple[float, float, int] | None = None

    def close(self) -> None:
        """Ends the span (its numbers stop moving)."""
        if self._end is None:
            self._end = self._meter.snapshot()
            self._meter.forget(self)

    def result(self) -> InFlight:
        """The span's numbers so far (or at its end, once closed)."""
        now, area, calls = self._end if self._end is not None else self._meter.snapshot()
        seconds = max(now - self._start, 0.0)
        mean = (area - self._area0) / seconds if seconds > 0 else 0.0
        return InFlight(calls=calls - self._calls0, seconds=seconds, mean=mean, peak=self.peak)


class _Meter:
    """The process's count of calls in flight and its integral over time."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.current = 0
        self._calls = 0
        self._area = 0.0  # the integral of ``current`` over time
        self._last = clock()
        self._spans: list[Span] = []

    def _advance(self) -> float:
        now = self._clock()
        self._area += self.current * (now - self._last)
        self._last = now
        return now

    def snapshot(self) -> tuple[float, float, int]:
        """``(now, integral so far, calls begun so far)``."""
        with self._lock:
            now = self._advance()
            return now, self._area, self._calls

    def begin(self) -> None:
        with self._lock:
            self._advance()
            self.current += 1
            self._calls += 1
            for span in self._spans:
                span.peak = max(span.peak, self.current)

    def end(self) -> None:
        with self._lock:
            self._advance()
            self.current -= 1

    def open(self) -> Span:
        span = Span(self)
        with self._lock:
            span.peak = self.current
            self._spans.append(span)
        return span

    def forget(self, span: Span) -> None:
        with self._lock:
            self._spans = [s for s in self._spans if s is not span]


_METER = _Meter()


@contextlib.contextmanager
def track() -> Iterator[None]:
    """Counts one call in flight for the duration of the block (thread-safe)."""
    _METER.begin()
    try:
        yield
    finally:
        _METER.end()


def start() -> Span:
    """Starts measuring from now; :meth:`Span.close` ends it (see also :func:`measure`)."""
    return _METER.open()


@contextlib.contextmanager
def measure() -> Iterator[Span]:
    """A block whose remote calls in flight are measured; ``span.result()`` reads them."""
    span = start()
    try:
        yield span
    finally:
        span.close()
