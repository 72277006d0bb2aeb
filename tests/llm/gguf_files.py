"""Small GGUF files for the local backend's file checks (no model, no llama.cpp).

:func:`gguf_bytes` lays a file out as llama.cpp's ``gguf-py`` writes one: the
header, the metadata entries, one record per tensor, padding to the
alignment, and each tensor's data padded to the alignment.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

#: ggml's F32 type id, and its bytes per value.
F32, F32_BYTES = 0, 4
ALIGNMENT = 32


def _string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def _metadata() -> list[bytes]:
    tokens = [b"<s>", b"a", b"bb"]
    array = struct.pack("<IQ", 8, len(tokens)) + b"".join(_string(t) for t in tokens)
    return [
        _string(b"general.architecture") + struct.pack("<I", 8) + _string(b"llama"),
        _string(b"general.alignment") + struct.pack("<II", 4, ALIGNMENT),
        _string(b"tokenizer.ggml.tokens") + struct.pack("<I", 9) + array,
    ]


def gguf_bytes(
    shapes: Sequence[Sequence[int]] = ((32, 2), (8,)), *, kind: int = F32, with_data: bool = True
) -> bytes:
    """A complete GGUF file of F32 tensors of ``shapes`` (``with_data=False``: no data section)."""
    entries = _metadata()
    out = struct.pack("<4sIQQ", b"GGUF", 3, len(shapes), len(entries)) + b"".join(entries)
    offset = 0
    for i, shape in enumerate(shapes):
        dims = b"".join(struct.pack("<Q", d) for d in shape)
        out += _string(f"t{i}".encode()) + struct.pack("<I", len(shape)) + dims
        out += struct.pack("<IQ", kind, offset)
        count = 1
        for d in shape:
            count *= d
        offset += -(-count * F32_BYTES // ALIGNMENT) * ALIGNMENT
    out += b"\0" * (-len(out) % ALIGNMENT)
    return out + (b"\1" * offset if with_data else b"")
