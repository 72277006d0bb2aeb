"""The prefix-reuse ceiling of a scripted Werewolf game's prompts (and a fruit tree's).

Records the distinct requests of the scripted-built Werewolf arena game that
``local_model.py`` replays (arena preset, seed 41, GRATR werewolves against a
Dirichlet leader; :mod:`_local_requests`), in the order the engine sends them,
renders each as the text a chat model reads (ChatML, the bundled SmolLM2's
template: ``<|im_start|>role\\ncontent<|im_end|>\\n`` per message, then the
assistant's header) and measures how much of every prompt a prefix cache could
skip:

* **any earlier**: the longest common prefix with *any* earlier request (what a
  cache holding every earlier prompt could reuse);
* **previous**: the common prefix with the request just before it (what a
  single llama.cpp state, or one slot, reuses).

Each is the sum over requests of the shared length divided by the sum of the
prompt lengths, over the first ``--first`` requests and over all of them. The
lengths are counted in characters; with ``--tokens`` (needs the ``local`` extra)
also in the bundled model's tokens, raw and as the local backend reuses them
(whole blocks of 16 tokens aligned to position 0, never the prompt's last token:
:func:`gt_llm.backends.llama_blocks.reusable_prefix`). ``--fruit`` adds the
README's third fruit-trading command's tree.

Usage::

    python benchmarks/prompt_reuse.py [--first 40] [--tokens] [--fruit]

The numbers are those of the code it runs: to compare a prompt layout with an
earlier one, run the script on each checkout (e.g. ``git archive`` of the older
commit unpacked elsewhere, with ``PYTHONPATH`` pointing at it).
"""

from __future__ import annotations

import argparse
import bisect
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# _local_requests; appended after the root, so `solvers` stays the package.
sys.path.append(str(Path(__file__).resolve().parent))

from _local_requests import fruit_rounds, werewolf_rounds  # noqa: E402

from gt_llm.chat import ChatRequest  # noqa: E402

#: A prompt as characters or as the model's tokens.
Prompt = TypeVar("Prompt", str, tuple[int, ...])

#: The local backend's block of prompt tokens (``gt_llm.backends.local.BLOCK_TOKENS``).
BLOCK = 16


def chat_text(request: ChatRequest) -> str:
    """The prompt as a ChatML model reads it (SmolLM2's template), ending at the answer."""
    parts = [f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in request.messages]
    return "".join(parts) + "<|im_start|>assistant\n"


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common prefix of two strings or token tuples."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on slice equality: the comparisons run in C
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def block_aligned(shared: int, length: int) -> int:
    """What the local backend reuses of ``shared`` common tokens of a ``length``-token prompt."""
    return (min(shared, length - 1) // BLOCK) * BLOCK


class Reuse(NamedTuple):
    requests: int
    length: int  # summed prompt lengths
    any_earlier: int  # summed prefixes shared with the best earlier prompt
    previous: int  # summed prefixes shared with the previous prompt

    def line(self, unit: str) -> str:
        return (
            f"{self.requests:5d} requests, {self.length:9,d} {unit}: "
            f"any earlier {self.any_earlier / self.length:6.1%}, "
            f"previous {self.previous / self.length:6.1%}"
        )


def reuse(prompts: Sequence[Prompt], align: Callable[[int, int], int] | None = None) -> Reuse:
    """The reuse ceiling of ``prompts`` in order (``align`` maps a shared length, e.g. to blocks).

    The earlier prompt sharing the longest prefix with a new one is next to it in the
    sorted order of the earlier prompts, so each prompt is compared with two of them.
    """
    ordered: list[Prompt] = []
    total = best_sum = prev_sum = 0
    previous: Prompt | None = None
    for p in prompts:
        i = bisect.bisect_left(ordered, p)
        best = max(
            (common_prefix(p, ordered[j]) for j in (i - 1, i) if 0 <= j < len(ordered)),
            default=0,
        )
        prev = common_prefix(p, previous) if previous is not None else 0
        if align is not None:
            best, prev = align(best, len(p)), align(prev, len(p))
        total += len(p)
        best_sum += best
        prev_sum += prev
        ordered.insert(i, p)
        previous = p
    return Reuse(len(prompts), total, best_sum, prev_sum)


@functools.cache
def bundled_tokenizer() -> Callable[[str], tuple[int, ...]]:
    """The bundled model's tokenizer (vocabulary only), as the local backend tokenizes."""
    from gt_llm.backends import local

    reason = local.check_installed()
    if reason is not None:
        raise SystemExit(f"--tokens needs the local backend: {reason}")
    # Loaded the one way the project loads llama.cpp (the whole model: 135M, small).
    llama = local.new_llama(
        str(local.bundled_model_path()), n_ctx=512, n_threads=1, extra_buffers=False
    )

    def tokens(text: str) -> tuple[int, ...]:
        return tuple(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    return tokens


def report(name: str, requests: list[ChatRequest], first: int, tokens: bool) -> None:
    texts = [chat_text(r) for r in requests]
    print(f"\n{name}: {len(texts)} distinct requests")
    cuts = [(f"first {min(first, len(texts))}", min(first, len(texts))), ("all", len(texts))]
    for label, n in cuts:
        print(f"  {label:9} characters   {reuse(texts[:n]).line('chars')}")
    if tokens:
        tok = bundled_tokenizer()
        ids = [tok(t) for t in texts]
        for label, n in cuts:
            print(f"  {label:9} tokens       {reuse(ids[:n]).line('tokens')}")
            print(f"  {label:9} 16-blocks    {reuse(ids[:n], block_aligned).line('tokens')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=int, default=40, help="the first N requests apart")
    parser.add_argument(
        "--tokens", action="store_true", help="also count the bundled model's tokens"
    )
    parser.add_argument("--fruit", action="store_true", help="also the fruit tree")
    args = parser.parse_args()
    sets = {"Werewolf arena game (seed 41, scripted-built)": werewolf_rounds(10**9)}
    if args.fruit:
        sets["fruit tree (README's third command, scripted-built)"] = fruit_rounds(10**9)
    print("prefix shared with the best earlier request and with the previous one")
    for name, rounds in sets.items():
        report(name, [r for batch in rounds for r in batch], args.first, args.tokens)


if __name__ == "__main__":
    main()
