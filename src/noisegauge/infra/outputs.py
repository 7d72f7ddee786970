"""Where an output file's bytes go: a temp sibling renamed into place for a regular file
(atomic), the path itself for anything else (a device, a FIFO, a symlink), so that
``--out /dev/null`` or a link is written through and never replaced by a new file.

An output that cannot be written (a read-only place, a file where a folder should be, a
full disk) is an :class:`~noisegauge.errors.UnwritableOutput` naming the path asked for
and the system's reason, never the temp file's name or a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import UnwritableOutput

__all__ = ["check_writable", "replacing", "unwritable", "write_text", "writes_through"]


def writes_through(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` exists and is not a regular file, or is a symlink: written in place."""
    try:
        return os.path.islink(path) or not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # absent, or unreachable (a file where a folder should be): made new
        return False


def _file_in_the_way(target: Path) -> Path | None:
    """The nearest existing ancestor of ``target`` when it is not a folder."""
    for parent in target.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def unwritable(exc: OSError, path: str | os.PathLike[str]) -> UnwritableOutput:
    """``exc``, raised while writing ``path``, as the error a person can act on."""
    target = Path(path)
    blocker = _file_in_the_way(target)
    reason = (f"{blocker} is a file, not a folder" if blocker is not None
              else exc.strerror or str(exc))
    return UnwritableOutput(str(target), reason)


def _about(exc: OSError, *paths: Path) -> bool:
    """Whether ``exc`` concerns the output (a write error names no file), not some input
    read inside the block; a closed pipe stays itself (``| head`` is not an error)."""
    if isinstance(exc, BrokenPipeError):
        return False
    return exc.filename is None or any(os.fspath(exc.filename) == os.fspath(p) for p in paths)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], tmp: Path | None = None) -> Iterator[Path]:
    """The path to write ``path``'s content to: ``tmp`` (default ``.NAME.tmp`` beside it),
    renamed over ``path`` once the block succeeds and removed if it fails; or ``path``
    itself when :func:`writes_through` says so. Missing folders are made; an ``OSError``
    about the output becomes :class:`~noisegauge.errors.UnwritableOutput`."""
    target = Path(path)
    through = writes_through(target)
    dest = target if through else tmp if tmp is not None else target.with_name(
        f".{target.name}.tmp")
    if not through:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unwritable(exc, target) from None
    try:
        try:
            yield dest
            if not through:
                os.replace(dest, target)
        except BaseException:
            if not through:
                with contextlib.suppress(OSError):
                    dest.unlink(missing_ok=True)
            raise
    except OSError as exc:
        if not _about(exc, target, dest):
            raise
        raise unwritable(exc, target) from None


def _check_folder(folder: Path) -> None:
    """Raise the OSError that creating a file in ``folder`` would raise. An unnamed file
    (``O_TMPFILE``) asks the file system itself, which permission bits do not for root, and
    leaves nothing behind even if the process is killed; where the file system cannot make
    one, the permission bits decide."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag:
        try:
            os.close(os.open(folder, flag | os.O_WRONLY, 0o600))
            return
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    if not os.access(folder, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise :class:`~noisegauge.errors.UnwritableOutput` now if ``path`` could not be
    written later (before a run spends judge calls); its missing folders are made."""
    target = Path(path)
    try:
        if writes_through(target):
            if not os.access(target, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        _check_folder(target.parent)
    except OSError as exc:
        raise unwritable(exc, target) from None


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """``text`` written to ``path`` through :func:`replacing`."""
    with replacing(path) as dest:
        dest.write_text(text, encoding="utf-8")
    return Path(path)
