"""Ctrl-C during the start-up of the ``gt-llm`` program: one line and status 130.

Starting ``gt-llm`` imports numpy, OpenSpiel, numba, matplotlib and the games for about
a second before a command runs. Python's own Ctrl-C handling raises
``KeyboardInterrupt`` wherever the main thread is, in the middle of any of those
imports, prints its traceback and then finalises an interpreter whose extension
modules may be half initialised (once even a "Fatal Python error").

So the first thing ``import gt_llm`` does, when (and only when) the process is the
``gt-llm`` program (:func:`started_as_program`: the console script, or ``python -m
gt_llm.cli``), is :func:`guard_startup`: SIGINT then writes ``gt-llm: interrupted`` on
stderr and ends the process at once with status 130 (``os._exit``: no traceback, no
finalisation of half-imported modules). :func:`gt_llm.cli.main` calls
:func:`end_startup` just before the command runs, inside its own
``except KeyboardInterrupt``, which handles Ctrl-C from there on (partial results
written, status 130).

Imported by anything else (a notebook, a test run, a script), ``gt_llm`` leaves SIGINT
alone. This module imports only the standard library's ``os``, ``signal`` and ``sys``.

What runs before ``gt_llm`` is imported (the interpreter's own start-up and the
launcher's first line, ``import re`` in pip's console script: a few tens of
milliseconds) is Python's, not this package's.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

__all__ = [
    "INTERRUPTED_MESSAGE",
    "INTERRUPTED_STATUS",
    "end_startup",
    "guard_startup",
    "in_startup",
    "started_as_program",
]

#: Exit status of an interrupted run (128 + SIGINT, what shells report).
INTERRUPTED_STATUS = 130
#: The one line an interrupted start-up prints on stderr.
INTERRUPTED_MESSAGE = "gt-llm: interrupted"
#: Names of the console script (pip's launcher on POSIX; the Windows ``.exe`` and the
#: ``-script.py`` it runs).
PROGRAM_NAMES = frozenset({"gt-llm", "gt-llm.exe", "gt-llm-script.py", "gt-llm-script.pyw"})
#: The module ``python -m`` runs as the program.
PROGRAM_MODULE = "gt_llm.cli"
#: Interpreter options that take the next argument as their value.
_OPTIONS_WITH_VALUE = frozenset({"-W", "-X", "--check-hash-based-pycs"})


def _exit_interrupted(signum: int, frame: FrameType | None) -> None:
    """The start-up SIGINT handler: one line on stderr, then exit 130 at once."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # noqa: BLE001 - a half-written buffer must not stop the exit
            pass
    try:
        os.write(2, f"{INTERRUPTED_MESSAGE}\n".encode())
    except OSError:
        pass
    # Not sys.exit: finalising an interpreter stopped in the middle of importing
    # extension modules (numba, llvmlite, pyspiel) is what can crash.
    os._exit(INTERRUPTED_STATUS)


def _runs_program_module(orig_argv: list[str]) -> bool:
    """Whether the interpreter's own options say ``-m gt_llm.cli``."""
    args = iter(orig_argv[1:])
    for arg in args:
        if arg == "-m":
            return next(args, None) == PROGRAM_MODULE
        if arg.startswith("-m"):
            return arg[2:] == PROGRAM_MODULE
        if arg in _OPTIONS_WITH_VALUE:
            next(args, None)
            continue
        if arg == "-c" or arg == "-" or not arg.startswith("-"):
            return False  # a command, standard input or a script: not ours to guard
    return False


def started_as_program() -> bool:
    """Whether this process is the ``gt-llm`` program (console script or ``-m gt_llm.cli``).

    False in the children of :mod:`multiprocessing` (they inherit the parent's
    ``sys.argv``; Ctrl-C is the parent's to handle).
    """
    mp = sys.modules.get("multiprocessing")
    if mp is not None and mp.parent_process() is not None:
        return False
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) in PROGRAM_NAMES:
        return True
    return _runs_program_module(list(getattr(sys, "orig_argv", [])))


def guard_startup() -> bool:
    """Installs the start-up SIGINT handler (exit 130 with one line); returns whether it did.

    Only in the main thread and only over Python's default handler: a handler someone
    else installed is left alone.
    """
    try:
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return False
        signal.signal(signal.SIGINT, _exit_interrupted)
    except ValueError:  # not the main thread
        return False
    return True


def in_startup() -> bool:
    """Whether the start-up SIGINT handler is installed."""
    return signal.getsignal(signal.SIGINT) is _exit_interrupted


def end_startup() -> None:
    """Gives SIGINT back to Python's default handler (``KeyboardInterrupt``), if guarded."""
    try:
        if in_startup():
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: nothing of ours to undo here
        pass


if started_as_program():
    guard_startup()
