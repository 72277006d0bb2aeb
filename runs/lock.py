"""One results folder, one writer: an advisory lock held for a run.

:meth:`FolderLock.acquire` takes an exclusive ``fcntl.flock`` on the lock file
:data:`LOCK_NAME` inside the results folder and writes this process's id into
it; a second process (or a second unfinished run in this one) asking for the
same folder is refused in one line naming the process that holds it, before
it reads, clears or writes anything. :meth:`FolderLock.release` (or the end of
the process, however it ends: the kernel drops the lock of a killed process)
frees it; a released lock file is removed, and a lock file left by a killed
run is taken over by the next one.

The lock is advisory: it orders gt-llm's own writers (every command that
writes a results folder opens it through :func:`runs.results.prepare_results_dir`);
readers do not take it. POSIX only (``fcntl``), like the link-safe deletion of
:mod:`runs.folders`.

This module does IO only: it imports nothing but :mod:`runs.atomic`.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import weakref
from pathlib import Path

from runs.atomic import ResultsError

__all__ = ["LOCK_NAME", "FolderLock"]

logger = logging.getLogger(__name__)

#: The lock file's name inside a results folder (never a result: never listed, cleared or swept).
LOCK_NAME = ".gt-llm.lock"
#: Opened without following a link, not inherited by the processes a run starts.
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
#: Attempts when the lock file is replaced between opening and locking it.
_ATTEMPTS = 20


def _holder(fd: int) -> int | None:
    """The process id a lock file holds (None when unreadable or not yet written)."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _release(fd: int, dir_fd: int) -> None:
    """Removes the lock file (if it is still this lock's) and frees the lock."""
    try:
        with contextlib.suppress(OSError):
            mine = os.fstat(fd)
            there = os.stat(LOCK_NAME, dir_fd=dir_fd, follow_symlinks=False)
            if (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino):
                # Removed while still held: whoever opened it meanwhile sees it gone and retries.
                os.unlink(LOCK_NAME, dir_fd=dir_fd)
    finally:
        os.close(fd)  # frees the flock
        os.close(dir_fd)


class FolderLock:
    """The exclusive lock of one results folder, held until :meth:`release`.

    Released also when the object is garbage-collected, and by the kernel when
    the process ends.

    Attributes:
      folder: The results folder.
    """

    def __init__(self, folder: Path, fd: int, dir_fd: int) -> None:
        self.folder = folder
        self._finalizer = weakref.finalize(self, _release, fd, dir_fd)

    @property
    def held(self) -> bool:
        """Whether the lock is still held."""
        return self._finalizer.alive

    def release(self) -> None:
        """Frees the lock and removes its file (nothing when already released)."""
        self._finalizer()

    @classmethod
    def acquire(cls, folder: str | os.PathLike[str]) -> FolderLock:
        """Takes the lock of ``folder`` (an existing folder) or refuses at once.

        Raises:
          ResultsError: another process (or an unfinished run of this one) holds
            it, e.g. ``results folder 'out' is being written by another gt-llm
            run (pid 4242); one folder takes one run at a time: wait for it to
            finish, or pass another --out``; or the lock file cannot be made.
        """
        path = Path(folder)
        dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(_ATTEMPTS):
                fd = cls._open(path, dir_fd)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    pid = _holder(fd)
                    os.close(fd)
                    raise _busy(path, pid) from None
                except OSError as exc:  # e.g. a network file system without locks
                    os.close(fd)
                    raise ResultsError(
                        f"results folder {str(path)!r} cannot be locked for this run "
                        f"({exc.strerror or exc}); pass an --out on a local disk"
                    ) from None
                except BaseException:
                    os.close(fd)
                    raise
                if not cls._still_there(fd, dir_fd):
                    os.close(fd)  # its holder removed it as we opened it: open the new one
                    continue
                try:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
                except OSError as exc:
                    os.close(fd)
                    raise ResultsError(
                        f"results folder {str(path)!r}: cannot write its lock file {LOCK_NAME} "
                        f"({exc.strerror or exc}); pass another --out"
                    ) from None
                return cls(path, fd, dir_fd)
        except BaseException:
            os.close(dir_fd)
            raise
        os.close(dir_fd)
        raise ResultsError(
            f"results folder {str(path)!r}: its lock file {LOCK_NAME} keeps being replaced; "
            "another process is starting and stopping runs there: pass another --out"
        )

    @staticmethod
    def _open(path: Path, dir_fd: int) -> int:
        try:
            return os.open(LOCK_NAME, _OPEN_FLAGS, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            if os.path.islink(path / LOCK_NAME):
                why = "it is a link, never followed: remove it"
            else:
                why = f"{exc.strerror or exc}: make the folder writable"
            raise ResultsError(
                f"results folder {str(path)!r}: cannot open its lock file {path / LOCK_NAME} "
                f"({why}), or pass another --out"
            ) from None

    @staticmethod
    def _still_there(fd: int, dir_fd: int) -> bool:
        try:
            there = os.stat(LOCK_NAME, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def _busy(path: Path, pid: int | None) -> ResultsError:
    """The refusal of a folder whose lock another run holds."""
    if pid == os.getpid():
        return ResultsError(
            f"results folder {str(path)!r} is open for writing by an unfinished run in this "
            f"process (pid {pid}); finish or close that run first (ResultsDir.finish or "
            "close), or pass another --out"
        )
    who = f"pid {pid}" if pid is not None else "pid not yet written"
    return ResultsError(
        f"results folder {str(path)!r} is being written by another gt-llm run ({who}); one "
        "folder takes one run at a time: wait for that run to finish (or stop it), or pass "
        "another --out"
    )
