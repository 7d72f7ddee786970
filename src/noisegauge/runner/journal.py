"""The journal that makes a run resumable: ``OUT.partial`` next to the output file.

Each finished row is appended as one JSON line (row index, content fingerprint, output
row, verdicts) and flushed, in completion order. A run killed at any point (even
``kill -9`` mid-line) leaves a journal whose complete lines are valid; started again with
the same settings it reuses every stored row whose input did not change and judges only the
rest. When all rows are in, the output is written in input order to a temporary file,
renamed into place atomically, and the journal is removed.

The first line holds a hash of the run's settings (metrics, judge identities, output
format); a journal made with other settings is discarded, never mixed in.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidInput

__all__ = ["Journal", "journal_path"]

log = logging.getLogger("noisegauge")
_VERSION = 1


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _lock(fh: IO[bytes], path: Path) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: no advisory lock; one run per output file is on the user
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        raise InvalidInput(f"another noisegauge run is writing {path}; wait for it or choose "
                           "another --out") from exc


class Journal:
    """Append-only store of finished rows, read back by byte offset (bounded memory)."""

    def __init__(self, out: Path, config: dict[str, Any], *, resume: bool = True) -> None:
        self.out = out
        self.path = journal_path(out)
        self._config = hashlib.sha256(
            json.dumps({"v": _VERSION, **config}, sort_keys=True, default=str).encode()
        ).hexdigest()
        self._resume = resume
        self._offsets = array("q")             # [index] -> offset of its latest entry, or -1
        self._reusable: dict[int, str] = {}    # index -> fingerprint, for ok/undefined rows
        self._fh: IO[bytes] | None = None
        self.resumed = 0

    def open(self) -> int:
        """Load what a previous run left (if its settings match); returns rows stored."""
        self.out.parent.mkdir(parents=True, exist_ok=True)
        fresh = not (self._resume and self.path.exists() and self._load())
        self._fh = self.path.open("w+b" if fresh else "r+b")
        _lock(self._fh, self.out)
        if fresh:
            self._offsets = array("q")
            self._reusable.clear()
            self._write({"noisegauge_journal": _VERSION, "config": self._config})
        else:
            self._fh.seek(self._end)
            self._fh.truncate()  # drop a line torn by a kill, so appends start clean
        return len(self._reusable)

    def _load(self) -> bool:
        offset = 0
        self._end = 0
        with self.path.open("rb") as fh:
            for n, line in enumerate(fh):
                try:
                    entry = json.loads(line) if line.endswith(b"\n") else None
                except json.JSONDecodeError:
                    entry = None
                if n == 0:
                    if not isinstance(entry, dict) or entry.get("config") != self._config:
                        log.warning("ignoring %s: it was made with other settings", self.path)
                        return False
                elif isinstance(entry, dict) and isinstance(entry.get("i"), int):
                    index = entry["i"]
                    self._set_offset(index, offset)
                    if entry.get("row", {}).get("status") in ("ok", "undefined"):
                        self._reusable[index] = str(entry.get("fp"))
                    else:
                        self._reusable.pop(index, None)  # judge errors are retried
                if entry is not None:
                    self._end = offset + len(line)
                offset += len(line)
        return True

    def reusable(self, index: int, fp: str) -> bool:
        """A stored result for this row, made from the same input, exists."""
        return self._reusable.get(index) == fp

    def append(self, index: int, fp: str, row: dict[str, Any], verdicts: dict[str, Any] | None,
               sample: dict[str, Any] | None = None) -> None:
        entry: dict[str, Any] = {"i": index, "fp": fp, "row": row, "verdicts": verdicts}
        if sample is not None:
            entry["sample"] = sample
        self._set_offset(index, self._write(entry))

    def _set_offset(self, index: int, offset: int) -> None:
        if index >= len(self._offsets):
            self._offsets.extend([-1] * (index + 1 - len(self._offsets)))
        self._offsets[index] = offset

    def _write(self, entry: dict[str, Any]) -> int:
        assert self._fh is not None, "Journal.open() first"
        offset = self._fh.tell()
        self._fh.write(json.dumps(entry, separators=(",", ":")).encode("ascii") + b"\n")
        self._fh.flush()  # in the OS after each row: a killed process loses nothing written
        return offset

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
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if remove:
            self.path.unlink(missing_ok=True)
