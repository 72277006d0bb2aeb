"""A persistent, process-safe call cache in front of any chat model.

:class:`CachedModel` wraps a :class:`~gt_llm.chat.ChatModel` and stores every
answer in SQLite, keyed by :meth:`ChatRequest.cache_key` (a hash of backend,
model, messages, seed, temperature and max_tokens). Since every call is meant
to be a pure function of those, a stored answer is *the* answer:

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
  altered.

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
from pathlib import Path
from typing import Any

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import BackendError, ConfigurationError, GtLlmError

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key               TEXT PRIMARY KEY,
    backend           TEXT NOT NULL,
    model             TEXT NOT NULL,
    task              TEXT NOT NULL,
    request_json      TEXT NOT NULL,
    text              TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s         REAL NOT NULL,
    created_at        REAL NOT NULL
)
"""

_LEASES = """
CREATE TABLE IF NOT EXISTS inflight (
    key        TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    expires_at REAL NOT NULL
)
"""

#: The columns of the ``calls`` table, in order; any other layout is not this cache's.
CALLS_COLUMNS = (
    "key",
    "backend",
    "model",
    "task",
    "request_json",
    "text",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "created_at",
)
#: The columns of the ``inflight`` (leases) table, in order.
INFLIGHT_COLUMNS = ("key", "owner", "host", "pid", "expires_at")
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


def check_cache_schema(conn: sqlite3.Connection, path: str) -> None:
    """Refuses, in one line, a database that is not a gt-llm call cache (reads only).

    An empty database (no tables) is accepted: it becomes a cache.

    Raises:
      ConfigurationError: not SQLite, another program's tables, an older
        ``calls`` layout, or a newer schema version.
    """
    fix = "pass another cache path (--cache PATH); gt-llm leaves this file as it is"
    try:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        ]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        columns = tuple(r[1] for r in conn.execute("PRAGMA table_info(calls)").fetchall())
        leases = tuple(r[1] for r in conn.execute("PRAGMA table_info(inflight)").fetchall())
    except sqlite3.DatabaseError as exc:
        raise ConfigurationError(f"cache: {path} is not a SQLite database ({exc}); {fix}") from None
    if version not in (0, SCHEMA_VERSION):
        raise ConfigurationError(
            f"cache: {path} has schema version {version}, this gt-llm reads {SCHEMA_VERSION}; {fix}"
        )
    if not tables:
        return
    if "calls" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        raise ConfigurationError(
            f"cache: {path} is not a gt-llm cache (its tables are {shown}; no 'calls' table); {fix}"
        )
    if columns != CALLS_COLUMNS:
        raise ConfigurationError(
            f"cache: {path} has a 'calls' table with {len(columns)} columns "
            f"({', '.join(columns)}), not the {len(CALLS_COLUMNS)} of a gt-llm cache "
            f"(schema {SCHEMA_VERSION}): an older cache or another program's file; {fix}"
        )
    if "inflight" in tables and leases != INFLIGHT_COLUMNS:
        raise ConfigurationError(
            f"cache: {path} has an 'inflight' table with columns ({', '.join(leases)}), not "
            f"the leases table of a gt-llm cache ({', '.join(INFLIGHT_COLUMNS)}): another "
            f"program's file; {fix}"
        )


def check_cache_file(path: str | os.PathLike[str]) -> None:
    """Checks, without creating or changing anything, that ``path`` can be used as a cache.

    A missing file is fine (it will be created); an existing one must be a
    gt-llm cache (see :func:`check_cache_schema`), opened read-only here.
    Commands call this before touching their results folder.

    Raises:
      ConfigurationError: a directory, or a file that is not a gt-llm cache.
    """
    p = Path(path)
    if str(path) == ":memory:":
        return
    if p.is_dir():
        raise ConfigurationError(
            f"cache: cannot open {p} for writing: it is a directory; pass a file path (--cache PATH)"
        )
    if not p.exists():
        return
    # Without a -wal file beside it the file is the whole database: read it as immutable,
    # so that not even a -shm file is created next to it.
    wal = Path(f"{p}-wal").exists()
    query = "mode=ro" if wal else "mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(f"{p.resolve().as_uri()}?{query}", uri=True)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cache: cannot open {p}: {exc}") from None
    try:
        check_cache_schema(conn, str(p))
    finally:
        conn.close()


def _set_wal(conn: sqlite3.Connection, busy_timeout: float) -> str:
    # Switching to WAL needs the file to itself, and SQLite does not apply the busy
    # timeout to that switch: many processes opening a new cache at once see
    # "database is locked" at once. Retried here until the same timeout.
    deadline = time.monotonic() + busy_timeout
    wait = 0.005
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
        time.sleep(wait)
        wait = min(0.1, wait * 2)


class CacheOnlyModel(ChatModel):
    """A model that can only be read from a cache: the backend cannot be called here.

    What a command uses to re-solve or re-plot a finished run whose key is not
    set: wrapped in :class:`CachedModel`, every call found in the cache is
    answered, and the first one that is not fails in one line saying why.

    Args:
      backend: The backend name the cache keys were made with.
      model: The model name.
      reason: Why the backend cannot be called (e.g. ``GROQ_API_KEY is not set``).
    """

    def __init__(self, backend: str, model: str, reason: str) -> None:
        self.backend = backend
        self.model = model
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

    ``backend``, ``model``, ``spec`` and ``max_concurrency`` are those of the
    inner model, so a cached model is a drop-in replacement.

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
        self._conn = self._open(busy_timeout)

    # -- identity mirrors the inner model -------------------------------------------------

    @property  # type: ignore[override]
    def backend(self) -> str:
        return self.inner.backend

    @property  # type: ignore[override]
    def model(self) -> str:
        return self.inner.model

    @property
    def spec(self) -> str:
        return self.inner.spec

    @property  # type: ignore[override]
    def max_concurrency(self) -> int:
        return self.inner.max_concurrency

    @property  # type: ignore[override]
    def remote(self) -> bool:
        return self.inner.remote

    # -- database -------------------------------------------------------------------------

    def _open(self, busy_timeout: float) -> sqlite3.Connection:
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigurationError(
                    f"cache: cannot create the directory of {self.path}: {exc}"
                ) from None
            if Path(self.path).is_dir():
                raise ConfigurationError(
                    f"cache: cannot open {self.path} for writing: it is a directory; "
                    "pass a file path (--cache PATH)"
                )
        try:
            # One connection shared by this instance's threads, always under _db_lock;
            # isolation_level=None is autocommit, so every INSERT is durable at once.
            conn = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise ConfigurationError(f"cache: cannot open {self.path} for writing: {exc}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            # Before anything that writes (WAL mode, tables): an unrelated file stays untouched.
            check_cache_schema(conn, self.path)
            mode = _set_wal(conn, busy_timeout)
            if self.path != ":memory:" and str(mode).lower() != "wal":
                logger.warning("cache %s: journal mode is %s, not WAL", self.path, mode)
            conn.execute("PRAGMA synchronous = NORMAL")
            # Prove we can write now rather than after the first expensive backend call.
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(_SCHEMA)
            conn.execute(_LEASES)
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except ConfigurationError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise ConfigurationError(f"cache: cannot open {self.path} for writing: {exc}") from None
        return conn

    def _lookup(self, key: str) -> tuple[str, Usage] | None:
        try:
            with self._db_lock:
                row = self._conn.execute(
                    "SELECT text, prompt_tokens, completion_tokens FROM calls WHERE key = ?",
                    (key,),
                ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"cache: cannot read {self.path}: {exc}") from exc
        if row is None:
            return None
        return row[0], Usage(int(row[1]), int(row[2]))

    def _store(self, key: str, request: ChatRequest, response: ChatResponse) -> tuple[str, Usage]:
        """Stores an answer and returns the stored one (another process's, if it was first)."""
        stored: dict[str, Any] = {
            "task": request.task,
            "fields": request.fields_dict(),
            "messages": [m.to_dict() for m in request.messages],
            "seed": request.seed,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.schema is not None:  # part of the key, so part of the stored request
            stored["schema"] = request.schema_dict()
        request_json = json.dumps(stored, ensure_ascii=False, sort_keys=True)
        row = (
            key,
            self.inner.backend,
            self.inner.model,
            request.task,
            request_json,
            response.text,
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
            return response.text, response.usage
        stored = self._lookup(key)
        return stored if stored is not None else (response.text, response.usage)

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
                    stored = self._conn.execute(
                        "SELECT text, prompt_tokens, completion_tokens FROM calls WHERE key = ?",
                        (key,),
                    ).fetchone()
                    if stored is not None:
                        self._conn.execute("COMMIT")
                        return False, (stored[0], Usage(int(stored[1]), int(stored[2])))
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
        key = request.cache_key(self.inner.backend, self.inner.model)
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
        return self._lookup(request.cache_key(self.inner.backend, self.inner.model)) is not None

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
        """Closes the database and the inner model."""
        with self._db_lock:
            self._conn.close()
        self.inner.close()

    def __enter__(self) -> CachedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r}, {self.path!r})"
