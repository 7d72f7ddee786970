"""Where an output file's bytes go: a temp sibling renamed into place for a regular file
(atomic), the path itself for anything else (a device, a FIFO, a symlink), so that
``--out /dev/null`` or a link is written through and never replaced by a new file."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["replacing", "write_text", "writes_through"]


def writes_through(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` exists and is not a regular file, or is a symlink: written in place."""
    try:
        return os.path.islink(path) or not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], tmp: Path | None = None) -> Iterator[Path]:
    """The path to write ``path``'s content to: ``tmp`` (default ``.NAME.tmp`` beside it),
    renamed over ``path`` once the block succeeds and removed if it fails; or ``path``
    itself when :func:`writes_through` says so."""
    target = Path(path)
    if writes_through(target):
        yield target
        return
    tmp = tmp if tmp is not None else target.with_name(f".{target.name}.tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """``text`` written to ``path`` through :func:`replacing`."""
    with replacing(path) as dest:
        dest.write_text(text, encoding="utf-8")
    return Path(path)
