"""Results folders that are never half-written and never mixed up.

A results folder holds what one command wrote (JSON summaries, CSV tables,
figures) beside, possibly, the call cache it used. Its files are written
atomically through :mod:`runs.atomic`; this module adds the folder's own
promises:

* **One run per folder.** :func:`prepare_results_dir` writes the run's
  *manifest* (``manifest.json``: settings, gt-llm version, git commit, start
  time, Python and key package versions, backend, model, command line) with
  ``complete: false`` before the first result, and :meth:`ResultsDir.finish`
  rewrites it with ``complete: true`` and the end time after the last one. A
  folder holding results of *other* settings is refused unless
  ``force=True``, which deletes the old result files first: only those the
  old manifest lists (never a cache file such as ``*.sqlite``, never a
  sub-folder), and never through a link (a listed path through a link is
  left, with a warning), so nothing outside the folder is ever deleted.
  :func:`check_results_dir` makes the folder's checks before a command
  creates or deletes anything.
* **One writer per folder.** :func:`prepare_results_dir` takes the folder's
  lock (:class:`runs.lock.FolderLock`, the file ``.gt-llm.lock``) before it
  reads, clears or writes anything, and the run holds it until
  :meth:`ResultsDir.finish` (or :meth:`ResultsDir.close`, or the end of the
  process): a second run on the same folder is refused in one line naming the
  process that holds it.
* **Nothing written through a link.** Files in sub-folders (game logs) are
  placed through :meth:`ResultsDir.place`, which makes their folders without
  following a link and refuses a link or a file in the way; the sub-folders a
  run will write in are checked before anything is cleared or written.
* **Only our own temporary files are swept**, once the folder is checked and
  locked: those of our atomic writes (named with the writer's process id) whose
  writer is gone, at the top of the folder and in the sub-folders of its listed
  files (a killed game's ``logs/a_vs_b/.tmp-game_0000.gtllm<pid>-*.jsonl``);
  never a user's ``.tmp-*`` file, never another live process's.
* **Readers know.** :func:`require_complete` refuses, and
  :func:`warn_if_incomplete` warns about, a folder whose run did not finish.

This module does IO only: it imports nothing from the LLM layer or the games,
so any command (``gt-llm fruit-trading run``, ``figures``, ``compare``, a
notebook) can use it.

Example::

    run = prepare_results_dir("results/fruit", {"inits": 30}, backend="scripted")
    run.write_json("summary.json", {"mean": 1.5})
    run.finish()
    require_complete("results/fruit")  # a reader's check
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from runs.atomic import (
    TMP_PREFIX,
    ResultsError,
    atomic_path,
    atomic_write_bytes,
    atomic_write_json,
    csv_text,
)
from runs.commands import other_command
from runs.folders import (
    _remove_inside,
    _safe_relative,
    check_folder_inside,
    check_results_dir,
    folder_inside,
    sweep_own_temp_files,
    unwritable_reason,
)
from runs.lock import LOCK_NAME, FolderLock
from runs.manifest import (
    MANIFEST_NAME,
    build_manifest,
    normalise_settings,
    read_manifest,
    require_complete,
    timestamp,
    warn_if_incomplete,
)

__all__ = [
    "CACHE_SUFFIXES",
    "MANIFEST_NAME",
    "RESULT_SUFFIXES",
    "ResultsDir",
    "build_manifest",
    "check_results_dir",
    "prepare_results_dir",
    "read_manifest",
    "require_complete",
    "unwritable_reason",
    "warn_if_incomplete",
]

logger = logging.getLogger(__name__)

#: Files with these endings are caches: kept by ``force``, ignored when judging a folder.
CACHE_SUFFIXES = (".sqlite", ".sqlite3", ".sqlite-wal", ".sqlite-shm", ".db", ".db-wal", ".db-shm")
#: Files with these endings look like results: a folder holding such files and no
#: manifest is refused (never cleared: only files a manifest lists are ever removed).
RESULT_SUFFIXES = (".json", ".jsonl", ".csv", ".md", ".png", ".pdf", ".svg", ".efg", ".txt", ".npz")
# Files whose presence says "this is a project, not a results folder": force never clears there.
_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py")


# -- preparing a folder ------------------------------------------------------------------------


def _is_cache(name: str) -> bool:
    return name.endswith(CACHE_SUFFIXES)


def _reserved(name: str) -> bool:
    # Never a result of the run: the manifest, the lock file, a cache.
    return name in (MANIFEST_NAME, LOCK_NAME) or _is_cache(name)


def _listed_names(listed: Iterable[object]) -> list[str]:
    """The names a manifest lists as this folder's results (plain relative paths; no cache)."""
    names = {n for n in listed if isinstance(n, str) and _safe_relative(n)}
    return sorted(n for n in names if not _reserved(n))


def _unlisted_files(out: Path) -> list[Path]:
    """Top-level files a folder without our manifest holds (caches and temporaries aside)."""
    return sorted(
        child
        for child in out.iterdir()
        if child.is_file() and not child.name.startswith(TMP_PREFIX) and not _reserved(child.name)
    )


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], limit: int = 4) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [
        f"{k}: {json.dumps(old.get(k))} -> {json.dumps(new.get(k))}"
        for k in keys
        if old.get(k) != new.get(k)
    ]
    more = f", and {len(diffs) - limit} more" if len(diffs) > limit else ""
    return ", ".join(diffs[:limit]) + more


@dataclasses.dataclass
class ResultsDir:
    """A results folder prepared for one run (from :func:`prepare_results_dir`).

    Write every result through :meth:`write_bytes`, :meth:`write_text` or
    :meth:`write_json` (atomic, and listed in the manifest), then call
    :meth:`finish`.

    The run holds the folder's lock (:class:`runs.lock.FolderLock`) until
    :meth:`finish` or :meth:`close`.

    Attributes:
      path: The folder.
      manifest: The manifest as last written.
    """

    path: Path
    manifest: dict[str, Any]
    _pending: bool = False
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    _folder_lock: FolderLock | None = dataclasses.field(default=None, repr=False)
    _finish_hooks: list[Callable[[], Mapping[str, Any]]] = dataclasses.field(
        default_factory=list, repr=False
    )

    def close(self) -> None:
        """Frees the folder's lock without finishing the run; nothing when already done.

        The manifest keeps ``complete: false``: how a failed or interrupted run ends.
        """
        if self._folder_lock is not None:
            self._folder_lock.release()

    def _write_manifest(self) -> None:
        atomic_write_json(self.path / MANIFEST_NAME, self.manifest)
        self._pending = False

    def file(self, name: str) -> Path:
        """The path of a result file directly inside the folder.

        Raises:
          ResultsError: ``name`` is not a plain file name, or names a cache or the manifest.
        """
        if not name or Path(name).name != name or name in (".", ".."):
            raise ResultsError(f"ResultsDir: {name!r} is not a plain file name inside the folder")
        if _reserved(name):
            raise ResultsError(f"ResultsDir: {name!r} is reserved (manifest, lock or cache)")
        return self.path / name

    def _record(self, name: str) -> None:
        with self._lock:
            if name not in self.manifest["files"]:
                self.manifest["files"].append(name)
                self._write_manifest()
            elif self._pending:
                self._write_manifest()

    def record(self, relative: str) -> Path:
        """Lists a file in a sub-folder (``logs/game_000001.jsonl``) as this run's own.

        For files another writer puts in place atomically (game logs); listed
        before they exist, so that ``--force`` clears them even after a kill,
        and only they are ever cleared.

        Raises:
          ResultsError: ``relative`` is not a plain relative path inside the folder.
        """
        if not _safe_relative(relative) or _reserved(relative):
            raise ResultsError(f"ResultsDir: {relative!r} is not a relative path inside the folder")
        self._record(relative)
        return self.path / relative

    def place(self, relative: str) -> Path:
        """:meth:`record`, and makes the file's folders inside the results folder.

        For a file another writer puts in place (a game log,
        ``logs/a_vs_b/game_0000.jsonl``): its folders are made without following
        a link (:func:`runs.folders.folder_inside`), so the file is never
        written outside the results folder.

        Raises:
          ResultsError: ``relative`` is not a plain relative path, or a folder on
            its way is a link or a file (one line naming it and the fix).
        """
        path = self.record(relative)
        folder_inside(self.path, relative.rpartition("/")[0])
        return path

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Atomically writes a result file and lists it in the manifest; returns its path."""
        path = self.file(name)
        # Listed before it exists, so that a later --force clears it even after a kill.
        self._record(name)
        atomic_write_bytes(path, data)
        return path

    def write_text(self, name: str, text: str) -> Path:
        """Atomically writes a UTF-8 text result file; returns its path."""
        return self.write_bytes(name, text.encode("utf-8"))

    def write_json(self, name: str, obj: Any, *, indent: int | None = 2) -> Path:
        """Atomically writes a strict JSON result file; returns its path."""
        path = self.file(name)
        self._record(name)
        atomic_write_json(path, obj, indent=indent)
        return path

    def write_csv(
        self,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        fieldnames: Sequence[str] | None = None,
    ) -> Path:
        """Atomically writes a CSV table (with its header even without rows if ``fieldnames``)."""
        return self.write_text(name, csv_text(rows, fieldnames))

    @contextlib.contextmanager
    def atomic_path(self, name: str) -> Iterator[Path]:
        """Lists a result file and yields a temporary path to write it with any library.

        For writers that want a file name (``fig.savefig(tmp)``, a CSV writer):
        the temporary file keeps ``name``'s ending, and is renamed over the
        result when the block exits without an exception.
        """
        path = self.file(name)
        self._record(name)
        with atomic_path(path) as tmp:
            yield tmp

    def on_finish(self, hook: Callable[[], Mapping[str, Any]]) -> None:
        """Adds a hook that :meth:`finish` calls: its entries go into the final manifest.

        For run statistics that the code writing the results does not know
        about (e.g. the calls a run kept in flight, added by the command layer).
        """
        self._finish_hooks.append(hook)

    def finish(self, **extra: Any) -> dict[str, Any]:
        """Marks the run complete: rewrites the manifest with ``complete: true`` and the end time.

        Then frees the folder's lock (also when the manifest cannot be written).

        Args:
          **extra: More JSON-like entries for the manifest (e.g. ``calls=1234``);
            the :meth:`on_finish` hooks' entries come first.

        Returns:
          The final manifest.
        """
        try:
            hooked: dict[str, Any] = {}
            for hook in self._finish_hooks:
                hooked.update(hook())
            extra = {**hooked, **extra}
            with self._lock:
                self.manifest.update(normalise_settings(extra))
                self.manifest["files"] = [
                    n for n in self.manifest["files"] if (self.path / n).exists()
                ]
                self.manifest["finished_at"] = timestamp()
                self.manifest["complete"] = True
                self._write_manifest()
                return dict(self.manifest)
        finally:
            self.close()


def prepare_results_dir(
    out: str | os.PathLike[str],
    settings: Mapping[str, Any],
    *,
    force: bool = False,
    backend: str | None = None,
    model: str | None = None,
    command: Sequence[str] | None = None,
    spec: str | None = None,
    folders: Sequence[str] = (),
) -> ResultsDir:
    """Makes ``out`` ready for a run of ``settings`` and writes its manifest (``complete: false``).

    First the folder's lock is taken (:class:`runs.lock.FolderLock`): a folder
    another run is writing is refused before anything is read, cleared or
    written, naming that run's process. The returned folder holds the lock
    until :meth:`ResultsDir.finish` or :meth:`ResultsDir.close`.

    A folder is accepted as is when it is new or empty (caches aside), or when
    its manifest holds the same settings, backend and model (a re-run or a
    resumed run: it rewrites the same files; a finished run's manifest is left
    as it is until the first file is written). A folder whose manifest holds
    other settings is refused unless ``force``, which first deletes the files
    that manifest lists as the run's own, nothing else, and never through a
    link (such a path is left, with a warning). A folder holding files
    but no manifest (or an unreadable one) is never emptied: it is refused,
    naming the files, even with ``force``. Caches (:data:`CACHE_SUFFIXES`) are
    never touched. Once the folder is accepted (and cleared), the temporary
    files our killed writes left are removed (:func:`runs.folders.sweep_own_temp_files`,
    at the top and in the folders of the listed files), nothing else.

    Args:
      out: The results folder (created with its parents).
      settings: Everything that determines the results (JSON-like).
      force: Replace results of other settings.
      backend: The model backend, recorded and compared.
      model: The model name, recorded and compared.
      command: The command line, public (default ``sys.argv``).
      spec: The backend's public label, recorded and not compared (a server
        restarted on another port serves the same results).
      folders: Sub-folders the run will write in (e.g. ``("logs",)``): a link or
        a file there is refused before anything is cleared or written.

    Returns:
      The prepared folder; write through it, then call :meth:`ResultsDir.finish`.

    Raises:
      ResultsError: ``out`` is empty, is not a writable folder, is being written
        by another run, holds other results, or one of ``folders`` is a link or
        a file.
    """
    if out is None or str(out).strip() == "":
        raise ResultsError(
            "prepare_results_dir: the output folder is empty (''); pass a folder such as "
            "--out results/fruit"
        )
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultsError(
            f"prepare_results_dir: cannot create the output folder {str(path)!r} "
            f"({exc.strerror or exc}); pass another --out"
        ) from None
    if not os.access(path, os.W_OK):
        raise ResultsError(
            f"prepare_results_dir: the output folder {str(path)!r} is not writable; "
            "pass another --out"
        )
    lock = FolderLock.acquire(path)
    try:
        manifest = build_manifest(
            settings, backend=backend, model=model, command=command, spec=spec
        )
        run = _prepare_locked(path, manifest, force=force, folders=folders)
    except BaseException:
        lock.release()
        raise
    run._folder_lock = lock
    return run


def _prepare_locked(
    path: Path, manifest: dict[str, Any], *, force: bool, folders: Sequence[str]
) -> ResultsDir:
    """:func:`prepare_results_dir` once the folder exists and its lock is held."""
    backend, model = manifest["backend"], manifest["model"]
    try:
        old = read_manifest(path)
    except ResultsError:
        raise ResultsError(
            f"results folder {str(path)!r} has an unreadable {MANIFEST_NAME}, so gt-llm cannot "
            "tell which files are its own and clears nothing: use another --out, or move the "
            "folder's files away"
        ) from None
    if old is None:
        # Files that look like results but that no manifest of ours lists: never ours to
        # clear or to mix with, whatever --force says. Other files (a script) are left be.
        foreign = [p for p in _unlisted_files(path) if p.name.endswith(RESULT_SUFFIXES)]
        if foreign and any((path / m).exists() for m in _PROJECT_MARKERS):
            raise ResultsError(
                f"prepare_results_dir: {str(path)!r} looks like a project folder, not a results "
                "folder; results go in a folder of their own: pass another --out"
            )
        if foreign:
            shown = ", ".join(p.name for p in foreign[:4])
            more = f" and {len(foreign) - 4} more" if len(foreign) > 4 else ""
            raise ResultsError(
                f"results folder {str(path)!r} holds files gt-llm did not write ({shown}{more}) "
                f"and no {MANIFEST_NAME}; it is never emptied, even with --force: use another "
                "--out"
            )
    listed = old.get("files", []) if old else []
    listed = listed if isinstance(listed, list) else []

    same = old is not None and (
        old.get("settings") == manifest["settings"]
        and old.get("backend") == backend
        and old.get("model") == model
    )
    if old is not None and not same:
        wrong = None if force else other_command(str(path), old, manifest)
        if wrong is not None:
            raise ResultsError(wrong)  # another command's folder: named, not a settings diff
        if not force:
            diff = _differences(
                {
                    **old.get("settings", {}),
                    "backend": old.get("backend"),
                    "model": old.get("model"),
                },
                {**manifest["settings"], "backend": backend, "model": model},
            )
            raise ResultsError(
                f"results folder {str(path)!r} holds results of other settings ({diff}); use "
                "another --out, or --force to replace them (only the files its manifest lists "
                "are removed; caches are kept)"
            )
        if any((path / m).exists() for m in _PROJECT_MARKERS):
            raise ResultsError(
                f"prepare_results_dir: {str(path)!r} looks like a project folder, not a results "
                "folder; --force clears results only in a folder of their own: pass another --out"
            )
    # The run's own sub-folders: a link or a file there refused before anything is cleared.
    for folder in folders:
        check_folder_inside(path, folder)
    if old is not None and not same:
        # Only what the old manifest lists as ours; the manifest itself last, so that a
        # kill half-way leaves a manifest naming whatever is left.
        removed = sum(_remove_inside(path, name) for name in _listed_names(listed))
        logger.info("results folder %s: cleared %d old result file(s)", path, removed)
    # The folder is checked, cleared and ours: the temporary files of killed writes go.
    sweep_own_temp_files(path, ["", *(n.rpartition("/")[0] for n in _listed_names(listed))])
    if same and old is not None:
        # A re-run of the same settings keeps the list, so a later --force still clears them.
        manifest["files"] = [n for n in listed if _safe_relative(n)]
        if old.get("complete") is True:
            # A finished run stays marked finished until this run writes its first file:
            # a re-run refused or failing before that leaves the folder as it was.
            return ResultsDir(path=path, manifest=manifest, _pending=True)

    try:
        atomic_write_json(path / MANIFEST_NAME, manifest)
    except OSError as exc:
        raise ResultsError(
            f"prepare_results_dir: cannot write {MANIFEST_NAME} in {str(path)!r} "
            f"({exc.strerror or exc}); pass another --out"
        ) from None
    return ResultsDir(path=path, manifest=manifest)
