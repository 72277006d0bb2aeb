"""The ``groq`` backend end to end through the real groq SDK, against the fake server."""

from __future__ import annotations

import random

import pytest
from fake_server import Canned, FakeChatServer, completion_body

import gt_llm
from gt_llm.backends.groq_backend import DEFAULT_MODEL, GroqModel
from gt_llm.errors import BackendError, ConfigurationError
from gt_llm.retry import RetryPolicy

GROQ_PATH = "/openai/v1/chat/completions"


class SleepRecorder:
    """A fake sleep: records waits, returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make(server: FakeChatServer, retry: RetryPolicy, **kw) -> GroqModel:
    kw.setdefault("timeout", 5.0)
    return GroqModel(
        "llama-test", api_key="test-key", base_url=server.url, retry=retry, jitter_seed=0, **kw
    )


def test_success_sends_model_seed_temperature(fake_server, fast_retry):
    fake_server.enqueue(
        Canned(body=completion_body("hello", prompt_tokens=11, completion_tokens=2))
    )
    model = make(fake_server, fast_retry)
    resp = model.complete(gt_llm.user_request("hi", seed=42, temperature=0.3, max_tokens=17))
    assert resp.text == "hello"
    assert (resp.backend, resp.model, resp.cached) == ("groq", "llama-test", False)
    assert resp.usage == gt_llm.Usage(11, 2)
    assert resp.latency_s > 0
    [req] = fake_server.requests
    assert req.path == GROQ_PATH
    assert req.headers["authorization"] == "Bearer test-key"
    assert req.body["model"] == "llama-test"
    assert req.body["seed"] == 42
    assert req.body["temperature"] == 0.3
    assert req.body["max_tokens"] == 17
    assert req.body["messages"] == [{"role": "user", "content": "hi"}]


def test_load_model_default_model_and_key_from_env(fake_server, fast_retry, monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "env-key")
    model = gt_llm.load_model("groq", base_url=fake_server.url, retry=fast_retry)
    assert model.model == DEFAULT_MODEL and model.spec == f"groq:{DEFAULT_MODEL}"
    assert model.ask("hi") == "echo: hi (seed 0)"
    assert fake_server.requests[0].headers["authorization"] == "Bearer env-key"


def test_groq_base_url_env_is_honoured_by_the_sdk(fake_server, fast_retry, monkeypatch):
    monkeypatch.setenv("GROQ_BASE_URL", fake_server.url)
    model = GroqModel("m", api_key="k", retry=fast_retry)
    assert model.url == fake_server.url + GROQ_PATH
    assert model.ask("x", seed=3) == "echo: x (seed 3)"
    assert fake_server.request_count == 1


def test_429_with_retry_after_then_success(fake_server):
    fake_server.enqueue(
        Canned(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0.5"})
    )
    sleep = SleepRecorder()
    policy = RetryPolicy(max_attempts=3, base_delay=0.01, jitter=0.2)
    model = make(fake_server, policy, sleep=sleep)
    assert model.ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 2
    # Retry-After (0.5 s) wins over the 0.01 s backoff; jitter only adds.
    assert len(sleep.waits) == 1 and 0.5 <= sleep.waits[0] <= 0.5 * 1.2


def test_500_then_success(fake_server, fast_retry):
    fake_server.enqueue(Canned(status=500, body={"error": {"message": "boom"}}))
    assert make(fake_server, fast_retry).ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 2


def test_timeout_then_success(fake_server, fast_retry):
    fake_server.enqueue(Canned(delay=2.0))  # longer than the client's timeout
    model = make(fake_server, fast_retry, timeout=0.3)
    assert model.ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 2


def test_timeouts_exhaust_retries(fake_server):
    fake_server.enqueue(Canned(delay=2.0), Canned(delay=2.0))
    policy = RetryPolicy(max_attempts=2, base_delay=0.01)
    with pytest.raises(BackendError, match="timed out") as err:
        make(fake_server, policy, timeout=0.2).ask("q")
    assert err.value.retryable
    assert fake_server.url in str(err.value)


def test_5xx_exhausts_retries_retryable(fake_server, fast_retry):
    fake_server.enqueue(*[Canned(status=503, body={"error": {"message": "busy"}})] * 3)
    with pytest.raises(BackendError, match="failed after 3 attempt") as err:
        make(fake_server, fast_retry).ask("q")
    assert err.value.retryable
    assert "\n" not in str(err.value)
    assert fake_server.request_count == 3


def test_truncated_json_is_retried_then_answered(fake_server, fast_retry):
    fake_server.enqueue(Canned(body=b'{"choices": [ {"message": '))
    assert make(fake_server, fast_retry).ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 2


def test_empty_choices_exhaust_the_attempts(fake_server, fast_retry):
    fake_server.enqueue(*[Canned(body={"id": "x", "choices": [], "usage": {}})] * 3)
    with pytest.raises(BackendError, match="no choices") as err:
        make(fake_server, fast_retry).ask("q")
    assert err.value.retryable and fake_server.request_count == 3


@pytest.mark.parametrize(
    ("status", "needle"), [(400, "HTTP 400"), (401, "GROQ_API_KEY"), (404, "unknown model")]
)
def test_client_errors_are_not_retried(fake_server, fast_retry, status, needle):
    fake_server.enqueue(Canned(status=status, body={"error": {"message": "nope"}}))
    with pytest.raises(BackendError, match=needle) as err:
        make(fake_server, fast_retry).ask("q")
    assert not err.value.retryable
    assert fake_server.request_count == 1


def test_missing_key_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="GROQ_API_KEY") as err:
        gt_llm.load_model("groq")
    assert "\n" not in str(err.value)


def test_requests_per_minute_limits_through_the_backend(fake_server, fast_retry):
    sleep = SleepRecorder()
    model = make(fake_server, fast_retry, requests_per_minute=600, sleep=sleep)
    for i in range(3):
        model.ask("q", seed=i)
    # 600/min = one every 0.1 s; the first is free, the next two wait (fake sleep: ~0.1, ~0.2).
    assert len(sleep.waits) == 2 and all(w > 0.05 for w in sleep.waits)


def test_sdk_retries_are_off(fake_server):
    fake_server.enqueue(Canned(status=500, body={"error": {"message": "boom"}}))
    with pytest.raises(BackendError, match="failed after 1 attempt"):
        make(fake_server, RetryPolicy(max_attempts=1)).ask("q")
    assert fake_server.request_count == 1  # the SDK itself would have retried twice


def test_jitter_comes_from_the_instance_seed(fake_server):
    def waits() -> list[float]:
        fake_server.enqueue(*[Canned(status=502, body="bad")] * 2)
        sleep = SleepRecorder()
        make(fake_server, RetryPolicy(max_attempts=3, base_delay=0.01), sleep=sleep).ask("q")
        return sleep.waits

    random.seed(0)
    state = random.getstate()
    assert waits() == waits()
    assert random.getstate() == state  # the global RNG is never used
