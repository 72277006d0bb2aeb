"""Credentials in URLs, the shared cache under contention.

Each test makes the fault real (a fake server, real processes) and fails on
the code before the fix.
"""

from __future__ import annotations

import base64
import json
import logging
import sqlite3
import subprocess
import sys
import time

import pytest
from fake_server import Canned

import gt_llm
from gt_llm.cache import CachedModel
from gt_llm.cache_store import check_cache_file
from gt_llm.errors import BackendError, ConfigurationError
from gt_llm.safety import RedactingFilter, public_spec, redact

SECRET = "SECRETPW77"


def _spec(server) -> str:
    return f"openai:m@http://alice:{SECRET}@127.0.0.1:{server.port}/v1"


# -- 1. credentials in the backend URL ------------------------------------------------------------


def test_public_spec_removes_user_password_and_query_values():
    spec = f"openai:m@http://alice:{SECRET}@127.0.0.1:8000/v1?api_key=QKEY12345&mode=x"
    label = public_spec(spec)
    assert label == "openai:m@http://127.0.0.1:8000/v1?api_key=[REDACTED]&mode=[REDACTED]"
    # What it removed is registered: echoes of it are redacted anywhere.
    basic = base64.b64encode(f"alice:{SECRET}".encode()).decode()
    text = f"pw {SECRET} basic {basic} q QKEY12345 url http://bob:pw@h:1/x"
    assert redact(text) == "pw [REDACTED] basic [REDACTED] q [REDACTED] url http://h:1/x"
    assert public_spec("scripted") == "scripted"


def test_the_model_sends_basic_auth_but_names_only_the_public_url(fake_server):
    model = gt_llm.load_model(_spec(fake_server), timeout=5)
    assert model.ask("hi").startswith("echo: hi")
    sent = fake_server.requests[-1].headers["authorization"]
    assert sent == "Basic " + base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert SECRET not in model.spec and "alice" not in model.spec
    assert SECRET not in repr(model) and SECRET not in model.url


def test_a_401_echoing_basic_credentials_is_redacted(fake_server):
    fake_server.enqueue(Canned(status=401, echo_auth=True))
    model = gt_llm.load_model(_spec(fake_server), timeout=5)
    with pytest.raises(BackendError) as err:
        model.ask("hi")
    basic = base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert "401" in str(err.value)
    assert SECRET not in str(err.value) and basic not in str(err.value), str(err.value)


def test_log_records_and_tracebacks_are_redacted():
    public_spec(f"http://alice:{SECRET}@h/v1")
    record = logging.LogRecord("x", logging.DEBUG, __file__, 1, "spec %s", (SECRET,), None)
    try:
        raise ValueError(f"bad spec openai:m@http://alice:{SECRET}@h/v1")
    except ValueError:
        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    text = logging.Formatter().format(record)
    assert "Traceback" in text and SECRET not in text


# -- 5. the cache shared by processes ---------------------------------------------------------------

SERIES = """
import json, sys
import gt_llm
url, path, games, per_game = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
model = gt_llm.load_model(f"openai:m@{url}/v1", cache=path, timeout=30)
for g in range(games):
    batch = [gt_llm.user_request(f"game {g} question {i}", seed=i) for i in range(per_game)]
    model.complete_batch(batch, max_concurrency=4)
s = model.stats()
print(json.dumps({"hits": s.hits, "misses": s.misses}))
"""


def test_four_processes_sharing_a_cache_pay_each_distinct_call_once(
    fake_server, child_env, tmp_path
):
    # Four series of 8 games asking the same questions at the same time: the
    # requests the server sees are exactly the distinct calls.
    fake_server.delay = 0.01
    path = str(tmp_path / "shared.sqlite")
    games, per_game = 8, 12
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SERIES, fake_server.url, path, str(games), str(per_game)],
            env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]  # fmt: skip
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    distinct = games * per_game
    assert fake_server.request_count == distinct
    assert sum(r["misses"] for r in results) == distinct
    assert sum(r["hits"] for r in results) == 3 * distinct


def test_a_lease_freed_after_the_answer_was_stored_is_not_paid_again(fake_server, tmp_path):
    # Deterministic form of the race: B misses, then A (another process on the same
    # file) pays for the call, stores it and frees its lease, then B takes the free lease.
    path = tmp_path / "c.sqlite"
    spec = f"openai:m@{fake_server.url}/v1"
    a = gt_llm.load_model(spec, cache=path, timeout=5)
    b = gt_llm.load_model(spec, cache=path, timeout=5)
    request = gt_llm.user_request("q", seed=1)
    real_lookup = b._lookup
    raced: list[str] = []
    misses: list[str] = []

    def lookup_then_other_process_answers(key):
        found = real_lookup(key)
        if found is None:
            misses.append(key)
            if len(misses) == 2:  # B's last look before it asks for the lease
                raced.append(a.complete(request).text)
        return found

    b._lookup = lookup_then_other_process_answers
    assert b.complete(request).text == raced[0]
    assert fake_server.request_count == 1
    assert b.stats().misses == 0


OPEN = """
import sys, time
import gt_llm
path, start = sys.argv[1], float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
gt_llm.load_model("openai:m@http://127.0.0.1:9/v1", cache=path).close()
"""


@pytest.mark.slow  # long end to end: .ci/run runs it (-m slow)
def test_twenty_five_simultaneous_starts_on_a_new_cache_all_succeed(child_env, tmp_path):
    path = str(tmp_path / "new.sqlite")
    start = time.time() + 2.0
    procs = [
        subprocess.Popen([sys.executable, "-c", OPEN, path, str(start)], env=child_env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(25)
    ]  # fmt: skip
    failures = []
    for p in procs:
        _, err = p.communicate(timeout=120)
        if p.returncode != 0:
            failures.append(err.strip().splitlines()[-1:])
    assert failures == []
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_wal_is_set_under_the_busy_timeout_while_another_process_writes(tmp_path):
    # Another connection is writing a brand-new file (as a second process creating the
    # tables would): switching to WAL must wait for it, not fail at once.
    import threading

    path = tmp_path / "new.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    timer.start()
    try:
        start = time.monotonic()
        CachedModel(gt_llm.load_model("scripted"), path, busy_timeout=10).close()
        assert time.monotonic() - start >= 0.4
    finally:
        timer.join()
        other.close()


def test_a_foreign_inflight_table_is_refused_before_the_file_is_changed(tmp_path):
    path = tmp_path / "c.sqlite"
    CachedModel(gt_llm.load_model("scripted"), path).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE inflight")
    conn.execute("CREATE TABLE inflight (job TEXT, worker TEXT)")
    conn.execute("INSERT INTO inflight VALUES ('a', 'b')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(ConfigurationError, match="inflight"):
        check_cache_file(path)
    with pytest.raises(ConfigurationError, match="inflight"):
        CachedModel(gt_llm.load_model("scripted"), path)
    assert path.read_bytes() == before
