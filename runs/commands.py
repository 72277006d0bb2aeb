"""Which ``gt-llm`` command wrote a results folder, from its manifest.

A folder given to another command than the one that wrote it (an arena's
folder to ``werewolf tournament``) differs in almost every setting; listing
them all says less than naming the command. :func:`written_by` reads the
command from a manifest (the settings' ``command`` when they record it, else
the command line's words after ``gt-llm``), and :func:`other_command` words the
refusal in one line.

This module does no IO and imports nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

__all__ = ["command_words", "other_command", "written_by"]

#: Options of ``gt-llm`` itself that may come before the command.
_GLOBAL_OPTION = re.compile(r"^(-v+|--verbose|-q|--quiet)$")
#: Longest command: a group and its subcommand (``werewolf tournament``).
_MAX_WORDS = 2


def _is_gt_llm(program: str) -> bool:
    # The console script, or ``python -m gt_llm.cli``; not a notebook's or a test runner's argv.
    path = PurePath(program)
    return path.name in ("gt-llm", "gt-llm.exe") or path.parts[-2:] in (
        ("gt_llm", "cli.py"),
        ("gt_llm", "__main__.py"),
    )


def command_words(argv: Sequence[Any]) -> str | None:
    """``"werewolf arena"`` from ``["gt-llm", "-v", "werewolf", "arena", "--games", "2"]``.

    Returns:
      The command's words, or ``None`` when ``argv`` is not a ``gt-llm`` command line.
    """
    if not argv or not all(isinstance(a, str) for a in argv) or not _is_gt_llm(argv[0]):
        return None
    rest = list(argv[1:])
    while rest and _GLOBAL_OPTION.match(rest[0]):
        rest.pop(0)
    words: list[str] = []
    for arg in rest[:_MAX_WORDS]:
        if arg.startswith("-"):
            break
        words.append(arg)
    return " ".join(words) or None


def written_by(manifest: Mapping[str, Any]) -> str | None:
    """The command that wrote a folder (``"werewolf arena"``), or ``None`` when unknown.

    Args:
      manifest: The folder's manifest (:func:`runs.results.build_manifest`).
    """
    settings = manifest.get("settings")
    if isinstance(settings, Mapping) and isinstance(settings.get("command"), str):
        return str(settings["command"])
    argv = manifest.get("command")
    return command_words(argv) if isinstance(argv, list) else None


def other_command(folder: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The refusal of a folder written by another command, or ``None`` when it is the same.

    Args:
      folder: The folder, for the message.
      old: The folder's manifest.
      new: The manifest of the run being prepared.

    Returns:
      One line, e.g. ``results folder 'A' was written by `gt-llm werewolf arena`, not
      by `gt-llm werewolf tournament`: run `gt-llm werewolf arena` on it, or give
      this command another --out (or --force to replace its results)``; ``None``
      when both commands are the same or either is unknown.
    """
    before, now = written_by(old), written_by(new)
    if before is None or now is None or before == now:
        return None
    return (
        f"results folder {folder!r} was written by `gt-llm {before}`, not by `gt-llm {now}`: "
        f"run `gt-llm {before}` on it, or give this command another --out (or --force to "
        "replace its results)"
    )
