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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .secrets import redact

__all__ = ["CacheDump", "CacheOption", "Entry", "JudgeCache", "cache_location",
           "default_cache_path", "resolve_cache"]

log = logging.getLogger("noisegauge")

_OFF = {"", "0", "off", "false", "no", "none"}
CacheOption = bool | str | os.PathLike[str] | None
#: Rows of the ``answers`` table (key, value, created, producer, method, raw) and of the
#: ``producers`` table (id, identity): what ``dump`` returns and ``merge`` takes.
CacheDump = tuple[list[tuple[bytes, str, float, "str | None", "str | None", "str | None"]],
                  list[tuple[str, str]]]


def default_cache_path() -> Path:
    """The cache file in the platform's user cache directory (platformdirs' rules)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "noisegauge" / "Cache" / "judge-cache.sqlite3"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "noisegauge" / "judge-cache.sqlite3"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "noisegauge" / "judge-cache.sqlite3"


@dataclass(frozen=True)
class Entry:
    """One stored answer: the parsed value, the raw model answer(s) it was read from (None
    when the producer reported none), who produced it and when."""

    key: bytes
    value: Any
    raw: list[str] | None
    created: float
    method: str | None
    identity: Any  # the producer's identity (parsed JSON), None for entries from before 0.2


class JudgeCache:
    """Key -> JSON value store in SQLite. Misses cost one indexed lookup; writes are buffered
    for at most ``flush_seconds`` and committed together (a crash loses only that buffer).

    Table ``answers``: key, value (JSON), created (epoch seconds), producer (short id into
    table ``producers``, which keeps each judge's or pipeline's identity JSON once), method,
    raw (JSON list of the raw answers the value was parsed from, or NULL).
    """

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
        self._create_schema()
        self._pending: dict[bytes, tuple[str, str | None, str | None, str | None]] = {}
        self._producers: dict[str, str] = {}  # identity JSON -> id, seen by this process
        self._new_producers: dict[str, str] = {}  # id -> identity JSON, not yet committed
        self._flush_seconds = flush_seconds
        self._flush_size = flush_size
        self._last_flush = time.monotonic()
        self.hits = 0
        self.misses = 0

    def _create_schema(self) -> None:
        db = self._db
        db.execute("CREATE TABLE IF NOT EXISTS answers (key BLOB PRIMARY KEY, "
                   "value TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID")
        db.execute("CREATE TABLE IF NOT EXISTS producers (id TEXT PRIMARY KEY, "
                   "identity TEXT NOT NULL) WITHOUT ROWID")
        # Columns added after the first release: files written by it are upgraded in place.
        have = {row[1] for row in db.execute("PRAGMA table_info(answers)")}
        for column in ("producer", "method", "raw"):
            if column not in have:
                try:
                    db.execute(f"ALTER TABLE answers ADD COLUMN {column} TEXT")
                except sqlite3.OperationalError:  # another process added it a moment ago
                    pass
        db.execute("CREATE INDEX IF NOT EXISTS answers_by_age ON answers (created)")

    @staticmethod
    def key(namespace: str, method: str, *parts: Any) -> bytes:
        payload = json.dumps([namespace, method, *parts], ensure_ascii=True, separators=(",", ":"))
        return hashlib.blake2b(payload.encode("ascii"), digest_size=20).digest()

    def get(self, key: bytes) -> Any | None:
        pending = self._pending.get(key)
        if pending is not None:
            text = pending[0]
        else:
            row = self._db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            text = row[0]
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return None

    def put(self, key: bytes, value: Any, *, raw: Sequence[str] | None = None,
            namespace: str | None = None, method: str | None = None) -> None:
        """Store ``value``; ``raw``: the raw answers it was parsed from (kept for audits);
        ``namespace``: the producer's identity JSON (as passed to ``key``). Everything stored
        passes through ``redact``: an endpoint that echoes a key never gets it on disk."""
        producer = None
        if namespace is not None:
            producer = self._producers.get(namespace)
            if producer is None:
                producer = hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()
                self._producers[namespace] = producer
                self._new_producers[producer] = redact(namespace)
        self._pending[key] = (redact(json.dumps(value, ensure_ascii=False)), producer, method,
                              redact(json.dumps(list(raw), ensure_ascii=False)) if raw else None)
        if (len(self._pending) >= self._flush_size
                or time.monotonic() - self._last_flush >= self._flush_seconds):
            self.flush()

    def flush(self) -> None:
        """Commit buffered answers in one short transaction; never fails the run."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        now = time.time()
        items = [(k, v, now, producer, method, raw)
                 for k, (v, producer, method, raw) in self._pending.items()]
        producers = list(self._new_producers.items())
        try:
            with self._db:  # BEGIN ... COMMIT
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR IGNORE INTO producers VALUES (?, ?)", producers)
                self._db.executemany("INSERT OR REPLACE INTO answers (key, value, created, "
                                     "producer, method, raw) VALUES (?, ?, ?, ?, ?, ?)", items)
            self._new_producers.clear()
        except sqlite3.Error as exc:  # a busy or broken cache only costs future calls
            log.warning("judge cache: could not save %d answers to %s (%s)", len(items),
                        self.path, exc)
        self._pending.clear()

    def dump(self) -> CacheDump:
        """Every stored answer and producer, as stored (a worker's own cache, sent back to
        be merged into the user's)."""
        self.flush()
        answers = [(bytes(k), v, c, p, m, r) for k, v, c, p, m, r in self._db.execute(
            "SELECT key, value, created, producer, method, raw FROM answers")]
        producers = [(str(i), str(x)) for i, x in self._db.execute("SELECT id, identity FROM producers")]
        return answers, producers

    def merge(self, dump: CacheDump) -> int:
        """Add the answers of another cache's ``dump`` (an answer already here is kept);
        returns how many were added. Like ``flush``, never fails the run."""
        answers, producers = dump
        if not answers:
            return 0
        self.flush()
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR IGNORE INTO producers VALUES (?, ?)", producers)
                added = self._db.total_changes
                self._db.executemany("INSERT OR IGNORE INTO answers (key, value, created, "
                                     "producer, method, raw) VALUES (?, ?, ?, ?, ?, ?)", answers)
            return self._db.total_changes - added
        except sqlite3.Error as exc:
            log.warning("judge cache: could not merge %d answers into %s (%s)", len(answers),
                        self.path, exc)
            return 0

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT count(*) FROM answers").fetchone()[0])

    # -- management (``noisegauge cache``) -------------------------------------------------

    def size_bytes(self) -> int:
        """Bytes on disk: the database and its write-ahead log."""
        wal = self.path.with_name(self.path.name + "-wal")
        return sum(f.stat().st_size for f in (self.path, wal) if f.exists())

    def find(self, prefix: str, limit: int = 2) -> list[bytes]:
        """Keys whose hex form starts with ``prefix`` (at most ``limit``)."""
        self.flush()
        pattern = prefix.strip().upper().replace("%", "").replace("_", "") + "%"
        rows = self._db.execute("SELECT key FROM answers WHERE hex(key) LIKE ? LIMIT ?",
                                (pattern, limit))
        return [bytes(r[0]) for r in rows]

    def entry(self, key: bytes) -> Entry | None:
        self.flush()
        row = self._db.execute(
            "SELECT a.value, a.raw, a.created, a.method, p.identity FROM answers a "
            "LEFT JOIN producers p ON p.id = a.producer WHERE a.key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Entry(key, _loads(row[0]), _loads(row[1]), row[2], row[3], _loads(row[4]))

    def recent(self, limit: int = 20, contains: str | None = None) -> list[Entry]:
        """The newest entries, optionally only those whose value or raw text contains a string."""
        self.flush()
        where, args = "", []
        if contains:
            where = "WHERE instr(a.value, ?) > 0 OR instr(coalesce(a.raw, ''), ?) > 0"
            args = [contains, contains]
        rows = self._db.execute(
            "SELECT a.key, a.value, a.raw, a.created, a.method, p.identity FROM answers a "
            f"LEFT JOIN producers p ON p.id = a.producer {where} "
            "ORDER BY a.created DESC LIMIT ?", (*args, limit))
        return [Entry(bytes(r[0]), _loads(r[1]), _loads(r[2]), r[3], r[4], _loads(r[5]))
                for r in rows]

    def info(self) -> dict[str, Any]:
        """Totals, age range, and answers per producer (judge or pipeline) and method."""
        self.flush()
        total, oldest, newest, with_raw = self._db.execute(
            "SELECT count(*), min(created), max(created), count(raw) FROM answers").fetchone()
        producers = [
            {"identity": _loads(identity), "answers": n, "newest": last}
            for identity, n, last in self._db.execute(
                "SELECT p.identity, count(*), max(a.created) FROM answers a LEFT JOIN producers "
                "p ON p.id = a.producer GROUP BY a.producer ORDER BY count(*) DESC")]
        return {"path": str(self.path), "bytes": self.size_bytes(), "answers": total,
                "with_raw": with_raw, "oldest": oldest, "newest": newest,
                "producers": producers}

    def prune(self, *, older_than: float | None = None, max_bytes: int | None = None) -> int:
        """Delete answers older than ``older_than`` seconds, then the oldest ones until the
        file is at most ``max_bytes``; returns how many were deleted. The file shrinks."""
        self.flush()
        removed = 0
        if older_than is not None:
            cur = self._db.execute("DELETE FROM answers WHERE created < ?",
                                   (time.time() - older_than,))
            removed += max(cur.rowcount, 0)
            self._compact()
        for _ in range(8):  # each round removes about the excess; rows vary in size
            size, rows = self.size_bytes(), len(self)
            if max_bytes is None or size <= max_bytes or rows == 0:
                break
            excess = max(1, -(-(size - max_bytes) * rows // size))
            cur = self._db.execute("DELETE FROM answers WHERE key IN (SELECT key FROM answers "
                                   "ORDER BY created LIMIT ?)", (excess,))
            removed += max(cur.rowcount, 0)
            self._compact()
        return removed

    def clear(self) -> int:
        """Delete every answer; returns how many there were."""
        self.flush()
        removed = max(self._db.execute("DELETE FROM answers").rowcount, 0)
        self._db.execute("DELETE FROM producers")
        self._compact()
        return removed

    def _compact(self) -> None:
        self._db.execute("DELETE FROM producers WHERE id NOT IN "
                         "(SELECT DISTINCT producer FROM answers WHERE producer IS NOT NULL)")
        self._db.execute("VACUUM")
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:  # not in WAL mode
            pass

    def close(self) -> None:
        self.flush()
        self._db.close()


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def cache_location(cache: CacheOption = None) -> Path | None:
    """Where the cache lives (nothing is created): ``None`` means the environment or the
    default, ``False`` off (returns None), ``True`` the default, else a path."""
    if cache is False:
        return None
    if cache is None:
        env = os.environ.get("NOISEGAUGE_CACHE")
        if env is not None and env.strip().lower() in _OFF:
            return None
        return Path(env).expanduser() if env else default_cache_path()
    if cache is True:
        return default_cache_path()
    return Path(cache).expanduser()


def resolve_cache(cache: CacheOption | JudgeCache) -> JudgeCache | None:
    """``None``: environment or default (on); ``False``: off; ``True``: default; else a path."""
    if isinstance(cache, JudgeCache):
        return cache
    path = cache_location(cache)
    if path is None:
        return None
    try:
        return JudgeCache(path)
    except (sqlite3.Error, OSError) as exc:
        log.warning("judge cache disabled: cannot open %s (%s)", path, exc)
        return None
