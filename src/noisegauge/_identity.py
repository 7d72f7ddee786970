"""What identifies an object's answers, for cache keys and result metadata.

Identity comes from content, not from hand-bumped version strings: an object may list
``identity_sources`` (modules, packages, files or folders whose content decides its answers,
e.g. a judge's prompt module or a model's weights), and its identity then carries a digest of
their bytes, plus the text values of those modules as they are at run time (so a prompt
replaced by assignment counts too). Any edit to a prompt, schema builder or weight file
therefore changes every cache key built from the identity.

File digests are remembered by (path, size, mtime, inode), in memory and in a small JSON file
beside the judge cache, so a multi-GB weight file is read once, not once per run.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["content_digest", "file_digest", "identity_of"]

log = logging.getLogger("noisegauge")

Source = str | os.PathLike[str] | ModuleType

_MEMO: dict[str, tuple[list[int], str]] = {}  # path -> ([size, mtime_ns, inode], digest)
_MEMO_LOCK = threading.Lock()
_MEMO_LOADED: set[Path] = set()
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn"}


def identity_of(obj: object, kind: str) -> dict[str, Any]:
    """``obj.identity()`` when it defines one, else ``{kind: "module.Class"}``; plus
    ``"content"``, the digest of ``obj.identity_sources`` when it lists any."""
    ident = getattr(obj, "identity", None)
    value = ident() if callable(ident) else None
    if not isinstance(value, dict):
        cls = type(obj)
        value = {kind: f"{cls.__module__}.{cls.__qualname__}"}
    sources = getattr(obj, "identity_sources", None)
    if sources:
        value = {**value, "content": content_digest(*sources)}
    return value


def content_digest(*sources: Source) -> str:
    """sha256 (16 hex digits) of the content of modules, packages, files and folders.

    A module or package (object or dotted name) contributes its source files' bytes (a
    package: every file under its folder) and its module-level text values at run time
    (strings, and lists/tuples/dicts of them); a path contributes its bytes, a folder every
    file under it.
    """
    h = hashlib.sha256()
    for source in sources:
        if isinstance(source, ModuleType) or (isinstance(source, str) and _is_module_name(source)):
            module = source if isinstance(source, ModuleType) else importlib.import_module(source)
            h.update(f"module:{module.__name__};".encode())
            for path in _module_files(module):
                h.update(f"{path.name}:{file_digest(path)};".encode())
            h.update(_texts(module).encode())
        else:
            path = Path(source).expanduser()
            for f in _files(path):
                rel = f.relative_to(path).as_posix() if path.is_dir() else f.name
                h.update(f"{rel}:{file_digest(f)};".encode())
    return h.hexdigest()[:16]


def _is_module_name(text: str) -> bool:
    return all(part.isidentifier() for part in text.split(".")) and not Path(text).exists()


def _module_files(module: ModuleType) -> list[Path]:
    file = getattr(module, "__file__", None)
    if file is None:
        return []
    path = Path(file)
    if path.name == "__init__.py":  # a package: its whole folder (code and data files)
        return _files(path.parent)
    return [path]


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"identity source {path} does not exist")
    return sorted(p for p in path.rglob("*") if p.is_file()
                  and not any(part in _SKIP_DIRS or part.startswith(".")
                              for part in p.relative_to(path).parts))


def _texts(module: ModuleType) -> str:
    """The module's text constants as JSON (what a prompt module holds)."""
    out = {}
    for name, value in sorted(vars(module).items()):
        if not name.startswith("__") and _is_text(value):
            out[name] = value
    return json.dumps(out, sort_keys=True, ensure_ascii=False)


def _is_text(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_text(v) for v in value)
    if isinstance(value, dict):
        return bool(value) and all(isinstance(k, str) and _is_text(v) for k, v in value.items())
    return False


def file_digest(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes, remembered by (path, size, mtime, inode)."""
    p = Path(path).resolve()
    st = p.stat()
    stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
    key = str(p)
    memo_file = _memo_file()
    with _MEMO_LOCK:
        if memo_file is not None and memo_file not in _MEMO_LOADED:
            _MEMO_LOADED.add(memo_file)
            _load_memo(memo_file)
        hit = _MEMO.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _MEMO_LOCK:
        _MEMO[key] = (stamp, digest)
        if memo_file is not None and st.st_size >= 1 << 20:  # only big files are worth a write
            _save_memo(memo_file)
    return digest


def _memo_file() -> Path | None:
    """``file-digests.json`` beside the judge cache; None when the cache is off."""
    from .infra.store import cache_location  # the store decides where the cache lives

    location = cache_location()
    return None if location is None else location.parent / "file-digests.json"


def _load_memo(path: Path) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict):
        for key, entry in data.items():
            if (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)
                    and isinstance(entry[0], list)):
                _MEMO.setdefault(key, (entry[0], entry[1]))


def _save_memo(path: Path) -> None:
    big = {k: [stamp, d] for k, (stamp, d) in _MEMO.items() if stamp[0] >= 1 << 20}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(big), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only cache folder only costs a re-hash next time
        log.debug("could not save file digests to %s (%s)", path, exc)
        tmp.unlink(missing_ok=True)

