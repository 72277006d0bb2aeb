"""Results folders that are never half-written and never mixed up.

A results folder holds what one command wrote (JSON summaries, CSV tables,
figures) beside, possibly, the call cache it used. This module is the only
place that writes such a folder's files, so that three promises hold:

* **Atomic files.** :func:`atomic_write_bytes` (and ``_text``, ``_json``)
  write to a temporary file in the destination's own folder, ``fsync`` it and
  ``os.replace`` it over the destination (then ``fsync`` the folder). A
  process killed at any instant leaves either the previous file or the new
  one, never a truncated mix.
* **One run per folder.** :func:`prepare_results_dir` writes the run's
  *manifest* (``manifest.json``: settings, gt-llm version, git commit, start
  time, Python and key package versions, backend, model, command line) with
  ``complete: false`` before the first result, and :meth:`ResultsDir.finish`
  rewrites it with ``complete: true`` and the end time after the last one. A
  folder holding results of *other* settings is refused unless
  ``force=True``, which deletes the old result files first (never a cache
  file such as ``*.sqlite``, never a sub-folder).
* **Readers know.** :func:`require_complete` refuses, and
  :func:`warn_if_incomplete` warns about, a folder whose run did not finish;
  :func:`read_json` names the file and the fix when a file is not valid JSON.

This module does IO only: it imports nothing from the LLM layer or the games,
so any command (``gt-llm fruit-trading run``, ``figures``, ``compare``, a
notebook) can use it.

Example::

    run = prepare_results_dir("results/fruit", {"inits": 30}, backend="scripted")
    run.write_json("summary.json", {"mean": 1.5})
    run.finish()
    require_complete("results/fruit")  # a reader's check
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime as _dt
import importlib.metadata
import io
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_SUFFIXES",
    "MANIFEST_NAME",
    "RESULT_SUFFIXES",
    "ResultsDir",
    "ResultsError",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "build_manifest",
    "check_writable",
    "csv_text",
    "finite_or_none",
    "prepare_results_dir",
    "read_json",
    "read_manifest",
    "require_complete",
    "warn_if_incomplete",
    "write_csv",
    "write_json",
    "write_text",
]

logger = logging.getLogger(__name__)

#: The manifest's file name inside a results folder.
MANIFEST_NAME = "manifest.json"
#: Identifies the manifest format (bumped if its meaning changes).
MANIFEST_FORMAT = "gt-llm-results/1"
#: Files with these endings are caches: kept by ``force``, ignored when judging a folder.
CACHE_SUFFIXES = (".sqlite", ".sqlite3", ".sqlite-wal", ".sqlite-shm", ".db", ".db-wal", ".db-shm")
#: Files with these endings look like results: a folder holding such files and no
#: manifest is refused (never cleared: only files a manifest lists are ever removed).
RESULT_SUFFIXES = (".json", ".jsonl", ".csv", ".md", ".png", ".pdf", ".svg", ".efg", ".txt", ".npz")
#: Packages whose versions the manifest records (those installed).
KEY_PACKAGES = ("numpy", "scipy", "open_spiel", "numba", "matplotlib", "httpx", "groq")
#: Temporary files of :func:`atomic_write_bytes` start with this prefix.
_TMP_PREFIX = ".tmp-"
# Files whose presence says "this is a project, not a results folder": force never clears there.
_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py")


class ResultsError(ValueError):
    """A results folder cannot be written or read as asked (one line, names the fix)."""


# -- atomic writes -----------------------------------------------------------------------------


def _read_umask() -> int:
    # os.umask can only be read by setting it; done once, at import.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Mode of new result files: what ``open`` would give (mkstemp alone makes them owner-only).
_FILE_MODE = 0o666 & ~_read_umask()


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; not every platform can open a folder.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # e.g. some network file systems refuse; the rename is still atomic
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes ``data`` to ``path`` so that readers see the old or the new file, never a mix.

    The data go to a temporary file in the same folder (same file system, so
    the rename is atomic), which is flushed, ``fsync``-ed and renamed over
    ``path``. On any failure the temporary file is removed and ``path`` is
    unchanged.

    Args:
      path: The destination file; its folder must exist.
      data: The full new content.

    Raises:
      OSError: the folder is missing or not writable, or the disk is full.
    """
    dest = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{dest.name}.", dir=dest.parent)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if exc.filename is None:
            # os.write / fsync errors (a full disk) carry no path: name the file being written.
            raise OSError(exc.errno, f"{exc.strerror or exc} writing", str(dest)) from None
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(dest.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """:func:`atomic_write_bytes` for text (newlines written as given)."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    """:func:`atomic_write_bytes` for a JSON document (strict: NaN and infinities refused).

    Raises:
      ValueError: ``obj`` holds NaN or an infinity (not valid JSON; write ``None`` instead).
      TypeError: ``obj`` holds something JSON cannot represent.
    """
    text = json.dumps(obj, indent=indent, sort_keys=False, ensure_ascii=False, allow_nan=False)
    atomic_write_text(path, text + "\n")


@contextlib.contextmanager
def atomic_path(
    path: str | os.PathLike[str], *, partial: str | os.PathLike[str] | None = None
) -> Iterator[Path]:
    """Yields a temporary path beside ``path``; renames it over ``path`` when the block succeeds.

    The temporary name keeps ``path``'s ending (so ``savefig`` picks the right
    format). The file is ``fsync``-ed before the rename; on an exception
    ``path`` is unchanged and the temporary file is removed, or, when
    ``partial`` is given, kept under that name (what was written before the
    failure, e.g. a game log up to the failing step: never under the final name).
    """
    dest = Path(path)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f"{_TMP_PREFIX}{dest.stem}.", suffix=dest.suffix, dir=dest.parent
    )
    with contextlib.suppress(OSError):
        os.fchmod(fd, _FILE_MODE)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        kept = False
        if partial is not None:
            with contextlib.suppress(OSError):
                os.replace(tmp, partial)
                kept = True
        if not kept:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    _fsync_dir(dest.parent)


# -- result files: strict JSON, CSV tables, text -------------------------------------------------


def finite_or_none(o: Any) -> Any:
    """A JSON-ready copy: NumPy values as Python ones, NaN and infinities as ``None``."""
    import numpy as np  # lazily: this module is also used where NumPy is not needed

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


def _cell(v: Any) -> Any:
    return "" if isinstance(v, float) and v != v else v


def csv_text(rows: Sequence[Mapping[str, Any]], fieldnames: Sequence[str] | None = None) -> str:
    """Rows (mappings with the same keys, in order) as CSV text; NaN as an empty cell.

    Args:
      rows: The table.
      fieldnames: The columns; default the keys of the first row. Give them so
        that a table without rows still has its header.
    """
    names = list(fieldnames) if fieldnames is not None else (list(rows[0]) if rows else [])
    if not names:
        return ""
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=names)
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(v) for k, v in r.items()})
    return buf.getvalue()


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`atomic_write_text`, returning the path."""
    atomic_write_text(path, text)
    return Path(path)


def write_csv(
    path: str | os.PathLike[str],
    rows: Sequence[Mapping[str, Any]],
    fieldnames: Sequence[str] | None = None,
) -> Path:
    """Writes a CSV table atomically (see :func:`csv_text`; no rows and no fieldnames: empty file)."""
    return write_text(path, csv_text(rows, fieldnames))


def write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> Path:
    """Writes ``obj`` as strict JSON atomically, NaN and infinities as ``null``."""
    atomic_write_json(path, finite_or_none(obj), indent=indent)
    return Path(path)


def check_writable(out: str | os.PathLike[str], *, caller: str) -> Path:
    """Creates the folder ``out`` if needed and checks it is writable.

    Raises:
      ValueError: naming ``caller`` and the folder, when it is empty or cannot be written.
    """
    if str(out).strip() == "":
        raise ResultsError(f"{caller}: the output folder is empty (''); pass a folder name")
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=_TMP_PREFIX, dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ResultsError(
            f"{caller}: output folder {str(path)!r} is not writable ({err.strerror or err})"
        ) from None
    return path


# -- reading -----------------------------------------------------------------------------------


#: Largest JSON or CSV result file the readers accept (ours are far smaller).
MAX_READ_BYTES = 256 * 1024 * 1024


def read_json(path: str | os.PathLike[str], *, rerun: str = "the command that wrote it") -> Any:
    """Reads a JSON file, naming the file and the fix when it is not valid JSON.

    Args:
      path: The file.
      rerun: What to re-run to rewrite it, for the message.

    Raises:
      ResultsError: the file is missing, larger than :data:`MAX_READ_BYTES`,
        nested too deeply or not valid JSON, e.g. ``summary.json is not valid
        JSON (Expecting value at line 1 column 1): re-run ...``.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_READ_BYTES:
            raise ResultsError(
                f"{p}: {size:,} bytes, more than the {MAX_READ_BYTES:,} a result file may hold: "
                f"re-run {rerun}"
            )
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ResultsError(f"{p.name} is missing in {p.parent}: re-run {rerun}") from None
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ResultsError(
            f"{p.name} is not valid JSON (not UTF-8 at byte {exc.start}) in {p.parent}: "
            f"re-run {rerun}"
        ) from None
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{p.name} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}) "
            f"in {p.parent}: re-run {rerun}"
        ) from None
    except RecursionError:
        raise ResultsError(f"{p}: JSON nested too deeply: re-run {rerun}") from None


def read_manifest(out: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The folder's manifest, or ``None`` when it has none.

    Raises:
      ResultsError: the manifest is not valid JSON or not an object.
    """
    path = Path(out) / MANIFEST_NAME
    if not path.exists():
        return None
    data = read_json(path, rerun="the command that wrote this folder")
    if not isinstance(data, dict):
        raise ResultsError(f"{MANIFEST_NAME} in {out} is not a JSON object: re-run the command")
    expected = {"settings": dict, "files": list, "complete": bool}
    for key, kind in expected.items():
        if key in data and not isinstance(data[key], kind):
            raise ResultsError(
                f"{path}: '{key}' must be a JSON {'object' if kind is dict else kind.__name__}, "
                f"got {type(data[key]).__name__}: re-run the command that wrote this folder"
            )
    return data


def _incomplete_reason(out: Path) -> str | None:
    if not out.is_dir():
        return f"results folder {str(out)!r} does not exist"
    manifest = read_manifest(out)
    if manifest is None:
        return (
            f"results folder {str(out)!r} has no {MANIFEST_NAME} (not written by this gt-llm, "
            "or the run stopped before its first file)"
        )
    if manifest.get("complete") is not True:
        started = manifest.get("started_at", "an unknown time")
        return (
            f"results folder {str(out)!r} is incomplete ({MANIFEST_NAME} says complete: false; "
            f"the run started at {started} was interrupted or is still running)"
        )
    return None


def require_complete(
    out: str | os.PathLike[str], *, rerun: str = "the same command"
) -> dict[str, Any]:
    """A reader's check: returns the manifest of a finished run, or refuses in one line.

    Args:
      out: The results folder.
      rerun: What to re-run to finish it, for the message.

    Raises:
      ResultsError: no folder, no manifest, an invalid manifest, or ``complete`` not true.
    """
    reason = _incomplete_reason(Path(out))
    if reason is not None:
        raise ResultsError(f"{reason}: re-run {rerun} to finish it")
    manifest = read_manifest(out)
    assert manifest is not None
    return manifest


def warn_if_incomplete(out: str | os.PathLike[str], *, rerun: str = "the same command") -> bool:
    """A lenient reader's check: logs one warning if the folder's run did not finish.

    Returns:
      True when the folder is complete, False when a warning was logged.

    Raises:
      ResultsError: the manifest exists but is not valid JSON.
    """
    reason = _incomplete_reason(Path(out))
    if reason is None:
        return True
    logger.warning("%s; its files may be partial or mixed: re-run %s to finish it", reason, rerun)
    return False


# -- the manifest ------------------------------------------------------------------------------


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    # The commit of the checkout this code runs from (None when installed from a wheel).
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = proc.stdout.strip()
    return commit if proc.returncode == 0 and commit else None


def _normalise(settings: Mapping[str, Any]) -> dict[str, Any]:
    # Settings as they read back from JSON, so that a stored and a fresh copy compare equal.
    try:
        return json.loads(json.dumps(dict(settings), sort_keys=True, default=str))
    except (TypeError, ValueError) as exc:
        raise ResultsError(f"prepare_results_dir: settings are not JSON-like ({exc})") from None


def build_manifest(
    settings: Mapping[str, Any],
    *,
    backend: str | None = None,
    model: str | None = None,
    command: Sequence[str] | None = None,
    spec: str | None = None,
) -> dict[str, Any]:
    """A fresh manifest with ``complete: false`` (see the module docstring).

    Args:
      settings: Everything that determines the results (JSON-like values).
      backend: The model backend (e.g. ``"groq"``), if any.
      model: The model name, if any.
      command: The command line (public: no credentials); default ``sys.argv``.
      spec: The backend's public label (where it was served), recorded, not compared.
    """
    packages = {name: v for name in KEY_PACKAGES if (v := _version(name)) is not None}
    return {
        "format": MANIFEST_FORMAT,
        "complete": False,
        "settings": _normalise(settings),
        "backend": backend,
        "model": model,
        "spec": spec,
        "gt_llm_version": _version("gt-llm"),
        "git_commit": _git_commit(),
        "started_at": _now(),
        "finished_at": None,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "packages": packages,
        "command": list(command) if command is not None else list(sys.argv),
        "files": [],
    }


# -- preparing a folder ------------------------------------------------------------------------


def _is_cache(name: str) -> bool:
    return name.endswith(CACHE_SUFFIXES)


def _safe_relative(name: object) -> bool:
    # A listed name is ours only as a plain relative path inside the folder.
    if not isinstance(name, str) or not name or "\\" in name or name.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _listed_files(out: Path, listed: Iterable[object]) -> list[Path]:
    """The files a manifest lists as this folder's results (those that exist; never a cache)."""
    found = {out / name for name in listed if _safe_relative(name)}  # type: ignore[operator]
    return sorted(p for p in found if p.is_file() and not _is_cache(p.name))


def _unlisted_files(out: Path) -> list[Path]:
    """Top-level files a folder without our manifest holds (caches and temporaries aside)."""
    return sorted(
        child
        for child in out.iterdir()
        if child.is_file()
        and not child.name.startswith(_TMP_PREFIX)
        and not _is_cache(child.name)
        and child.name != MANIFEST_NAME
    )


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], limit: int = 4) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [
        f"{k}: {json.dumps(old.get(k))} -> {json.dumps(new.get(k))}"
        for k in keys
        if old.get(k) != new.get(k)
    ]
    more = f", and {len(diffs) - limit} more" if len(diffs) > limit else ""
    return ", ".join(diffs[:limit]) + more


@dataclasses.dataclass
class ResultsDir:
    """A results folder prepared for one run (from :func:`prepare_results_dir`).

    Write every result through :meth:`write_bytes`, :meth:`write_text` or
    :meth:`write_json` (atomic, and listed in the manifest), then call
    :meth:`finish`.

    Attributes:
      path: The folder.
      manifest: The manifest as last written.
    """

    path: Path
    manifest: dict[str, Any]
    _pending: bool = False
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def _write_manifest(self) -> None:
        atomic_write_json(self.path / MANIFEST_NAME, self.manifest)
        self._pending = False

    def file(self, name: str) -> Path:
        """The path of a result file directly inside the folder.

        Raises:
          ResultsError: ``name`` is not a plain file name, or names a cache or the manifest.
        """
        if not name or Path(name).name != name or name in (".", ".."):
            raise ResultsError(f"ResultsDir: {name!r} is not a plain file name inside the folder")
        if name == MANIFEST_NAME or _is_cache(name):
            raise ResultsError(f"ResultsDir: {name!r} is reserved (manifest or cache)")
        return self.path / name

    def _record(self, name: str) -> None:
        with self._lock:
            if name not in self.manifest["files"]:
                self.manifest["files"].append(name)
                self._write_manifest()
            elif self._pending:
                self._write_manifest()

    def record(self, relative: str) -> Path:
        """Lists a file in a sub-folder (``logs/game_000001.jsonl``) as this run's own.

        For files another writer puts in place atomically (game logs); listed
        before they exist, so that ``--force`` clears them even after a kill,
        and only they are ever cleared.

        Raises:
          ResultsError: ``relative`` is not a plain relative path inside the folder.
        """
        if not _safe_relative(relative) or relative == MANIFEST_NAME or _is_cache(relative):
            raise ResultsError(f"ResultsDir: {relative!r} is not a relative path inside the folder")
        self._record(relative)
        return self.path / relative

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Atomically writes a result file and lists it in the manifest; returns its path."""
        path = self.file(name)
        # Listed before it exists, so that a later --force clears it even after a kill.
        self._record(name)
        atomic_write_bytes(path, data)
        return path

    def write_text(self, name: str, text: str) -> Path:
        """Atomically writes a UTF-8 text result file; returns its path."""
        return self.write_bytes(name, text.encode("utf-8"))

    def write_json(self, name: str, obj: Any, *, indent: int | None = 2) -> Path:
        """Atomically writes a strict JSON result file; returns its path."""
        path = self.file(name)
        self._record(name)
        atomic_write_json(path, obj, indent=indent)
        return path

    def write_csv(
        self,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        fieldnames: Sequence[str] | None = None,
    ) -> Path:
        """Atomically writes a CSV table (with its header even without rows if ``fieldnames``)."""
        return self.write_text(name, csv_text(rows, fieldnames))

    @contextlib.contextmanager
    def atomic_path(self, name: str) -> Iterator[Path]:
        """Lists a result file and yields a temporary path to write it with any library.

        For writers that want a file name (``fig.savefig(tmp)``, a CSV writer):
        the temporary file keeps ``name``'s ending, and is renamed over the
        result when the block exits without an exception.
        """
        path = self.file(name)
        self._record(name)
        with atomic_path(path) as tmp:
            yield tmp

    def finish(self, **extra: Any) -> dict[str, Any]:
        """Marks the run complete: rewrites the manifest with ``complete: true`` and the end time.

        Args:
          **extra: More JSON-like entries for the manifest (e.g. ``calls=1234``).

        Returns:
          The final manifest.
        """
        with self._lock:
            self.manifest.update(_normalise(extra))
            self.manifest["files"] = [n for n in self.manifest["files"] if (self.path / n).exists()]
            self.manifest["finished_at"] = _now()
            self.manifest["complete"] = True
            self._write_manifest()
            return dict(self.manifest)


def prepare_results_dir(
    out: str | os.PathLike[str],
    settings: Mapping[str, Any],
    *,
    force: bool = False,
    backend: str | None = None,
    model: str | None = None,
    command: Sequence[str] | None = None,
    spec: str | None = None,
) -> ResultsDir:
    """Makes ``out`` ready for a run of ``settings`` and writes its manifest (``complete: false``).

    A folder is accepted as is when it is new or empty (caches aside), or when
    its manifest holds the same settings, backend and model (a re-run or a
    resumed run: it rewrites the same files; a finished run's manifest is left
    as it is until the first file is written). A folder whose manifest holds
    other settings is refused unless ``force``, which first deletes the files
    that manifest lists as the run's own, nothing else. A folder holding files
    but no manifest (or an unreadable one) is never emptied: it is refused,
    naming the files, even with ``force``. Caches (:data:`CACHE_SUFFIXES`) are
    never touched.

    Args:
      out: The results folder (created with its parents).
      settings: Everything that determines the results (JSON-like).
      force: Replace results of other settings.
      backend: The model backend, recorded and compared.
      model: The model name, recorded and compared.
      command: The command line, public (default ``sys.argv``).
      spec: The backend's public label, recorded and not compared (a server
        restarted on another port serves the same results).

    Returns:
      The prepared folder; write through it, then call :meth:`ResultsDir.finish`.

    Raises:
      ResultsError: ``out`` is empty, is not a writable folder, or holds other results.
    """
    if out is None or str(out).strip() == "":
        raise ResultsError(
            "prepare_results_dir: the output folder is empty (''); pass a folder such as "
            "--out results/fruit"
        )
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultsError(
            f"prepare_results_dir: cannot create the output folder {str(path)!r} "
            f"({exc.strerror or exc}); pass another --out"
        ) from None
    if not os.access(path, os.W_OK):
        raise ResultsError(
            f"prepare_results_dir: the output folder {str(path)!r} is not writable; "
            "pass another --out"
        )
    # Temporary files of writes killed mid-way: never results, always safe to drop.
    for stale in path.glob(f"{_TMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            stale.unlink()

    manifest = build_manifest(settings, backend=backend, model=model, command=command, spec=spec)
    try:
        old = read_manifest(path)
    except ResultsError:
        raise ResultsError(
            f"results folder {str(path)!r} has an unreadable {MANIFEST_NAME}, so gt-llm cannot "
            "tell which files are its own and clears nothing: use another --out, or move the "
            "folder's files away"
        ) from None
    if old is None:
        # Files that look like results but that no manifest of ours lists: never ours to
        # clear or to mix with, whatever --force says. Other files (a script) are left be.
        foreign = [p for p in _unlisted_files(path) if p.name.endswith(RESULT_SUFFIXES)]
        if foreign and any((path / m).exists() for m in _PROJECT_MARKERS):
            raise ResultsError(
                f"prepare_results_dir: {str(path)!r} looks like a project folder, not a results "
                "folder; results go in a folder of their own: pass another --out"
            )
        if foreign:
            shown = ", ".join(p.name for p in foreign[:4])
            more = f" and {len(foreign) - 4} more" if len(foreign) > 4 else ""
            raise ResultsError(
                f"results folder {str(path)!r} holds files gt-llm did not write ({shown}{more}) "
                f"and no {MANIFEST_NAME}; it is never emptied, even with --force: use another "
                "--out"
            )
    listed = old.get("files", []) if old else []
    listed = listed if isinstance(listed, list) else []
    existing = [p for p in _listed_files(path, listed) if p.name != MANIFEST_NAME]

    same = old is not None and (
        old.get("settings") == manifest["settings"]
        and old.get("backend") == backend
        and old.get("model") == model
    )
    if old is not None and not same:
        if not force:
            diff = _differences(
                {
                    **old.get("settings", {}),
                    "backend": old.get("backend"),
                    "model": old.get("model"),
                },
                {**manifest["settings"], "backend": backend, "model": model},
            )
            raise ResultsError(
                f"results folder {str(path)!r} holds results of other settings ({diff}); use "
                "another --out, or --force to replace them (only the files its manifest lists "
                "are removed; caches are kept)"
            )
        if any((path / m).exists() for m in _PROJECT_MARKERS):
            raise ResultsError(
                f"prepare_results_dir: {str(path)!r} looks like a project folder, not a results "
                "folder; --force clears results only in a folder of their own: pass another --out"
            )
        # Only what the old manifest lists as ours; the manifest itself last, so that a
        # kill half-way leaves a manifest naming whatever is left.
        for p in existing:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        logger.info("results folder %s: cleared %d old result file(s)", path, len(existing))
    elif same and old is not None:
        # A re-run of the same settings keeps the list, so a later --force still clears them.
        manifest["files"] = [n for n in listed if _safe_relative(n)]
        if old.get("complete") is True:
            # A finished run stays marked finished until this run writes its first file:
            # a re-run refused or failing before that leaves the folder as it was.
            return ResultsDir(path=path, manifest=manifest, _pending=True)

    try:
        atomic_write_json(path / MANIFEST_NAME, manifest)
    except OSError as exc:
        raise ResultsError(
            f"prepare_results_dir: cannot write {MANIFEST_NAME} in {str(path)!r} "
            f"({exc.strerror or exc}); pass another --out"
        ) from None
    return ResultsDir(path=path, manifest=manifest)
