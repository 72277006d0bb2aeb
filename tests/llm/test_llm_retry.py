"""Retry policy, retry loop and rate limiter (no network)."""

from __future__ import annotations

import random
import threading

import pytest

from gt_llm.errors import BackendError
from gt_llm.retry import RateLimiter, RetryPolicy, call_with_retry, parse_retry_after


class Transient(Exception):
    def __init__(self, retry_after=None):
        super().__init__("transient")
        self.retry_after = retry_after


def classify(exc):
    if isinstance(exc, Transient):
        return True, exc.retry_after
    return False, None


def flaky(failures):
    """A callable that raises the given exceptions in turn, then returns 'ok'."""
    queue = list(failures)
    calls = []

    def fn():
        calls.append(1)
        if queue:
            raise queue.pop(0)
        return "ok"

    fn.calls = calls
    return fn


def test_policy_defaults_and_validation():
    p = RetryPolicy()
    assert (p.max_attempts, p.base_delay, p.max_delay, p.jitter) == (None, 1.0, 60.0, 0.25)
    assert p.budget == 300.0  # minutes, not hours
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="budget"):
        RetryPolicy(budget=0)
    with pytest.raises(ValueError):
        RetryPolicy(jitter=1.5)
    with pytest.raises(AttributeError):
        p.max_attempts = 3  # frozen


def test_backoff_is_exponential_jittered_and_capped():
    p = RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=0.25)
    rng = random.Random(0)
    for attempt, nominal in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (50, 10.0)]:
        for _ in range(50):
            wait = p.backoff(attempt, rng)
            assert nominal * 0.75 <= wait <= min(10.0, nominal * 1.25)
    waits = {round(p.backoff(1, rng), 6) for _ in range(20)}
    assert len(waits) > 1  # jitter actually varies


def test_retries_then_succeeds_with_injected_sleep():
    waits = []
    fn = flaky([Transient(), Transient()])
    policy = RetryPolicy(max_attempts=3, base_delay=0.5, jitter=0.0)
    out = call_with_retry(
        fn, classify=classify, policy=policy, rng=random.Random(1), sleep=waits.append
    )
    assert out == "ok" and len(fn.calls) == 3
    assert waits == [0.5, 1.0]


def test_retry_after_is_honoured():
    waits = []
    fn = flaky([Transient(retry_after=3.0)])
    policy = RetryPolicy(base_delay=0.01, jitter=0.25)
    call_with_retry(fn, classify=classify, policy=policy, rng=random.Random(0), sleep=waits.append)
    assert 3.0 <= waits[0] <= 3.75


def test_exhaustion_raises_retryable_backend_error():
    fn = flaky([Transient()] * 5)
    with pytest.raises(BackendError, match="label-x: failed after 2 attempt") as err:
        call_with_retry(
            fn,
            classify=classify,
            policy=RetryPolicy(max_attempts=2, base_delay=0),
            rng=random.Random(0),
            sleep=lambda s: None,
            label="label-x",
        )
    assert err.value.retryable and isinstance(err.value.__cause__, Transient)


def test_non_retryable_is_raised_unchanged_at_once():
    fn = flaky([KeyError("k")])
    with pytest.raises(KeyError):
        call_with_retry(
            fn, classify=classify, policy=RetryPolicy(), rng=random.Random(0), sleep=lambda s: None
        )
    assert len(fn.calls) == 1


def test_global_rng_is_untouched():
    random.seed(123)
    state = random.getstate()
    fn = flaky([Transient()] * 3)
    call_with_retry(
        fn, classify=classify, policy=RetryPolicy(base_delay=0.01), rng=random.Random(5),
        sleep=lambda s: None,
    )  # fmt: skip
    assert random.getstate() == state


def test_seeded_jitter_is_reproducible():
    def waits(seed):
        out = []
        call_with_retry(
            flaky([Transient()] * 4), classify=classify, policy=RetryPolicy(),
            rng=random.Random(seed), sleep=out.append,
        )  # fmt: skip
        return out

    assert waits(7) == waits(7)
    assert waits(7) != waits(8)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry-after": "2"}, 2.0), ({"Retry-After": "0.5"}, 0.5), ({}, None),
     ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None), ({"retry-after": "-1"}, None)],
)  # fmt: skip
def test_parse_retry_after(headers, expected):
    assert parse_retry_after(headers) == expected


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        pass  # time stands still: every caller sees the same "now"


def test_rate_limiter_spaces_requests_evenly():
    clock = FakeClock()
    limiter = RateLimiter(120, clock=clock, sleep=clock.sleep)  # one per 0.5 s
    waits = [limiter.acquire() for _ in range(4)]
    assert waits == [0.0, 0.5, 1.0, 1.5]
    clock.now += 10  # idle: no backlog carried over
    assert limiter.acquire() == 0.0


def test_rate_limiter_is_thread_safe():
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)
    waits = []
    lock = threading.Lock()

    def worker():
        for _ in range(25):
            w = limiter.acquire()
            with lock:
                waits.append(w)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # 200 reservations, each one distinct slot one second apart.
    assert sorted(waits) == [float(i) for i in range(200)]


def test_rate_limiter_validation():
    with pytest.raises(ValueError):
        RateLimiter(0)


def test_budget_bounds_the_whole_call():
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    fn = flaky([Transient()] * 100)
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0, jitter=0.0, budget=10.0)
    with pytest.raises(BackendError, match="within the retry budget of 10 s") as err:
        call_with_retry(
            fn, classify=classify, policy=policy, rng=random.Random(0), sleep=sleep,
            clock=lambda: now[0],
        )  # fmt: skip
    # Waits 1 + 2 + 4 = 7 s; the next 4 s wait would end past 10 s, so the call stops there.
    assert len(fn.calls) == 4 and now[0] == 7.0 and err.value.retryable


def test_many_retry_after_waits_fit_a_burst():
    waits = []
    fn = flaky([Transient(retry_after=1.0)] * 30)
    policy = RetryPolicy(max_delay=2.0, jitter=0.0, budget=60.0)
    assert call_with_retry(
        fn, classify=classify, policy=policy, rng=random.Random(0), sleep=waits.append,
    ) == "ok"  # fmt: skip
    assert waits == [1.0] * 30  # no attempt cap: the budget decides
