"""A stand-in for the local backend's worker process (no model): the pool's tests run it.

It speaks the worker's protocol (:mod:`gt_llm.backends.local_pool` frames) and
answers a call by what its last message says: ``die`` exits at once with code
9 mid-call (as ``kill -9`` would leave it), ``sleep:S`` waits S seconds first,
anything else is echoed. Every answer names the worker's pid.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gt_llm.backends.local_pool import read_frame, write_frame  # noqa: E402


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    source, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            payload, reuse, _share_prompts = read_frame(source)
        except EOFError:
            return
        last = payload["messages"][-1]["content"]
        if last == "die":
            os._exit(9)
        if last.startswith("sleep:"):
            time.sleep(float(last.split(":", 1)[1]))
        write_frame(
            out,
            [
                "ok",
                {
                    "text": f"{os.getpid()}:{last}",
                    "prompt_tokens": len(last),
                    "completion_tokens": 1,
                    "evaluated": len(last) // 2 if reuse else len(last),
                    "seconds": 0.0,
                },
            ],
        )


if __name__ == "__main__":
    main()
