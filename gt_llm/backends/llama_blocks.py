"""Prompt evaluation in fixed blocks aligned to position 0, and reuse of whole blocks.

llama.cpp's numbers for a token depend on the batch it was evaluated in:
measured on SmolLM2-135M-Instruct (60 fruit-trading requests, one thread),
evaluating prompts in batches of 32 instead of 512 tokens changed the logits
of 6 answers, and llama-cpp-python's own prefix reuse (which resumes at the
first differing token, in batches that start there) changed 11. Reusing a
cached prefix is only safe when every reused token was computed exactly as a
fresh call computes it.

So every prompt is evaluated in blocks of :data:`BLOCK_TOKENS` tokens starting
at position 0 (the last block may be shorter), and a call reuses only *whole*
blocks that an earlier call evaluated the same way: the longest common token
prefix with the previous prompt, rounded down to a block boundary, and never
past the previous prompt's last whole block (its short tail block and the
generated tokens were evaluated in other batches). A block then sees the same
tokens, positions, batch and cached keys and values as in a fresh call, and
its numbers are bit-for-bit the same (measured on the same 60 requests, one
worker: 60 of 60 answers and every logit vector identical with and without
reuse, with blocks of 16 and of 32; 77 % and 75 % fewer prompt tokens
evaluated). :func:`reusable_prefix` is that rule as a pure function.

Calls that differ only in their seed (the LLM-seed chance node: one request with
seeds 0..S-1) have the same prompt. The instance keeps the state of its last
:data:`PROMPT_STATES` prompts as they stand right after their evaluation, before
the first token is sampled: the keys and values of every prompt token, and a
copy of the last token's logits (llama.cpp's saved state does not hold them:
measured with llama-cpp-python 0.3.36, a loaded state leaves the logits of the
context's last decode). A call whose prompt is one of them loads that state,
writes the logits back into the context's output row, and samples at once, with
no prompt token evaluated. State and logits are those a fresh evaluation of the
same prompt leaves, byte for byte (the prompt was evaluated in the same aligned
blocks, from position 0 or from whole blocks that were), and the sampler is
built afresh from the call's own seed and settings, so every seed's answer is
the one it gets alone.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Tokens per evaluation block (llama.cpp's ``n_batch`` and ``n_ubatch``). Measured on
#: SmolLM2-135M with one thread (60 fruit requests with reuse): 16, 32 and 64 cost the
#: same CPU time within 7 %; smaller blocks reuse more of a prefix (3,972, 4,308 and
#: 4,884 of 17,108 prompt tokens evaluated).
BLOCK_TOKENS = 16
#: Prompt states a model instance keeps besides its live one (each a copy of its keys and
#: values: about 23 KiB a token for SmolLM2-135M, plus the vendor's score rows).
SAVED_STATES = 8
#: Evaluated prompts an instance keeps (each a copy of its keys and values and its last
#: logits) for the calls that ask the same prompt with another seed.
PROMPT_STATES = 2


def reusable_prefix(
    cached: Sequence[int] | np.ndarray, reusable: int, tokens: Sequence[int], block: int
) -> int:
    """How many leading tokens of ``tokens`` a call may take from the model's state.

    Args:
      cached: The tokens the state holds, from position 0.
      reusable: How many leading cached tokens were evaluated in whole aligned blocks.
      tokens: The new prompt.
      block: The block size.

    Returns:
      A multiple of ``block``, at most ``reusable`` and less than ``len(tokens)``
      (the last prompt token is always evaluated, so the call has fresh logits),
      up to which ``cached`` and ``tokens`` agree.
    """
    limit = min(int(reusable), len(cached), len(tokens) - 1)
    if limit <= 0:
        return 0
    old = np.asarray(cached[:limit])
    new = np.asarray(tokens[:limit], dtype=old.dtype)
    differ = np.flatnonzero(old != new)
    common = int(differ[0]) if differ.size else limit
    return (common // block) * block


@functools.cache
def block_llama_class(llama_class: type) -> type:
    """A subclass of llama-cpp-python's ``Llama`` that evaluates and reuses whole blocks.

    The instance's ``n_batch`` must be the block size. ``reuse`` (default on)
    says whether a call may start from earlier calls' blocks; with it off every
    call evaluates its whole prompt, in the same blocks. Besides the live state,
    the instance keeps the states of its last :data:`SAVED_STATES` prompts (a
    copy of their keys and values), so a call can resume from any of them: the
    calls of one Werewolf seat, or of one fruit-tree node, need not follow each
    other. A restored state is the saved cells byte for byte, so a block taken
    from it is still the block a fresh call computes.

    ``share_prompts`` (default on; only with ``reuse``) keeps the state of the
    last :data:`PROMPT_STATES` prompts right after their evaluation, and a call
    whose whole prompt is one of them samples from that state without evaluating
    a token (calls that differ only in their seed).
    """

    class BlockLlama(llama_class):  # type: ignore[misc,valid-type,unused-ignore]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.reuse = True
            #: Leading positions of the live state evaluated in whole blocks aligned to 0.
            self._whole_blocks = 0
            #: Prompt tokens of the last call, and how many of them it evaluated.
            self.last_prompt_tokens = 0
            self.last_evaluated = 0
            #: Saved prompt states (the vendor's) by their whole-block tokens, oldest first.
            self._saved: collections.OrderedDict[tuple[int, ...], Any] = collections.OrderedDict()
            self.share_prompts = True
            #: Evaluated prompts: their tokens -> (the vendor's state, its whole blocks, the
            #: last token's logits).
            self._prompts: collections.OrderedDict[tuple[int, ...], tuple[Any, int, np.ndarray]] = (
                collections.OrderedDict()
            )
            #: The prompt of the running call while its state is still to be kept.
            self._keep_prompt: tuple[int, ...] | None = None
            #: Whether the last call sampled from a kept prompt state.
            self.last_shared = False

        def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
            tokens = list(tokens)
            keep = 0
            self._keep_prompt = None
            self.last_shared = False
            if self.reuse and self.share_prompts and len(tokens) > 0:
                prompt = tuple(tokens)
                if prompt in self._prompts and self._load_prompt(prompt):
                    self.last_prompt_tokens = len(tokens)
                    self.last_evaluated = 0
                    self.last_shared = True
                    # The vendor finds the whole prompt cached with live logits and samples
                    # at once (its check compares every token and n_tokens).
                    kwargs["reset"] = True
                    return super().generate(tokens, *args, **kwargs)
                self._keep_prompt = prompt
            if self.reuse:
                keep = self._resume_from_best(tokens)
            # The vendor's own prefix check then finds exactly `keep` tokens to keep (0 means
            # a full reset): it never resumes inside a block.
            self.n_tokens = keep
            self._whole_blocks = min(self._whole_blocks, keep)
            self.last_prompt_tokens = len(tokens)
            self.last_evaluated = len(tokens) - keep
            kwargs["reset"] = True
            return super().generate(tokens, *args, **kwargs)

        def _resume_from_best(self, tokens: list[int]) -> int:
            """Loads the saved state that shares most whole blocks, if it beats the live one."""
            held = int(getattr(self, "n_tokens", 0))  # the vendor class is untyped
            best = reusable_prefix(self.input_ids[:held], self._whole_blocks, tokens, self.n_batch)
            chosen = None
            for prefix in self._saved:
                keep = reusable_prefix(prefix, len(prefix), tokens, self.n_batch)
                if keep > best:
                    best, chosen = keep, prefix
            if chosen is not None:
                self._saved.move_to_end(chosen)
                # The request's seed was set before generate(); load_state would put back
                # the saved call's (the vendor class is untyped, hence getattr).
                seed = getattr(self, "_seed", None)
                self.load_state(self._saved[chosen])
                self._seed = seed
                self._whole_blocks = len(chosen)
            return best

        def _last_logits(self) -> np.ndarray | None:
            """The context's output row the sampler reads (the last output), as a view."""
            pointer = self._ctx.get_logits_ith(-1)
            if not pointer:  # no output (llama.cpp logs why)
                return None
            return np.ctypeslib.as_array(pointer, shape=(int(self._n_vocab),))

        def _load_prompt(self, prompt: tuple[int, ...]) -> bool:
            """Loads a kept prompt state with its last logits; ``False`` if it cannot."""
            state, whole, logits = self._prompts[prompt]
            self._prompts.move_to_end(prompt)
            seed = getattr(self, "_seed", None)  # the request's, set before generate()
            self.load_state(state)
            self._seed = seed
            row = self._last_logits()
            if row is None or row.shape != logits.shape:
                self.n_tokens = 0  # an ordinary call from here (the state is reset)
                self._whole_blocks = 0
                return False
            row[:] = logits
            self.n_tokens = len(prompt)
            self._whole_blocks = whole
            # load_state marks the logits stale; they are the prompt's again, so the vendor
            # samples from them without evaluating a token.
            self._requires_eval = False
            return True

        def _keep_prompt_state(self) -> None:
            """Keeps the state of the prompt just evaluated, before anything is sampled."""
            prompt, self._keep_prompt = self._keep_prompt, None
            if prompt is None or int(self.n_tokens) != len(prompt):
                return
            if tuple(int(t) for t in self.input_ids[: len(prompt)]) != prompt:
                return
            row = self._last_logits()
            if row is None:
                return
            self._prompts.pop(prompt, None)
            self._prompts[prompt] = (self.save_state(), self._whole_blocks, row.copy())
            while len(self._prompts) > PROMPT_STATES:
                self._prompts.popitem(last=False)

        def remember(self) -> None:
            """Saves the live state's whole blocks for later calls (the oldest beyond the cap go)."""
            if not self.reuse or self._whole_blocks < self.n_batch:
                return
            prefix = tuple(int(t) for t in self.input_ids[: self._whole_blocks])
            if prefix in self._saved:
                # Its blocks are already kept (the cells past them are never read).
                self._saved.move_to_end(prefix)
                return
            self._saved[prefix] = self.save_state()
            while len(self._saved) > SAVED_STATES:
                self._saved.popitem(last=False)

        def eval(self, tokens: Sequence[int]) -> None:
            start = self.n_tokens
            # Everything from `start` on is dropped and evaluated again.
            self._whole_blocks = min(self._whole_blocks, start)
            super().eval(tokens)
            if start == self._whole_blocks and start % self.n_batch == 0:
                # Generated tokens are evaluated one at a time: only a prompt's full blocks count.
                self._whole_blocks = start + (len(tokens) // self.n_batch) * self.n_batch
            if self._keep_prompt is not None:
                # The first evaluation of a call is its prompt's (what is left after reuse).
                self._keep_prompt_state()

        def reset(self) -> None:
            super().reset()
            self._whole_blocks = 0

        def forget(self) -> None:
            """Drops every kept state (saved blocks and evaluated prompts)."""
            self._saved.clear()
            self._prompts.clear()

    return BlockLlama
