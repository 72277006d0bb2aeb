"""The local model's throughput: today's evaluation against block reuse, shared prompts and workers.

Records the requests a scripted-built fruit-trading tree and a scripted
Werewolf arena game send, round by round as the engine sends them (each round
one batch), keeps each distinct request once (what the call cache would ask),
and answers them with the bundled SmolLM2-135M-Instruct several ways, in this
process, one after the other (each path with fresh workers):

* ``today``: what the local backend did before block reuse: one process, the
  state reset before every call, the prompt evaluated in one batch (llama.cpp's
  default ``n_batch`` 512), one thread;
* ``off``: the new backend with reuse off and one worker (prompts evaluated in
  aligned blocks of 16, from scratch);
* ``scratch``: reuse off with the workers of ``on`` (every call, every seed,
  evaluates its whole prompt);
* ``blocks``: the issue-31 path: whole-block prefix reuse and the workers of
  ``on``, every call evaluating at least its prompt's last block;
* ``on``: the backend as it runs by default: block reuse, a prompt evaluated
  once for the calls that ask it with other seeds, one worker process per
  usable core, calls in flight as the engine sends them.

The sets: the fruit tree and the Werewolf game (paths ``--paths``, default
``today,off,blocks,on``), and a whole fruit tree with 8 seeds per decision
(``--seed-paths``, default ``scratch,blocks,on``: one initialisation, two
messages, the tree's requests only, not the judge's labelled set).

It prints, per set and path, calls per wall-second and per CPU-second (this
process and its reaped workers), prompt tokens requested and evaluated,
tokens generated, calls that sampled from a kept prompt state, the wall-time ratio of every path
against each other, the wall time of the rounds whose calls differ only in
their seed, and how many answers are identical between every path and the
from-scratch one (``off``, else ``scratch``): with reuse they must all be;
``today`` against ``off`` may differ in a few (batch size changes llama.cpp's
numbers).

Last, per set, the floor no path that gives these answers bit for bit can go
below: every prompt token must be evaluated except the whole blocks an earlier
prompt of the set shares with it (all of a prompt asked before), every
generated token must be evaluated, and a token costs at least what it costs in
a 16-token prompt block (the engine's cheapest: measured at the start, on one
worker, from scratch, with a short context, so the floor is optimistic) on
every worker at once. The best speed-up any path could reach is the from-scratch
path's wall time over that floor.

Usage::

    python benchmarks/local_model.py [--fruit-calls 120] [--werewolf-calls 60]
        [--seed-calls 1000] [--sets fruit,werewolf,seeds]

Needs the ``local`` extra (``pip install ".[local]"``; measured with
llama-cpp-python 0.3.36, the version ``pyproject.toml`` bounds it to). Run it on an
otherwise idle machine: the ratios compare wall times.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# _local_requests; appended after the root, so `solvers` stays the package.
sys.path.append(str(Path(__file__).resolve().parent))

from _local_requests import fruit_rounds, seed_groups, werewolf_rounds  # noqa: E402
from prompt_reuse import block_aligned, bundled_tokenizer, chat_text, reuse  # noqa: E402

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
    #: Calls that sampled from a kept prompt state.
    shared: int = 0
    #: Wall seconds of the rounds whose calls include several seeds of one prompt.
    seed_rounds_s: float = 0.0


#: The paths, as (reuse, share prompts, workers of 'on' or one).
PATHS = {
    "off": (False, False, False),
    "scratch": (False, False, True),
    "blocks": (True, False, True),
    "on": (True, True, True),
}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _forget_in_process() -> None:
    """Drops the in-process models' kept states: no path starts from another's."""
    for shared in local._LOADED.values():
        forget = getattr(shared.llama, "forget", None)
        if forget is not None:
            forget()


def measure(path: str, rounds: list[list[ChatRequest]], workers: int) -> Measured:
    """Answers the rounds on one path; the model is made and closed inside the timing."""
    _forget_in_process()
    cpu0, wall0 = _cpu(), time.perf_counter()
    model: Any
    if path == "today":
        model = _Today()
    else:
        reuse, share, pooled = PATHS[path]
        model = local.LocalModel(
            workers=workers if pooled else 1, prefix_reuse=reuse, share_prompts=share
        )
    answers: list[str] = []
    seed_rounds = 0.0
    for batch in rounds:
        start = time.perf_counter()
        answers += [r.text for r in model.complete_batch(batch)]
        if seed_groups(batch) < len(batch):
            seed_rounds += time.perf_counter() - start
    shared = 0
    if path == "today":
        prompt = evaluated = model.prompt_tokens
        completion = model.completion_tokens
        model.close()
    else:
        counts = model.counts()
        prompt, evaluated = counts.prompt_tokens, counts.evaluated_tokens
        completion, shared = counts.completion_tokens, counts.shared_calls
        close_pools()  # workers exit and are reaped: their CPU time is counted
    _forget_in_process()
    return Measured(
        path,
        len(answers),
        time.perf_counter() - wall0,
        _cpu() - cpu0,
        prompt,
        evaluated,
        completion,
        tuple(answers),
        shared,
        seed_rounds,
    )


def _same(a: Measured, b: Measured) -> str:
    return f"{sum(x == y for x, y in zip(a.answers, b.answers, strict=True))}/{len(a.answers)}"


def report(name: str, runs: dict[str, Measured], rounds: list[list[ChatRequest]]) -> bool:
    """Prints one set's table, ratios and answer checks; ``False`` if a reuse path differs."""
    first = next(iter(runs.values()))
    grouped = sum(len(b) for b in rounds if seed_groups(b) < len(b))
    print(f"\n{name}: {first.calls} distinct requests, {grouped} in rounds with several seeds")
    print(
        f"{'path':8} {'wall s':>8} {'CPU s':>8} {'calls/wall-s':>13} {'calls/CPU-s':>12} "
        f"{'prompt tok':>11} {'evaluated':>10} {'generated':>10} {'shared':>7} "
        f"{'seed rounds s':>14}"
    )
    for m in runs.values():
        print(
            f"{m.path:8} {m.wall_s:8.1f} {m.cpu_s:8.1f} {m.calls / m.wall_s:13.3f} "
            f"{m.calls / m.cpu_s:12.3f} {m.prompt_tokens:11d} {m.evaluated:10d} "
            f"{m.completion_tokens:10d} {m.shared:7d} {m.seed_rounds_s:14.1f}"
        )
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ra, rb = runs[a], runs[b]
            line = f"wall {b} vs {a}: {ra.wall_s / rb.wall_s:.2f}x faster"
            if grouped and rb.seed_rounds_s > 0:
                line += f" (seed rounds: {ra.seed_rounds_s / rb.seed_rounds_s:.2f}x)"
            print(line)
    for m in runs.values():
        if m.prompt_tokens:
            print(
                f"prompt tokens evaluated, {m.path} vs requested: "
                f"-{1 - m.evaluated / m.prompt_tokens:.1%}"
            )
    base = next((runs[p] for p in ("off", "scratch") if p in runs), None)
    ok = True
    if base is not None:
        for m in runs.values():
            if m is base:
                continue
            same = _same(m, base)
            if m.path == "today":
                print(f"answers identical, today vs {base.path}: {same} (batch size differs)")
                continue
            identical = m.answers == base.answers
            ok = ok and identical
            print(f"answers identical, {m.path} vs {base.path}: {same} (must be all)")
    return ok


def _reusable(shared: int, length: int) -> int:
    """What a bit-identical path may skip of a prompt sharing ``shared`` tokens with an earlier one.

    All of a prompt asked before (its evaluated state kept), else its whole shared
    blocks (the engine's rule, :func:`prompt_reuse.block_aligned`).
    """
    return length if shared == length else block_aligned(shared, length)


def block_rate(tokens: list[int], repeats: int = 3) -> float:
    """Tokens per second one worker evaluates in 16-token blocks from scratch (best of ``repeats``).

    ``tokens`` is a prompt from position 0 (a short context: attention costs more
    further in, so this is the engine's best rate).
    """
    path = local.bundled_model_path()
    assert path is not None  # main() checked the extra is installed
    llama = local.new_llama(path, n_ctx=local.DEFAULT_CONTEXT, n_threads=1, extra_buffers=False)
    best = float("inf")
    try:
        for _ in range(repeats):
            llama.reset()
            start = time.perf_counter()
            llama.eval(tokens)
            best = min(best, time.perf_counter() - start)
    finally:
        llama.close()
    return len(tokens) / best


def floor(runs: dict[str, Measured], rounds: list[list[ChatRequest]], workers: int) -> None:
    """Prints the wall time no bit-identical path can go below, and each path against it."""
    ids = [bundled_tokenizer()(chat_text(r)) for batch in rounds for r in batch]
    ceiling = reuse(ids, _reusable)
    must = ceiling.length - ceiling.any_earlier
    # Answers are identical on every reuse path; the reference's count is theirs.
    generated = next(runs[p] for p in ("off", "scratch", *runs) if p in runs).completion_tokens
    rate = block_rate(list(ids[0][:256]))
    wall = (must + generated) / rate / workers
    print(
        f"floor: {must:,} of {ceiling.length:,} prompt tokens to evaluate (the rest is whole "
        f"blocks or whole prompts asked before) and {generated:,} generated, at "
        f"{rate:.0f} tokens/s a worker (16-token blocks, short context) on {workers} "
        f"workers: {wall:.1f} s wall"
    )
    for m in runs.values():
        print(
            f"best possible vs {m.path}: {m.wall_s / wall:.2f}x faster (measured: {m.wall_s:.1f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fruit-calls", type=int, default=120, help="distinct fruit requests")
    parser.add_argument("--werewolf-calls", type=int, default=60, help="distinct Werewolf requests")
    parser.add_argument(
        "--seed-calls", type=int, default=1000, help="requests of the 8-seed fruit tree (at most)"
    )
    parser.add_argument(
        "--seed-messages", type=int, default=2, help="messages of the 8-seed fruit tree"
    )
    parser.add_argument(
        "--workers", type=int, default=local.usable_cores(), help="workers of the pooled paths"
    )
    parser.add_argument(
        "--paths", default="today,off,blocks,on", help="paths of the fruit and Werewolf sets"
    )
    parser.add_argument(
        "--seed-paths", default="scratch,blocks,on", help="paths of the 8-seed fruit tree"
    )
    parser.add_argument(
        "--sets", default="fruit,werewolf,seeds", help="which sets: fruit, werewolf, seeds"
    )
    args = parser.parse_args()
    reason = local.check_installed()
    if reason is not None:
        parser.error(f"the local backend cannot run here: {reason}")
    chosen = args.sets.split(",")
    unknown = [p for p in args.paths.split(",") + args.seed_paths.split(",") if p not in PATHS]
    unknown = [p for p in unknown if p != "today"]
    if unknown or not set(chosen) <= {"fruit", "werewolf", "seeds"}:
        parser.error(f"unknown path or set: {', '.join(unknown) or args.sets}")
    sets: dict[str, tuple[list[list[ChatRequest]], list[str]]] = {}
    paths = args.paths.split(",")
    if "fruit" in chosen:
        name = "fruit tree (README's third command, scripted-built)"
        sets[name] = (fruit_rounds(args.fruit_calls), paths)
    if "werewolf" in chosen:
        name = "Werewolf arena game (seed 41, scripted-built)"
        sets[name] = (werewolf_rounds(args.werewolf_calls), paths)
    if "seeds" in chosen:
        name = f"fruit tree, 8 seeds per decision ({args.seed_messages} messages, scripted-built)"
        rounds = fruit_rounds(
            args.seed_calls,
            inits=1,
            max_messages=args.seed_messages,
            num_seeds=8,
            variants=("tone",),
            tree_only=True,
        )
        sets[name] = (rounds, args.seed_paths.split(","))
    # Answers and speeds are those of one llama.cpp build: the version goes with the numbers.
    vendor = local._import_llama_cpp()
    print(
        f"model: local:{local.BUNDLED_MODEL}; llama-cpp-python {vendor.__version__}; "
        f"workers of the pooled paths: {args.workers}; load average at start: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    failed = False
    for name, (rounds, set_paths) in sets.items():
        runs = {path: measure(path, rounds, args.workers) for path in set_paths}
        failed = not report(name, runs, rounds) or failed
        floor(runs, rounds, args.workers)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if failed:
        sys.exit("a path with reuse answered differently from the one without")


if __name__ == "__main__":
    main()
