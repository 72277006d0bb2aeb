"""Several seeds of one prompt decoded in one batch: are the answers each seed's alone, and faster?

The seeds of one request (the LLM-seed chance node) share their prompt; after
it they generate different tokens. llama.cpp can decode them side by side: the
prompt's keys and values copied to one sequence per seed, then one batch per
step holding each seed's next token. This script measures, with the bundled
SmolLM2-135M-Instruct on one thread:

* **identity**: every logit vector of ``--seeds`` sequences decoded in one
  batch against the same sequences decoded alone, one token at a time (as the
  backend decodes), with llama.cpp's attention as the backend runs it (flash
  attention off) and with flash attention on;
* **speed**: milliseconds per token evaluated in a 16-token prompt block
  (the backend's block), generated alone, and generated ``--seeds`` at a time
  in one batch (best of ``--repeats``).

The prompt is a fruit-trading message request of the scripted-built 8-seed
tree (what ``local_model.py --sets seeds`` replays); each sequence continues
with its own slice of a fixed text, so the sequences differ from the first
generated token on.

Usage::

    python benchmarks/batched_decode.py [--seeds 8] [--steps 24] [--repeats 3]

Needs the ``local`` extra. Run it on an otherwise idle machine: the speed
ratios compare wall times.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# _local_requests; appended after the root, so `solvers` stays the package.
sys.path.append(str(Path(__file__).resolve().parent))

from _local_requests import fruit_rounds  # noqa: E402
from prompt_reuse import chat_text  # noqa: E402

from gt_llm.backends import local  # noqa: E402

#: What each sequence generates, one slice per sequence (any text: only the shapes matter).
_CONTINUATION = (
    " I can give you two apples for every banana, and I will add a fig if you agree today."
    " Bananas are scarce this season, so think about what you would lose by waiting."
    " My last offer stands until the market closes at noon."
)


def _logits(llama: Any, row: int) -> np.ndarray:
    pointer = llama._ctx.get_logits_ith(row)  # the vendor class is untyped
    return np.ctypeslib.as_array(pointer, shape=(int(llama._n_vocab),)).copy()


def _fresh_prompt(llama: Any, prompt: Sequence[int]) -> None:
    llama.reset()
    llama._ctx.kv_cache_clear()
    llama.eval(list(prompt))


Rows = list[list[np.ndarray]]


def alone(llama: Any, prompt: Sequence[int], paths: list[list[int]]) -> tuple[Rows, float]:
    """Each path decoded after the prompt one token at a time.

    Returns:
      The logits after the prompt and after every token, per path, and the seconds
      spent on the paths' tokens (not on the prompts).
    """
    out, seconds = [], 0.0
    for path in paths:
        _fresh_prompt(llama, prompt)
        rows = [_logits(llama, -1)]
        start = time.perf_counter()
        for token in path:
            llama.eval([token])
            rows.append(_logits(llama, -1))
        seconds += time.perf_counter() - start
        out.append(rows)
    return out, seconds


def batched(
    llama: Any, vendor: Any, prompt: Sequence[int], paths: list[list[int]]
) -> tuple[Rows, float]:
    """The paths decoded side by side: the prompt once, then one batch per step.

    Returns:
      As :func:`alone`: the logits per path, and the seconds spent after the prompt.
    """
    _fresh_prompt(llama, prompt)
    start = time.perf_counter()
    first = _logits(llama, -1)
    memory = vendor.llama_get_memory(llama._ctx.ctx)
    for seq in range(1, len(paths)):
        vendor.llama_memory_seq_cp(memory, 0, seq, -1, -1)
    batch = vendor.llama_batch_init(len(paths), 0, 1)
    out = [[first] for _ in paths]
    try:
        for step in range(len(paths[0])):
            batch.n_tokens = len(paths)
            for seq, path in enumerate(paths):
                batch.token[seq] = path[step]
                batch.pos[seq] = len(prompt) + step
                batch.n_seq_id[seq] = 1
                batch.seq_id[seq][0] = seq
                batch.logits[seq] = True
            code = vendor.llama_decode(llama._ctx.ctx, batch)
            if code != 0:
                raise RuntimeError(f"llama_decode returned {code}")
            for seq in range(len(paths)):
                out[seq].append(_logits(llama, seq))
    finally:
        vendor.llama_batch_free(batch)
    return out, time.perf_counter() - start


def compare(a: Rows, b: Rows) -> str:
    pairs = [(x, y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True)]
    same = sum(np.array_equal(x, y) for x, y in pairs)
    worst = max(float(np.max(np.abs(x - y))) for x, y in pairs)
    return f"{same} of {len(pairs)} logit vectors identical (largest difference {worst:.3g})"


def measure(
    llama: Any, single: Any, vendor: Any, prompt: list[int], paths: list[list[int]], repeats: int
) -> None:
    """Prints the identity of batched and alone logits, and the costs per token.

    ``single`` is the same model with a one-sequence context (the backend's): the
    paths decoded alone there are the reference.
    """
    reference = alone(single, prompt, paths)[0]
    one, side = alone(llama, prompt, paths)[0], batched(llama, vendor, prompt, paths)[0]
    print(f"  alone, {len(paths)}-sequence context against one-sequence: {compare(one, reference)}")
    print(f"  batched against alone (one-sequence context): {compare(side, reference)}")
    prompt_s = alone_s = side_s = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        _fresh_prompt(llama, prompt)
        prompt_s = min(prompt_s, time.perf_counter() - start)
        alone_s = min(alone_s, alone(llama, prompt, paths)[1])
        side_s = min(side_s, batched(llama, vendor, prompt, paths)[1])
    tokens = len(paths) * len(paths[0])
    per_alone, per_side = alone_s / tokens * 1e3, side_s / tokens * 1e3
    print(
        f"  ms per token: in a 16-token prompt block {prompt_s / len(prompt) * 1e3:.2f}; "
        f"generated alone {per_alone:.2f}; generated {len(paths)} at a time {per_side:.2f} "
        f"({per_alone / per_side:.2f}x faster than alone)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8, help="sequences decoded side by side")
    parser.add_argument("--steps", type=int, default=24, help="tokens each sequence generates")
    parser.add_argument("--repeats", type=int, default=3, help="timings kept: the best of these")
    args = parser.parse_args()
    if not 2 <= args.seeds <= 64 or not 1 <= args.steps <= 256 or args.repeats < 1:
        parser.error("--seeds must be 2 to 64, --steps 1 to 256, --repeats at least 1")
    reason = local.check_installed()
    if reason is not None:
        parser.error(f"the local backend cannot run here: {reason}")
    vendor = local._import_llama_cpp()
    path = local.bundled_model_path()
    assert path is not None
    rounds = fruit_rounds(10**6, inits=1, max_messages=2, num_seeds=8, variants=("tone",))
    request = next(r for b in rounds for r in b if r.task == "fruit_trading.message")
    print(
        f"model: local:{local.BUNDLED_MODEL}; llama-cpp-python {vendor.__version__}; one thread; "
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for flash in (False, True):
        made = [
            local.new_llama(
                path,
                n_ctx=local.DEFAULT_CONTEXT,
                n_threads=1,
                extra_buffers=False,
                flash_attn=flash,
                sequences=sequences,
            )
            for sequences in (args.seeds, 1)
        ]
        llama, single = made
        try:
            prompt = llama.tokenize(chat_text(request).encode("utf-8"), add_bos=False, special=True)
            text = llama.tokenize(_CONTINUATION.encode("utf-8"), add_bos=False)
            if len(text) < args.seeds + args.steps:
                parser.error(f"--seeds + --steps must be at most {len(text)}")
            paths = [text[k : k + args.steps] for k in range(args.seeds)]
            label = "flash attention on" if flash else "flash attention off (the backend's)"
            print(f"\n{label}; prompt of {len(prompt)} tokens, {args.seeds} sequences")
            measure(llama, single, vendor, prompt, paths, args.repeats)
        finally:
            for model in made:
                model.close()
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
