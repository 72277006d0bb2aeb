"""Checks that a folder or file can be written, and deletion that never follows a link.

:func:`unwritable_reason` (and :func:`check_results_dir`, its one-line refusal
of an ``--out``) find out whether a path can be written by trying: a temporary
entry is created and removed at once, since permissions alone do not tell.
:func:`_remove_inside` deletes a file inside a folder folder by folder
(:func:`_open_inside`: each folder opened relative to its parent with
``O_NOFOLLOW``), so a link is never followed and nothing outside the folder is
ever deleted. Writing below a results folder is held to the same rule:
:func:`folder_inside` makes (or :func:`check_folder_inside` checks) a
sub-folder such as ``logs/a_vs_b`` folder by folder without following a link,
and refuses a link or a file in the way in one line, so nothing is ever
written outside the folder either. :func:`sweep_own_temp_files` removes the
temporary files of our own writes that a killed run left (only ours, only of
a process that is gone, never through a link).

This module does IO only: it imports nothing but :mod:`runs.atomic`. Results
folders themselves (manifest, refusal, ``--force``) are :mod:`runs.results`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from runs.atomic import TMP_PREFIX, ResultsError, own_temp_pid

__all__ = [
    "check_folder_inside",
    "check_results_dir",
    "folder_inside",
    "sweep_own_temp_files",
    "unwritable_reason",
]

# The warnings of a deletion are the results folder's: logged under its module's name, as before.
logger = logging.getLogger("runs.results")


def unwritable_reason(path: str | os.PathLike[str], *, folder: bool = False) -> str | None:
    """Why ``path`` cannot be written as a file (or a ``folder``), or ``None`` when it can.

    Found by trying, since permissions alone do not tell (root passes every
    ``access`` check, ``/proc`` refuses what it allows): a temporary entry is
    created and removed at once in the folder that would hold ``path`` (the
    nearest existing one; a folder, when the missing ones between would have
    to be created). Nothing else is created or changed.

    Args:
      path: The file or folder a command is about to write.
      folder: ``path`` is a folder (else a file, which must not be a folder).
    """
    p = Path(path)
    if os.path.lexists(p) and not p.exists():
        return f"{p} is a link to nothing"
    if p.exists():
        if folder and not p.is_dir():
            return f"{p} is a file, not a folder"
        if not folder and p.is_dir():
            return f"{p} is a folder, not a file"
        if not folder and not os.access(p, os.W_OK):
            return f"{p} is read-only"
        return _try_creating(p if folder else p.parent, folder=False)
    ancestor = p.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is not a folder"
    # A file goes straight into an existing parent; anything else needs folders made.
    return _try_creating(ancestor, folder=folder or ancestor != p.parent)


def _try_creating(where: Path, *, folder: bool) -> str | None:
    try:
        if folder:
            os.rmdir(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=where))
        else:
            fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, dir=where)
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        return f"nothing can be created in {where} ({exc.strerror or exc})"
    return None


def check_results_dir(out: str | os.PathLike[str]) -> None:
    """Refuses, in one line, an ``out`` that :func:`prepare_results_dir` could not write.

    The same checks it makes when it creates the folder, made before: a
    command calls this before anything is created or deleted. Creates nothing.

    Raises:
      ResultsError: ``out`` is empty, a file, or cannot be created or written.
    """
    if out is None or str(out).strip() == "":
        raise ResultsError("--out is empty (''); pass a results folder such as --out results/run")
    reason = unwritable_reason(out, folder=True)
    if reason is not None:
        raise ResultsError(f"--out {str(out)!r} cannot hold results: {reason}; pass another --out")


def _safe_relative(name: object) -> bool:
    # A listed name is ours only as a plain relative path inside the folder.
    if not isinstance(name, str) or not name or "\\" in name or name.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


class _Outside(Exception):
    """A listed path goes through a link (it may lead out of the folder)."""


def _open_inside(out: Path, folders: Sequence[str]) -> int | None:
    """A descriptor of ``out/folders...`` reached without following a link, or ``None``.

    ``out`` itself is the user's choice and may be a link; below it, every
    folder is opened with ``O_NOFOLLOW`` relative to its parent's descriptor,
    so a link (or a folder swapped for one meanwhile) is never entered.
    """
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    for part in folders:
        try:
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            os.close(fd)
            return None
        except OSError:
            # ELOOP or ENOTDIR: a link or a file where the manifest names a folder.
            os.close(fd)
            raise _Outside(part) from None
        os.close(fd)
        fd = child
    return fd


def _remove_inside(out: Path, name: str) -> bool:
    """Deletes the regular file ``out/name`` without following any link; ``True`` if it did.

    A path through a link, or naming a link or anything but a regular file, is
    left as it is with a warning: a deletion never leaves the results folder.
    """
    *folders, leaf = name.split("/")
    try:
        fd = _open_inside(out, folders)
    except _Outside as link:
        logger.warning(
            "results folder %s: %s goes through %r, which is a link or not a folder; "
            "left as it is (--force deletes nothing outside the folder)",
            out,
            name,
            str(link),
        )
        return False
    if fd is None:
        return False
    try:
        try:
            mode = os.stat(leaf, dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(mode):
            logger.warning(
                "results folder %s: %s is a link or not a regular file; left as it is "
                "(--force deletes nothing outside the folder)",
                out,
                name,
            )
            return False
        try:
            os.unlink(leaf, dir_fd=fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise ResultsError(
                f"results folder {str(out)!r}: cannot delete {name} ({exc.strerror or exc}); "
                "make it writable or pass another --out"
            ) from None
        return True
    finally:
        os.close(fd)


# -- writing below a results folder, never through a link --------------------------------------


def _parts(relative: str) -> list[str]:
    if relative in ("", "."):
        return []
    if not _safe_relative(relative):
        raise ResultsError(f"{relative!r} is not a relative folder inside the results folder")
    return relative.split("/")


def _step_refusal(out: Path, parts: Sequence[str], dir_fd: int, exc: OSError) -> ResultsError:
    """The one-line refusal of ``out/parts...``, found not to be a plain folder."""
    path = out.joinpath(*parts)
    try:
        mode = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        try:
            target = f" (to {os.readlink(parts[-1], dir_fd=dir_fd)})"
        except OSError:
            target = ""
        return ResultsError(
            f"{path} is a link{target}; gt-llm never writes through a link in a results "
            f"folder: replace {path} with a folder of its own, or pass another --out"
        )
    if mode and not stat.S_ISDIR(mode):
        return ResultsError(
            f"{path} is a file, not a folder; the run writes its files in that folder: "
            "move the file away, or pass another --out"
        )
    return ResultsError(
        f"cannot open the folder {path} ({exc.strerror or exc}); pass another --out"
    )


def _walk_inside(out: Path, relative: str, *, create: bool) -> int | None:
    """A descriptor of the folder ``out/relative``, every step taken without following a link.

    ``out`` itself is the user's choice and may be a link. Missing folders are
    made (``create``) or end the walk (``None``).

    Raises:
      ResultsError: a step is a link, a file, or cannot be opened or made.
    """
    parts = _parts(relative)
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            if create:
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise _step_refusal(out, parts[: i + 1], fd, exc) from None
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                os.close(fd)
                return None
            except OSError as exc:
                raise _step_refusal(out, parts[: i + 1], fd, exc) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def folder_inside(out: str | os.PathLike[str], relative: str) -> Path:
    """Makes the folder ``out/relative`` (e.g. ``logs/a_vs_b``) without following a link.

    Every missing folder is made in its parent opened without following links
    (``out`` itself may be a link: it is the user's choice), so a file written
    there stays inside ``out``.

    Returns:
      The folder's path.

    Raises:
      ResultsError: a folder on the way is a link or a file (one line naming it
        and the fix), or cannot be made.
    """
    root = Path(out)
    try:
        fd = _walk_inside(root, relative, create=True)
    except ResultsError:
        raise
    except OSError as exc:
        raise ResultsError(
            f"cannot make the folder {root / relative} ({exc.strerror or exc}); pass another --out"
        ) from None
    if fd is not None:
        os.close(fd)
    return root.joinpath(*_parts(relative))


def check_folder_inside(out: str | os.PathLike[str], relative: str) -> None:
    """Refuses, in one line, a folder ``out/relative`` that a run could not write in.

    What :func:`folder_inside` would refuse (a link or a file on the way),
    checked before anything is written; creates nothing.

    Raises:
      ResultsError: naming the link or file and the fix.
    """
    with contextlib.suppress(FileNotFoundError):
        fd = _walk_inside(Path(out), relative, create=False)
        if fd is not None:
            os.close(fd)


def _gone(pid: int) -> bool:
    """Whether no process has id ``pid`` (a process of another user counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return False


def sweep_own_temp_files(out: str | os.PathLike[str], folders: Sequence[str] = ("",)) -> int:
    """Deletes the temporary files our writes left in ``folders`` of ``out``; returns how many.

    Only names of our atomic writes count (:func:`runs.atomic.own_temp_pid`),
    and only those of this process or of a process that is gone (a killed
    run): a user's ``.tmp-notes.txt``, or a write of another live process, is
    never touched. Each folder is reached without following a link; only
    regular files are deleted. Call it holding the folder's lock, after the
    folder was checked.

    Args:
      out: The results folder.
      folders: Folders relative to ``out`` (``""``: ``out`` itself).
    """
    root = Path(out)
    me = os.getpid()
    removed = 0
    for relative in sorted(set(folders)):
        try:
            fd = _walk_inside(root, relative, create=False)
        except (ResultsError, OSError):
            continue  # a link or a file in the way: nothing of ours is swept through it
        if fd is None:
            continue
        try:
            for name in os.listdir(fd):
                pid = own_temp_pid(name)
                if pid is None or (pid != me and not _gone(pid)):
                    continue
                with contextlib.suppress(OSError):
                    if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(name, dir_fd=fd)
                        removed += 1
        finally:
            os.close(fd)
    if removed:
        logger.info(
            "results folder %s: removed %d temporary file(s) of a stopped run", root, removed
        )
    return removed
