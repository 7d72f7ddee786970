"""The persistent key -> JSON store under the judge cache and the generation cache (SQLite).

Keys are hashes of a namespace, a method and the input texts (see ``JudgeCache.key``); values
are plain JSON. The database runs in WAL mode with a busy timeout, and writes are grouped into
short transactions, so several runs can share one cache file.

Location: ``cache=PATH`` / ``--cache PATH``, else ``$NOISEGAUGE_CACHE`` (``off`` disables),
else the user cache directory (``$XDG_CACHE_HOME/noisegauge``, ``~/.cache/noisegauge``,
``~/Library/Caches/noisegauge`` or ``%LOCALAPPDATA%\\noisegauge\\Cache``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["CacheOption", "JudgeCache", "default_cache_path", "resolve_cache"]

log = logging.getLogger("noisegauge")

_OFF = {"", "0", "off", "false", "no", "none"}
CacheOption = bool | str | os.PathLike[str] | None


def default_cache_path() -> Path:
    """The cache file in the platform's user cache directory (platformdirs' rules)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "noisegauge" / "Cache" / "judge-cache.sqlite3"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "noisegauge" / "judge-cache.sqlite3"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "noisegauge" / "judge-cache.sqlite3"


class JudgeCache:
    """Key -> JSON value store in SQLite. Misses cost one indexed lookup; writes are buffered
    for at most ``flush_seconds`` and committed together (a crash loses only that buffer)."""

    def __init__(self, path: str | os.PathLike[str], *, flush_seconds: float = 0.25,
                 flush_size: int = 500) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout = 10000")
        try:
            self._db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:  # e.g. a network file system: the default journal works
            pass
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key BLOB PRIMARY KEY, "
                         "value TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID")
        self._pending: dict[bytes, str] = {}
        self._flush_seconds = flush_seconds
        self._flush_size = flush_size
        self._last_flush = time.monotonic()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(namespace: str, method: str, *parts: Any) -> bytes:
        payload = json.dumps([namespace, method, *parts], ensure_ascii=True, separators=(",", ":"))
        return hashlib.blake2b(payload.encode("ascii"), digest_size=20).digest()

    def get(self, key: bytes) -> Any | None:
        text = self._pending.get(key)
        if text is None:
            row = self._db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            text = row[0]
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return None

    def put(self, key: bytes, value: Any) -> None:
        self._pending[key] = json.dumps(value, ensure_ascii=False)
        if (len(self._pending) >= self._flush_size
                or time.monotonic() - self._last_flush >= self._flush_seconds):
            self.flush()

    def flush(self) -> None:
        """Commit buffered answers in one short transaction; never fails the run."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        now = time.time()
        items = [(k, v, now) for k, v in self._pending.items()]
        try:
            with self._db:  # BEGIN ... COMMIT
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", items)
        except sqlite3.Error as exc:  # a busy or broken cache only costs future calls
            log.warning("judge cache: could not save %d answers to %s (%s)", len(items),
                        self.path, exc)
        self._pending.clear()

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT count(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        self.flush()
        self._db.close()


def resolve_cache(cache: CacheOption | JudgeCache) -> JudgeCache | None:
    """``None``: environment or default (on); ``False``: off; ``True``: default; else a path."""
    if isinstance(cache, JudgeCache):
        return cache
    if cache is False:
        return None
    if cache is None:
        env = os.environ.get("NOISEGAUGE_CACHE")
        if env is not None and env.strip().lower() in _OFF:
            return None
        path: Path = Path(env) if env else default_cache_path()
    elif cache is True:
        path = default_cache_path()
    else:
        path = Path(cache)
    try:
        return JudgeCache(path)
    except (sqlite3.Error, OSError) as exc:
        log.warning("judge cache disabled: cannot open %s (%s)", path, exc)
        return None
