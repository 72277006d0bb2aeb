"""Argparse types shared by every ``gt-llm`` command (built-in and game commands).

argparse prefixes a type-parser's :class:`argparse.ArgumentTypeError` with the
flag (``argument --seed: must be a whole number >= 0, got -5``), so these
messages say only what was wrong and what is accepted. The module sits at the
bottom layer: :mod:`gt_llm.cli` and :mod:`games.engine.cli_options` both
import it, neither imports the other.

Every size flag has a documented bound: :func:`bounded_int` and
:func:`bounded_float` build types that refuse, at parse time, values outside
``[lo, hi]`` (the type keeps ``lo`` and ``hi`` as attributes, so tests can probe
both ends of every flag). The shared maxima are the ``MAX_*`` constants below.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_CONCURRENCY",
    "MAX_RETRY_BUDGET",
    "MAX_RPM",
    "MAX_SEED",
    "MAX_SIZE",
    "MAX_TIMEOUT",
    "MAX_WORKERS",
    "BoundedFloat",
    "BoundedInt",
    "add_check",
    "backend_spec",
    "check_backend_arg",
    "bounded_float",
    "bounded_int",
    "distinct_names",
    "refuse_repeated",
    "non_empty",
    "non_negative_float",
    "non_negative_int",
    "positive_float",
    "positive_int",
    "run_checks",
]

#: Largest seed: a signed 32-bit integer, which every server and llama.cpp accept.
MAX_SEED = 2**31 - 1
#: Most concurrent model calls (threads; a server's own limit is usually far lower).
MAX_CONCURRENCY = 256
#: Most worker threads or parallel games (``--processes``, ``--jobs``).
MAX_WORKERS = 256
#: Largest accepted answer a user may allow (16 MiB; the default is 64 KiB).
MAX_ANSWER_BYTES = 16 * 2**20
#: Longest per-request timeout, seconds (one day).
MAX_TIMEOUT = 86_400.0
#: Longest retry budget of one call, seconds (one week).
MAX_RETRY_BUDGET = 7 * 86_400.0
#: Highest request-rate limit, requests per minute.
MAX_RPM = 1e6
#: Most of a count whose real limit is the game's memory estimate (``--iterations``,
#: ``--inits``, ``--games``): only digits beyond any machine are refused at parse time.
MAX_SIZE = 10**15


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise argparse.ArgumentTypeError(f"expected a whole number, got {shown!r}") from None


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


def _shown(value: int) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"a {len(text)}-digit number"


class BoundedInt:
    """An argparse type: a whole number in ``[lo, hi]`` (see :func:`bounded_int`)."""

    def __init__(self, lo: int, hi: int, *, unit: str = "") -> None:
        if lo > hi:
            raise ValueError(f"bounded_int: lo {lo} > hi {hi}")
        self.lo, self.hi, self.unit = lo, hi, unit
        self.__name__ = f"whole number in [{lo}, {hi}]"

    def __call__(self, text: str) -> int:
        value = _whole_number(text)
        if value < self.lo:
            raise argparse.ArgumentTypeError(
                f"must be a whole number >= {self.lo}{self.unit}, got {_shown(value)}"
            )
        if value > self.hi:
            raise argparse.ArgumentTypeError(
                f"must be a whole number <= {self.hi}{self.unit}, got {_shown(value)}"
            )
        return value

    def __repr__(self) -> str:
        return f"bounded_int({self.lo}, {self.hi})"


class BoundedFloat:
    """An argparse type: a finite number in ``[lo, hi]`` (``(lo, hi]`` when ``above``)."""

    def __init__(self, lo: float, hi: float, *, above: bool = False, unit: str = "") -> None:
        if not lo < hi:
            raise ValueError(f"bounded_float: lo {lo} >= hi {hi}")
        self.lo, self.hi, self.above, self.unit = lo, hi, above, unit
        left = "(" if above else "["
        self.__name__ = f"number in {left}{lo:g}, {hi:g}]"

    def __call__(self, text: str) -> float:
        shown = text if len(text) <= 40 else text[:40] + "..."
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {shown!r}") from None
        if not math.isfinite(value):
            left = "(" if self.above else "["
            raise argparse.ArgumentTypeError(
                f"must be a finite number in {left}{self.lo:g}, {self.hi:g}]{self.unit}, got {shown}"
            )
        if self.above and value <= self.lo:
            raise argparse.ArgumentTypeError(
                f"must be a number greater than {self.lo:g}{self.unit}, got {shown}"
            )
        if value < self.lo:
            raise argparse.ArgumentTypeError(
                f"must be a number >= {self.lo:g}{self.unit}, got {shown}"
            )
        if value > self.hi:
            raise argparse.ArgumentTypeError(
                f"must be a number <= {self.hi:g}{self.unit}, got {shown}"
            )
        return value

    def __repr__(self) -> str:
        return f"bounded_float({self.lo}, {self.hi}, above={self.above})"


def bounded_int(lo: int, hi: int, *, unit: str = "") -> BoundedInt:
    """An argparse type for a whole number in ``[lo, hi]``: the flag's documented bound.

    Args:
      lo: Smallest accepted value.
      hi: Largest accepted value.
      unit: Shown after the range in the error (e.g. ``" bytes"``).
    """
    return BoundedInt(lo, hi, unit=unit)


def bounded_float(lo: float, hi: float, *, above: bool = False, unit: str = "") -> BoundedFloat:
    """An argparse type for a finite number in ``[lo, hi]`` (``(lo, hi]`` with ``above``)."""
    return BoundedFloat(lo, hi, above=above, unit=unit)


def non_empty(text: str) -> str:
    """An argparse type: a name or path that is not empty or blank (returned as given)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty; give a value (leave the flag out for its default)"
        )
    return text


def distinct_names(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated names, none empty, none repeated."""
    names = tuple(x.strip() for x in text.split(","))
    if not text.strip() or any(not n for n in names):
        raise argparse.ArgumentTypeError(
            f"empty name in {text!r}; give comma-separated names such as a,b"
        )
    return refuse_repeated(names, "name(s)")


def refuse_repeated(names: tuple[str, ...], what: str) -> tuple[str, ...]:
    """``names``, or an argparse error naming those given twice (``what``: e.g. "variant(s)")."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(
            f"{what} given twice: {', '.join(repeated)}; give each once"
        )
    return names


def backend_spec(text: str) -> str:
    """An argparse type: a backend spec the registry knows, checked without a call.

    The backend's name must be registered, the spec well formed (``openai:MODEL@URL``)
    and what it names usable here (``local:PATH`` must be a GGUF model file). The
    key is not checked here (a finished run re-plots from its cache without it).
    Messages name the spec by its public label (no password, no query values).
    """
    from gt_llm.registry import check_spec
    from gt_llm.safety import public_spec

    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty; give a backend spec such as scripted (see `gt-llm backends`)"
        )
    try:
        check_spec(text)
    except ValueError as exc:
        message = str(exc).removeprefix("load_model: ")
        raise argparse.ArgumentTypeError(public_spec(message)) from None
    return text


def check_backend_arg(args: argparse.Namespace) -> None:
    """The post-parse check of ``--backend`` (:func:`backend_spec`; see :func:`add_check`).

    A check rather than a type, so that the refusal reads like every other
    failure of the command (``gt-llm: error: argument --backend: ...``).
    """
    try:
        backend_spec(args.backend)
    except argparse.ArgumentTypeError as exc:
        raise ValueError(f"argument --backend: {exc}") from None


#: The namespace entry holding a command's post-parse checks (see :func:`add_check`).
_CHECKS = "_post_parse_checks"


def add_check(parser: argparse.ArgumentParser, check: Callable[[argparse.Namespace], None]) -> None:
    """Adds a post-parse check to a command: ``check(args)`` runs right after parsing.

    For what one argparse type cannot see (a value valid only with another
    flag's value, e.g. an act token and ``--preset``). The check raises
    ``ValueError`` whose message names the flag (``--acts: ...``); ``gt-llm``
    reports it as a usage error, before the command starts.
    """
    parser.set_defaults(**{_CHECKS: (*(parser.get_default(_CHECKS) or ()), check)})


def run_checks(args: argparse.Namespace) -> None:
    """Runs the post-parse checks of the parsed command (:func:`add_check`), in order.

    Raises:
      ValueError: from the first check that fails, naming the flag.
    """
    for check in getattr(args, _CHECKS, ()):
        check(args)
