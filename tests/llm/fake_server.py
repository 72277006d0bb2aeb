"""A small scripted chat-completions server for offline backend tests.

It listens on 127.0.0.1 on a random port, in a daemon thread, and answers
both ``/openai/v1/chat/completions`` (the path the groq SDK posts to) and
``/v1/chat/completions``. Each test scripts it with a queue of canned
responses (status, headers, body, delay); when the queue is empty it answers
with a valid completion whose text echoes the request. Every request is
recorded. :meth:`FakeChatServer.stop` wakes handlers that are still sleeping,
so a test never waits for a long scripted delay at teardown.

Fault modes (see :class:`Canned`): any status and ``Retry-After``, a hang
(``delay=HANG``), a connection reset (``reset=True``), a 401 whose body
echoes the request's ``Authorization`` header (``echo_auth=True``), raw or
empty bodies, and any answer text (control characters, megabytes). ``GET``
on any path answers a model list, for reachability checks.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import struct
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion_body(
    text: str, *, prompt_tokens: int = 7, completion_tokens: int = 3, model: str = "m"
) -> dict[str, Any]:
    """A valid chat-completions response body."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def echo_text(body: dict[str, Any]) -> str:
    """The default answer: a deterministic function of the request."""
    messages = body.get("messages") or [{}]
    return f"echo: {messages[-1].get('content', '')} (seed {body.get('seed')})"


#: A delay longer than any test: the server hangs until it is stopped.
HANG = 3600.0


@dataclasses.dataclass
class Canned:
    """One scripted response.

    Attributes:
      status: HTTP status.
      body: A dict (sent as JSON), raw ``bytes``/``str``, or ``None`` for the echo completion.
      headers: Extra headers.
      delay: Seconds to wait before answering (``HANG``: until the server stops).
      reset: Drop the connection with a TCP reset instead of answering.
      echo_auth: Answer with an error body quoting the ``Authorization`` header
        (as some misconfigured servers and proxies do).
    """

    status: int = 200
    body: dict[str, Any] | bytes | str | None = None
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    delay: float = 0.0
    reset: bool = False
    echo_auth: bool = False


@dataclasses.dataclass(frozen=True)
class Recorded:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


class _Listener(ThreadingHTTPServer):
    """The threading server with a long listen backlog.

    The default backlog (5) drops the connections of a burst of concurrent
    requests, which the client then retries after a second: a latency the
    server never meant to add.
    """

    request_queue_size = 256


class FakeChatServer:
    """A scripted chat-completions server (start/stop, or use as a context manager).

    Args:
      delay: Default delay of echo answers, in seconds.
    """

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        self._queue: deque[Canned] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.requests: list[Recorded] = []
        self.responses_sent = 0
        #: Requests being answered right now, and the most at any one time.
        self.active = 0
        self.max_active = 0
        self._httpd = _Listener(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *canned: Canned) -> None:
        """Adds scripted responses, answered in order before falling back to echo."""
        with self._lock:
            self._queue.extend(canned)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def wait_for_responses(self, n: int, timeout: float = 10.0) -> bool:
        """Waits until at least ``n`` responses were sent completely."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.responses_sent >= n:
                    return True
            time.sleep(0.005)
        return False

    def start(self) -> FakeChatServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, body: Any) -> Canned:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return Canned(body=None, delay=self.delay)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                data = json.dumps({"object": "list", "data": [{"id": "m"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", errors="replace")
                with server._lock:
                    server.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                canned = server._next(body)
                with server._lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    stopping = bool(canned.delay) and server._stop.wait(canned.delay)
                finally:
                    with server._lock:
                        server.active -= 1
                if stopping:
                    return  # stopping: drop the connection
                if canned.reset:
                    # SO_LINGER 0: closing sends a TCP reset, as a crashing server would.
                    linger = struct.pack("ii", 1, 0)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.close_connection = True
                    return
                if canned.echo_auth:
                    auth = self.headers.get("Authorization", "")
                    canned = dataclasses.replace(
                        canned,
                        body={"error": {"message": f"invalid credentials: Authorization: {auth}"}},
                    )
                if not self.path.endswith("/chat/completions"):
                    canned = Canned(status=404, body={"error": {"message": "no such path"}})
                payload = canned.body
                if payload is None:
                    payload = completion_body(echo_text(body if isinstance(body, dict) else {}))
                data = (
                    json.dumps(payload).encode()
                    if isinstance(payload, dict)
                    else payload.encode()
                    if isinstance(payload, str)
                    else payload
                )
                try:
                    self.send_response(canned.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in canned.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except OSError:
                    return  # the client gave up (e.g. its timeout): nothing to answer
                with server._lock:
                    server.responses_sent += 1

        return Handler
