"""Work started beside the calling thread on a remote model, done in place on an in-process one."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import gt_llm
from games.engine import tree
from games.engine.tree import beside, scheduler
from gt_llm.backends.openai_compat import OpenAICompatModel


def _where() -> tuple[int, str]:
    return threading.get_ident(), tree._SCHEDULER.get()


def test_remote_work_runs_in_the_pool_under_the_callers_scheduler():
    remote = OpenAICompatModel("m", "http://127.0.0.1:9/v1")
    try:
        with ThreadPoolExecutor(max_workers=1) as pool, scheduler("levels"):
            ident, name = beside(pool, remote, _where).result()
    finally:
        remote.close()
    assert ident != threading.get_ident()
    assert name == "levels"  # the thread sees the scheduler set here, not the default


def test_in_process_work_is_done_before_beside_returns():
    scripted = gt_llm.load_model("scripted")
    with ThreadPoolExecutor(max_workers=1) as pool:
        done = beside(pool, scripted, _where)
        assert done.done()
        assert done.result() == (threading.get_ident(), "auto")
