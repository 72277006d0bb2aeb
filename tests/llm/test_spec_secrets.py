"""A spec's password and query key are never printed.

``gt-llm backends 'openai:m@http://alice:PASSWORD@127.0.0.1:PORT/v1?api_key=KEY'``
printed both secrets (the table and the note, with or without ``--check``).
The same probe runs through ``gt-llm ask``, a game command (``ultimatum
solve``, with every file it writes) and the usage errors of both: neither
secret, nor the base64 of ``alice:PASSWORD``, appears in any output.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_server import completion_body, echo_text

from tests.cli_runner import run_cli

PASSWORD = "hunter2PASS"
QUERY_KEY = "QUERYSECRET9"
SECRETS = (PASSWORD, QUERY_KEY, base64.b64encode(f"alice:{PASSWORD}".encode()).decode())


class _Handler(BaseHTTPRequestHandler):
    """Answers any chat-completions POST (query string and all) and any GET."""

    seen: list[tuple[str, str]]

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        self._send({"object": "list", "data": [{"id": "m"}]})

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self._send(completion_body(echo_text(body)))


@pytest.fixture
def server() -> Iterator[tuple[str, list]]:
    seen: list[tuple[str, str]] = []
    handler = type("Handler", (_Handler,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    port = httpd.server_address[1]
    try:
        yield f"openai:m@http://alice:{PASSWORD}@127.0.0.1:{port}/v1?api_key={QUERY_KEY}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _assert_no_secret(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} shows {secret!r}:\n{text[-2000:]}"


@pytest.mark.parametrize("check", [[], ["--check"]], ids=["plain", "check"])
def test_backends_shows_the_public_label_only(server, check):
    spec, _ = server
    proc = run_cli(["backends", *check, spec])
    _assert_no_secret("gt-llm backends", proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "api_key=[REDACTED]" in proc.stdout and "HTTP 200" in proc.stdout


def test_backends_of_an_unreachable_spec_shows_no_secret():
    spec = f"openai:m@http://alice:{PASSWORD}@127.0.0.1:9/v1?api_key={QUERY_KEY}"
    proc = run_cli(["backends", "--timeout", "2", spec])
    assert proc.returncode == 1
    _assert_no_secret("gt-llm backends (unreachable)", proc.stdout + proc.stderr)


def test_ask_shows_no_secret(server):
    spec, seen = server
    proc = run_cli(["-vv", "ask", "--backend", spec, "hello"])
    assert proc.returncode == 0, proc.stderr
    assert "echo: hello" in proc.stdout
    assert seen, "the request reached the server"
    _assert_no_secret("gt-llm ask", proc.stdout + proc.stderr)


def test_a_game_command_shows_and_writes_no_secret(server, tmp_path):
    spec, seen = server
    out = tmp_path / "u"
    proc = run_cli(["-vv", "ultimatum", "solve", "--backend", spec, "--iterations", "5",
                    "--no-progress", "--out", str(out)])  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert seen
    _assert_no_secret("gt-llm ultimatum solve", proc.stdout + proc.stderr)
    for path in Path(out).rglob("*"):
        if path.is_file():
            _assert_no_secret(str(path), path.read_bytes().decode("utf-8", errors="replace"))


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "--seed", "-1", "--backend", "{spec}", "hello"],
        ["ask", "--backend", "{spec}x:", "hello"],
        ["ultimatum", "solve", "--pie", "0", "--backend", "{spec}"],
        ["ultimatum", "solve", "--backend", "nosuch:{spec}"],
        ["werewolf", "play", "--max-rounds", "999", "--backend", "{spec}"],
    ],
    ids=["ask-flag", "ask-bad-spec", "solve-flag", "solve-unknown-backend", "play-flag"],
)
def test_usage_errors_show_no_secret(argv, tmp_path):
    spec = f"openai:m@http://alice:{PASSWORD}@127.0.0.1:9/v1?api_key={QUERY_KEY}"
    args = [a.replace("{spec}", spec) for a in argv]
    proc = run_cli([*args, "--out", str(tmp_path / "o")] if argv[0] != "ask" else args)
    assert proc.returncode == 2
    _assert_no_secret(f"gt-llm {' '.join(argv[:2])}", proc.stdout + proc.stderr)
