"""Atomic result files: never half-written, never a NaN in JSON.

Every file a command writes goes through :func:`atomic_write_bytes` (and
``_text``, ``_json``, :func:`atomic_path` for writers that need a path):
write to a temporary file in the destination's own folder, ``fsync`` it and
``os.replace`` it over the destination (then ``fsync`` the folder). A process
killed at any instant leaves either the previous file or the new one, never a
truncated mix. NaN and infinities become empty CSV cells and JSON ``null``
(:func:`finite_or_none`). The readers (:func:`read_json`, :func:`read_json_as`,
:func:`read_jsonl`, :func:`read_text`) open regular files only, read at most
:data:`MAX_READ_BYTES` (:func:`open_regular`), and name the file and the fix in
one line when a file is missing, a folder, a FIFO or a device, too large, not
UTF-8, not valid JSON or nested too deeply;
:func:`check_fields` checks the types of the fields a reader is about to use.

This module does IO only: it imports nothing from the LLM layer or the games.
Results folders (manifest, refusal, readers' checks) are :mod:`runs.results`.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

__all__ = [
    "MAX_READ_BYTES",
    "checked_size",
    "TMP_PREFIX",
    "NotJson",
    "ResultsError",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "check_writable",
    "csv_text",
    "disk_full",
    "finite_or_none",
    "no_constant",
    "open_regular",
    "own_temp_pid",
    "read_json",
    "read_json_as",
    "read_regular_bytes",
    "too_long_number",
    "write_csv",
    "write_json",
    "write_text",
]

T = TypeVar("T")

#: Temporary files of :func:`atomic_write_bytes` start with this prefix.
TMP_PREFIX = ".tmp-"
#: Our temporary files are named ``.tmp-<name>.gtllm<pid>-<random>[<ending>]``: the
#: writer's process id tells a sweep whether the writer is gone (:func:`own_temp_pid`).
_OWN_TMP = re.compile(r"^\.tmp-.+\.gtllm(?P<pid>[0-9]{1,10})-[a-z0-9_]{8}(?:\.[A-Za-z0-9_-]+)?$")
#: The errors of a full disk (or a full quota).
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def _tmp_prefix(base: str) -> str:
    # The temporary name of ``base``'s next write, tagged with this process's id.
    return f"{TMP_PREFIX}{base}.gtllm{os.getpid()}-"


def own_temp_pid(name: str) -> int | None:
    """The process id in the name of a temporary file of ours, or ``None`` for any other name.

    Only names :func:`atomic_write_bytes` and :func:`atomic_path` give match
    (``.tmp-summary.json.gtllm4242-k3j9x_2a``); a user's ``.tmp-notes.txt`` does not.
    """
    match = _OWN_TMP.match(name)
    return int(match["pid"]) if match else None


def disk_full(exc: BaseException, path: str | os.PathLike[str]) -> OSError | None:
    """A one-line error naming ``path`` and the fix when ``exc`` is a full disk, else ``None``.

    The error is an ``OSError`` with the same ``errno`` (``ENOSPC`` or ``EDQUOT``),
    e.g. ``out/logs/game_000001.jsonl: No space left on device (the disk is
    full); free some space, then re-run the same command: finished files are kept``.
    """
    if not isinstance(exc, OSError) or exc.errno not in _DISK_FULL:
        return None
    err = OSError(
        f"{path}: {os.strerror(exc.errno)} (the disk is full); free some space, then re-run "
        "the same command: finished files are kept"
    )
    err.errno = exc.errno
    return err


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
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(dest.name), dir=dest.parent)
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
        full = disk_full(exc, dest)
        if full is not None:
            raise full from None
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
        prefix=_tmp_prefix(dest.stem), suffix=dest.suffix, dir=dest.parent
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
    except BaseException as exc:
        kept = False
        if partial is not None:
            with contextlib.suppress(OSError):
                os.replace(tmp, partial)
                kept = True
        if not kept:
            with contextlib.suppress(OSError):
                tmp.unlink()
        full = disk_full(exc, dest)
        if full is not None:
            raise full from None
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
        fd, probe = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ResultsError(
            f"{caller}: output folder {str(path)!r} is not writable ({err.strerror or err})"
        ) from None
    return path


# -- reading -----------------------------------------------------------------------------------


#: Largest JSON, JSONL or CSV result file the readers accept (ours are far smaller): the one
#: size bound of every reader of results folders (a log has its own, larger one).
MAX_READ_BYTES = 256 * 1024 * 1024

#: What a path that is not a regular file is, for a message (first matching test wins).
_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)
#: Flags of a reader's open: a FIFO opened for reading without a writer blocks, unless
#: non-blocking; the descriptor is closed in child processes.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _check_regular(
    path: Path,
    info: os.stat_result,
    limit: int,
    *,
    what: str,
    fix: str,
    error: type[ValueError],
) -> int:
    """``info``'s size, refusing anything but a regular file of at most ``limit`` bytes."""
    tail = f": {fix}" if fix else ""
    if not stat.S_ISREG(info.st_mode):
        kind = next((words for test, words in _NOT_REGULAR if test(info.st_mode)), "not a file")
        raise error(f"{path} is {kind}, not {what} (a regular file){tail}")
    if info.st_size > limit:
        raise error(
            f"{path}: {info.st_size:,} bytes, more than the {limit:,} {what} may hold{tail}"
        )
    return info.st_size


def checked_size(
    path: Path, limit: int, *, what: str, fix: str = "", error: type[ValueError] = ResultsError
) -> int:
    """Size of a file a reader is about to load whole, refusing one larger than ``limit``.

    The one size guard of every reader (results, tables, game logs), so that a
    damaged or foreign file is refused before it is read into memory. Anything
    but a regular file (a folder, a FIFO, a device such as ``/dev/zero``, also
    behind a link) is refused too: reading it could block forever or never end.
    Readers that load the file should use :func:`open_regular` or
    :func:`read_regular_bytes`, which check the opened file itself.

    Args:
      path: The file.
      limit: Largest size accepted, in bytes.
      what: What the file is, for the message (e.g. ``"a result file"``).
      fix: What to do about it, appended to the message when given.
      error: The reader's own error class (one-line message).

    Raises:
      FileNotFoundError: the file is missing (each reader words that itself).
      error: the file cannot be read, is not a regular file or is larger than
        ``limit``, e.g. ``out/summary.json: 300,000,000 bytes, more than the
        268,435,456 a result file may hold: re-run ...``.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    return _check_regular(Path(path), info, limit, what=what, fix=fix, error=error)


@contextlib.contextmanager
def open_regular(
    path: str | os.PathLike[str],
    limit: int = MAX_READ_BYTES,
    *,
    what: str = "a result file",
    fix: str = "",
    error: type[ValueError] = ResultsError,
) -> Iterator[IO[bytes]]:
    """Opens a regular file of at most ``limit`` bytes for reading (binary).

    The path is checked with ``os.stat`` (a FIFO or a device is never opened),
    then opened non-blocking and the open file checked again with ``fstat``
    (the path cannot be swapped in between). Read at most ``limit`` bytes
    from it (:func:`read_regular_bytes` does).

    Args:
      path: The file (a link to a regular file is followed).
      limit: Largest size accepted, in bytes.
      what: What the file is, for the message.
      fix: What to do about it, appended to the message when given.
      error: The reader's own error class (one-line message).

    Raises:
      FileNotFoundError: the file is missing (each reader words that itself).
      error: as :func:`checked_size`.
    """
    p = Path(path)
    checked_size(p, limit, what=what, fix=fix, error=error)
    try:
        fd = os.open(p, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    try:
        _check_regular(p, os.fstat(fd), limit, what=what, fix=fix, error=error)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def read_regular_bytes(
    path: str | os.PathLike[str],
    limit: int = MAX_READ_BYTES,
    *,
    what: str = "a result file",
    fix: str = "",
    error: type[ValueError] = ResultsError,
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:func:`open_regular`).

    Raises:
      FileNotFoundError: the file is missing (each reader words that itself).
      error: as :func:`checked_size`; also when the file grew past ``limit``
        while it was read.
    """
    with open_regular(path, limit, what=what, fix=fix, error=error) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        tail = f": {fix}" if fix else ""
        raise error(f"{path}: more than the {limit:,} bytes {what} may hold{tail}")
    return data


class NotJson(ValueError):
    """NaN or an infinity in a JSON file (``json.loads`` takes them; they are not JSON)."""


def no_constant(name: str) -> Any:
    """``parse_constant`` of ``json.loads``: refuses NaN and infinities (:class:`NotJson`)."""
    raise NotJson(f"{name} is not valid JSON (a number must be finite; ours write null)")


def too_long_number() -> str:
    """What ``json.loads`` refused when it raised a plain ``ValueError`` (for a message)."""
    digits = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    return f"a whole number of more than {digits:,} digits" if digits else "a number too long"


def read_json(path: str | os.PathLike[str], *, rerun: str = "the command that wrote it") -> Any:
    """Reads a JSON file, naming the file and the fix when it is not valid JSON.

    Args:
      path: The file.
      rerun: What to re-run to rewrite it, for the message.

    Raises:
      ResultsError: the file is missing, not a regular file (a folder, a FIFO,
        a device), larger than :data:`MAX_READ_BYTES`, nested too deeply or not
        valid JSON (also NaN, an infinity, or a whole number too long to read),
        e.g. ``summary.json is not valid JSON (Expecting value at line 1
        column 1) in out: re-run ...``.
    """
    p = Path(path)
    try:
        raw = read_regular_bytes(p, MAX_READ_BYTES, what="a result file", fix=f"re-run {rerun}")
    except FileNotFoundError:
        raise ResultsError(f"{p.name} is missing in {p.parent}: re-run {rerun}") from None
    try:
        return json.loads(raw, parse_constant=no_constant)
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
    except NotJson as exc:
        raise ResultsError(f"{p.name} in {p.parent}: {exc}: re-run {rerun}") from None
    except ValueError:
        # int() refuses a number longer than sys.get_int_max_str_digits() (not JSONDecodeError).
        raise ResultsError(
            f"{p.name} in {p.parent} holds {too_long_number()}, which no file of ours holds: "
            f"re-run {rerun}"
        ) from None
    except RecursionError:
        raise ResultsError(f"{p}: JSON nested too deeply: re-run {rerun}") from None


def read_json_as(
    path: str | os.PathLike[str], parse: Callable[[Any], T], *, what: str, rerun: str
) -> T:
    """Reads a JSON file and parses it into a typed value (e.g. a ``from_json``).

    Args:
      path: The file.
      parse: Builds the value from the decoded JSON; a missing or wrong-typed
        field raises ``KeyError``, ``TypeError`` or ``ValueError``.
      what: What the file should hold, for the message (``"an arena report"``).
      rerun: What to re-run to rewrite it, for the message.

    Raises:
      ResultsError: as :func:`read_json`, or the content is not ``what``, e.g.
        ``arena.json in out is not an arena report (KeyError: 'pairs'): re-run ...``.
    """
    p = Path(path)
    data = read_json(p, rerun=rerun)
    try:
        return parse(data)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ResultsError(
            f"{p.name} in {p.parent} is not {what} ({type(exc).__name__}: {exc}): re-run {rerun}"
        ) from None


# -- shapes: what the fields of a loaded file must hold ----------------------------------------
