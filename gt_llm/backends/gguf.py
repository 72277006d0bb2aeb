"""The layout of a GGUF model file, read without llama.cpp: is every declared byte there?

A GGUF file is a header (magic, version, tensor and metadata counts), the
metadata entries (typed key-value pairs), one record per tensor (name,
dimensions, ggml type, offset into the data section), padding to the file's
alignment (``general.alignment``, default 32) and the tensors' data. A file
with a valid header and nothing after it, or cut short by a partial download,
loads only as far as llama.cpp reads before it fails: after a command has
made its results folder and started its workers. :func:`check_model_file`
checks the file and its header, then :func:`layout_problem` walks the
metadata and the tensor records and computes the bytes the tensors' data
need, so such a file is refused before anything is created (the ``local``
backend's spec check, :func:`gt_llm.backends.local.check_rest`, calls it).

Tensor sizes come from :data:`GGML_BLOCKS` (values per block, bytes per block
of each ggml type, as llama.cpp's ``gguf-py`` lists them); a type this table
does not know (a newer one) is not sized, only its offset is checked.

:func:`layout_problem` is pure (it reads the bytes it is given);
:func:`check_model_file` opens the file, never a FIFO or a device.
"""

from __future__ import annotations

import math
import mmap
import os
import stat
import struct
import threading

__all__ = [
    "DEFAULT_ALIGNMENT",
    "GGML_BLOCKS",
    "GGUF_MAGIC",
    "GGUF_VERSIONS",
    "MAX_DIMS",
    "check_model_file",
    "layout_problem",
]

#: Alignment of the data section when the file does not set ``general.alignment``.
DEFAULT_ALIGNMENT = 32
#: Most dimensions of a ggml tensor.
MAX_DIMS = 4
#: Deepest nesting of metadata arrays read (an array of arrays of scalars).
_MAX_ARRAY_DEPTH = 2
#: Bytes of each fixed-size metadata value type (uint8 .. float64; 7 is bool).
_SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
#: Per ggml type id: (values per block, bytes per block).
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 36),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    16: (256, 66),  # IQ2_XXS
    17: (256, 74),  # IQ2_XS
    18: (256, 98),  # IQ3_XXS
    19: (256, 50),  # IQ1_S
    20: (32, 18),  # IQ4_NL
    21: (256, 110),  # IQ3_S
    22: (256, 82),  # IQ2_S
    23: (256, 136),  # IQ4_XS
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    29: (256, 56),  # IQ1_M
    30: (1, 2),  # BF16
}
_ALIGNMENT_KEY = b"general.alignment"
_U64 = struct.Struct("<Q")
#: What :func:`layout_problem` reads: the file's bytes, or a map of them.
_Buffer = bytes | mmap.mmap


class _CutShort(Exception):
    """The file ends inside ``where``."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


class _Damaged(Exception):
    """A value no GGUF writer makes (one line)."""


class _Reader:
    """Reads little-endian GGUF values from ``buf`` at ``pos``, refusing to pass its end."""

    def __init__(self, buf: _Buffer, pos: int) -> None:
        self.buf = buf
        self.size = len(buf)
        self.pos = pos
        self.where = "the metadata"

    def need(self, n: int) -> None:
        if n < 0 or self.pos + n > self.size:
            raise _CutShort(self.where)

    def skip(self, n: int) -> None:
        self.need(n)
        self.pos += n

    def unpack(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        self.need(size)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return int(value)

    def string(self) -> bytes:
        n = self.unpack("<Q")
        self.need(n)
        text = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return text

    def skip_string(self) -> None:
        self.skip(self.unpack("<Q"))

    def skip_value(self, kind: int, depth: int = 0) -> None:
        if kind in _SCALAR_BYTES:
            self.skip(_SCALAR_BYTES[kind])
        elif kind == _STRING:
            self.skip_string()
        elif kind == _ARRAY and depth >= _MAX_ARRAY_DEPTH:
            raise _Damaged(f"metadata arrays nested more than {_MAX_ARRAY_DEPTH} deep")
        elif kind == _ARRAY:
            item, count = self.unpack("<I"), self.unpack("<Q")
            if item in _SCALAR_BYTES:
                self.skip(count * _SCALAR_BYTES[item])
                return
            # Each string or array item takes at least its 8-byte length: checked before
            # looping, so a damaged count is refused at once.
            self.need(count * 8)
            if item == _STRING:
                self._skip_strings(count)
                return
            for _ in range(count):
                self.skip_value(item, depth + 1)
        else:
            raise _Damaged(f"a metadata value of unknown type {kind}")

    def _skip_strings(self, count: int) -> None:
        # A vocabulary holds 10^5 strings: one tight loop, no copy.
        buf, size, pos, unpack = self.buf, self.size, self.pos, _U64.unpack_from
        for _ in range(count):
            if pos + 8 > size:
                raise _CutShort(self.where)
            pos += 8 + unpack(buf, pos)[0]
        if pos > size:
            raise _CutShort(self.where)
        self.pos = pos


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def layout_problem(buf: _Buffer, *, header_size: int, tensors: int, entries: int) -> str | None:
    """What is missing or damaged after a valid GGUF header, or ``None`` when all is there.

    Args:
      buf: The whole file (e.g. an ``mmap``; only the metadata and tensor records
        are read).
      header_size: Bytes of the header (where the metadata starts).
      tensors: The header's tensor count.
      entries: The header's metadata entry count.

    Returns:
      A phrase to follow the file's name, e.g. ``is cut short: the data of its
      272 tensors end at byte 98,362,432 but the file has 4,096 bytes ...`` or
      ``has a damaged GGUF layout (a tensor record of 5 dimensions (at most
      4))``; ``None`` for a complete file.
    """
    size = len(buf)
    reader = _Reader(buf, header_size)
    alignment = DEFAULT_ALIGNMENT
    try:
        for _ in range(entries):
            key = reader.string()
            kind = reader.unpack("<I")
            if key == _ALIGNMENT_KEY and kind == _UINT32:
                alignment = reader.unpack("<I")
                if alignment < 1 or alignment & (alignment - 1):
                    raise _Damaged(f"general.alignment {alignment}, not a power of 2")
            else:
                reader.skip_value(kind)
        reader.where = "the tensor records"
        end = 0
        for _ in range(tensors):
            reader.skip_string()  # the tensor's name
            dims = reader.unpack("<I")
            if dims > MAX_DIMS:
                raise _Damaged(f"a tensor record of {dims} dimensions (at most {MAX_DIMS})")
            shape = [reader.unpack("<Q") for _ in range(dims)]
            kind, offset = reader.unpack("<I"), reader.unpack("<Q")
            nbytes = 0
            if kind in GGML_BLOCKS:
                per_block, block_bytes = GGML_BLOCKS[kind]
                if shape and shape[0] % per_block:
                    raise _Damaged(
                        f"a tensor of {shape[0]} values a row, not a multiple of its "
                        f"type's block of {per_block}"
                    )
                nbytes = math.prod(shape) // per_block * block_bytes
            end = max(end, offset + nbytes)
    except _CutShort as cut:
        return (
            f"is cut short: it ends inside {cut.where} ({size:,} bytes; its GGUF header "
            f"declares {_count(entries, 'metadata entry', 'metadata entries')} and "
            f"{_count(tensors, 'tensor', 'tensors')})"
        )
    except _Damaged as exc:
        return f"has a damaged GGUF layout ({exc})"
    data_start = -(-reader.pos // alignment) * alignment
    required = data_start + end
    if required > size:
        return (
            f"is cut short: the data of its {_count(tensors, 'tensor', 'tensors')} end at byte "
            f"{required:,} but the file has {size:,} bytes (an interrupted download?)"
        )
    return None


# -- the model file ----------------------------------------------------------------------------

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

    Checks, without llama.cpp: an existing regular file (never opening a FIFO
    or a device), not empty, the magic ``GGUF``, a version llama.cpp reads (2
    or 3), sane tensor and metadata counts, and then the whole layout
    (:func:`gt_llm.backends.gguf.layout_problem`): every metadata entry and
    tensor record is there, and the file is at least as large as its
    tensors' data. So a file that is only a header, or a partial download, is
    named before anything is created or loaded (``gt-llm backends
    local:PATH`` reports it unusable, and every ``--backend`` refuses it).
    Only the metadata and tensor records are read (the file is mapped, not
    loaded); the answer is kept per file version.
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
    key = (os.path.realpath(path), info.st_ino, info.st_size, info.st_mtime_ns)
    with _CHECKED_LOCK:
        if key in _CHECKED:
            return _CHECKED[key]
    reason = _check_gguf(path)
    with _CHECKED_LOCK:
        _CHECKED[key] = reason
    return reason


#: The answers of :func:`check_model_file` per file version (real path, inode, size, mtime).
_CHECKED: dict[tuple[str, int, int, int], str | None] = {}
_CHECKED_LOCK = threading.Lock()


def _check_gguf(path: str) -> str | None:
    """The header and layout checks of :func:`check_model_file` on a regular file."""
    try:
        # Non-blocking, and the opened file checked again: it cannot be swapped for a FIFO.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return f"cannot read {path!r} ({exc.strerror}); {_FIX}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return f"{path!r} is not a regular file; {_FIX}"
        head = os.read(fd, _GGUF_HEADER.size)
        if head[:4] != GGUF_MAGIC:
            return (
                f"{path!r} is not a GGUF model file (it starts with {head[:4]!r}, not "
                f"{GGUF_MAGIC!r}); {_FIX}"
            )
        if len(head) < _GGUF_HEADER.size:
            return (
                f"{path!r} is cut short ({len(head)} bytes, less than a GGUF header's "
                f"{_GGUF_HEADER.size}); {_FIX}"
            )
        _, version, tensors, entries = _GGUF_HEADER.unpack(head)
        if version not in GGUF_VERSIONS:
            versions = " and ".join(map(str, GGUF_VERSIONS))
            return (
                f"{path!r} has GGUF version {version}; llama.cpp reads versions {versions}; {_FIX}"
            )
        if not 1 <= tensors <= _GGUF_MAX_ENTRIES or entries > _GGUF_MAX_ENTRIES:
            return (
                f"{path!r} has a damaged GGUF header ({tensors} tensors, {entries} metadata "
                f"entries); {_FIX}"
            )
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            problem = layout_problem(
                data, header_size=_GGUF_HEADER.size, tensors=tensors, entries=entries
            )
    except OSError as exc:
        return f"cannot read {path!r} ({exc.strerror or exc}); {_FIX}"
    finally:
        os.close(fd)
    return None if problem is None else f"{path!r} {problem}; {_FIX}"
