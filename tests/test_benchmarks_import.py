"""Every benchmark script still imports against the current packages.

Benchmarks are not run by the default suite (they take minutes), so an API
change could break one silently; importing each module (its ``main`` is
guarded) catches a renamed or removed name at once. Helper modules
(``_*.py``, no ``main``) are imported by the benchmark that uses them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = sorted(
    p
    for p in (Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")
    if not p.name.startswith("_")
)


def test_there_are_benchmarks():
    assert len(BENCHMARKS) >= 5


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_imports(path: Path, monkeypatch):
    # Some parse their flags at import (solvers.py must set numba's cache before importing it).
    monkeypatch.setattr("sys.argv", [str(path)])
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)), f"{path.name} has no main()"
