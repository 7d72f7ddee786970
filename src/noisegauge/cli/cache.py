"""``noisegauge cache info|list|show|prune|clear``: look after the persistent answer cache.

The cache holds judge answers (claims, verdicts) and stress-test generations, each with the
raw model answer it was read from when the provider reported one, and the identity of what
produced it. It lives in the user cache directory unless ``--cache PATH`` or
``$NOISEGAUGE_CACHE`` says otherwise.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..infra.store import Entry, JudgeCache, cache_location

__all__ = ["cache", "parse_duration", "parse_size"]

_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_UNITS_B = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
            "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
            "tib": 2**40}


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not m:
        raise click.BadParameter(f"{text!r}: expected a number and a unit, e.g. 30d, 12h, 90m")
    return float(m.group(1)) * _UNITS_S[m.group(2)]


def parse_size(text: str) -> int:
    """``2GB``, ``500MB``, ``1.5GiB``, ``100k`` -> bytes (KB/MB/GB are powers of 1000)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not m or m.group(2) not in _UNITS_B:
        raise click.BadParameter(f"{text!r}: expected a size, e.g. 2GB, 500MB, 1GiB")
    return int(float(m.group(1)) * _UNITS_B[m.group(2)])


def _human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _when(ts: float | None) -> str:
    return "-" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _who(identity: Any) -> str:
    """A short name for a producer identity: judge kind and model, or the pipeline."""
    if not isinstance(identity, dict):
        return "unknown (written before producers were recorded)"
    if "pipeline" in identity and isinstance(identity["pipeline"], dict):
        p = identity["pipeline"]
        return "pipeline " + " ".join(str(p[k]) for k in ("pipeline", "model", "target", "url")
                                      if p.get(k))
    parts = [str(identity.get("judge", "?"))]
    parts += [str(identity[k]) for k in ("model", "base_url") if identity.get(k)]
    if identity.get("content"):
        parts.append(f"content {identity['content']}")
    return " ".join(parts)


def _open(path: Path | None) -> JudgeCache:
    location = cache_location(path) if path is not None else cache_location()
    if location is None:
        raise click.UsageError("the cache is off (NOISEGAUGE_CACHE=off); give --cache PATH")
    if not location.exists():
        click.echo(f"no cache at {location}")
        sys.exit(0)
    return JudgeCache(location)


_cache_option = click.option("--cache", "cache_path", type=click.Path(path_type=Path,
                             dir_okay=False), help="Cache file (default: $NOISEGAUGE_CACHE or "
                             "the user cache directory).")


@click.group()
def cache() -> None:
    """Inspect and manage the cache of judge answers and generations."""


@cache.command()
@_cache_option
def info(cache_path: Path | None) -> None:
    """Where the cache is, its size, its age range, and answers per judge or pipeline."""
    store = _open(cache_path)
    try:
        data = store.info()
    finally:
        store.close()
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    console.print(f"cache: {escape(data['path'])}")
    console.print(f"size: {_human(data['bytes'])}; answers: {data['answers']:,} "
                  f"({data['with_raw']:,} with the raw model answer); "
                  f"oldest {_when(data['oldest'])}, newest {_when(data['newest'])}")
    table = Table(box=None, title_justify="left")
    for col in ("answers", "newest", "produced by"):
        table.add_column(col, justify="right" if col == "answers" else "left")
    for p in data["producers"]:
        table.add_row(f"{p['answers']:,}", _when(p["newest"]), escape(_who(p["identity"])))
    console.print(table)


@cache.command("list")
@_cache_option
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--grep", "contains", help="Only answers whose value or raw text contains this.")
def list_(cache_path: Path | None, limit: int, contains: str | None) -> None:
    """The newest answers with their keys (for ``cache show KEY``)."""
    store = _open(cache_path)
    try:
        entries = store.recent(limit, contains)
    finally:
        store.close()
    for e in entries:
        value = json.dumps(e.value, ensure_ascii=False)
        click.echo(f"{e.key.hex()[:16]}  {_when(e.created)}  {e.method or '-':10}  "
                   f"{value[:70]}{'...' if len(value) > 70 else ''}")


@cache.command()
@_cache_option
@click.argument("key")
def show(cache_path: Path | None, key: str) -> None:
    """One answer: the parsed value, the raw model answer(s), who produced it and when.

    KEY is a key from ``cache list`` (any unique prefix of at least 6 hex digits).
    """
    if len(key) < 6 or not re.fullmatch(r"[0-9a-fA-F]+", key):
        raise click.BadParameter("expected at least 6 hex digits", param_hint="KEY")
    store = _open(cache_path)
    try:
        keys = store.find(key)
        if len(keys) != 1:
            click.echo(f"{'no' if not keys else 'more than one'} answer with key {key}"
                       f"{'' if not keys else '; give more digits'}", err=True)
            sys.exit(2)
        entry = store.entry(keys[0])
    finally:
        store.close()
    assert entry is not None
    _print_entry(entry)


_VERDICTS = {"e": "entailed", "n": "neutral", "c": "contradicted"}


def _print_entry(e: Entry) -> None:
    click.echo(f"key:      {e.key.hex()}")
    click.echo(f"created:  {_when(e.created)}")
    click.echo(f"method:   {e.method or '-'}")
    click.echo(f"producer: {json.dumps(e.identity, ensure_ascii=False, sort_keys=True)}")
    value = json.dumps(e.value, ensure_ascii=False)
    if e.method in ("check", "check_many") and isinstance(e.value, str):  # one letter a claim
        value += f"  ({', '.join(_VERDICTS.get(c, c) for c in e.value)})"
    click.echo(f"value:    {value}")
    if not e.raw:
        click.echo("raw:      (not recorded)")
    for i, text in enumerate(e.raw or (), start=1):
        click.echo(f"raw answer {i}:\n{text}")


@cache.command()
@_cache_option
@click.option("--older-than", "older_than", metavar="AGE", help="e.g. 30d, 12h: drop older answers.")
@click.option("--max-size", "max_size", metavar="SIZE",
              help="e.g. 2GB: drop the oldest answers until the file is this small.")
def prune(cache_path: Path | None, older_than: str | None, max_size: str | None) -> None:
    """Drop old answers (--older-than) and/or the oldest ones beyond a size (--max-size)."""
    if older_than is None and max_size is None:
        raise click.UsageError("give --older-than AGE and/or --max-size SIZE")
    age = parse_duration(older_than) if older_than is not None else None
    size = parse_size(max_size) if max_size is not None else None
    store = _open(cache_path)
    try:
        before = store.size_bytes()
        removed = store.prune(older_than=age, max_bytes=size)
        after, left = store.size_bytes(), len(store)
    finally:
        store.close()
    click.echo(f"removed {removed:,} answers; {left:,} left; {_human(before)} -> {_human(after)}")


def _confirm(question: str) -> bool:
    """``click.confirm``; with no answer to read (no terminal, stdin empty) a usage error
    that says to pass --yes (exit 2), not an "interrupted" (130)."""
    try:
        return click.confirm(question)
    except click.Abort:
        if sys.stdin is not None and sys.stdin.isatty():
            raise  # Ctrl-C at the prompt: interrupted
        raise click.UsageError("no answer to the question (not run in a terminal): pass "
                               "--yes to delete without asking") from None


@cache.command()
@_cache_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def clear(cache_path: Path | None, yes: bool) -> None:
    """Delete every answer (judge answers and generations)."""
    store = _open(cache_path)
    try:
        if not yes and not _confirm(f"delete all {len(store):,} answers in {store.path}?"):
            click.echo("nothing deleted")
            return
        removed = store.clear()
    finally:
        store.close()
    click.echo(f"removed {removed:,} answers from {store.path}")
