"""Every llama.cpp instance is made by ``local.new_llama``: repacked weight buffers off.

With llama.cpp's repacked ("extra") weight buffers, batched prompt decoding crashes
inside llama.cpp on CPUs with AMX tiles; the backend loads its models with them off.
The throughput benchmark (``benchmarks/local_model.py``) once built its reference
``Llama`` itself, with llama-cpp-python's defaults (buffers on), and died with a
segmentation fault in llama.cpp's decode on its first call on a machine where the
backend's own paths answered. These tests run without llama-cpp-python: a stand-in vendor
module records what each ``Llama`` was built with, reading the model defaults the way
llama-cpp-python 0.3 does (``llama_cpp.llama.llama_cpp.llama_model_default_params()``
inside ``Llama.__init__``).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from gt_llm.backends import local
from gt_llm.backends.llama_blocks import BLOCK_TOKENS

ROOT = Path(__file__).resolve().parents[2]


class _Params:
    """The vendor's model parameters: repacked buffers on by default, as in llama.cpp."""

    def __init__(self) -> None:
        self.use_extra_bufts = True


class _ContextParams:
    """The vendor's context parameters: one sequence, a key-value cache per sequence."""

    def __init__(self) -> None:
        self.n_seq_max = 1
        self.kv_unified = False


class _FakeLlama:
    """Records its keyword arguments and the model defaults it read while loading."""

    built: list[dict[str, Any]] = []

    def __init__(self, model_path: str, **kwargs: Any) -> None:
        params = _low_level.llama_model_default_params()
        context = _low_level.llama_context_default_params()
        _FakeLlama.built.append(
            {
                "model_path": model_path,
                "use_extra_bufts": params.use_extra_bufts,
                "n_seq_max": context.n_seq_max,
                "kv_unified": context.kv_unified,
                **kwargs,
            }
        )
        self.n_batch = kwargs.get("n_batch", 512)
        self.input_ids: list[int] = []
        self.n_tokens = 0

    def close(self) -> None:
        pass


_low_level = types.SimpleNamespace(
    llama_model_default_params=_Params, llama_context_default_params=_ContextParams
)


@pytest.fixture
def fake_vendor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, Any]]:
    """``llama_cpp`` replaced by the stand-in; returns the list of built instances."""
    vendor = types.ModuleType("llama_cpp")
    vendor.Llama = _FakeLlama  # type: ignore[attr-defined]
    vendor.llama = types.SimpleNamespace(llama_cpp=_low_level)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", vendor)
    monkeypatch.setattr(_low_level, "llama_model_default_params", _Params)
    monkeypatch.setattr(_low_level, "llama_context_default_params", _ContextParams)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(local, "bundled_model_path", lambda: str(model))
    monkeypatch.setattr(local, "_LOADED", {})
    _FakeLlama.built = []
    return _FakeLlama.built


def _benchmark_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script extends sys.path
    path = ROOT / "benchmarks" / "local_model.py"
    spec = importlib.util.spec_from_file_location("local_model_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_new_llama_loads_without_repacked_buffers_and_puts_the_defaults_back(
    fake_vendor: list[dict[str, Any]],
) -> None:
    llama = local.new_llama("m.gguf", n_ctx=512, n_threads=1, extra_buffers=False, n_batch=64)
    (built,) = fake_vendor
    assert built["use_extra_bufts"] is False
    assert (built["n_batch"], built["n_ubatch"]) == (64, 64)
    assert type(llama).__name__ == "BlockLlama" and isinstance(llama, _FakeLlama)
    # The vendor's defaults are its own again once the model is loaded.
    assert _low_level.llama_model_default_params is _Params
    local.new_llama("m.gguf", n_ctx=512, n_threads=1, extra_buffers=True)
    assert fake_vendor[1]["use_extra_bufts"] is True
    assert fake_vendor[1]["n_batch"] == fake_vendor[1]["n_ubatch"] == BLOCK_TOKENS
    # The backend's context: one sequence, flash attention off.
    assert (built["n_seq_max"], built["kv_unified"], built["flash_attn"]) == (1, False, False)


def test_new_llama_can_hold_several_sequences_in_one_cache_and_puts_the_defaults_back(
    fake_vendor: list[dict[str, Any]],
) -> None:
    local.new_llama("m.gguf", n_ctx=512, n_threads=1, extra_buffers=False, sequences=8)
    local.new_llama("m.gguf", n_ctx=512, n_threads=1, extra_buffers=False, flash_attn=True)
    several, flash = fake_vendor
    assert (several["n_seq_max"], several["kv_unified"], several["flash_attn"]) == (8, True, False)
    assert (flash["n_seq_max"], flash["kv_unified"], flash["flash_attn"]) == (1, False, True)
    assert _low_level.llama_context_default_params is _ContextParams


def test_the_benchmarks_reference_path_loads_like_the_backend_but_for_its_batch(
    fake_vendor: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _benchmark_module(monkeypatch)
    today = bench._Today()
    local.load_shared(
        local.bundled_model_path(), n_ctx=local.DEFAULT_CONTEXT, n_threads=1, extra_buffers=False
    )
    reference, backend = fake_vendor
    assert reference["use_extra_bufts"] is False, "the reference path must not repack weights"
    assert backend["use_extra_bufts"] is False
    assert reference["n_batch"] == reference["n_ubatch"] == bench.TODAY_BATCH == 512
    assert backend["n_batch"] == backend["n_ubatch"] == BLOCK_TOKENS
    differ = {k for k in reference if reference[k] != backend[k]}
    assert differ == {"n_batch", "n_ubatch"}, differ
    today.close()


def _llama_constructions(path: Path) -> list[int]:
    """Lines of ``path`` that build a llama.cpp model: ``Llama(...)`` or ``block_llama_class(...)(...)``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Call):  # block_llama_class(X)(...)
            inner = func.func
            name = inner.id if isinstance(inner, ast.Name) else getattr(inner, "attr", "")
            if name == "block_llama_class":
                lines.append(node.lineno)
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "Llama":
            lines.append(node.lineno)
    return lines


def test_no_other_code_builds_a_llama_model_itself() -> None:
    found = {}
    for folder in ("gt_llm", "games", "solvers", "runs", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = _llama_constructions(path)
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    # Only new_llama itself, in the local backend.
    assert list(found) == ["gt_llm/backends/local.py"], found
    assert len(found["gt_llm/backends/local.py"]) == 1


INSTALLED = local.check_installed()


@pytest.mark.real_model
@pytest.mark.skipif(INSTALLED is not None, reason=f"local backend: {INSTALLED}")
def test_the_benchmarks_reference_model_is_loaded_without_repacked_buffers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gt_llm.chat import user_request

    bench = _benchmark_module(monkeypatch)
    today = bench._Today()
    try:
        assert today.llama.model_params.use_extra_bufts is False
        assert today.llama.n_batch == today.llama.context_params.n_ubatch == bench.TODAY_BATCH
        # A prompt of several 16-token blocks: one batch of 512 against blocks of 16.
        request = user_request(
            "In one short sentence, which fruit would you trade for an apple, and why?",
            seed=0,
            max_tokens=12,
        )
        fresh = local.LocalModel(workers=1, prefix_reuse=False)
        assert today.complete(request).text == fresh.complete(request).text
    finally:
        today.close()
