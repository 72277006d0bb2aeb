"""The manifest of a results folder: what run wrote it, and whether that run finished.

``manifest.json`` records the settings, gt-llm version, git commit, start and end
time, Python and key package versions, backend, model and command line of the
run that wrote the folder (:func:`build_manifest`); :mod:`runs.results` writes it
first with ``complete: false`` and last with ``complete: true``. Readers check it
with :func:`require_complete` (refuse) or :func:`warn_if_incomplete` (warn).

This module does IO only: it imports nothing from the LLM layer or the games.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import logging
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from runs.atomic import ResultsError, read_json

__all__ = [
    "KEY_PACKAGES",
    "MANIFEST_FORMAT",
    "MANIFEST_NAME",
    "build_manifest",
    "normalise_settings",
    "read_manifest",
    "require_complete",
    "timestamp",
    "warn_if_incomplete",
]

logger = logging.getLogger(__name__)

#: The manifest's file name inside a results folder.
MANIFEST_NAME = "manifest.json"
#: Identifies the manifest format (bumped if its meaning changes).
MANIFEST_FORMAT = "gt-llm-results/1"
#: Packages whose versions the manifest records (those installed).
KEY_PACKAGES = ("numpy", "scipy", "open_spiel", "numba", "matplotlib", "httpx", "groq")


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


def timestamp() -> str:
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


def normalise_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    # Settings as they read back from JSON, so that a stored and a fresh copy compare equal.
    try:
        normalised: dict[str, Any] = json.loads(
            json.dumps(dict(settings), sort_keys=True, default=str)
        )
        return normalised
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
        "settings": normalise_settings(settings),
        "backend": backend,
        "model": model,
        "spec": spec,
        "gt_llm_version": _version("gt-llm"),
        "git_commit": _git_commit(),
        "started_at": timestamp(),
        "finished_at": None,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "packages": packages,
        "command": list(command) if command is not None else list(sys.argv),
        "files": [],
    }
