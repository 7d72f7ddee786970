"""The journal that makes a run resumable: ``OUT.partial`` next to the output file.

Each finished row is appended as one JSON line (row index, content fingerprint, output
row, verdicts) in completion order. A run killed at any point (even ``kill -9`` mid-line,
or a power loss that leaves NUL bytes) leaves a journal whose complete lines are valid:
the next run cuts the tail back to the last complete record, with a warning, reuses every
stored row whose input did not change and judges only the rest. When all rows are in, the
output is written in input order to a temporary file, flushed to disk, renamed into place
atomically, and the journal is removed.

One run per output: the journal is locked *before* anything is read or written, so a
second run on the same ``--out`` fails at once and cannot truncate or mix into the first
one's work. The first line holds a hash of the run's settings (metrics, judge identities,
output format); a journal made with other settings is discarded, never mixed in.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidInput
from ..infra.outputs import unwritable
from ..infra.secrets import redact

__all__ = ["Journal", "fsync_dir", "journal_path"]

log = logging.getLogger("noisegauge")
_VERSION = 1
#: Seconds between two fsyncs of the journal: a kill loses nothing (the OS has every line);
#: a power loss loses at most this much work, and the torn tail is cut on the next run.
SYNC_EVERY = 1.0


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _lock(fd: int, out: Path) -> None:
    """An exclusive lock on the open journal, or InvalidInput at once if another run has it."""
    try:
        if sys.platform == "win32":
            import msvcrt
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        raise InvalidInput(f"another noisegauge run is writing {out}; wait for it to finish "
                           "or choose another --out") from exc


def _parse(line: bytes) -> dict[str, Any] | None:
    """A complete journal record, or None for a torn, NUL-filled or unreadable line."""
    if not line.endswith(b"\n") or b"\x00" in line:
        return None
    try:
        entry = json.loads(line)
    except ValueError:  # JSONDecodeError, or UnicodeDecodeError for garbage bytes
        return None
    return entry if isinstance(entry, dict) else None


class Journal:
    """Append-only store of finished rows, read back by byte offset (bounded memory)."""

    def __init__(self, out: Path, config: dict[str, Any], *, resume: bool = True,
                 before_append: Callable[[], None] | None = None) -> None:
        self.out = out
        #: Called before a row is stored, e.g. the judge cache's flush: a row the next run
        #: reuses from here must have its answers in the cache too, or a later run without
        #: this journal asks the judge again for what the killed run had already paid for.
        self._before_append = before_append
        self.path = journal_path(out)
        self._config = hashlib.sha256(
            json.dumps({"v": _VERSION, **config}, sort_keys=True, default=str).encode()
        ).hexdigest()
        self._resume = resume
        self._offsets = array("q")             # [index] -> offset of its latest entry, or -1
        self._reusable: dict[int, str] = {}    # index -> fingerprint, for ok/undefined rows
        self._fh: IO[bytes] | None = None
        self._end = 0
        self._synced = 0.0
        self.appended = 0

    def open(self) -> int:
        """Lock the journal, then load what a previous run left (if its settings match);
        returns the rows that can be reused. Raises InvalidInput if another run holds it,
        UnwritableOutput (naming the output, not the journal) if it cannot be created."""
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            fh = self._open_locked()
        except OSError as exc:
            raise unwritable(exc, self.out) from None
        self._fh = fh
        loaded = self._resume and self._load(fh)
        if not loaded:
            self._offsets = array("q")
            self._reusable.clear()
            fh.seek(0)
            fh.truncate()
            self._write({"noisegauge_journal": _VERSION, "config": self._config})
        else:
            size = fh.seek(0, os.SEEK_END)
            if size > self._end:
                log.warning("%s: cut %d bytes of an incomplete last record (a crash or power "
                            "loss); those rows are judged again", self.path, size - self._end)
                fh.truncate(self._end)
            fh.seek(self._end)
        self._sync(force=True)
        return len(self._reusable)

    def _open_locked(self) -> IO[bytes]:
        """Open without truncating, lock, and make sure the locked file is still the journal
        (a run that just finished unlinks it: then open the new one)."""
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _lock(fd, self.out)
                try:
                    same = os.path.samestat(os.fstat(fd), os.stat(self.path))
                except FileNotFoundError:
                    same = False
            except BaseException:
                os.close(fd)
                raise
            if same:
                return os.fdopen(fd, "r+b")
            os.close(fd)

    def _load(self, fh: IO[bytes]) -> bool:
        offset = 0
        self._end = 0
        fh.seek(0)
        for n, line in enumerate(fh):
            entry = _parse(line)
            if n == 0:
                if entry is None or entry.get("config") != self._config:
                    if entry is not None:
                        log.warning("ignoring %s: it was made with other settings", self.path)
                    return False
            elif entry is None or not isinstance(entry.get("i"), int) or entry["i"] < 0:
                break  # the first bad record ends what can be trusted
            else:
                index = entry["i"]
                self._set_offset(index, offset)
                if (entry.get("row") or {}).get("status") in ("ok", "undefined"):
                    self._reusable[index] = str(entry.get("fp"))
                else:
                    self._reusable.pop(index, None)  # error rows are judged again
            offset += len(line)
            self._end = offset
        return self._end > 0

    @property
    def empty(self) -> bool:
        """No row stored (neither by this run nor a previous one)."""
        return not any(offset >= 0 for offset in self._offsets)

    def reusable(self, index: int, fp: str) -> bool:
        """A stored result for this row, made from the same input, exists."""
        return self._reusable.get(index) == fp

    def append(self, index: int, fp: str, row: dict[str, Any], verdicts: dict[str, Any] | None,
               sample: dict[str, Any] | None = None) -> None:
        if self._before_append is not None:
            self._before_append()
        entry: dict[str, Any] = {"i": index, "fp": fp, "row": row, "verdicts": verdicts}
        if sample is not None:
            entry["sample"] = sample
        self._set_offset(index, self._write(entry))
        self.appended += 1

    def _set_offset(self, index: int, offset: int) -> None:
        if index >= len(self._offsets):
            self._offsets.extend([-1] * (index + 1 - len(self._offsets)))
        self._offsets[index] = offset

    def _write(self, entry: dict[str, Any]) -> int:
        assert self._fh is not None, "Journal.open() first"
        offset = self._fh.tell()
        line = redact(json.dumps(entry, separators=(",", ":"))) + "\n"
        self._fh.write(line.encode("ascii"))
        self._fh.flush()  # in the OS after each row: a killed process loses nothing written
        self._sync()
        return offset

    def _sync(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._fh is not None and (force or now - self._synced >= SYNC_EVERY):
            os.fsync(self._fh.fileno())
            self._synced = now

    def entry(self, index: int) -> dict[str, Any]:
        """The stored entry of a row (read from disk)."""
        assert self._fh is not None
        self._fh.seek(self._offsets[index])
        data: dict[str, Any] = json.loads(self._fh.readline())
        self._fh.seek(0, os.SEEK_END)
        return data

    def entries(self, n_rows: int) -> Iterator[dict[str, Any]]:
        """Entries of rows 0..n_rows-1, in input order."""
        missing = [i for i in range(n_rows) if i >= len(self._offsets) or self._offsets[i] < 0]
        if missing:
            raise RuntimeError(f"journal {self.path} lacks rows {missing[:5]}")
        for i in range(n_rows):
            yield self.entry(i)

    def close(self, *, remove: bool) -> None:
        """Close (after an fsync, so the rows survive a power loss) and, when the output is
        written, remove the journal."""
        if self._fh is not None:
            try:
                if not remove:
                    self._sync(force=True)
            except OSError:  # e.g. a full disk: the error being handled says more
                pass
            finally:
                self._fh.close()
                self._fh = None
        if remove:
            self.path.unlink(missing_ok=True)
            fsync_dir(self.path.parent)
