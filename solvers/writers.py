"""Writers of experiment results (kept import path): see :mod:`runs.atomic`.

Atomic writing lives in one place, :mod:`runs.atomic`; this module
re-exports its plain file writers for code that imports ``solvers.writers``.
Every file goes to a temporary file in the same folder and is renamed into
place; NaN and infinities become empty CSV cells and JSON ``null``.
"""

from __future__ import annotations

from runs.atomic import check_writable, csv_text, finite_or_none, write_csv, write_json, write_text

__all__ = ["check_writable", "csv_text", "finite_or_none", "write_csv", "write_json", "write_text"]
