"""Writing results: JSONL (the CONTRACTS row shape), CSV and Parquet (flat, one column per
metric), and RAGChecker JSON. Writers take rows in input order and stream them out.

Every byte goes through ``redact`` (no API key is ever written), and a CSV cell that a
spreadsheet would run as a formula (starting with ``= + - @``, a tab or a carriage return)
is written with a leading ``'`` (OWASP's advice against CSV injection).
"""

from __future__ import annotations

import csv
import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, cast

from ..errors import InvalidInput, MissingDependency
from ..infra.secrets import redact, redact_value
from .ragchecker import RagcheckerWriter

__all__ = ["OUTPUT_FORMATS", "RowWriter", "flat_row", "open_writer", "output_format"]

OUTPUT_FORMATS: tuple[str, ...] = ("jsonl", "ragchecker", "csv", "parquet")
_USAGE = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "cost_usd")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """A text cell a spreadsheet would evaluate, prefixed with ``'``; anything else as is."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


class RowWriter(Protocol):
    def add(self, index: int, row: Mapping[str, Any], sample: Any, verdicts: Any) -> None: ...
    def close(self) -> None: ...


def output_format(path: Path, forced: str | None = None) -> str:
    """``jsonl`` unless forced or the extension says .json (RAGChecker), .csv or .parquet."""
    if forced:
        if forced not in OUTPUT_FORMATS:
            raise InvalidInput(f"unknown output format {forced!r}; expected one of "
                               f"{', '.join(OUTPUT_FORMATS)}")
        return forced
    return {".json": "ragchecker", ".csv": "csv", ".parquet": "parquet",
            ".pq": "parquet"}.get(path.suffix.lower(), "jsonl")


def flat_row(index: int, row: Mapping[str, Any], metric_names: Sequence[str]) -> dict[str, Any]:
    """One table row: index, id, status, reason, a column per metric, usage, error kind."""
    metrics = row.get("metrics") or {}
    usage = row.get("usage") or {}
    out: dict[str, Any] = {"index": index, "id": row.get("id"), "status": row.get("status"),
                           "reason": row.get("reason")}
    out.update({name: metrics.get(name) for name in metric_names})
    out.update({name: usage.get(name) for name in _USAGE})
    out["error_kind"] = row.get("error_kind")
    return out


class _JsonlWriter:
    def __init__(self, fh: IO[str]) -> None:
        self._fh = fh

    def add(self, index: int, row: Mapping[str, Any], sample: Any, verdicts: Any) -> None:
        self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def close(self) -> None:
        pass


class _CsvWriter:
    def __init__(self, fh: IO[str], metric_names: Sequence[str]) -> None:
        self._names = list(metric_names)
        self._writer = csv.DictWriter(fh, fieldnames=list(flat_row(0, {}, self._names)))
        self._writer.writeheader()

    def add(self, index: int, row: Mapping[str, Any], sample: Any, verdicts: Any) -> None:
        self._writer.writerow({k: csv_safe(v) for k, v in flat_row(index, row, self._names).items()})

    def close(self) -> None:
        pass


class _ParquetWriter:
    """Buffers a few thousand rows per row group, so memory stays bounded."""

    def __init__(self, path: Path, metric_names: Sequence[str]) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise MissingDependency("writing Parquet", "tables", "pyarrow") from exc
        self._pa = pa
        self._names = list(metric_names)
        fields = [pa.field("index", pa.int64()), pa.field("id", pa.string()),
                  pa.field("status", pa.string()), pa.field("reason", pa.string())]
        fields += [pa.field(n, pa.float64()) for n in self._names]
        fields += [pa.field(n, pa.float64() if n == "cost_usd" else pa.int64()) for n in _USAGE]
        fields.append(pa.field("error_kind", pa.string()))
        self._schema = pa.schema(fields)
        self._path = path
        self._writer = pq.ParquetWriter(str(path), self._schema)
        self._buffer: list[dict[str, Any]] = []

    def add(self, index: int, row: Mapping[str, Any], sample: Any, verdicts: Any) -> None:
        self._buffer.append(redact_value(flat_row(index, row, self._names)))
        if len(self._buffer) >= 4096:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._writer.write_table(self._pa.Table.from_pylist(self._buffer, schema=self._schema))
            self._buffer = []

    def close(self) -> None:
        self._flush()
        self._writer.close()
        if self._path.is_file():  # on disk before the caller renames it into place
            with self._path.open("rb") as fh:
                os.fsync(fh.fileno())


class _Redacting:
    """The text sink of the text writers: every string written passes through ``redact``."""

    def __init__(self, fh: IO[str]) -> None:
        self._fh = fh

    def write(self, text: str) -> int:
        return self._fh.write(redact(text))


class _TextWriter:
    """Owns the file handle of a text writer, so every writer closes the same way."""

    def __init__(self, path: Path, make: Any) -> None:
        # backslashreplace: an id with undecodable bytes must not abort the final write
        self._fh = path.open("w", encoding="utf-8", errors="backslashreplace", newline="")
        self._inner: RowWriter = make(cast(IO[str], _Redacting(self._fh)))

    def add(self, index: int, row: Mapping[str, Any], sample: Any, verdicts: Any) -> None:
        self._inner.add(index, row, sample, verdicts)

    def close(self) -> None:
        try:
            self._inner.close()
            self._fh.flush()
            # a device or a pipe (``--out /dev/null``) cannot be fsynced (EINVAL)
            if stat.S_ISREG(os.fstat(self._fh.fileno()).st_mode):
                os.fsync(self._fh.fileno())
        finally:
            self._fh.close()


def open_writer(path: Path, fmt: str, metric_names: Sequence[str]) -> RowWriter:
    """A writer of ``fmt`` into ``path`` (the caller renames it into place when complete)."""
    if fmt == "jsonl":
        return _TextWriter(path, _JsonlWriter)
    if fmt == "ragchecker":
        return _TextWriter(path, RagcheckerWriter)
    if fmt == "csv":
        return _TextWriter(path, lambda fh: _CsvWriter(fh, metric_names))
    if fmt == "parquet":
        return _ParquetWriter(path, metric_names)
    raise InvalidInput(f"unknown output format {fmt!r}")
