"""One prompt evaluation for many seeds (``llama_blocks``), against a stand-in vendor model.

A call whose whole prompt an earlier call evaluated loads that prompt's kept
state, writes the prompt's last logits back (llama.cpp's saved state does not
hold them) and samples with its own seed, evaluating no token. The stand-in
below behaves as llama-cpp-python 0.3 does where it matters: ``load_state``
puts back the tokens and the seed but not the logits, and ``generate`` samples
at once only when the whole prompt is held with live logits. The real model's
check (the answers of a whole fruit tree, bit for bit) is in ``test_local.py``
(``-m real_model``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from gt_llm.backends.llama_blocks import PROMPT_STATES, block_llama_class

VOCAB = 5


class _Ctx:
    def __init__(self) -> None:
        self.row = (ctypes.c_float * VOCAB)()

    def get_logits_ith(self, i: int) -> Any:
        assert i == -1
        return ctypes.cast(self.row, ctypes.POINTER(ctypes.c_float))


class _Vendor:
    """The parts of llama-cpp-python's ``Llama`` the block class relies on."""

    def __init__(self) -> None:
        self.n_batch = 4
        self._n_vocab = VOCAB
        self._ctx = _Ctx()
        self.input_ids = np.zeros(256, dtype=np.intc)
        self.n_tokens = 0
        self._seed = 0
        self._requires_eval = True
        self.evaluated: list[list[int]] = []
        #: (seed, logits) each call sampled its first token from.
        self.sampled: list[tuple[int, list[float]]] = []

    def _logits(self) -> np.ndarray:
        return np.ctypeslib.as_array(self._ctx.row, shape=(VOCAB,))

    def eval(self, tokens: list[int]) -> None:
        for t in tokens:
            self.input_ids[self.n_tokens] = t
            self.n_tokens += 1
        self.evaluated.append(list(tokens))
        # The logits of the last token depend on everything before it.
        history = self.input_ids[: self.n_tokens].astype(np.float64)
        self._logits()[:] = [float(history.sum() * (k + 1) % 97) for k in range(VOCAB)]
        self._requires_eval = False

    def generate(self, tokens: list[int], *args: Any, reset: bool = True, **kwargs: Any) -> Any:
        tokens = list(tokens)
        held = [int(t) for t in self.input_ids[: self.n_tokens]]
        if not (held == tokens and not self._requires_eval):
            common = 0
            while common < min(len(held), len(tokens) - 1) and held[common] == tokens[common]:
                common += 1
            self.n_tokens = common
            self.eval(tokens[common:])
        self.sampled.append((self._seed, self._logits().tolist()))
        self.eval([7])  # one generated token: the live logits move on
        yield 7

    def save_state(self) -> Any:
        return (self.input_ids.copy(), self.n_tokens, self._seed)

    def load_state(self, state: Any) -> None:
        ids, n, seed = state
        self.input_ids, self.n_tokens, self._seed = ids.copy(), n, seed
        self._requires_eval = True  # the logits stay those of the last evaluation

    def reset(self) -> None:
        self.n_tokens = 0
        self._requires_eval = True


def _model(**flags: Any) -> Any:
    model = block_llama_class(_Vendor)()
    for name, value in flags.items():
        setattr(model, name, value)
    return model


def _call(model: Any, prompt: list[int], seed: int) -> tuple[int, list[float]]:
    model._seed = seed  # what create_completion does before generate()
    list(model.generate(prompt))
    model.remember()
    return model.sampled[-1]


def _alone(prompt: list[int], seed: int) -> tuple[int, list[float]]:
    return _call(_model(reuse=False), prompt, seed)


PROMPT = list(range(1, 11))  # two whole blocks of 4 and a tail of 2


def test_a_second_seed_of_a_prompt_evaluates_nothing_and_samples_what_it_would_alone():
    model = _model()
    first = _call(model, PROMPT, seed=1)
    assert model.last_evaluated == len(PROMPT) and not model.last_shared
    evaluations = len(model.evaluated)
    for seed in (2, 3, 4):
        assert _call(model, PROMPT, seed) == _alone(PROMPT, seed)
        assert model.last_evaluated == 0 and model.last_shared
    # Only the generated tokens were evaluated after the first call.
    assert model.evaluated[evaluations:] == [[7]] * 3
    assert first == _alone(PROMPT, 1)


def test_without_sharing_each_seed_evaluates_its_prompts_last_block():
    model = _model(share_prompts=False)
    _call(model, PROMPT, seed=1)
    assert _call(model, PROMPT, seed=2) == _alone(PROMPT, 2)
    assert model.last_evaluated == 2 and not model.last_shared  # the tail after two blocks


def test_another_prompt_is_evaluated_and_the_kept_ones_are_bounded():
    model = _model()
    prompts = [PROMPT[:-1] + [20 + i] for i in range(PROMPT_STATES + 1)]
    for p in prompts:
        _call(model, p, seed=0)
        assert model.last_evaluated > 0
    assert _call(model, prompts[-1], seed=5) == _alone(prompts[-1], 5)
    assert model.last_shared
    assert _call(model, prompts[0], seed=5) == _alone(prompts[0], 5)
    assert not model.last_shared, "the oldest prompt state was dropped"
    model.forget()
    _call(model, prompts[0], seed=6)
    assert not model.last_shared


@pytest.mark.parametrize("reuse", [False, True])
def test_sharing_needs_reuse(reuse):
    model = _model(reuse=reuse)
    _call(model, PROMPT, seed=1)
    _call(model, PROMPT, seed=2)
    assert model.last_shared is reuse
