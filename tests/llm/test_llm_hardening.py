"""Each fault made real (fake server, real processes), one test per point.

Budgets and timeouts are fractions of a second so that the whole file stays fast.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import traceback

import pytest
from fake_server import HANG, Canned, FakeChatServer, completion_body

import gt_llm
from gt_llm.backends.groq_backend import GroqModel
from gt_llm.cache import CachedModel
from gt_llm.cli import main
from gt_llm.errors import AnswerTooLargeError, BackendError, ConfigurationError
from gt_llm.retry import RetryPolicy
from gt_llm.safety import redact, register_secret, terminal_safe
from tests.cli_runner import run_cli

BACKENDS = ["openai", "groq"]


def make(server: FakeChatServer, backend: str, **kw) -> gt_llm.ChatModel:
    """A remote model of either kind talking to the fake server."""
    kw.setdefault("timeout", 5.0)
    kw.setdefault("jitter_seed", 0)
    if backend == "groq":
        return GroqModel(
            "llama-test", api_key=kw.pop("api_key", "test-key"), base_url=server.url, **kw
        )
    return gt_llm.load_model(f"openai:qwen-test@{server.url}/v1", **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(child_env, *args: str, env_extra: dict[str, str] | None = None):
    """``gt-llm ARGS`` in this process (``tests/cli_runner.py``) with the child's environment."""
    return run_cli(args, env=dict(child_env, **(env_extra or {})))


# -- per-request timeout and a total retry budget ---------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_hung_server_fails_within_the_retry_budget(fake_server, backend):
    fake_server.enqueue(*[Canned(delay=HANG)] * 20)
    model = make(fake_server, backend, timeout=0.3, retry_budget=1.0,
                 retry=RetryPolicy(base_delay=0.05))  # fmt: skip
    start = time.monotonic()
    with pytest.raises(BackendError) as err:
        model.ask("q")
    took = time.monotonic() - start
    msg = str(err.value)
    assert 0.6 <= took < 2.0, took  # several timed-out attempts, never past budget + margin
    assert "within the retry budget of 1 s" in msg and "timed out" in msg
    assert err.value.retryable and "\n" not in msg
    assert fake_server.request_count >= 2


def test_budget_error_through_the_cache_says_how_to_resume(fake_server, tmp_path):
    fake_server.enqueue(*[Canned(status=503, body="busy")] * 50)
    path = tmp_path / "c.sqlite"
    model = gt_llm.load_model(f"openai:m@{fake_server.url}/v1", cache=path, retry_budget=0.3,
                              retry=RetryPolicy(base_delay=0.02, max_delay=0.05))  # fmt: skip
    with pytest.raises(BackendError) as err:
        model.ask("q")
    msg = str(err.value)
    assert "HTTP 503" in msg and "within the retry budget of 0.3 s" in msg
    assert f"re-run the same command to resume: {path} keeps every finished call" in msg
    assert len(model) == 0


def test_load_model_validates_call_options_before_anything(tmp_path):
    cache = tmp_path / "never.sqlite"
    for bad in [{"timeout": 0}, {"retry_budget": -1}, {"requests_per_minute": 0},
                {"max_answer_bytes": 0}, {"timeout": float("inf")}]:  # fmt: skip
        name = next(iter(bad))
        with pytest.raises(ValueError, match=f"load_model: {name} must be"):
            gt_llm.load_model("openai:m@http://127.0.0.1:9/v1", cache=cache, **bad)
    assert not cache.exists()
    # Local backends take the same flags and ignore them.
    assert gt_llm.load_model("scripted", timeout=5, retry_budget=9).ask("hi")


# -- max_delay caps every wait, jitter included -------------------------------------------------


def test_max_delay_bounds_the_wait_including_jitter():
    policy = RetryPolicy(max_delay=30.0, jitter=1.0)
    rng = random.Random(0)
    waits = [policy.wait_for(1, 30.0, rng) for _ in range(200)]
    waits += [policy.wait_for(k, None, rng) for k in range(1, 40) for _ in range(5)]
    assert max(waits) <= 30.0
    assert policy.wait_for(1, 10.0, random.Random(1)) >= 10.0  # never earlier than asked


@pytest.mark.parametrize("backend", BACKENDS)
def test_retry_after_above_max_delay_gives_up_at_once(fake_server, backend):
    fake_server.enqueue(Canned(status=429, headers={"Retry-After": "60"}, body="slow down"))
    model = make(fake_server, backend, retry=RetryPolicy(max_delay=30.0))
    start = time.monotonic()
    with pytest.raises(BackendError, match="retry after 60 s, more than max_delay=30 s"):
        model.ask("q")
    assert time.monotonic() - start < 1.0 and fake_server.request_count == 1


def test_retry_after_wait_never_exceeds_max_delay(fake_server):
    waits: list[float] = []
    fake_server.enqueue(*[Canned(status=429, headers={"Retry-After": "0.5"}, body="x")] * 5)
    model = make(fake_server, "openai", sleep=waits.append,
                 retry=RetryPolicy(max_delay=0.5, jitter=1.0))  # fmt: skip
    assert model.ask("q") == "echo: q (seed 0)"
    assert len(waits) == 5 and all(0.5 <= w <= 0.5 for w in waits)


# -- transient faults are retried under the budget ------------------------------------------


FAULTS = {
    "429 burst with Retry-After": [Canned(status=429, headers={"Retry-After": "0.01"}, body="x")]
    * 30,
    "429 burst without Retry-After": [Canned(status=429, body="x")] * 10,
    "5xx": [Canned(status=500, body="a"), Canned(status=502, body="b"), Canned(status=503)],
    "malformed then good": [Canned(body="<html>proxy error</html>")],
    "empty body": [Canned(body=b"")],
    "no choices": [Canned(body={"choices": []})],
    "connection reset": [Canned(reset=True), Canned(reset=True)],
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_transient_faults_are_retried_then_answered(fake_server, backend, fault):
    fake_server.enqueue(*FAULTS[fault])
    model = make(fake_server, backend, retry_budget=10.0,
                 retry=RetryPolicy(base_delay=0.005, max_delay=0.02))  # fmt: skip
    assert model.ask("q", seed=4) == "echo: q (seed 4)"
    assert fake_server.request_count == len(FAULTS[fault]) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_refused_connection_fails_fast(backend):
    dead = FakeChatServer().start()
    dead.stop()  # the port is closed now: connections are refused
    model = make(dead, backend, retry_budget=30.0)
    start = time.monotonic()
    with pytest.raises(
        BackendError, match=r"nothing is listening at .* \(connection refused\)"
    ) as err:
        model.ask("q")
    assert time.monotonic() - start < 1.0 and not err.value.retryable


def test_refused_after_a_first_answer_is_retried_as_a_restart():
    server = FakeChatServer().start()
    model = make(server, "openai", retry_budget=0.4, retry=RetryPolicy(base_delay=0.02))
    assert model.ask("a") == "echo: a (seed 0)"
    server.stop()
    start = time.monotonic()
    with pytest.raises(BackendError, match="within the retry budget of 0.4 s") as err:
        model.ask("b")
    assert err.value.retryable and "failed after 1 attempt" not in str(err.value)
    assert 0.1 <= time.monotonic() - start < 1.0


# -- secrets never printed ------------------------------------------------------------------------

SECRET_KEYS = {
    "openai": "sk-proj-Zx81TopSecretValue000111",
    "groq": "gsk_TopSecretGroqKey9988776655",
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_401_echoing_the_authorization_header_does_not_leak_the_key(
    fake_server, backend, caplog, monkeypatch
):
    key = SECRET_KEYS[backend]
    fake_server.enqueue(Canned(status=401, echo_auth=True))
    if backend == "openai":
        monkeypatch.setenv("OPENAI_API_KEY", key)
        model = make(fake_server, backend)
    else:
        model = make(fake_server, backend, api_key=key)
    with caplog.at_level(logging.DEBUG), pytest.raises(BackendError) as err:
        model.ask("q")
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {key}"  # it was echoed
    text = str(err.value) + repr(err.value) + "".join(traceback.format_exception(err.value))
    assert "401" in str(err.value) and "[REDACTED]" in str(err.value)
    assert key not in text and key not in caplog.text
    assert key[6:] not in text  # not even a tail of it


def test_the_cli_never_prints_the_key(child_env, fake_server):
    key = "plainkey-0123456789abcdef"  # no known shape: redacted because it is configured
    fake_server.enqueue(Canned(status=401, echo_auth=True), Canned(status=500, echo_auth=True))
    for _ in range(2):  # a 401, then a 5xx that spends the budget
        proc = cli(child_env, "-vv", "ask", "-b", f"openai:m@{fake_server.url}/v1", "hi",
                   "--retry-budget", "0.5", env_extra={"OPENAI_API_KEY": key})  # fmt: skip
        assert proc.returncode == 2
        assert key not in proc.stderr + proc.stdout
        assert "Bearer [REDACTED]" in proc.stderr


def test_redact_patterns():
    register_secret("configured-secret-42")
    text = redact(
        "a configured-secret-42 b Authorization: Bearer abc.def-ghi c sk-ABCDEFGH12345 "
        "d gsk_abcdefgh1234 e authorization=rawtoken123"
    )
    for secret in ["configured-secret-42", "abc.def-ghi", "sk-ABCDEFGH12345", "gsk_abcdefgh1234",
                   "rawtoken123"]:  # fmt: skip
        assert secret not in text
    assert redact("ask for a skeleton; a bearer of news") == "ask for a skeleton; a bearer of news"


# -- terminal safety and the answer-size cap -----------------------------------------------------


def test_ask_escapes_control_characters(child_env, fake_server):
    nasty = "ok\x00\x1b]0;pwned\x07\x1b[2J\rline\u202edesrever\u2066x\x9b\nnext\tline"
    fake_server.enqueue(Canned(body=completion_body(nasty)))
    proc = cli(child_env, "ask", "-b", f"openai:m@{fake_server.url}/v1", "hi")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for ch in "\x00\x1b\x07\r\u202e\u2066\x9b":
        assert ch not in out
    assert out == (
        "ok\\x00\\x1b]0;pwned\\x07\\x1b[2J\\x0dline\\u202edesrever\\u2066x\\x9b\nnext\tline\n"
    )
    assert terminal_safe("plain text\n\ttabbed, é, 漢字") == "plain text\n\ttabbed, é, 漢字"


@pytest.mark.parametrize("backend", BACKENDS)
def test_oversize_answer_is_an_error_and_never_cached(fake_server, backend, tmp_path):
    fake_server.enqueue(Canned(body=completion_body("x" * (1 << 20))))
    model = CachedModel(make(fake_server, backend), tmp_path / "c.sqlite")
    with pytest.raises(AnswerTooLargeError, match="max_answer_bytes=65,536") as err:
        model.ask("q")
    assert "1,048,576 bytes" in str(err.value) or "response body" in str(err.value)
    assert fake_server.request_count == 1 and len(model) == 0  # not retried, not stored
    # A larger cap accepts it (here through load_model, as the CLI does).
    fake_server.enqueue(Canned(body=completion_body("y" * 100_000)))
    big = gt_llm.load_model(f"openai:m@{fake_server.url}/v1", max_answer_bytes=200_000)
    assert len(big.ask("q")) == 100_000


def test_cli_max_answer_bytes(capsys, fake_server):
    fake_server.enqueue(Canned(body=completion_body("z" * 2000)))
    code = main(["ask", "-b", f"openai:m@{fake_server.url}/v1", "--max-answer-bytes", "1000", "hi"])
    assert code == 2 and "more than max_answer_bytes=1,000" in capsys.readouterr().err


# -- the cache refuses files that are not gt-llm caches ------------------------------------------


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _old_cache(path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT, text TEXT, created REAL)")
    conn.execute("INSERT INTO calls VALUES ('k', 'm', 't', 0)")
    conn.commit()
    conn.close()


def _unrelated(path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT, age INTEGER)")
    conn.execute("INSERT INTO people VALUES ('ada', 36)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("kind", "needle"),
    [("old 4-column cache", "'calls' table with 4 columns"),
     ("unrelated SQLite file", "not a gt-llm cache (its tables are people"),
     ("not SQLite", "is not a SQLite database")],
)  # fmt: skip
def test_foreign_cache_files_are_refused_before_any_call_and_left_alone(
    child_env, fake_server, tmp_path, kind, needle
):
    path = tmp_path / "cache.sqlite"
    if kind == "old 4-column cache":
        _old_cache(path)
    elif kind == "unrelated SQLite file":
        _unrelated(path)
    else:
        path.write_text("these are my notes, not a database\n" * 10)
    before = _digest(path)
    proc = cli(child_env, "ask", "-b", f"openai:m@{fake_server.url}/v1", "--cache", str(path), "hi")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "--cache PATH" in lines[0]
    assert fake_server.request_count == 0  # refused before any call
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite"]  # no -wal/-shm either


def test_a_new_file_and_an_existing_cache_are_accepted(tmp_path):
    path = tmp_path / "c.sqlite"
    with gt_llm.load_model("scripted", cache=path) as model:
        model.ask("a")
    with gt_llm.load_model("scripted", cache=path) as model:
        assert model.ask("a") and model.stats().hits == 1


# -- gt-llm backends: configured versus reachable ------------------------------------------------


def test_backends_checks_an_openai_url_quickly(child_env, fake_server):
    up = cli(child_env, "backends", f"openai:m@{fake_server.url}/v1")
    assert up.returncode == 0, up.stdout + up.stderr
    assert "HTTP 200" in up.stdout
    row = next(line for line in up.stdout.splitlines() if line.startswith("openai:m@"))
    assert row.split()[1:3] == ["yes", "yes"]

    url = f"http://127.0.0.1:{free_port()}/v1"
    start = time.monotonic()
    down = cli(child_env, "backends", f"openai:m@{url}")
    assert time.monotonic() - start < 10
    assert down.returncode == 1
    row = next(line for line in down.stdout.splitlines() if line.startswith("openai:m@"))
    assert row.split()[1:3] == ["yes", "no"]
    assert "connection refused" in down.stdout


def test_backends_groq_configured_and_reachable_only_with_check(child_env, fake_server):
    env = {"GROQ_API_KEY": "gsk_fakefakefakefake", "GROQ_BASE_URL": fake_server.url}
    listed = cli(child_env, "backends", env_extra=env)
    groq_row = next(line for line in listed.stdout.splitlines() if line.startswith("groq "))
    assert groq_row.split()[1:4] == ["yes", "not", "checked"]
    assert fake_server.request_count == 0 and "gsk_fake" not in listed.stdout
    checked = cli(child_env, "backends", "--check", env_extra=env)
    groq_row = next(line for line in checked.stdout.splitlines() if line.startswith("groq "))
    assert groq_row.split()[1:3] == ["yes", "yes"]
    dead = dict(env, GROQ_BASE_URL=f"http://127.0.0.1:{free_port()}")
    checked = cli(child_env, "backends", "--check", "groq", env_extra=dead)
    assert checked.returncode == 1 and "connection refused" in checked.stdout


# -- two processes sharing one cache pay once ------------------------------------------------------

CHILD = r"""
import json, sys
import gt_llm
url, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
model = gt_llm.load_model(f"openai:m@{url}/v1", cache=path, timeout=30, max_concurrency=n)
out = model.complete_batch([gt_llm.user_request(f"q{i}", seed=i) for i in range(n)])
s = model.stats()
print(json.dumps({"texts": [r.text for r in out], "hits": s.hits, "misses": s.misses}))
"""


def test_two_processes_sharing_a_cache_pay_once_per_request(fake_server, child_env, tmp_path):
    fake_server.delay = 0.6
    path = str(tmp_path / "shared.sqlite")
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, fake_server.url, path, "4"],
                         env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    results = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert fake_server.request_count == 4  # not 8
    assert (
        results[0]["texts"] == results[1]["texts"] == [f"echo: q{i} (seed {i})" for i in range(4)]
    )
    assert sorted(r["misses"] for r in results) in ([0, 4], [1, 3], [2, 2])
    assert sum(r["misses"] for r in results) == 4 and sum(r["hits"] for r in results) == 4


def test_a_killed_lease_holder_does_not_block_the_next_run(fake_server, child_env, tmp_path):
    path = str(tmp_path / "shared.sqlite")
    fake_server.enqueue(Canned(delay=HANG))
    first = subprocess.Popen([sys.executable, "-c", CHILD, fake_server.url, path, "1"],
                             env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while fake_server.request_count < 1:
            assert time.monotonic() < deadline, "the first process sent nothing"
            time.sleep(0.01)
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait(timeout=10)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM inflight").fetchone()[0] == 1  # its lease is left
    conn.close()
    start = time.monotonic()
    second = subprocess.run([sys.executable, "-c", CHILD, fake_server.url, path, "1"],
                            env=child_env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["texts"] == ["echo: q0 (seed 0)"]
    assert time.monotonic() - start < 15  # took the dead process's lease over at once


# -- option errors name the flag ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--seed", "-5"], "argument --seed: must be a whole number >= 0, got -5"),
     (["--seed", "x"], "argument --seed: expected a whole number, got 'x'"),
     (["--max-tokens", "0"], "argument --max-tokens: must be a whole number >= 1, got 0"),
     (["--timeout", "-1"], "argument --timeout: must be a number greater than 0"),
     (["--retry-budget", "0"], "argument --retry-budget: must be a number greater than 0")],
)  # fmt: skip
def test_bad_numbers_name_the_flag(capsys, args, needle):
    with pytest.raises(SystemExit) as exit_:
        main(["ask", *args, "hi"])
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines


def test_configuration_errors_are_one_line(tmp_path):
    with pytest.raises(ConfigurationError) as err:
        CachedModel(gt_llm.load_model("scripted"), tmp_path)
    assert "\n" not in str(err.value)


def test_a_failed_lease_holder_hands_the_call_to_the_waiter(fake_server, tmp_path):
    # Two cache instances on one file (as two processes would be): the first call fails
    # for good, its lease is released, and the waiting instance makes the call itself.
    import threading

    fake_server.enqueue(Canned(status=400, body="bad request", delay=0.4))
    path = tmp_path / "c.sqlite"
    first = gt_llm.load_model(f"openai:m@{fake_server.url}/v1", cache=path)
    second = gt_llm.load_model(f"openai:m@{fake_server.url}/v1", cache=path)
    errors: list[BaseException] = []

    def run_first() -> None:
        try:
            first.ask("q")
        except BackendError as exc:
            errors.append(exc)

    thread = threading.Thread(target=run_first)
    thread.start()
    deadline = time.monotonic() + 10
    while fake_server.request_count < 1:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    start = time.monotonic()
    assert second.ask("q") == "echo: q (seed 0)"
    # It waited for the first call (0.4 s) rather than sending at once, then called itself.
    assert time.monotonic() - start >= 0.3
    thread.join(timeout=10)
    assert len(errors) == 1 and "HTTP 400" in str(errors[0])
    assert fake_server.request_count == 2 and len(second) == 1
