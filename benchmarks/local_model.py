"""The local model's throughput: today's evaluation against block reuse and worker processes.

Records the requests a scripted-built fruit-trading tree and a scripted
Werewolf arena game send, round by round as the engine sends them (each round
one batch), keeps each distinct request once (what the call cache would ask),
and answers them with the bundled SmolLM2-135M-Instruct three ways, in this
process, one after the other:

* ``today``: what the local backend did before block reuse: one process, the
  state reset before every call, the prompt evaluated in one batch (llama.cpp's
  default ``n_batch`` 512), one thread;
* ``off``: the new backend with reuse off and one worker (prompts evaluated in
  aligned blocks of 16, from scratch);
* ``on``: the new backend as it runs by default: whole-block prefix reuse and
  one worker process per usable core, calls in flight as the engine sends them.

It prints, per request set and path, calls per wall-second and per
CPU-second (this process and its reaped workers), prompt tokens requested and
evaluated, the wall-time ratio against ``today``, and how many answers are
identical between ``on`` and ``off`` (they must all be) and between ``today``
and ``off`` (batch size changes llama.cpp's numbers, so a few may differ).

Usage::

    python benchmarks/local_model.py [--fruit-calls 120] [--werewolf-calls 60]

Needs the ``local`` extra (``pip install ".[local]"``; measured with
llama-cpp-python 0.3.36, the version ``pyproject.toml`` bounds it to). Run it on an
otherwise idle machine: the ratios compare wall times.
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# _local_requests; appended after the root, so `solvers` stays the package.
sys.path.append(str(Path(__file__).resolve().parent))

from _local_requests import fruit_rounds, werewolf_rounds  # noqa: E402

from gt_llm.backends import local  # noqa: E402
from gt_llm.backends.local_pool import close_pools  # noqa: E402
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage  # noqa: E402

logger = logging.getLogger("benchmarks.local_model")


#: llama-cpp-python's default ``n_batch`` (and ``n_ubatch``): the local backend's batch
#: before block reuse.
TODAY_BATCH = 512


class _Today(ChatModel):
    """The local backend as it was: fresh state, whole prompt in one batch, one process.

    A block model with llama-cpp-python's default batch (512) and reuse off: every
    call resets and evaluates its prompt in batches of 512, as before block reuse.
    Loaded by the backend's own :func:`~gt_llm.backends.local.new_llama`, so only the
    batch differs from ``off``: in particular llama.cpp's repacked weight buffers are
    off, as in the backend. (The benchmark once built its own ``Llama`` with
    llama-cpp-python's defaults, buffers on: on a machine where the backend's paths
    answered, its first call died with a segmentation fault in llama.cpp's decode,
    the crash the backend avoids on CPUs with AMX tiles by switching them off.)
    """

    backend, model = "local", local.BUNDLED_MODEL
    max_concurrency = 1

    def __init__(self) -> None:
        path = local.bundled_model_path()
        assert path is not None  # main() checked the extra is installed
        self.llama = local.new_llama(
            path,
            n_ctx=local.DEFAULT_CONTEXT,
            n_threads=1,
            extra_buffers=False,
            n_batch=TODAY_BATCH,
        )
        self.shared = local._Shared(self.llama, local._import_llama_cpp())
        self.prompt_tokens = self.completion_tokens = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        out = self.shared.answer(local.call_payload(request), reuse=False)
        self.prompt_tokens += out["prompt_tokens"]
        self.completion_tokens += out["completion_tokens"]
        return ChatResponse(
            text=out["text"],
            backend=self.backend,
            model=self.model,
            usage=Usage(out["prompt_tokens"], out["completion_tokens"]),
        )

    def close(self) -> None:
        self.llama.close()


class Measured(NamedTuple):
    path: str
    calls: int
    wall_s: float
    cpu_s: float
    prompt_tokens: int
    evaluated: int
    completion_tokens: int
    answers: tuple[str, ...]


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(path: str, rounds: list[list[ChatRequest]], workers: int) -> Measured:
    """Answers the rounds on one path; the model is made and closed inside the timing."""
    cpu0, wall0 = _cpu(), time.perf_counter()
    model: Any
    if path == "today":
        model = _Today()
    else:
        model = local.LocalModel(workers=1 if path == "off" else workers, prefix_reuse=path == "on")
    answers: list[str] = []
    for batch in rounds:
        answers += [r.text for r in model.complete_batch(batch)]
    if path == "today":
        prompt = evaluated = model.prompt_tokens
        completion = model.completion_tokens
        model.close()
    else:
        counts = model.counts()
        prompt, evaluated = counts.prompt_tokens, counts.evaluated_tokens
        completion = counts.completion_tokens
        close_pools()  # workers exit and are reaped: their CPU time is counted
    return Measured(
        path,
        len(answers),
        time.perf_counter() - wall0,
        _cpu() - cpu0,
        prompt,
        evaluated,
        completion,
        tuple(answers),
    )


def _same(a: Measured, b: Measured) -> str:
    return f"{sum(x == y for x, y in zip(a.answers, b.answers, strict=True))}/{len(a.answers)}"


def report(name: str, runs: dict[str, Measured]) -> None:
    today = runs["today"]
    print(f"\n{name}: {today.calls} distinct requests")
    print(
        f"{'path':6} {'wall s':>8} {'CPU s':>8} {'calls/wall-s':>13} {'calls/CPU-s':>12} "
        f"{'prompt tok':>11} {'evaluated':>10} {'wall vs today':>14}"
    )
    for m in runs.values():
        print(
            f"{m.path:6} {m.wall_s:8.1f} {m.cpu_s:8.1f} {m.calls / m.wall_s:13.3f} "
            f"{m.calls / m.cpu_s:12.3f} {m.prompt_tokens:11d} {m.evaluated:10d} "
            f"{today.wall_s / m.wall_s:13.2f}x"
        )
    on, off = runs["on"], runs["off"]
    saved = 1 - on.evaluated / max(1, on.prompt_tokens)
    print(f"prompt tokens evaluated per call, on vs requested: -{saved:.1%}")
    print(f"answers identical, on vs off: {_same(on, off)} (must be all)")
    print(f"answers identical, today vs off: {_same(today, off)} (batch size differs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fruit-calls", type=int, default=120, help="distinct fruit requests")
    parser.add_argument("--werewolf-calls", type=int, default=60, help="distinct Werewolf requests")
    parser.add_argument(
        "--workers", type=int, default=local.usable_cores(), help="workers of the 'on' path"
    )
    parser.add_argument("--paths", default="today,off,on", help="which paths to run")
    args = parser.parse_args()
    reason = local.check_installed()
    if reason is not None:
        parser.error(f"the local backend cannot run here: {reason}")
    paths = args.paths.split(",")
    sets = {
        "fruit tree (README's third command, scripted-built)": fruit_rounds(args.fruit_calls),
        "Werewolf arena game (seed 41, scripted-built)": werewolf_rounds(args.werewolf_calls),
    }
    # Answers and speeds are those of one llama.cpp build: the version goes with the numbers.
    vendor = local._import_llama_cpp()
    print(
        f"model: local:{local.BUNDLED_MODEL}; llama-cpp-python {vendor.__version__}; "
        f"workers of 'on': {args.workers}"
    )
    for name, rounds in sets.items():
        runs = {path: measure(path, rounds, args.workers) for path in paths}
        if set(runs) == {"today", "off", "on"}:
            report(name, runs)
        else:
            for m in runs.values():
                print(
                    f"{name}, {m.path}: {m.calls} calls, {m.wall_s:.1f} s wall, {m.cpu_s:.1f} s "
                    f"CPU, {m.prompt_tokens} prompt tokens, {m.evaluated} evaluated, "
                    f"{m.completion_tokens} generated"
                )


if __name__ == "__main__":
    main()
