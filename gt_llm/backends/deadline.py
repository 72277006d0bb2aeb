"""A wall-clock deadline and cancellation on every socket wait of an HTTP request.

A remote backend's attempt must end by its timeout, headers and whole body
included, and at once when the run is interrupted. httpx's own timeouts bound
each socket operation, not the request, so a server trickling its answer byte
by byte could stretch an attempt without end; and httpx has no public hook for
the network layer. :func:`deadline_client` therefore makes an ``httpx.Client``
whose transports' httpcore network backend is wrapped (:class:`_DeadlineBackend`):
every read waits at most :data:`POLL_SECONDS` at a time and in between checks
the deadline set by :func:`call_deadline` and the process-wide cancellation
flag of :mod:`gt_llm.retry` (:func:`~gt_llm.retry.cancel_calls`, set by Ctrl-C);
connects, writes and TLS handshakes get their timeout shortened to the deadline.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

from gt_llm.retry import cancellable_sleep, check_not_cancelled

#: Longest single wait on a socket: the deadline and cancellation are checked this often.
POLL_SECONDS = 0.2

_CALL = threading.local()


@contextlib.contextmanager
def call_deadline(deadline: float) -> Iterator[None]:
    """Bounds the HTTP requests this thread makes in the block by ``deadline`` (monotonic s).

    Applies to clients made by :func:`deadline_client`: connecting, sending,
    the headers and the whole body must be done by then, or the request fails
    with ``httpx.ReadTimeout`` (or ``ConnectTimeout``/``WriteTimeout``).
    """
    previous = getattr(_CALL, "deadline", None)
    _CALL.deadline = deadline
    try:
        yield
    finally:
        _CALL.deadline = previous


def _until(timeout: float | None, start: float) -> float:
    """When a socket wait started at ``start`` must end: its timeout or the call's deadline."""
    end = math.inf if timeout is None else start + timeout
    deadline = getattr(_CALL, "deadline", None)
    return end if deadline is None else min(end, deadline)


def _bounded(timeout: float | None) -> float | None:
    """``timeout`` shortened to the call's deadline (never below a millisecond).

    Raises:
      CallCancelled: calls are cancelled.
    """
    check_not_cancelled("HTTP request")
    now = time.monotonic()
    end = _until(timeout, now)
    return None if end == math.inf else max(0.001, end - now)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose reads wait in short slices, checking the deadline and cancellation."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        start = time.monotonic()
        end = _until(timeout, start)
        while True:
            check_not_cancelled("HTTP request")
            left = end - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("no complete answer within the attempt's timeout")
            try:
                return self._inner.read(max_bytes, min(left, POLL_SECONDS))
            except httpcore.ReadTimeout:
                continue  # a slice ended without data: check the deadline and cancellation

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend with :class:`_DeadlineStream` streams."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host,
            port,
            _bounded(timeout),
            local_address=local_address,
            socket_options=socket_options,
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(
            path, _bounded(timeout), socket_options=socket_options
        )
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        cancellable_sleep(seconds)


def deadline_client(**kwargs: Any) -> httpx.Client:
    """An ``httpx.Client`` (``kwargs`` as for it) that honours :func:`call_deadline` and cancellation.

    Every transport the client has (its own and any proxy mounts from the
    environment) gets the deadline-checking network backend.

    Raises:
      RuntimeError: this httpx/httpcore keeps its connection pool elsewhere
        (the deadline could not be applied; use the versions the project pins).
    """
    client = httpx.Client(**kwargs)
    # httpx has no public hook for the network backend: patch each transport's pool.
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        if transport is None:
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:
            client.close()
            raise RuntimeError(
                f"deadline_client: httpx {httpx.__version__} / httpcore {httpcore.__version__} "
                "keep no transport._pool._network_backend; install the ranges pyproject.toml names"
            )
        if not isinstance(backend, _DeadlineBackend):
            pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    return client
