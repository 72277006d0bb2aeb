"""The ``openai`` (OpenAI-compatible) backend against the fake server."""

from __future__ import annotations

import socket
import time

import pytest
from fake_server import Canned, completion_body

import gt_llm
from gt_llm.backends.openai_compat import OpenAICompatModel
from gt_llm.errors import BackendError
from gt_llm.retry import RetryPolicy


def make(server, retry, **kw) -> OpenAICompatModel:
    kw.setdefault("timeout", 5.0)
    return gt_llm.load_model(f"openai:qwen-test@{server.url}/v1", retry=retry, jitter_seed=0, **kw)


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def free_port() -> int:
    """A port with nothing listening (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_success_sends_model_seed_temperature(fake_server, fast_retry):
    fake_server.enqueue(Canned(body=completion_body("hi!", prompt_tokens=5, completion_tokens=1)))
    model = make(fake_server, fast_retry)
    assert model.spec == f"openai:qwen-test@{fake_server.url}/v1"
    resp = model.complete(gt_llm.user_request("hello", seed=9, temperature=0.0, max_tokens=8))
    assert (resp.text, resp.backend, resp.model) == ("hi!", "openai", "qwen-test")
    assert resp.usage == gt_llm.Usage(5, 1)
    [req] = fake_server.requests
    assert req.path == "/v1/chat/completions"
    assert "authorization" not in req.headers  # no key configured, none sent
    assert req.body["model"] == "qwen-test"
    assert (req.body["seed"], req.body["temperature"], req.body["max_tokens"]) == (9, 0.0, 8)


def test_api_key_from_env_and_option(fake_server, fast_retry, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    make(fake_server, fast_retry).ask("a")
    make(fake_server, fast_retry, api_key="opt-key").ask("b")
    auth = [r.headers.get("authorization") for r in fake_server.requests]
    assert auth == ["Bearer env-key", "Bearer opt-key"]


def test_model_names_with_colons_parse(fake_server, fast_retry):
    model = gt_llm.load_model(f"openai:llama3:8b@{fake_server.url}/v1/", retry=fast_retry)
    assert (model.model, model.base_url) == ("llama3:8b", f"{fake_server.url}/v1")


@pytest.mark.parametrize(
    "spec", ["openai", "openai:", "openai:model-only", "openai:@http://x/v1", "openai:m@ftp://x"]
)
def test_bad_specs_name_the_expected_form(spec):
    with pytest.raises(ValueError, match="openai:MODEL@BASE_URL"):
        gt_llm.load_model(spec)


def test_429_retry_after_then_success(fake_server):
    fake_server.enqueue(Canned(status=429, headers={"Retry-After": "2"}, body="rate limited"))
    sleep = SleepRecorder()
    model = make(fake_server, RetryPolicy(max_attempts=2, base_delay=0.01, jitter=0.1), sleep=sleep)
    assert model.ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 2
    assert len(sleep.waits) == 1 and 2.0 <= sleep.waits[0] <= 2.2


def test_retry_after_beyond_max_delay_gives_up_at_once(fake_server):
    fake_server.enqueue(Canned(status=429, headers={"Retry-After": "3600"}, body="daily limit"))
    model = make(fake_server, RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=10))
    with pytest.raises(BackendError, match="retry after 3600") as err:
        model.ask("q")
    assert err.value.retryable and fake_server.request_count == 1


def test_500_then_success(fake_server, fast_retry):
    fake_server.enqueue(Canned(status=500, body="oops"), Canned(status=502, body="bad gateway"))
    assert make(fake_server, fast_retry).ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 3


def test_timeout_then_success(fake_server, fast_retry):
    fake_server.enqueue(Canned(delay=2.0))
    assert make(fake_server, fast_retry, timeout=0.3).ask("q") == "echo: q (seed 0)"
    assert fake_server.request_count == 2


def test_malformed_json_is_retried_then_reported(fake_server, fast_retry):
    fake_server.enqueue(*[Canned(body="<html>not json</html>")] * 3)
    with pytest.raises(BackendError, match="malformed JSON") as err:
        make(fake_server, fast_retry).ask("q")
    assert err.value.retryable and fake_server.request_count == 3


def test_empty_choices(fake_server, fast_retry):
    fake_server.enqueue(*[Canned(body={"choices": []})] * 3)
    with pytest.raises(BackendError, match="no choices"):
        make(fake_server, fast_retry).ask("q")


def test_401_mentions_the_key(fake_server, fast_retry):
    fake_server.enqueue(Canned(status=401, body={"error": "unauthorized"}))
    with pytest.raises(BackendError, match="OPENAI_API_KEY") as err:
        make(fake_server, fast_retry).ask("q")
    assert not err.value.retryable and fake_server.request_count == 1


def test_unreachable_server_names_the_url_and_fails_fast(fast_retry):
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = gt_llm.load_model(f"openai:m@{url}", retry=fast_retry, timeout=2.0)
    start = time.monotonic()
    with pytest.raises(BackendError) as err:
        model.ask("q")
    msg = str(err.value)
    assert time.monotonic() - start < 1.0  # no retries: nothing is listening
    assert not err.value.retryable
    assert f"nothing is listening at {url}/chat/completions (connection refused)" in msg
    assert "\n" not in msg


def test_batch_runs_concurrently_and_in_order(fake_server, fast_retry):
    fake_server.delay = 0.2
    model = make(fake_server, fast_retry, max_concurrency=8)
    requests = [gt_llm.user_request(f"q{i}", seed=i) for i in range(8)]
    out = model.complete_batch(requests)
    assert [r.text for r in out] == [f"echo: q{i} (seed {i})" for i in range(8)]
    # Concurrency shown by the server, not by the clock (a loaded machine stretches time):
    # with 0.2 s per answer and 8 callers, several requests were in flight together.
    assert fake_server.max_active >= 2
