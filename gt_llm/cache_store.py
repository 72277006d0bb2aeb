"""The SQLite file behind :class:`~gt_llm.cache.CachedModel`: schema, checks, opening.

A call cache is one SQLite file with two tables: ``calls`` (one row per
finished call: key, backend, model, task, request JSON, answer text, token
counts, latency, time) and ``inflight`` (the cross-process leases, one row per
key being computed). ``PRAGMA user_version`` holds :data:`SCHEMA_VERSION`.
A file is checked before anything writes to it (:func:`check_cache_schema`):
another program's SQLite file, an older ``calls`` layout or a newer schema is
refused in one line and never altered. :func:`check_cache_file` does that
check read-only, and :func:`check_cache_writable` adds that the file can be
written, before a command touches its results folder;
:func:`open_cache_db` opens a file for a run (WAL, ``synchronous=NORMAL``,
tables created in one immediate transaction).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from pathlib import Path

from gt_llm.errors import ConfigurationError
from runs.folders import unwritable_reason

__all__ = [
    "CALLS_COLUMNS",
    "INFLIGHT_COLUMNS",
    "SCHEMA_VERSION",
    "check_cache_file",
    "check_cache_writable",
    "cached_requests",
    "check_cache_schema",
    "open_cache_db",
]

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
    if not p.is_file():  # a device or a pipe (/dev/null): SQLite cannot keep a cache there
        raise ConfigurationError(
            f"cache: cannot open {p} for writing: it is not a regular file; pass a file path "
            "(--cache PATH)"
        )
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


def check_cache_writable(path: str | os.PathLike[str]) -> None:
    """Checks that ``path`` can be opened as a cache for writing, creating nothing lasting.

    :func:`check_cache_file` (not a folder; an existing file is a gt-llm
    cache), then that the file can be written: an existing one is writable
    and so is its folder (SQLite writes its journal beside it); for a missing
    one, the file and any missing folders above it can be created (tried
    with a temporary entry, removed at once: see
    :func:`runs.folders.unwritable_reason`). Commands call this before they
    create or delete anything in their results folder, so a cache that
    cannot be opened costs no result.

    Raises:
      ConfigurationError: ``path`` cannot be a cache or cannot be written, in
        one line naming it and the fix.
    """
    if str(path) == ":memory:":
        return
    check_cache_file(path)
    reason = unwritable_reason(path)
    if reason is not None:
        raise ConfigurationError(
            f"cache: cannot open {path} for writing: {reason}; pass another --cache PATH"
        )


def cached_requests(path: str | os.PathLike[str]) -> list[dict[str, object]]:
    """The requests of every finished call a cache file holds (read-only), oldest first.

    Each is the stored request JSON (``task``, ``messages``, ``seed``,
    ``schema``, ...): what a command actually asked, for checks that a game
    honours an option (its structured answers, its seed).

    Raises:
      ConfigurationError: a file that is not a gt-llm cache.
    """
    p = Path(path)
    if not p.is_file():
        return []
    check_cache_file(p)
    conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT request_json FROM calls ORDER BY created_at, key").fetchall()
    finally:
        conn.close()
    return [json.loads(r[0]) for r in rows]


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


def open_cache_db(path: str, busy_timeout: float) -> sqlite3.Connection:
    """Opens (creating if needed) the cache database at ``path`` for reading and writing.

    Checks the file's schema before anything that writes, switches it to WAL,
    and creates the ``calls`` and ``inflight`` tables in one immediate
    transaction, so a file that cannot be written fails here, before any call.

    Args:
      path: The SQLite file, or ``":memory:"``.
      busy_timeout: Seconds to wait for another process's lock.

    Returns:
      An autocommit connection that any thread may use (the caller serialises it).

    Raises:
      ConfigurationError: the folder cannot be created, ``path`` is a directory,
        not a gt-llm cache, or not writable.
    """
    if path != ":memory:":
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(
                f"cache: cannot create the directory of {path}: {exc}"
            ) from None
        if Path(path).is_dir():
            raise ConfigurationError(
                f"cache: cannot open {path} for writing: it is a directory; "
                "pass a file path (--cache PATH)"
            )
    try:
        # One connection shared by this instance's threads, always under _db_lock;
        # isolation_level=None is autocommit, so every INSERT is durable at once.
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cache: cannot open {path} for writing: {exc}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        # Before anything that writes (WAL mode, tables): an unrelated file stays untouched.
        check_cache_schema(conn, path)
        mode = _set_wal(conn, busy_timeout)
        if path != ":memory:" and str(mode).lower() != "wal":
            logger.warning("cache %s: journal mode is %s, not WAL", path, mode)
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
        raise ConfigurationError(f"cache: cannot open {path} for writing: {exc}") from None
    return conn
