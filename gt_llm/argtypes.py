"""Argparse types shared by every ``gt-llm`` command (built-in and game commands).

argparse prefixes a type-parser's :class:`argparse.ArgumentTypeError` with the
flag (``argument --seed: must be a whole number >= 0, got -5``), so these
messages say only what was wrong and what is accepted. The module sits at the
bottom layer: :mod:`gt_llm.cli` and :mod:`games.engine.cli_options` both
import it, neither imports the other.
"""

from __future__ import annotations

import argparse

__all__ = ["non_negative_float", "non_negative_int", "positive_float", "positive_int"]


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (the error becomes a one-line usage error)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number >= 0 (seeds)."""
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number >= 0 (temperatures)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value
