"""Writers of experiment results: CSV tables and strict JSON summaries.

Every file is written to a temporary file in the same folder and renamed into
place, so a reader never sees a half-written file and an interrupted run
leaves the previous version. NaN and infinities become empty CSV cells and
JSON ``null`` (strict JSON). (Convergence curves are written by
:meth:`solvers.Curves.to_csv`.)
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["check_writable", "finite_or_none", "write_csv", "write_json", "write_text"]


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Writes ``text`` to ``path`` atomically (temporary file, then rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _cell(v: Any) -> Any:
    return "" if isinstance(v, float) and np.isnan(v) else v


def write_csv(path: str | os.PathLike[str], rows: Sequence[dict[str, Any]]) -> Path:
    """Writes rows (dicts with the same keys, in order) as a CSV table; no rows: empty file."""
    if not rows:
        return write_text(path, "")
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(v) for k, v in r.items()})
    return write_text(path, buf.getvalue())


def finite_or_none(o: Any) -> Any:
    """A JSON-ready copy: NumPy values as Python ones, NaN and infinities as None."""
    if isinstance(o, np.ndarray):
        o = o.tolist()
    elif isinstance(o, np.generic):
        o = o.item()
    if isinstance(o, float):
        return o if np.isfinite(o) else None
    if isinstance(o, dict):
        return {k: finite_or_none(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [finite_or_none(v) for v in o]
    return o


def write_json(path: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> Path:
    """Writes ``obj`` as strict JSON (NaN as null), atomically."""
    return write_text(path, json.dumps(finite_or_none(obj), indent=indent, allow_nan=False))


def check_writable(out: str | os.PathLike[str], *, caller: str) -> Path:
    """Creates the folder ``out`` if needed and checks it is writable.

    Raises:
      ValueError: naming ``caller`` and the folder, when it cannot be written.
    """
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write_test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise ValueError(
            f"{caller}: output folder {str(out)!r} is not writable ({err.strerror})"
        ) from None
    return out
