"""A persistent, process-safe call cache in front of any chat model.

:class:`CachedModel` wraps a :class:`~gt_llm.chat.ChatModel` and stores every
answer in SQLite, keyed by :meth:`ChatRequest.cache_key` (a hash of backend,
model, endpoint, messages, seed, temperature, max_tokens and sampler settings).
Since every call is meant to be a pure function of those, a stored answer is
*the* answer:

* the endpoint is the public label of the server a remote model is served
  from (:attr:`~gt_llm.chat.ChatModel.endpoint`: scheme, host, port and path;
  never a user, password or query value): two servers answering under one model
  name never share an answer. In-process models (``scripted``, ``local``) have
  none, and their keys are those they always were. A cache filled before the
  endpoint was part of the key is read as it is: its remote answers are simply
  not found, and asked again;

* each finished call is committed at once (autocommit, WAL), so a run killed
  at any point keeps every call it finished and a re-run makes no repeated
  calls. ``synchronous=NORMAL`` is enough for that: in WAL mode a committed
  transaction survives the death of the process, only an OS crash or power
  loss can drop the last few;
* several threads (``complete_batch``) share one connection under a lock, and
  several processes share the file through WAL and ``busy_timeout``;
* concurrent requests for the same key inside one process are de-duplicated:
  one backend call, the others wait for it. So the number of backend calls
  equals the number of distinct requests, which the tree builder relies on;
* for remote models the same holds across processes sharing the file: the
  first process to miss a key takes a *lease* on it (a row of the
  ``inflight`` table naming its host and pid, expiring after the model's
  longest possible call); another process missing the same key waits for the
  answer instead of paying for it again. A lease whose process has died (same
  host) or that has expired is taken over, so a killed run never blocks the
  next one. Local models (``scripted``) skip leases: their calls cost nothing;
* the file's schema is checked when it is opened, before any call: a file
  that is not a gt-llm cache (another program's SQLite file, an older layout
  of the ``calls`` table, not SQLite at all) is refused in one line and never
  altered (the file's schema and opening live in :mod:`gt_llm.cache_store`);
* every stored answer is UTF-8 text: a lone surrogate (which a JSON escape such
  as ``"\\ud800"`` decodes to) is stored and returned as U+FFFD, and a stored
  text that is not UTF-8 (written by another program) is read the same way,
  so no answer can fail a run or every re-run after it.

The table also keeps the task name and the request as JSON, for inspection
with any SQLite browser.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import sqlite3
import sys
import threading
import time
import uuid
from typing import Any

from gt_llm.cache_store import open_cache_db
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import BackendError, ConfigurationError, GtLlmError
from gt_llm.parsing import replace_lone_surrogates

logger = logging.getLogger(__name__)

#: Lease lifetime when the model does not say how long a call can take (seconds).
DEFAULT_LEASE_SECONDS = 600.0
_HOST = socket.gethostname()


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":  # no cheap check: rely on the lease's expiry
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# The answer's bytes, decoded here: text another program stored that is not UTF-8 is
# read with U+FFFD in place of the bad bytes instead of failing every re-run.
_SELECT_ANSWER = (
    "SELECT CAST(text AS BLOB), prompt_tokens, completion_tokens FROM calls WHERE key = ?"
)


def _answer(row: tuple[Any, ...]) -> tuple[str, Usage]:
    """A stored answer's text and usage from a :data:`_SELECT_ANSWER` row."""
    raw = row[0]
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    return text, Usage(int(row[1]), int(row[2]))


class CacheOnlyModel(ChatModel):
    """A model that can only be read from a cache: the backend cannot be called here.

    What a command uses to re-solve or re-plot a finished run whose key is not
    set: wrapped in :class:`CachedModel`, every call found in the cache is
    answered, and the first one that is not fails in one line saying why.

    Args:
      backend: The backend name the cache keys were made with.
      model: The model name.
      reason: Why the backend cannot be called (e.g. ``GROQ_API_KEY is not set``).
      endpoint: The server's public label the keys were made with
        (:func:`gt_llm.registry.model_endpoint` of the spec; ``""`` in-process).
    """

    def __init__(self, backend: str, model: str, reason: str, endpoint: str = "") -> None:
        self.backend = backend
        self.model = model
        self.endpoint = endpoint
        self.reason = reason

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Always fails: the answer was not in the cache.

        Raises:
          ConfigurationError: naming the reason and the fix.
        """
        raise ConfigurationError(
            f"{self.spec}: a {request.task!r} call is not in the cache, and the backend cannot "
            f"be called here ({self.reason}); fix that to make the missing calls"
        )


class CacheError(GtLlmError):
    """The cache file could not be read or written during a run."""


@dataclasses.dataclass(frozen=True)
class CacheStats:
    """Counters of one :class:`CachedModel` instance.

    Attributes:
      hits: Calls answered without a backend call (from the file, or by waiting
        for an identical call already in flight).
      misses: Calls that went to the backend.
      prompt_tokens: Prompt tokens of the backend calls made (misses).
      completion_tokens: Completion tokens of the backend calls made (misses).
      saved_prompt_tokens: Prompt tokens of the answers served from the cache.
      saved_completion_tokens: Completion tokens of the answers served from the cache.
    """

    hits: int = 0
    misses: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    saved_prompt_tokens: int = 0
    saved_completion_tokens: int = 0

    @property
    def calls(self) -> int:
        """All calls answered."""
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        """Hits over calls (0 when there were none)."""
        return self.hits / self.calls if self.calls else 0.0


class _InFlight:
    """A backend call that other threads asking the same key wait for."""

    __slots__ = ("done", "response", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: ChatResponse | None = None
        self.error: BaseException | None = None


class CachedModel(ChatModel):
    """A chat model that answers from a SQLite cache and fills it on misses.

    ``backend``, ``model``, ``endpoint``, ``spec`` and ``max_concurrency`` are
    those of the inner model, so a cached model is a drop-in replacement.

    Args:
      inner: The model to call on a miss.
      path: The SQLite file (parent directories are created); ``":memory:"``
        for a private in-memory cache.
      busy_timeout: Seconds to wait for another process's write lock.
      coordinate: Share in-flight calls with other processes through leases
        (default: for remote models only).
      lease_seconds: A lease's lifetime (default: the inner model's
        ``max_call_seconds`` plus a margin, else 600 s).

    Raises:
      ConfigurationError: the path cannot be created, opened or written, or
        the file is not a gt-llm cache.
    """

    def __init__(
        self,
        inner: ChatModel,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 60.0,
        coordinate: bool | None = None,
        lease_seconds: float | None = None,
    ) -> None:
        if isinstance(inner, CachedModel):
            raise ValueError("CachedModel: the inner model is already cached")
        self.inner = inner
        self.path = str(path)
        self._db_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._inflight_lock = threading.Lock()
        self._inflight: dict[str, _InFlight] = {}
        self._counts = dict.fromkeys(
            (f.name for f in dataclasses.fields(CacheStats)),
            0,
        )
        self.coordinate = bool(inner.remote if coordinate is None else coordinate)
        if lease_seconds is None:
            lease_seconds = float(getattr(inner, "max_call_seconds", DEFAULT_LEASE_SECONDS)) + 30
        if not lease_seconds > 0:
            raise ValueError(f"CachedModel: lease_seconds must be > 0, got {lease_seconds}")
        self.lease_seconds = float(lease_seconds)
        self._owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._conn = open_cache_db(self.path, busy_timeout)
        # Set by close(), which releases every lease of this instance first.
        self._closed = False

    # -- identity mirrors the inner model -------------------------------------------------
    # (Read-only properties over ChatModel's class attributes: the mirror is not settable.)

    @property
    def backend(self) -> str:  # type: ignore[override]
        return self.inner.backend

    @property
    def model(self) -> str:  # type: ignore[override]
        return self.inner.model

    @property
    def endpoint(self) -> str:  # type: ignore[override]
        return self.inner.endpoint

    @property
    def spec(self) -> str:
        return self.inner.spec

    @property
    def max_concurrency(self) -> int:  # type: ignore[override]
        return self.inner.max_concurrency

    @property
    def remote(self) -> bool:  # type: ignore[override]
        return self.inner.remote

    # -- database -------------------------------------------------------------------------

    def _lookup(self, key: str) -> tuple[str, Usage] | None:
        try:
            with self._db_lock:
                row = self._conn.execute(_SELECT_ANSWER, (key,)).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"cache: cannot read {self.path}: {exc}") from exc
        return None if row is None else _answer(row)

    def _store(self, key: str, request: ChatRequest, response: ChatResponse) -> tuple[str, Usage]:
        """Stores an answer and returns the stored one (another process's, if it was first)."""
        stored: dict[str, Any] = {
            "task": request.task,
            "fields": request.fields_dict(),
            "messages": [m.to_dict() for m in request.messages],
            "seed": request.seed,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "sampling": request.sampling(),
        }
        if request.schema is not None:  # part of the key, so part of the stored request
            stored["schema"] = request.schema_dict()
        if self.endpoint:  # part of the key: the server's public label (no credentials)
            stored["endpoint"] = self.endpoint
        request_json = json.dumps(stored, ensure_ascii=False, sort_keys=True)
        text = replace_lone_surrogates(response.text)  # what SQLite (UTF-8) can hold
        row = (
            key,
            self.inner.backend,
            self.inner.model,
            request.task,
            request_json,
            text,
            response.usage.prompt_tokens,
            response.usage.completion_tokens,
            float(response.latency_s),
            time.time(),
        )
        try:
            with self._db_lock:
                cur = self._conn.execute(
                    "INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row
                )
                inserted = cur.rowcount == 1
        except sqlite3.Error as exc:
            raise CacheError(f"cache: cannot write {self.path}: {exc}") from exc
        if inserted:
            return text, response.usage
        first = self._lookup(key)
        return first if first is not None else (text, response.usage)

    # -- leases: one process pays for an in-flight call, the others wait -------------------

    def _try_lease(self, key: str) -> tuple[bool, tuple[str, Usage] | None]:
        """``(True, None)`` once we hold the lease on ``key``; ``(False, answer)`` if stored.

        The answer is looked up in the same write transaction that would take the
        lease: a lease freed by a process that has just stored the answer is never
        taken to pay for that answer again.
        """
        now = time.time()
        row = None
        free = False
        try:
            with self._db_lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    stored = self._conn.execute(_SELECT_ANSWER, (key,)).fetchone()
                    if stored is not None:
                        self._conn.execute("COMMIT")
                        return False, _answer(stored)
                    row = self._conn.execute(
                        "SELECT owner, host, pid, expires_at FROM inflight WHERE key = ?", (key,)
                    ).fetchone()
                    free = (
                        row is None
                        or row[0] == self._owner
                        or row[3] < now
                        or (row[1] == _HOST and not _pid_alive(int(row[2])))
                    )
                    if free:
                        self._conn.execute(
                            "INSERT OR REPLACE INTO inflight VALUES (?, ?, ?, ?, ?)",
                            (key, self._owner, _HOST, os.getpid(), now + self.lease_seconds),
                        )
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            raise CacheError(f"cache: cannot write {self.path}: {exc}") from exc
        if row is not None and not free:
            logger.debug("cache: %s is in flight in process %s; waiting", key[:12], row[2])
        return free, None

    def _release(self, key: str) -> None:
        try:
            with self._db_lock:
                if self._closed:
                    # close() released our leases already (a call that outlived an interrupted run).
                    logger.debug(
                        "cache: %s closed; lease on %s already released", self.path, key[:12]
                    )
                    return
                self._conn.execute(
                    "DELETE FROM inflight WHERE key = ? AND owner = ?", (key, self._owner)
                )
        except sqlite3.Error as exc:  # an expired lease is harmless: log, do not mask the result
            logger.warning("cache: cannot release a lease in %s: %s", self.path, exc)

    def _wait_or_lease(self, key: str) -> tuple[str, Usage] | None:
        """Returns another process's answer once stored, or ``None`` once we hold the lease."""
        poll = 0.02
        while True:
            leased, hit = self._try_lease(key)
            if leased:
                return None
            if hit is not None:
                return hit
            time.sleep(poll)
            poll = min(0.5, poll * 1.5)
            hit = self._lookup(key)
            if hit is not None:
                return hit

    def _count(self, **deltas: int) -> None:
        with self._stats_lock:
            for name, delta in deltas.items():
                self._counts[name] += delta

    # -- ChatModel ------------------------------------------------------------------------

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers from the cache, or calls the inner model and stores its answer.

        Raises:
          CacheError: the cache file failed during the run.
          Exception: whatever the inner model raised (nothing is stored then).
        """
        start = time.perf_counter()
        key = self.cache_key(request)
        hit = self._lookup(key)
        if hit is not None:
            return self._hit(hit, start)

        with self._inflight_lock:
            flight = self._inflight.get(key)
            owner = flight is None
            if owner:
                flight = self._inflight[key] = _InFlight()
        assert flight is not None
        if not owner:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            assert flight.response is not None
            return self._hit((flight.response.text, flight.response.usage), start)

        try:
            # Another thread may have stored it between our lookup and registering.
            hit = self._lookup(key)
            if hit is None and self.coordinate:
                hit = self._wait_or_lease(key)
            if hit is not None:
                response = self._hit(hit, start)
            else:
                try:
                    fresh = self._call_inner(request)
                    text, usage = self._store(key, request, fresh)
                finally:
                    if self.coordinate:
                        self._release(key)
                self._count(
                    misses=1,
                    prompt_tokens=fresh.usage.prompt_tokens,
                    completion_tokens=fresh.usage.completion_tokens,
                )
                response = dataclasses.replace(
                    fresh, text=text, usage=usage, latency_s=time.perf_counter() - start
                )
                logger.debug(
                    "cache miss %s %s (%.3f s)", request.task, key[:12], response.latency_s
                )
            flight.response = response
            return response
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._inflight_lock:
                del self._inflight[key]
            flight.done.set()

    def _call_inner(self, request: ChatRequest) -> ChatResponse:
        try:
            return self.inner.complete(request)
        except BackendError as exc:
            if not exc.retryable or self.path == ":memory:":
                raise
            # The run stops here; say how to continue without paying twice.
            raise BackendError(
                f"{exc}; re-run the same command to resume: {self.path} keeps every finished call",
                retryable=True,
            ) from None

    def _hit(self, hit: tuple[str, Usage], start: float) -> ChatResponse:
        text, usage = hit
        self._count(
            hits=1,
            saved_prompt_tokens=usage.prompt_tokens,
            saved_completion_tokens=usage.completion_tokens,
        )
        return ChatResponse(
            text=text,
            backend=self.inner.backend,
            model=self.inner.model,
            usage=usage,
            latency_s=time.perf_counter() - start,
            cached=True,
        )

    # -- inspection -----------------------------------------------------------------------

    def stats(self) -> CacheStats:
        """This instance's hit/miss/token counters."""
        with self._stats_lock:
            return CacheStats(**self._counts)

    def __contains__(self, request: object) -> bool:
        if not isinstance(request, ChatRequest):
            return False
        return self._lookup(self.cache_key(request)) is not None

    def __len__(self) -> int:
        """Number of stored answers (of every backend and model in the file)."""
        with self._db_lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def entries(self) -> list[dict[str, Any]]:
        """All stored rows as dicts (for inspection and tests; loads the whole table)."""
        with self._db_lock:
            cur = self._conn.execute("SELECT * FROM calls ORDER BY created_at")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def close(self) -> None:
        """Releases this instance's leases, closes the database, then the inner model.

        Calls still running in other threads (an interrupted run) then find
        their lease released and their answer unstored.
        """
        with self._db_lock:
            if not self._closed:
                self._closed = True
                try:
                    if self.coordinate:
                        self._conn.execute("DELETE FROM inflight WHERE owner = ?", (self._owner,))
                except sqlite3.Error as exc:  # they expire anyway: log, and still close
                    logger.warning("cache: cannot release leases in %s: %s", self.path, exc)
                finally:
                    self._conn.close()
        self.inner.close()

    def __enter__(self) -> CachedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r}, {self.path!r})"


def combined_stats(model: ChatModel) -> CacheStats | None:
    """The cache counters of a cached model, summed over a routed model's cached backends.

    None when no model behind ``model`` is cached.
    """
    from gt_llm.routing import RoutedModel

    inner = model.inner_models() if isinstance(model, RoutedModel) else [model]
    stats = [m.stats() for m in inner if isinstance(m, CachedModel)]
    if not stats:
        return None
    return CacheStats(
        **{f.name: sum(getattr(st, f.name) for st in stats) for f in dataclasses.fields(CacheStats)}
    )
