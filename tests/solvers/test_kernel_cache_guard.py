"""The cache guard of the solver kernels: an edit of a callee's file reaches a cached caller.

numba's on-disk cache checks only the file a kernel is defined in. Two tiny
packages of two kernel files each (``a`` calls ``b``) are run in child
processes sharing one ``NUMBA_CACHE_DIR``; then ``b`` is edited. Without the
guard the next process loads ``a`` with the old ``b`` compiled in; with it,
the new result. The read-only case is simulated (the tests run as root,
where file modes do not refuse a write).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import pathlib
import subprocess
import sys

import pytest

numba = pytest.importorskip("numba")

from solvers import _kernels  # noqa: E402
from solvers._kernels import _cache_guard  # noqa: E402
from solvers._kernels._cache_guard import (  # noqa: E402
    STAMP_SUFFIX,
    guard_cache,
    kernel_dispatchers,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]

B = "import numba\n\n\n@numba.njit(cache=True)\ndef b(x):\n    return x + 1.0\n"
A = (
    "import numba\n\nfrom {pkg}.b import b\n\n\n"
    "@numba.njit(cache=True)\ndef a(x):\n    return b(x) * 2.0\n"
)
INIT = {
    "guarded": (
        "from solvers._kernels._cache_guard import guard_cache\n"
        "from guarded import a, b\n\n"
        "FLUSHED = guard_cache((a, b), name='guarded')\n"
    ),
    "unguarded": "from unguarded import a, b\n\nFLUSHED = None\n",
}
PROBE = """
import json
import guarded, unguarded
print(json.dumps({p.__name__: [p.a.a(1.0), sum(p.a.a.stats.cache_hits.values()), p.FLUSHED]
                  for p in (guarded, unguarded)}))
"""


def _run(tmp_path: pathlib.Path) -> dict[str, list]:
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the edit below must not meet a stale .pyc
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "src"), str(ROOT)])
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # about 3 s: compiles kernels; CI runs it in its slow step
def test_an_edit_of_a_callee_file_reaches_the_cached_caller_only_with_the_guard(tmp_path):
    for pkg, init in INIT.items():
        folder = tmp_path / "src" / pkg
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(init)
        (folder / "a.py").write_text(A.format(pkg=pkg))
        (folder / "b.py").write_text(B)

    first = _run(tmp_path)  # compiles both and caches them: 2 * (1 + 1)
    assert first == {"guarded": [4.0, 0, True], "unguarded": [4.0, 0, None]}

    for pkg in INIT:
        b = tmp_path / "src" / pkg / "b.py"
        b.write_text(b.read_text().replace("x + 1.0", "x + 10.0"))
    second = _run(tmp_path)
    # Without the guard numba loads `a` from the cache (a hit) with the old `b` inside.
    assert second["unguarded"] == [4.0, 1, None]
    # With it the cache was flushed: `a` recompiled against the new `b`, 2 * (1 + 10).
    assert second["guarded"] == [22.0, 0, True]

    third = _run(tmp_path)  # nothing changed: the guard keeps the cache
    assert third["guarded"] == [22.0, 1, False]


def _kernel_module(tmp_path: pathlib.Path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(B)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("fails", ["flush", "stamp"])
def test_a_cache_folder_that_cannot_be_written_does_not_crash(tmp_path, monkeypatch, caplog, fails):
    name = f"guard_readonly_{fails}"
    module = _kernel_module(tmp_path, name)
    monkeypatch.delitem(sys.modules, name)
    (kernel,) = kernel_dispatchers([module])

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(kernel._cache.cache_path))

    if fails == "flush":
        monkeypatch.setattr(kernel._cache, "flush", refuse)
    else:
        monkeypatch.setattr(_cache_guard, "atomic_write_text", refuse)
    with caplog.at_level(logging.DEBUG, logger=_cache_guard.__name__):
        assert guard_cache([module], name=name) is True
    assert "Permission denied" in caplog.text
    assert not (pathlib.Path(kernel._cache.cache_path) / f"{name}{STAMP_SUFFIX}").exists()
    # Unflushable: nothing is loaded from the cache. Flushed but unstamped: the cache stays on.
    assert kernel._cache._enabled is (fails == "stamp")
    assert module.b(1.0) == 2.0


def test_the_guard_covers_every_kernel_file():
    files = {p.stem for p in pathlib.Path(_kernels.__file__).parent.glob("*.py")}
    assert {m.__name__.rsplit(".", 1)[1] for m in _kernels.MODULES} == files - {
        "__init__",
        "_cache_guard",
    }
    defined = {k.py_func.__name__ for k in kernel_dispatchers(_kernels.MODULES)}
    assert {"cfr_step", "policy_metrics", "curves_run", "internal_end"} <= defined
