"""The judge cache of one block on a worker: its own file, read-through to the user's.

A worker may run on another machine, and many write at once, so none writes the user's
cache. Each block gets a private SQLite file in the worker's temp directory; a miss there
is looked up in the user's cache file when this node can see it (same machine or a shared
file system), read-only. The block's new answers go back to the driver with its rows
(``dump``) and are merged into the user's cache there, so a rerun spends no judge call.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from ..infra.store import JudgeCache

__all__ = ["BlockCache"]

log = logging.getLogger("noisegauge")


def _open_readonly(path: Path) -> sqlite3.Connection | None:
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10.0)
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("SELECT 1 FROM answers LIMIT 1")  # a file that is not a cache fails here
    except sqlite3.Error as exc:
        log.warning("judge cache %s is not readable on this worker (%s): answers already "
                    "there are asked again", path, exc)
        return None
    return db


class BlockCache(JudgeCache):
    """A ``JudgeCache`` at ``path`` (this block's own) that also reads ``shared``."""

    def __init__(self, path: str | Path, shared: str | None) -> None:
        super().__init__(path, flush_seconds=3600.0, flush_size=10_000)
        self._shared = _open_readonly(Path(shared)) if shared else None

    def get(self, key: bytes) -> Any | None:
        hit = super().get(key)
        if hit is not None or self._shared is None:
            return hit
        try:
            row = self._shared.execute("SELECT value FROM answers WHERE key = ?",
                                       (key,)).fetchone()
        except sqlite3.Error:  # busy or gone: a miss costs a call, never the run
            return None
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except json.JSONDecodeError:
            return None

    def close(self) -> None:
        super().close()
        if self._shared is not None:
            self._shared.close()
            self._shared = None
