"""A persistent cache of judge answers: one wrapper around any judge, SQLite underneath.

The key is a hash of the judge's full identity (``judge_identity``: kind, model, base URL,
prompt version, generation settings; never an API key), the method name and the input texts.
Changing the model or the prompt version therefore never reuses a stale answer. Values are
plain JSON. The database runs in WAL mode with a busy timeout, and writes are grouped into
short transactions, so several runs can share one cache file.

Location: ``cache=PATH`` / ``--cache PATH``, else ``$NOISEGAUGE_CACHE`` (``off`` disables),
else the user cache directory (``$XDG_CACHE_HOME/noisegauge``, ``~/.cache/noisegauge``,
``~/Library/Caches/noisegauge`` or ``%LOCALAPPDATA%\\noisegauge\\Cache``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .judges.base import BatchChecker, Judge, SampleJudge, Usage, judge_identity, record_usage
from .verdicts import Verdict

__all__ = ["CachedJudge", "JudgeCache", "default_cache_path", "resolve_cache", "with_cache"]

log = logging.getLogger("noisegauge")

_OFF = {"", "0", "off", "false", "no", "none"}
_CODE = {Verdict.ENTAILED: "e", Verdict.NEUTRAL: "n", Verdict.CONTRADICTED: "c"}
_DECODE = {c: v for v, c in _CODE.items()}
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


class CachedJudge:
    """Answers from the cache when it has them (recorded as ``Usage(cached_calls=1)``, no
    call), else from the wrapped judge, whose answer is then stored."""

    def __init__(self, judge: Judge, store: JudgeCache) -> None:
        self.inner = judge
        self.store = store
        self._ns = json.dumps(judge_identity(judge), sort_keys=True, default=str)

    def identity(self) -> dict[str, Any]:
        return judge_identity(self.inner)

    def __getattr__(self, name: str) -> Any:
        # Other attributes (model, settings) read through to the wrapped judge.
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        key = self.store.key(self._ns, "extract", text, question)
        hit = self.store.get(key)
        if isinstance(hit, list) and all(isinstance(c, str) for c in hit):
            record_usage(Usage(cached_calls=1))
            return hit
        claims = await self.inner.extract(text, question)
        if isinstance(claims, list) and all(isinstance(c, str) for c in claims):
            self.store.put(key, claims)  # only well-formed answers are kept
        return claims

    def _lookup(self, method: str, premise: str, claims: Sequence[str]) -> list[Verdict] | None:
        hit = self.store.get(self.store.key(self._ns, method, premise, list(claims)))
        if isinstance(hit, str) and len(hit) == len(claims) and all(c in _DECODE for c in hit):
            return [_DECODE[c] for c in hit]
        return None

    def _save(self, method: str, premise: str, claims: Sequence[str], verdicts: Any) -> None:
        if (isinstance(verdicts, list) and len(verdicts) == len(claims)
                and all(isinstance(v, Verdict) for v in verdicts)):
            self.store.put(self.store.key(self._ns, method, premise, list(claims)),
                           "".join(_CODE[v] for v in verdicts))

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        hit = self._lookup("check", premise, claims)
        if hit is not None:
            record_usage(Usage(cached_calls=1))
            return hit
        verdicts = await self.inner.check(premise, claims)
        self._save("check", premise, claims, verdicts)
        return verdicts

    async def check_many(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
        """Cached per premise; only the missing premises reach the judge, in one batch when
        it can batch, else one ``check`` each (what the scorer would have done anyway)."""
        batch = isinstance(self.inner, BatchChecker)
        method = "check_many" if batch else "check"
        found = [self._lookup(method, p, claims) for p in premises]
        missing = [j for j, f in enumerate(found) if f is None]
        # cached_calls counts calls avoided: one per premise, or the whole batch call.
        saved = (0 if missing else 1) if batch else len(premises) - len(missing)
        if saved:
            record_usage(Usage(cached_calls=saved))
        if not missing:
            return [f for f in found if f is not None]
        todo = [premises[j] for j in missing]
        if batch:
            fresh = await self.inner.check_many(todo, claims)  # type: ignore[attr-defined]
        else:
            fresh = list(await asyncio.gather(*(self.inner.check(p, claims) for p in todo)))
        if len(fresh) != len(todo):
            return list(fresh)  # malformed: let the scorer's shape check report it
        for j, verdicts in zip(missing, fresh):
            self._save(method, premises[j], claims, verdicts)
            found[j] = verdicts
        return [f if f is not None else [] for f in found]


def with_cache(judge: Judge, store: JudgeCache | None) -> Judge:
    """Wrap ``judge`` unless there is nothing to cache: no store, a judge that produces whole
    samples itself (``precomputed``), or one already wrapped."""
    if store is None or isinstance(judge, (CachedJudge, SampleJudge)):
        return judge
    return CachedJudge(judge, store)
