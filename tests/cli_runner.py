"""The ``gt-llm`` command line run in this process, as a subprocess would see it.

Starting ``python -m gt_llm.cli`` costs about a second of imports per call;
most command-line tests only need what ``main`` prints and returns. This
runner calls :func:`gt_llm.cli.main` with the given environment, working
folder and ``sys.argv``, captures stdout and stderr (logging included) and
turns ``SystemExit`` into a return code. A few tests still start the real
entry point as a subprocess (``tests/llm/test_llm_cli.py``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_cli(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """Runs ``gt-llm ARGS`` in this process; returns what a subprocess run would.

    Args:
      args: The arguments after ``gt-llm``.
      env: The whole environment during the call (default: unchanged).
      cwd: The working folder during the call (default: unchanged).
      stdin: What the command reads from standard input.
    """
    from gt_llm.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_argv, saved_cwd, saved_stdin = (
        dict(os.environ),
        sys.argv,
        Path.cwd(),
        sys.stdin,
    )
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["gt-llm", *args]
        sys.stdin = io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as stop:  # argparse errors, --help, --version
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        sys.stdin = saved_stdin
        # main() configures logging for its run (force=True): give pytest its handlers back.
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
    return subprocess.CompletedProcess(["gt-llm", *args], code, out.getvalue(), err.getvalue())
