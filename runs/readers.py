"""Readers that name FILE[:LINE] and the fix in one line.

:func:`read_text` and :func:`read_jsonl` open regular files only and read at most
:data:`runs.atomic.MAX_READ_BYTES` (:func:`runs.atomic.read_regular_bytes`: a
FIFO or a device such as ``/dev/zero`` is refused, never read), and refuse a
file that is missing, a folder, too large, not UTF-8, not valid JSON or nested
too deeply, naming the file (and the line) and what to re-run.
:func:`check_fields` checks, with :class:`Shape` (``INT``, ``list_of(TEXT)``,
``optional(NUMBER)`` ...), the types of the fields a reader is about to use.
Whole JSON files are read by :func:`runs.atomic.read_json` and
:func:`runs.atomic.read_json_as`.

This module does IO only: it imports nothing but :mod:`runs.atomic`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runs.atomic import (
    MAX_READ_BYTES,
    NotJson,
    ResultsError,
    no_constant,
    read_regular_bytes,
    too_long_number,
)

__all__ = [
    "BOOL",
    "INT",
    "LIST",
    "NUMBER",
    "OBJECT",
    "TEXT",
    "Shape",
    "check_fields",
    "describe",
    "list_of",
    "map_of",
    "optional",
    "read_jsonl",
    "read_text",
]


def _read_bytes(p: Path, *, what: str, rerun: str, limit: int) -> bytes:
    """The bytes of a regular file a reader loads whole (at most ``limit``; missing named)."""
    try:
        return read_regular_bytes(p, limit, what=what, fix=f"re-run {rerun}")
    except FileNotFoundError:
        raise ResultsError(f"{p.name} is missing in {p.parent}: re-run {rerun}") from None


def read_text(
    path: str | os.PathLike[str],
    *,
    rerun: str = "the command that wrote it",
    what: str = "a result file",
    limit: int = MAX_READ_BYTES,
) -> str:
    """Reads a UTF-8 text file (e.g. a CSV table), naming the file and the fix when it is not.

    Args:
      path: The file.
      rerun: What to re-run to rewrite it, for the message.
      what: What the file is, for the size message.
      limit: Largest size accepted, in bytes.

    Raises:
      ResultsError: the file is missing, not a regular file (a folder, a FIFO, a
        device), too large or not UTF-8, e.g. ``days.csv in
        out is not UTF-8 text (byte 8206): re-run ...``.
    """
    p = Path(path)
    raw = _read_bytes(p, what=what, rerun=rerun, limit=limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(
            f"{p.name} in {p.parent} is not UTF-8 text (byte {exc.start}): re-run {rerun}"
        ) from None


def read_jsonl(
    path: str | os.PathLike[str],
    *,
    rerun: str = "the command that wrote it",
    what: str = "a result file",
    limit: int = MAX_READ_BYTES,
) -> list[tuple[int, dict[str, Any]]]:
    """Reads a JSON-lines file whose every line is a JSON object (blank lines skipped).

    Args:
      path: The file.
      rerun: What to re-run to rewrite it, for the message.
      what: What the file is, for the size message.
      limit: Largest size accepted, in bytes.

    Returns:
      ``(line number, record)`` pairs in file order.

    Raises:
      ResultsError: ``FILE:LINE: ...`` for a line that is not UTF-8, not valid
        JSON, nested too deeply or not an object; the file is missing or too large.
    """
    p = Path(path)
    raw = _read_bytes(p, what=what, rerun=rerun, limit=limit)
    out: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            record = json.loads(line, parse_constant=no_constant)
        except UnicodeDecodeError as exc:
            raise ResultsError(f"{where}: not UTF-8 (byte {exc.start}): re-run {rerun}") from None
        except json.JSONDecodeError as exc:
            raise ResultsError(
                f"{where}: not valid JSON ({exc.msg} at column {exc.colno}): re-run {rerun}"
            ) from None
        except NotJson as exc:  # NaN or Infinity
            raise ResultsError(f"{where}: {exc}: re-run {rerun}") from None
        except ValueError:  # a whole number longer than int() reads
            raise ResultsError(f"{where}: {too_long_number()}: re-run {rerun}") from None
        except RecursionError:
            raise ResultsError(f"{where}: JSON nested too deeply: re-run {rerun}") from None
        if not isinstance(record, dict):
            raise ResultsError(
                f"{where}: a line must be a JSON object, not {describe(record)}: re-run {rerun}"
            )
        out.append((lineno, record))
    return out


# -- shapes: what the fields of a loaded file must hold ----------------------------------------


def describe(value: Any) -> str:
    """What a JSON value is, in words for a message (``null``, ``a list``, ``a string``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@dataclass(frozen=True)
class Shape:
    """What a field of a loaded file must hold: a test, and its words for the message."""

    test: Callable[[Any], bool]
    words: str
    #: The shape of the items of a list or the values of an object (for the message).
    item: Shape | None = None
    #: The shape of an object's keys, when checked.
    key: Shape | None = None
    #: ``list`` or ``dict`` for a container shape.
    container: type | None = None

    def explain(self, value: Any) -> str:
        """What ``value`` (which fails the test) is, e.g. ``a list with a string in it``."""
        items: list[Any] | None = None
        if self.container is list and isinstance(value, list):
            items = value
        elif self.container is dict and isinstance(value, dict):
            items = list(value.values())
        if self.item is None or items is None:
            return describe(value)
        bad = [x for x in items if not self.item.test(x)]
        if bad:
            return f"{describe(value)} with {self.item.explain(bad[0])} in it"
        if isinstance(value, dict) and self.key is not None:
            key = next((k for k in value if not self.key.test(k)), None)
            return f"an object with the key {str(key)[:40]!r}"
        return f"{describe(value)} of {len(items)}"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    # NaN and infinities never reach a file of ours (finite_or_none), so they are not checked.
    return isinstance(v, (int, float)) and not isinstance(v, bool)


INT = Shape(_is_int, "a whole number")
NUMBER = Shape(_is_number, "a number")
TEXT = Shape(lambda v: isinstance(v, str), "a string")
BOOL = Shape(lambda v: isinstance(v, bool), "true or false")
OBJECT = Shape(lambda v: isinstance(v, dict), "an object")
LIST = Shape(lambda v: isinstance(v, list), "a list")


def optional(shape: Shape) -> Shape:
    """``shape`` or ``null``."""
    return Shape(lambda v: v is None or shape.test(v), f"{shape.words} or null")


def list_of(shape: Shape, *, length: int | None = None) -> Shape:
    """A list whose every item is ``shape`` (of exactly ``length`` items when given)."""
    size = "" if length is None else f" of {length}"
    return Shape(
        lambda v: (
            isinstance(v, list)
            and (length is None or len(v) == length)
            and all(shape.test(x) for x in v)
        ),
        f"a list{size} (each {shape.words})",
        item=shape,
        container=list,
    )


def map_of(shape: Shape, *, keys: Shape | None = None) -> Shape:
    """An object whose every value is ``shape`` (and every key passes ``keys``, when given)."""
    key_words = "" if keys is None else f", keys {keys.words}"
    return Shape(
        lambda v: (
            isinstance(v, dict)
            and all(shape.test(x) for x in v.values())
            and (keys is None or all(keys.test(k) for k in v))
        ),
        f"an object (each value {shape.words}{key_words})",
        item=shape,
        key=keys,
        container=dict,
    )


def check_fields(
    obj: Any,
    fields: Mapping[str, Shape],
    *,
    required: Collection[str] = (),
    where: str = "",
) -> None:
    """Checks the fields of a loaded object; absent fields pass unless ``required``.

    Readers call it on what they are about to use, then wrap the ``TypeError``
    with the file's name (:func:`read_json_as` does).

    Args:
      obj: The loaded value (must be an object).
      fields: The shape of each field that is checked.
      required: Fields that must be present.
      where: Where ``obj`` sits in the file, prefixed to field names
        (``"days[2]"`` gives ``'days[2].probs' must be ...``).

    Raises:
      TypeError: one line naming the first wrong field, e.g. ``'rate' must be a
        number or null, not a string``.
    """
    at = f"{where}." if where else ""
    if not isinstance(obj, dict):
        raise TypeError(f"{where or 'the content'} must be an object, not {describe(obj)}")
    for name in required:
        if name not in obj:
            raise TypeError(f"'{at}{name}' is missing")
    for name, shape in fields.items():
        if name in obj and not shape.test(obj[name]):
            raise TypeError(f"'{at}{name}' must be {shape.words}, not {shape.explain(obj[name])}")
