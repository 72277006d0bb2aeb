"""Worker processes of the ``local`` backend: one model per core, fed from one queue.

A llama.cpp context answers one call at a time, and on the project's 2-core
machine one thread per process is faster than two threads on one context, so
the way to use the cores is one process per core, each with its own model and
context (:class:`WorkerPool`). Answers do not depend on which worker gives
them: every worker evaluates prompts in the same aligned blocks and reuses
only whole blocks (:mod:`gt_llm.backends.llama_blocks`), so the same request
gives the same answer on any worker, after any other call.

Which worker takes a call only decides how much of its prompt is reused. A
call goes to the worker whose recent prompts (the states its model keeps,
:data:`~gt_llm.backends.llama_blocks.SAVED_STATES`) share the longest prefix
with it (siblings of a tree node share everything but their last message;
the seeds of one request share all of it, and a worker that kept the prompt's
evaluated state answers them without evaluating it again),
unless that worker's queue is already :data:`LOAD_SLACK` longer than the
shortest; a worker with an empty queue takes the newest call waiting for
another worker, so no core idles while calls wait.

Workers are fresh interpreters (``python -m gt_llm.backends.local_worker``: no
copy of this process's threads or locks, and no re-import of the caller's
script), talk length-prefixed JSON over their stdin and stdout, run in their
own session so the terminal's Ctrl-C reaches only the parent (which stops
handing out calls and says so), and exit when the parent closes the pool or
dies (their stdin ends). A worker that
dies mid-call fails that call with one line and is started again for the next.
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import json
import logging
import os
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import IO, Any

from gt_llm.backends.llama_blocks import SAVED_STATES
from gt_llm.errors import BackendError, ConfigurationError
from gt_llm.retry import CallCancelled, calls_cancelled

logger = logging.getLogger(__name__)

#: Calls in flight per worker when the caller does not say (``--concurrency``): a
#: window from which the queue can group calls that share a prefix.
QUEUE_PER_WORKER = 4
#: A call follows its prefix unless that worker's queue is this much longer than the shortest.
LOAD_SLACK = 4
#: The module a worker process runs.
WORKER_MODULE = "gt_llm.backends.local_worker"
#: How often a waiting call checks for Ctrl-C and for its worker's death (seconds).
POLL_SECONDS = 0.2
#: Most worker processes of one pool: each holds a whole model and context (hundreds of
#: MB), so more than this cannot fit any machine this runs on; checked before anything
#: is built (``GT_LLM_LOCAL_WORKERS`` and ``workers=`` are refused above it).
MAX_WORKERS = 256


@dataclasses.dataclass(frozen=True)
class WorkerConfig:
    """What each worker loads: the model file and its llama.cpp settings."""

    path: str
    n_ctx: int
    n_threads: int
    extra_buffers: bool


_FRAME = struct.Struct("<Q")


def write_frame(stream: IO[bytes], value: Any) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    stream.write(_FRAME.pack(len(data)) + data)
    stream.flush()


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise EOFError("the pipe closed")
        data += chunk
    return data


def read_frame(stream: IO[bytes]) -> Any:
    (size,) = _FRAME.unpack(_read_exact(stream, _FRAME.size))
    return json.loads(_read_exact(stream, size).decode("utf-8"))


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix((a, b)))


def affinity_text(payload: dict[str, Any]) -> str:
    """The text whose shared prefix decides which worker takes a call."""
    return "\x00".join(f"{m['role']}\x01{m['content']}" for m in payload["messages"])


@dataclasses.dataclass
class _Job:
    payload: dict[str, Any]
    reuse: bool
    share_prompts: bool
    text: str
    future: Future[dict[str, Any]]


class _Worker:
    def __init__(self, index: int) -> None:
        self.index = index
        self.queue: collections.deque[_Job] = collections.deque()
        #: The prompts last assigned to it, newest last: the prefixes its model holds.
        self.recent: collections.deque[str] = collections.deque(maxlen=SAVED_STATES + 1)
        self.busy = False
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def load(self) -> int:
        return len(self.queue) + int(self.busy)


class WorkerPool:
    """``workers`` processes, each with its own copy of one model, fed from one queue.

    Args:
      config: What every worker loads.
      workers: How many processes (started on the first call).
      command: The worker's command line, the config's JSON appended (default:
        ``python -m gt_llm.backends.local_worker``; tests give a stand-in worker).
    """

    def __init__(
        self, config: WorkerConfig, workers: int, *, command: Sequence[str] | None = None
    ) -> None:
        if isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"WorkerPool: workers must be 1 to {MAX_WORKERS}, got {workers}")
        self.config = config
        self.command = list(command or (sys.executable, "-m", WORKER_MODULE))
        self._workers = [_Worker(i) for i in range(workers)]
        self._cond = threading.Condition()
        self._closed = False
        self._feeders: list[threading.Thread] = []

    @property
    def size(self) -> int:
        return len(self._workers)

    def call(
        self, payload: dict[str, Any], *, reuse: bool, share_prompts: bool = True
    ) -> dict[str, Any]:
        """Answers one call on some worker (see :func:`~gt_llm.backends.local._Shared.answer`).

        Raises:
          BackendError: the request was refused, or its worker died.
          ConfigurationError: a worker could not load the model.
          CallCancelled: Ctrl-C was pressed while the call waited.
        """
        future = self.submit(payload, reuse=reuse, share_prompts=share_prompts)
        while True:
            if calls_cancelled() and future.cancel():
                raise CallCancelled("local backend: call cancelled (interrupted)")
            try:
                return future.result(timeout=POLL_SECONDS)
            except TimeoutError:
                continue

    def submit(
        self, payload: dict[str, Any], *, reuse: bool, share_prompts: bool = True
    ) -> Future[dict[str, Any]]:
        """Queues one call on the worker that holds its prefix; returns its future."""
        job = _Job(payload, reuse, share_prompts, affinity_text(payload), Future())
        with self._cond:
            if self._closed:
                raise BackendError("local backend: the worker pool is closed", retryable=False)
            if not self._feeders:
                self._start_feeders()
            worker = self._choose(job.text)
            worker.queue.append(job)
            worker.recent.append(job.text)
            self._cond.notify_all()
        return job.future

    def _choose(self, text: str) -> _Worker:
        shortest = min(w.load for w in self._workers)
        best = max(
            self._workers,
            key=lambda w: (
                max((_common_prefix(text, t) for t in w.recent), default=0),
                -w.load,
                -w.index,
            ),
        )
        if best.load - shortest >= LOAD_SLACK:
            return min(self._workers, key=lambda w: (w.load, w.index))
        return best

    def _start_feeders(self) -> None:
        for worker in self._workers:
            thread = threading.Thread(
                target=self._feed, args=(worker,), name=f"gt-llm-local-{worker.index}", daemon=True
            )
            thread.start()
            self._feeders.append(thread)

    def _next_job(self, worker: _Worker) -> _Job | None:
        """The worker's next call (its own, else the newest one of the longest other queue)."""
        with self._cond:
            while not self._closed:
                if worker.queue:
                    job = worker.queue.popleft()
                else:
                    donor = max(self._workers, key=lambda w: len(w.queue))
                    if not donor.queue:
                        self._cond.wait()
                        continue
                    job = donor.queue.pop()
                worker.busy = True
                if not worker.recent or worker.recent[-1] != job.text:
                    worker.recent.append(job.text)  # a stolen call: its prefix is here now
                return job
            return None

    def _feed(self, worker: _Worker) -> None:
        while True:
            job = self._next_job(worker)
            if job is None:
                return
            try:
                if not job.future.set_running_or_notify_cancel():
                    continue
                if calls_cancelled():
                    job.future.set_exception(
                        CallCancelled("local backend: call cancelled (interrupted)")
                    )
                    continue
                try:
                    result = self._run(worker, job)
                except BaseException as exc:  # handed to the caller, never lost
                    job.future.set_exception(exc)
                else:
                    job.future.set_result(result)
            finally:
                with self._cond:
                    worker.busy = False
                    self._cond.notify_all()

    def _run(self, worker: _Worker, job: _Job) -> dict[str, Any]:
        process = self._ensure_started(worker)
        stdin, stdout = process.stdin, process.stdout
        assert stdin is not None and stdout is not None  # both are pipes
        try:
            write_frame(stdin, [job.payload, job.reuse, job.share_prompts])
            while not select.select([stdout], [], [], POLL_SECONDS)[0]:
                if process.poll() is not None:
                    raise EOFError
            kind, value = read_frame(stdout)
        except (EOFError, OSError, ValueError):
            code = process.poll()
            self._forget(worker)
            raise BackendError(
                f"local backend: worker {worker.index} stopped during a call (exit code "
                f"{code}); the call was not answered; run the command again to resume",
                retryable=False,
            ) from None
        if kind == "ok":
            return dict(value)
        if kind == "config":
            self._forget(worker)
            raise ConfigurationError(str(value))
        raise BackendError(
            f"local backend: {value}; shorten the prompt or raise n_ctx", retryable=False
        )

    def _ensure_started(self, worker: _Worker) -> subprocess.Popen[bytes]:
        process = worker.process
        if process is not None and process.poll() is None:
            return process
        self._forget(worker)
        # A fresh interpreter running this module (not multiprocessing's spawn, which
        # re-imports the caller's main script: a script without a main guard would loop).
        process = subprocess.Popen(
            [*self.command, json.dumps(dataclasses.asdict(self.config))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # the terminal's Ctrl-C goes to the parent only
        )
        worker.process = process
        logger.debug("local backend: started worker %d (pid %s)", worker.index, process.pid)
        return process

    @staticmethod
    def _forget(worker: _Worker) -> None:
        process, worker.process = worker.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        if process.poll() is None:
            process.kill()
        process.wait(5)

    def close(self) -> None:
        """Stops the workers (each finishes its current call); queued calls fail."""
        with self._cond:
            self._closed = True
            pending = [job for w in self._workers for job in w.queue]
            for w in self._workers:
                w.queue.clear()
            self._cond.notify_all()
        for job in pending:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(
                    BackendError("local backend: the worker pool was closed", retryable=False)
                )
        for thread in self._feeders:
            thread.join(timeout=60)
        for worker in self._workers:
            process = worker.process
            if process is not None and process.stdin is not None:
                process.stdin.close()  # the worker's signal to stop
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    logger.debug("local backend: worker %d did not stop; killed", worker.index)
            self._forget(worker)


_POOLS: dict[tuple[WorkerConfig, int], WorkerPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(config: WorkerConfig, workers: int) -> WorkerPool:
    """The process's one pool for a model and a number of workers (made on first use)."""
    key = (dataclasses.replace(config, path=os.path.realpath(config.path)), workers)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = WorkerPool(key[0], workers)
            if len(_POOLS) == 1:
                atexit.register(close_pools)
        return pool


def close_pools() -> None:
    """Stops every pool of this process (at exit)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()
