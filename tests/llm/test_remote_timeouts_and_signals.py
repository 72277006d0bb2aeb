"""Trickling servers, Ctrl-C on remote runs, llama-cpp-python.

* An attempt's ``--timeout`` bounds the whole answer, headers and body: a
  server trickling its answer byte by byte no longer stretches a call past
  its retry budget, in ``ask`` and in every model-calling command.
* Ctrl-C on a remote run (``werewolf play --jobs 4``, and the commands whose
  calls run in worker threads) exits within seconds with the usual one line,
  without waiting for the calls in flight, without lease warnings; a resume
  finishes and leaves no ``.partial`` log.
* A server refusing ``response_format: json_schema`` with a validation error
  (llama-cpp-python's HTTP 500 "Input should be 'text' or 'json_object'") gets
  ``json_object`` with the schema, then the prompt alone, remembered for the
  run; a body saying the request is invalid is never retried.

The loopback server here writes raw HTTP so that it can trickle the status
line and headers too, and answers structured requests with a minimal valid
instance of their schema (so game commands run without re-asks).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gt_llm.backends.openai_compat import OpenAICompatModel
from gt_llm.chat import ChatRequest, Message, user_request
from gt_llm.errors import BackendError
from gt_llm.retry import RetryPolicy
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]

#: llama-cpp-python's answer to ``response_format: {"type": "json_schema", ...}``.
LLAMA_CPP_REFUSAL = {
    "error": {
        "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


def instance(schema: Any) -> Any:
    """A minimal value matching a JSON schema of the kinds the answer formats make."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema:
        return next((v for v in schema["enum"] if v is not None), None)
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {k: instance(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 0)))
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return True
    return None


def answer_text(request: dict[str, Any]) -> str:
    """A valid answer to a structured request (its schema's minimal instance), else plain text."""
    fmt = request.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
    return "ok" if schema is None else json.dumps(instance(schema))


class RawServer:
    """A loopback chat-completions server written on raw sockets (one request per connection).

    Attributes:
      per_byte: Seconds between the bytes of every answer (status line and headers included).
      body_only: Send the status line and headers at once, trickle only the body.
      hang: Answer nothing until stopped.
      refuse: ``response_format`` types answered with llama-cpp-python's HTTP 500
        (``"none"`` stands for a request without one).
      formats: The ``response_format`` type of every request, in order.
    """

    def __init__(
        self, *, per_byte: float = 0.0, body_only: bool = False, hang: bool = False, refuse=()
    ) -> None:
        self.per_byte = per_byte
        self.body_only = body_only
        self.hang = hang
        self.refuse = set(refuse)
        self.formats: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.formats)

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            request = self._read(conn)
            fmt = (request.get("response_format") or {}).get("type", "none")
            with self._lock:
                self.formats.append(fmt)
            if self.hang:
                self._stop.wait()
                return
            if fmt in self.refuse:
                status, body = "500 Internal Server Error", LLAMA_CPP_REFUSAL
            else:
                text = answer_text(request)
                status, body = "200 OK", {"choices": [{"message": {"content": text}}]}
            data = json.dumps(body).encode()
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
            )
            out = head.encode() + data
            if not self.per_byte:
                conn.sendall(out)
                return
            if self.body_only:
                conn.sendall(head.encode())
                out = data
            for i in range(len(out)):
                conn.sendall(out[i : i + 1])
                if self._stop.wait(self.per_byte):
                    return
        except OSError:
            return  # the client gave up
        finally:
            conn.close()

    @staticmethod
    def _read(conn: socket.socket) -> dict[str, Any]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("client closed")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if head.startswith(b"GET "):
            return {}  # a reachability check: answered like a request without a format
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += conn.recv(65536)
        return json.loads(body)


def structured(task: str = "probe") -> ChatRequest:
    schema = {
        "type": "object",
        "properties": {"move": {"type": "string", "enum": ["left", "right"]}},
        "required": ["move"],
    }
    return ChatRequest(task=task, fields={}, messages=(Message("user", "move?"),), schema=schema)


#: The model-calling commands at tiny sizes (the issue's probes), without --backend/--out.
COMMANDS = {
    "ultimatum solve": ("ultimatum", "solve", "--iterations", "5"),
    "werewolf solve": (
        "werewolf", "solve", "--days", "1", "--speakers", "1", "--iterations", "5",
        "--models", "none", "--deals", "1",
    ),
    "fruit-trading run": (
        "fruit-trading", "run", "--inits", "1", "--max-messages", "2", "--num-seeds", "1",
        "--iterations", "5", "--no-generalisation", "--no-whole-game",
    ),
    "werewolf play": (
        "werewolf", "play", "--games", "2", "--max-rounds", "2", "--debate-turns", "1",
    ),
    "werewolf arena": (
        "werewolf", "arena", "--models", "gratr,none", "--games", "2", "--max-rounds", "2",
        "--debate-turns", "1",
    ),
}  # fmt: skip


@pytest.fixture
def clean_env(monkeypatch) -> Iterator[None]:
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield


# -- 7. --timeout bounds a trickling answer ------------------------------------------------


@pytest.mark.parametrize("body_only", [False, True], ids=["headers-and-body", "body"])
def test_a_trickling_answer_ends_the_attempt_at_its_timeout(body_only):
    with RawServer(per_byte=0.05, body_only=body_only) as server:
        model = OpenAICompatModel(
            "m", server.url, timeout=0.5, retry=RetryPolicy(max_attempts=1, budget=5)
        )
        start = time.monotonic()
        with pytest.raises(BackendError, match="timed out after 0.5 s"):
            model.complete(user_request("hi"))
        took = time.monotonic() - start
        model.close()
    assert took < 1.5, f"one attempt of --timeout 0.5 took {took:.1f} s"


def test_the_retry_budget_bounds_a_call_to_a_trickling_server():
    with RawServer(per_byte=0.05) as server:
        model = OpenAICompatModel(
            "m", server.url, timeout=0.4, retry=RetryPolicy(base_delay=0.05, budget=1.2)
        )
        start = time.monotonic()
        with pytest.raises(BackendError, match="retry budget of 1.2 s"):
            model.complete(user_request("hi"))
        took = time.monotonic() - start
        model.close()
    assert took < 2.0, f"a call with a 1.2 s budget took {took:.1f} s"


def test_the_groq_client_is_bounded_the_same_way(monkeypatch):
    pytest.importorskip("groq")
    from gt_llm.backends.groq_backend import GroqModel

    with RawServer(per_byte=0.05) as server:
        base = server.url.removesuffix("/v1")
        model = GroqModel(
            "m", api_key="k", base_url=base, timeout=0.5, retry=RetryPolicy(max_attempts=1)
        )
        start = time.monotonic()
        with pytest.raises(BackendError, match="timed out"):
            model.complete(user_request("hi"))
        took = time.monotonic() - start
        model.close()
    assert took < 1.5, f"one groq attempt of timeout 0.5 took {took:.1f} s"


def test_the_reachability_check_is_bounded_too():
    # What `gt-llm backends openai:MODEL@URL` runs (with 3 s).
    from gt_llm.backends.remote import probe_server

    with RawServer(per_byte=0.05) as server:
        start = time.monotonic()
        reachable, detail = probe_server(f"{server.url}/models", timeout=0.5)
        took = time.monotonic() - start
    assert not reachable and "no answer from" in detail, detail
    assert took < 1.5, f"a 0.5 s reachability check took {took:.1f} s"


@pytest.mark.parametrize("command", ["ask", *COMMANDS])
def test_every_command_stops_within_its_budget_on_a_trickling_server(command, tmp_path, clean_env):
    args = (
        ("ask", "hello")
        if command == "ask"
        else (*COMMANDS[command], "--out", str(tmp_path), "--no-progress")
    )
    with RawServer(per_byte=0.05) as server:
        start = time.monotonic()
        proc = run_cli(
            [*args, "--backend", f"openai:m@{server.url}", "--timeout", "0.4",
             "--retry-budget", "1"]
        )  # fmt: skip
        took = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "timed out after 0.4 s" in lines[0], proc.stderr
    assert took < 4.0, f"{command}: --retry-budget 1 with --timeout 0.4 took {took:.1f} s"


# -- 9. servers that refuse json_schema; invalid requests are not retried --------------------


def test_a_json_schema_refusal_falls_back_to_json_object_once_for_the_run():
    with RawServer(refuse={"json_schema"}) as server:
        model = OpenAICompatModel("m", server.url, timeout=5, retry_budget=10)
        first = model.complete(structured("a"))
        second = model.complete(structured("b"))
        model.close()
    assert json.loads(first.text) == {"move": "left"} == json.loads(second.text)
    # One refusal, then json_object (with the schema) for every later request.
    assert server.formats == ["json_schema", "json_object", "json_object"]
    assert model.schema_mode == "json_object"


def test_a_server_refusing_both_formats_gets_the_prompt_alone():
    with RawServer(refuse={"json_schema", "json_object"}) as server:
        model = OpenAICompatModel("m", server.url, timeout=5, retry_budget=10)
        model.complete(structured("a"))
        model.complete(structured("b"))
        model.close()
    assert server.formats == ["json_schema", "json_object", "none", "none"]
    assert model.schema_mode == "prompt"


def test_a_groq_server_refusing_json_schema_falls_back_too():
    pytest.importorskip("groq")
    from gt_llm.backends.groq_backend import JSON_SCHEMA_MODELS, GroqModel

    with RawServer(refuse={"json_schema"}) as server:
        base = server.url.removesuffix("/v1")
        model = GroqModel(
            sorted(JSON_SCHEMA_MODELS)[0], api_key="k", base_url=base, timeout=5, retry_budget=10
        )
        model.complete(structured("a"))
        model.complete(structured("b"))
        model.close()
    assert server.formats == ["json_schema", "json_object", "json_object"]


def test_a_validation_answer_is_not_retried(clean_env):
    # A 500 whose body says the request is invalid: the same request gets the same answer.
    with RawServer(refuse={"none"}) as server:
        start = time.monotonic()
        proc = run_cli(["ask", "hi", "--backend", f"openai:m@{server.url}", "--retry-budget", "60"])
        took = time.monotonic() - start
    assert proc.returncode == 2
    assert server.requests == 1, f"{server.requests} requests for one invalid request"
    assert "the server says the request is invalid: not retried" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert took < 5


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_runs_on_a_server_refusing_json_schema(command, tmp_path, clean_env):
    with RawServer(refuse={"json_schema"}) as server:
        proc = run_cli(
            [*COMMANDS[command], "--out", str(tmp_path), "--no-progress",
             "--backend", f"openai:m@{server.url}", "--retry-budget", "20"]
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # Refused once per call in flight when the first refusal came (8 at most), then remembered.
    refused = server.formats.count("json_schema")
    assert 1 <= refused <= 8, server.formats[:10]
    assert server.formats.count("json_object") == len(server.formats) - refused > refused
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]
    # Fruit trading also checks its judge, and this server's answers make a poor judge.
    warnings = [w for w in warnings if "fruit-trading judge-check" not in w]
    assert len(warnings) == 1 and "refuses response_format json_schema" in warnings[0], warnings


# -- 8. Ctrl-C on a remote run -------------------------------------------------------------


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def interrupt(args: list[str], server: RawServer, *, in_flight: int) -> tuple[int, str, float]:
    """Starts ``gt-llm ARGS``, sends SIGINT once ``in_flight`` requests hang; (code, stderr, s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gt_llm.cli", *args],
        env=child_env(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        # A child of a shell without job control may inherit SIGINT ignored: restore it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while server.requests < in_flight and proc.poll() is None:
            assert time.monotonic() < deadline, "the run never reached the server"
            time.sleep(0.02)
        time.sleep(0.3)  # the requests are being waited on
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"still running 20 s after Ctrl-C: {err[-500:]}")
        return proc.returncode, err, time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


HANG = {"hang": True}
TRICKLE = {"per_byte": 0.2}


@pytest.mark.parametrize(
    "command, extra, in_flight, server_kind",
    [
        ("werewolf play", ("--games", "4", "--jobs", "4"), 4, HANG),
        # Four of the six (about 3 s each) run in CI's slow step; the rest here.
        pytest.param("werewolf play", ("--games", "4", "--jobs", "4"), 4, TRICKLE,
                     marks=pytest.mark.slow),
        pytest.param("werewolf arena", ("--concurrency", "4"), 2, HANG, marks=pytest.mark.slow),
        pytest.param("werewolf solve", ("--concurrency", "4"), 4, HANG, marks=pytest.mark.slow),
        ("ultimatum solve", ("--concurrency", "4"), 4, HANG),
        pytest.param("fruit-trading run", ("--concurrency", "4"), 1, HANG,
                     marks=pytest.mark.slow),
    ],
    ids=["play", "play-trickling", "arena", "werewolf-solve", "ultimatum", "fruit"],
)  # fmt: skip
def test_ctrl_c_on_a_remote_run_stops_within_seconds_and_a_resume_finishes(
    command, extra, in_flight, server_kind, tmp_path
):
    out = tmp_path / "out"
    args = [*COMMANDS[command], *extra, "--out", str(out), "--no-progress"]
    with RawServer(**server_kind) as server:
        backend = ["--backend", f"openai:m@{server.url}", "--timeout", "60"]
        code, err, took = interrupt([*args, *backend], server, in_flight=in_flight)
    assert code == 130
    assert err == "gt-llm: interrupted\n", err  # one line: no traceback, no lease warnings
    # Far below the 60 s the hung requests would hold it; the exit itself (interpreter
    # teardown) took 5.1 s once on a 2-core machine running two model studies beside.
    assert took < 10, f"{command}: Ctrl-C took {took:.1f} s to stop the run"
    # No lease is left behind for the next run to wait out.
    with sqlite3.connect(out / "llm_cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM inflight").fetchone()[0] == 0
    with RawServer() as server:
        proc = run_cli([*args, "--backend", f"openai:m@{server.url}"])
    assert proc.returncode == 0, proc.stderr
    assert not sorted(out.rglob("*.partial")), "a resumed run left partial logs"


def test_closing_the_cache_under_a_call_in_flight_releases_its_lease_quietly(tmp_path, caplog):
    """A second Ctrl-C closes the cache while worker threads still finish their calls."""
    from gt_llm.cache import CachedModel
    from gt_llm.chat import ChatModel, ChatResponse, Usage

    started, finish = threading.Event(), threading.Event()

    class Slow(ChatModel):
        backend, model, remote = "slow", "m", True

        def complete(self, request: ChatRequest) -> ChatResponse:
            started.set()
            finish.wait(10)
            return ChatResponse("late", "slow", "m", Usage(1, 1), 0.0, cached=False)

    cache = CachedModel(Slow(), tmp_path / "calls.sqlite")
    errors: list[BaseException] = []

    def call() -> None:
        try:
            cache.complete(user_request("hi"))
        except BaseException as exc:  # the answer cannot be stored any more: expected
            errors.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    assert started.wait(10)
    with sqlite3.connect(tmp_path / "calls.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM inflight").fetchone()[0] == 1
    cache.close()
    with sqlite3.connect(tmp_path / "calls.sqlite") as db:  # released at close, not expired later
        assert db.execute("SELECT COUNT(*) FROM inflight").fetchone()[0] == 0
    with caplog.at_level("WARNING", logger="gt_llm.cache"):
        finish.set()
        worker.join(10)
    assert not [r for r in caplog.records if "lease" in r.getMessage()], caplog.text
    assert len(errors) == 1 and "cannot write" in str(errors[0])
