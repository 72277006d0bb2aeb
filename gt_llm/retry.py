"""Retries with exponential backoff and jitter, and a requests-per-minute limiter.

Both remote backends (``groq`` and ``openai``) run every HTTP call through
:func:`call_with_retry`, with a backend-specific *classifier* that decides for
each exception whether it is worth retrying and whether the server asked for
a particular wait (``Retry-After``). Randomness for the jitter comes from a
``random.Random`` owned by the caller, never from the global RNG, so that
library users' seeding is left alone and tests can make timings reproducible.
Every call has a total time *budget* (:attr:`RetryPolicy.budget`, five
minutes by default): transient faults are retried with backoff until it is
spent, then the call fails with one line. ``sleep`` and the clocks are
injectable so that tests run in milliseconds.

Calls can be *cancelled* process-wide (:func:`cancel_calls`): inside
:func:`interrupt_cancels_calls` (which every ``gt-llm`` command runs in) a
Ctrl-C sets the flag before it raises ``KeyboardInterrupt`` in the main
thread, so calls running in worker threads stop at their next check (the
remote backends check between socket reads and during retry waits: see
:func:`cancellable_sleep`) instead of the interrupted run waiting for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from types import FrameType
from typing import TypeVar

from gt_llm.errors import BackendError
from gt_llm.safety import redact

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: ``classify(exc) -> (retryable, retry_after_seconds_or_None)``.
Classifier = Callable[[BaseException], "tuple[bool, float | None]"]


#: Default total time one call may take, retries and waits included (seconds).
DEFAULT_RETRY_BUDGET = 300.0

# Set by cancel_calls (a Ctrl-C inside interrupt_cancels_calls); cleared when a new
# interrupt_cancels_calls block starts.
_CANCELLED = threading.Event()


class CallCancelled(BackendError):
    """A call stopped because the run was interrupted (never retried, never cached)."""

    def __init__(self, message: str = "call cancelled: the run was interrupted") -> None:
        super().__init__(message, retryable=False)


def cancel_calls() -> None:
    """Cancels every call in flight and every later one, until the next :func:`interrupt_cancels_calls`."""
    _CANCELLED.set()


def calls_cancelled() -> bool:
    """Whether calls are cancelled (see :func:`cancel_calls`)."""
    return _CANCELLED.is_set()


def check_not_cancelled(label: str = "call") -> None:
    """Raises :class:`CallCancelled` naming ``label`` if calls are cancelled."""
    if _CANCELLED.is_set():
        raise CallCancelled(f"{label}: cancelled, the run was interrupted")


def cancellable_sleep(seconds: float) -> None:
    """Sleeps ``seconds``, or less if calls are cancelled meanwhile.

    Raises:
      CallCancelled: calls are (or become) cancelled.
    """
    if _CANCELLED.wait(max(0.0, seconds)):
        raise CallCancelled()


@contextlib.contextmanager
def interrupt_cancels_calls() -> Iterator[None]:
    """A block in which Ctrl-C (SIGINT) also cancels every call (:func:`cancel_calls`).

    On entry the cancellation flag is cleared (a new run starts). In the main
    thread, while SIGINT has Python's default handler, the block installs one
    that sets the flag and then raises ``KeyboardInterrupt`` as usual, so the
    threads a run waits for on its way out stop within a poll interval instead
    of finishing their calls. Elsewhere (another thread, another handler in
    place, nested blocks) the handler is left alone. The flag stays set after
    an interrupt: an interrupted process is on its way out.
    """
    _CANCELLED.clear()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    if previous is not signal.default_int_handler:
        yield
        return

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        _CANCELLED.set()
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How long to keep retrying one call, and how long to wait between attempts.

    Attempt ``k`` (1-based) that fails retryably is followed by a wait of
    ``min(max_delay, base_delay * 2**(k-1))``, multiplied by a random factor in
    ``[1 - jitter, 1 + jitter]`` and capped at ``max_delay`` again. When the
    server sends ``Retry-After``, the wait is that many seconds plus up to
    ``jitter`` of it (so that concurrent clients do not come back in
    lockstep), **capped at** ``max_delay``: no single wait is ever longer than
    ``max_delay``, jitter included. A ``Retry-After`` longer than
    ``max_delay`` ends the retries at once (the server said an earlier retry
    is pointless), and so does a wait that would end after the ``budget``.

    Attributes:
      max_attempts: Total attempts, including the first (>= 1); ``None``: as
        many as the budget allows.
      base_delay: Wait after the first failure, in seconds.
      max_delay: Upper bound on any single wait, jitter included, in seconds.
      jitter: Relative jitter in ``[0, 1]``.
      budget: Upper bound on the whole call (attempts and waits), in seconds.
    """

    max_attempts: int | None = None
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.25
    budget: float = DEFAULT_RETRY_BUDGET

    def __post_init__(self) -> None:
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"RetryPolicy: max_attempts must be >= 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy: base_delay and max_delay must be >= 0")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"RetryPolicy: jitter must be in [0, 1], got {self.jitter}")
        if not 0.0 < self.budget < float("inf"):
            raise ValueError(
                f"RetryPolicy: budget must be a number of seconds > 0, got {self.budget}"
            )

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The jittered exponential wait after failed attempt ``attempt`` (1-based)."""
        # Cap the exponent first: 2**k overflows float for large k long before the min applies.
        raw = min(self.max_delay, self.base_delay * 2.0 ** min(attempt - 1, 60))
        factor = 1.0 + self.jitter * (2.0 * rng.random() - 1.0)
        return max(0.0, min(self.max_delay, raw * factor))

    def wait_for(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """The wait after failed attempt ``attempt``, honouring ``Retry-After``; never > ``max_delay``."""
        if retry_after is None:
            return self.backoff(attempt, rng)
        return min(self.max_delay, retry_after * (1.0 + self.jitter * rng.random()))


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Reads a ``Retry-After`` header given in seconds (HTTP dates are ignored).

    Returns:
      The number of seconds (>= 0), or ``None`` if absent or not a number.
    """
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(str(value).strip())
    except ValueError:
        # An HTTP-date form; rare for these APIs, so fall back to our own backoff.
        return None
    if seconds != seconds or seconds < 0:  # NaN or negative
        return None
    return seconds


def call_with_retry(
    fn: Callable[[], T],
    *,
    classify: Classifier,
    policy: RetryPolicy,
    rng: random.Random,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    label: str = "call",
    describe: Callable[[BaseException], str] = lambda e: f"{type(e).__name__}: {e}",
    before_attempt: Callable[[], object] | None = None,
) -> T:
    """Runs ``fn`` until it succeeds, a failure is not retryable, or the policy says stop.

    Args:
      fn: The call; takes no arguments.
      classify: Maps an exception to ``(retryable, retry_after_seconds)``.
      policy: Attempts, waits and the total budget.
      rng: The jitter source (owned by the caller).
      sleep: Called with each wait in seconds (injectable for tests).
      clock: Monotonic clock measuring the budget (injectable for tests).
      label: What is being called, for messages (e.g. a URL).
      describe: Renders an exception for messages (must not contain secrets).
      before_attempt: Called before every attempt (e.g. a rate limiter's ``acquire``);
        the budget is counted from the end of the first call.

    Returns:
      What ``fn`` returned.

    Raises:
      BackendError: with ``retryable=True`` when the attempts or the budget ran
        out, or when the server asked for a wait longer than ``policy.max_delay``.
      CallCancelled: calls were cancelled (:func:`cancel_calls`) before or during an attempt.
      Exception: a non-retryable exception from ``fn``, unchanged.
    """
    start: float | None = None
    attempt = 0
    while True:
        attempt += 1
        if before_attempt is not None:
            before_attempt()
        if start is None:
            # The budget starts with the first attempt: queueing for a rate-limit slot is not a fault.
            start = clock()
        check_not_cancelled(label)
        try:
            return fn()
        except Exception as exc:
            # An interrupted run's failures are its interruption, whatever the exception says.
            if _CANCELLED.is_set() and not isinstance(exc, CallCancelled):
                raise CallCancelled(f"{label}: cancelled, the run was interrupted") from None
            retryable, retry_after = classify(exc)
            if not retryable:
                raise
            elapsed = clock() - start
            done = f"failed after {attempt} attempt(s) in {elapsed:.1f} s"
            last = redact(describe(exc))
            if retry_after is not None and retry_after > policy.max_delay:
                raise BackendError(
                    f"{label}: server asked to retry after {retry_after:g} s, more than "
                    f"max_delay={policy.max_delay:g} s; {done}; last error: {last}",
                    retryable=True,
                ) from exc
            if policy.max_attempts is not None and attempt >= policy.max_attempts:
                raise BackendError(
                    f"{label}: {done} (max_attempts={policy.max_attempts}); last error: {last}",
                    retryable=True,
                ) from exc
            wait = policy.wait_for(attempt, retry_after, rng)
            if elapsed + wait >= policy.budget:
                raise BackendError(
                    f"{label}: {done}, no time left for another attempt within the retry budget "
                    f"of {policy.budget:g} s (raise it with retry_budget / --retry-budget); "
                    f"last error: {last}",
                    retryable=True,
                ) from exc
            logger.info(
                "%s: attempt %d failed (%s); retrying in %.2f s%s",
                label,
                attempt,
                last,
                wait,
                " (Retry-After)" if retry_after is not None else "",
            )
            sleep(wait)


class RateLimiter:
    """A thread-safe requests-per-minute limiter that spaces requests evenly.

    Each :meth:`acquire` reserves the next free slot, ``60 / requests_per_minute``
    seconds after the previous one, and sleeps until it (outside the lock, so
    waiting threads do not block each other's reservations). Evenly spaced
    requests never exceed a per-minute quota in any window, which is what
    provider limits count.

    Args:
      requests_per_minute: The limit (> 0).
      clock: Monotonic clock in seconds (injectable for tests).
      sleep: Sleep function (injectable for tests).
    """

    def __init__(
        self,
        requests_per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not requests_per_minute or requests_per_minute <= 0:
            raise ValueError(
                f"RateLimiter: requests_per_minute must be > 0, got {requests_per_minute!r}"
            )
        self.requests_per_minute = float(requests_per_minute)
        self.interval = 60.0 / self.requests_per_minute
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_free: float | None = None

    def acquire(self) -> float:
        """Blocks until this caller may send a request.

        Returns:
          The number of seconds waited.
        """
        with self._lock:
            now = self._clock()
            slot = now if self._next_free is None else max(now, self._next_free)
            self._next_free = slot + self.interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return max(0.0, wait)

    def __repr__(self) -> str:
        return f"RateLimiter(requests_per_minute={self.requests_per_minute:g})"
