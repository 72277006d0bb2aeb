"""The worker process of the ``local`` backend (:mod:`gt_llm.backends.local_pool`).

Run as ``python -m gt_llm.backends.local_worker CONFIG_JSON``: loads the model,
then answers the calls framed on stdin, one answer frame on stdout per call,
until stdin closes.
"""

from __future__ import annotations

import json
import signal
import sys

from gt_llm.backends.local_pool import WorkerConfig, read_frame, write_frame
from gt_llm.errors import ConfigurationError


def _worker_main(config: WorkerConfig) -> None:
    """A worker process: load the model, then answer calls until stdin closes."""
    # Ctrl-C is the parent's to handle (it stops handing out calls).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from gt_llm.backends.local import load_shared

    out = sys.stdout.buffer
    # Nothing else may write to the frame stream: stray prints go to stderr.
    sys.stdout = sys.stderr
    try:
        shared = load_shared(
            config.path,
            n_ctx=config.n_ctx,
            n_threads=config.n_threads,
            extra_buffers=config.extra_buffers,
        )
    except ConfigurationError as exc:
        write_frame(out, ["config", str(exc)])
        return
    source = sys.stdin.buffer
    while True:
        try:
            payload, reuse, share_prompts = read_frame(source)
        except EOFError:
            return  # the parent closed the pool, or is gone
        try:
            answer = shared.answer(payload, reuse=bool(reuse), share_prompts=bool(share_prompts))
            write_frame(out, ["ok", answer])
        except ValueError as exc:
            write_frame(out, ["backend", str(exc)])


if __name__ == "__main__":
    _worker_main(WorkerConfig(**json.loads(sys.argv[1])))
