"""Reading datasets: files (JSONL, JSON, RAGChecker JSON, CSV, Parquet) and in-memory objects
(lists of dicts or Samples, column dicts, pandas DataFrames, Hugging Face datasets).

Everything streams row by row except a JSON document, which must be parsed whole (use JSONL
for big runs). pandas, pyarrow and datasets are imported only when such an input is used.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import InvalidInput, InvalidSample, MissingDependency
from ..samples import Sample
from .encoding import byte_lines, open_text, sniff_encoding
from .ragas import object_row, unwrap_dataset
from .rows import (
    KNOWN_COLUMNS,
    RawRow,
    clean_tabular,
    fingerprint,
    record_row,
    too_deep,
    too_deep_row,
)

__all__ = ["FORMATS", "InputFormat", "Source", "detect_format", "open_source", "relabel",
           "sniff_encoding", "without_references"]

InputFormat = Literal["jsonl", "json", "ragchecker", "csv", "parquet", "openinference"]
#: ``openinference``: OTLP/JSON trace exports, one sample per trace (``io.openinference``).
FORMATS: tuple[str, ...] = ("jsonl", "json", "ragchecker", "csv", "parquet", "openinference")
#: A JSON document nested deeper is refused whole, on every Python (records deeper than
#: ``MAX_DEPTH`` are error rows; this bounds the document a parser must hold).
MAX_DOCUMENT_DEPTH = 256
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv",
               ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}
_BATCH = 1024


@dataclass
class Source:
    """Rows of one dataset, read lazily; ``total`` is known for most sources (for the ETA)."""

    rows: Iterable[RawRow]
    total: int | None
    name: str

    def __iter__(self) -> Iterator[RawRow]:
        return iter(self.rows)


def open_source(dataset: Any, format: str | None = None,
                references: str | os.PathLike[str] | None = None) -> Source:
    """Wrap anything ``evaluate`` accepts as a ``Source``. ``references``: a golden JSONL
    file joined to traces (``format="openinference"`` only)."""
    if references is not None and format != "openinference":
        raise InvalidInput("references (a golden file joined to traces) go with the "
                           "openinference format: add --format openinference")
    if isinstance(dataset, Source):
        return dataset
    if format == "openinference":
        if not isinstance(dataset, (str, os.PathLike)):
            raise InvalidInput("the openinference format reads a path (an OTLP/JSON export "
                               "or a directory of them); spans in hand go through "
                               "noisegauge.io.openinference.rows_from_spans")
        from .openinference import open_traces

        traces = open_traces(Path(dataset), None if references is None else Path(references))
        return Source(traces, traces.total, str(dataset))
    if isinstance(dataset, (str, os.PathLike)):
        return _open_path(Path(dataset), format)
    dataset = unwrap_dataset(dataset)  # a Ragas EvaluationDataset or EvaluationResult
    module = type(dataset).__module__.split(".")[0]
    if module == "pandas" and hasattr(dataset, "iloc"):
        return Source(_dataframe_rows(dataset), len(dataset), "DataFrame")
    if module == "datasets" and hasattr(dataset, "iter"):
        return Source(_hf_rows(dataset), len(dataset), "datasets.Dataset")
    if isinstance(dataset, Mapping):
        if isinstance(dataset.get("results"), list):  # RAGChecker JSON already loaded
            return Source(_object_rows(dataset["results"]), len(dataset["results"]), "RAGChecker")
        return _columns_source(dataset)
    if isinstance(dataset, (Sample, bytes)) or not isinstance(dataset, Iterable):
        raise InvalidInput(
            f"cannot evaluate a {type(dataset).__name__}: expected a list of dicts or Samples, "
            "a pandas DataFrame, a datasets.Dataset, or a path to JSONL/JSON/CSV/Parquet")
    total = len(dataset) if isinstance(dataset, Sized) else None
    return Source(_object_rows(dataset), total, type(dataset).__name__)


def relabel(source: Source, field: str) -> Source:
    """``source`` whose records read their relevance labels from ``field`` (another format's
    name for Ragas' ``reference_context_ids``). A row without the field keeps none."""
    from ..samples import RELEVANT_IDS_FIELD

    def rows() -> Iterator[RawRow]:
        for raw in source:
            if raw.record is not None and field != RELEVANT_IDS_FIELD:
                record = {k: v for k, v in raw.record.items() if k != RELEVANT_IDS_FIELD}
                if raw.record.get(field) is not None:
                    value = raw.record[field]
                    if isinstance(value, str) and value.strip()[:1] == "[":
                        try:  # a CSV cell holding a JSON list
                            value = json.loads(value)
                        except json.JSONDecodeError:
                            pass  # left as text: Sample validation names the field and the fix
                    record[RELEVANT_IDS_FIELD] = value
                raw = RawRow(raw.index, raw.fingerprint, record=record, sample=raw.sample,
                             error=raw.error, value=raw.value)
            yield raw

    return Source(rows(), source.total, source.name)


def without_references(source: Source) -> Source:
    """``source`` whose rows may lack a reference: such a row is a sample scored for what
    needs none (faithfulness), its other metrics undefined, "no reference" (opt-in: by
    default a row without a reference is an error row naming the field)."""

    def rows() -> Iterator[RawRow]:
        for raw in source:
            if raw.record is not None and raw.error is None and raw.sample is None:
                try:  # the size limit is the run's (checked again on the sample)
                    sample = Sample.from_record(raw.record, row=raw.index, max_chars=sys.maxsize,
                                                allow_no_reference=True)
                except InvalidSample as exc:
                    raw = RawRow(raw.index, raw.fingerprint, record=raw.record, error=exc)
                else:
                    raw = RawRow(raw.index, raw.fingerprint, record=raw.record, sample=sample)
            yield raw

    return Source(rows(), source.total, source.name)


def _object_rows(items: Iterable[Any], bytes_valid: bool = True) -> Iterator[RawRow]:
    for i, item in enumerate(items):
        # a Sample, a dict, or a Ragas sample object
        yield object_row(i, item, bytes_valid=bytes_valid)


def _columns_source(columns: Mapping[str, Any], bytes_valid: bool = True) -> Source:
    """``{"question": [...], "answer": [...], ...}``, as ``Dataset.from_dict`` takes it."""
    lengths = {k: len(v) for k, v in columns.items() if isinstance(v, (list, tuple))}
    if len(lengths) != len(columns) or len(set(lengths.values())) > 1:
        raise InvalidInput("a dict dataset must map every column name to a list of the same "
                           f"length (got lengths {lengths}); or pass a list of row dicts")
    n = next(iter(lengths.values()), 0)
    rows = ({k: columns[k][i] for k in columns} for i in range(n))
    return Source(_object_rows(rows, bytes_valid), n, "dict of columns")


def _dataframe_rows(df: Any) -> Iterator[RawRow]:
    for start in range(0, len(df), _BATCH):
        for offset, rec in enumerate(df.iloc[start:start + _BATCH].to_dict("records")):
            yield record_row(start + offset, clean_tabular(rec))


def _hf_rows(ds: Any) -> Iterator[RawRow]:
    index = 0
    for batch in ds.iter(batch_size=_BATCH):
        names = list(batch)
        for j in range(len(batch[names[0]]) if names else 0):
            yield record_row(index, clean_tabular({k: batch[k][j] for k in names}))
            index += 1


# --- files -----------------------------------------------------------------------------------

def detect_format(path: Path, forced: str | None = None) -> str:
    """From ``forced``, else the extension, else a look at the first bytes."""
    if forced:
        if forced not in FORMATS:
            raise InvalidInput(f"unknown input format {forced!r}; expected one of {', '.join(FORMATS)}")
        return forced
    by_ext = _EXTENSIONS.get(path.suffix.lower())
    if by_ext is not None:
        return by_ext
    with path.open("rb") as f:
        head = f.read(4096)
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.decode(sniff_encoding(path), "ignore")
    first = text.lstrip("\ufeff \t\r\n")[:1]
    return {"[": "json", "{": "jsonl"}.get(first, "csv")


def _open_path(path: Path, forced: str | None) -> Source:
    if not path.exists():
        raise InvalidInput(f"input file not found: {path}")
    if path.is_dir():
        raise InvalidInput(f"input is a directory, expected a file: {path}")
    fmt = detect_format(path, forced)
    if fmt == "parquet":
        return _parquet_source(path)
    encoding = sniff_encoding(path)
    if fmt == "jsonl":
        _check_jsonl(path, encoding)
        return Source(_jsonl_rows(path, encoding), _count_lines(path, encoding), str(path))
    if fmt in ("json", "ragchecker"):
        return _json_source(path, fmt, encoding)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    header = _csv_header(path, encoding, delimiter)
    return Source(_csv_rows(path, encoding, delimiter, header), None, str(path))


def _check_jsonl(path: Path, encoding: str, sample: int = 20) -> None:
    """Refuse a file none of whose first lines is JSON: it is not JSON Lines at all (a bad
    line among good ones is only an error row)."""
    seen = 0
    for line in byte_lines(path, encoding):
        raw = line.strip()
        if not raw:
            continue
        if seen == 0 and raw.startswith(b"["):
            # no JSON Lines record is an array: this is a JSON document saved under .jsonl
            raise InvalidInput(f"{path}: starts with '[', so it is one JSON array (a .json "
                               "file), not JSON Lines (one object per line); read it with "
                               "--format json, or rename it to .json")
        try:
            json.loads(raw.decode("utf-8", "surrogateescape"))
            return
        except RecursionError:
            return  # JSON, only too deep: that row's error
        except ValueError:
            seen += 1
        if seen >= sample:
            break
    if seen >= 2:
        raise InvalidInput(f"{path}: none of the first {seen} lines is JSON, so this is not a "
                           "JSON Lines file (one JSON object per line); for CSV use a .csv name "
                           "or --format csv")


def _count_lines(path: Path, encoding: str) -> int:
    return sum(1 for line in byte_lines(path, encoding) if line.strip())


def _jsonl_rows(path: Path, encoding: str = "utf-8") -> Iterator[RawRow]:
    """One row per non-blank line, decoded on its own: a bad line is one error row."""
    index = 0
    for lineno, line in enumerate(byte_lines(path, encoding), start=1):
        raw = line.strip()
        if not raw:
            continue
        fp = fingerprint(raw)
        try:
            record = json.loads(raw.decode("utf-8", "surrogateescape"))
        except json.JSONDecodeError as exc:
            yield RawRow(index, fp, error=InvalidSample(
                f"line {lineno}: invalid JSON ({exc.msg} at column {exc.colno})", row=index,
                expected="one JSON object per line"))
        except RecursionError:
            yield too_deep_row(index, fp, f"line {lineno}")
        else:
            yield record_row(index, record, fp=fp, where=f"line {lineno}",
                             bytes_valid=_is_utf8(raw))
        index += 1


def _is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as UTF-8: if so, a surrogate read from it was a lone ``\\u``
    escape in the JSON, not an undecodable byte."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json_source(path: Path, fmt: str, encoding: str = "utf-8") -> Source:
    data_bytes = path.read_bytes()
    bytes_valid = not encoding.startswith("utf-8") or _is_utf8(data_bytes)
    try:
        text = (data_bytes.decode("utf-8-sig", "surrogateescape") if encoding.startswith("utf-8")
                else data_bytes.decode(encoding))
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not valid {encoding.upper()} text ({exc.reason} at byte "
                           f"{exc.start}); save it as UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if fmt == "json" and text.lstrip().startswith("{") and "\n{" in text:
            return Source(_jsonl_rows(path, encoding), _count_lines(path, encoding), str(path))
        raise InvalidInput(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column "
                           f"{exc.colno}); JSON Lines files should end in .jsonl") from exc
    except RecursionError:
        data = None
        deep = True
    else:
        # Where the parser gives up depends on the Python version (3.12 parses what 3.11
        # refuses), so one fixed limit decides, the same everywhere.
        deep = too_deep(data, MAX_DOCUMENT_DEPTH)
    if deep:
        raise InvalidInput(f"{path}: nested too deeply to read as one JSON document (more than "
                           f"{MAX_DOCUMENT_DEPTH} levels); write one record per line (JSONL) so "
                           "a bad record is one error row")
    if isinstance(data, Mapping) and isinstance(data.get("results"), list):
        data = data["results"]
    elif fmt == "ragchecker":
        raise InvalidInput(f'{path}: RAGChecker JSON needs a top-level {{"results": [...]}}')
    if isinstance(data, Mapping):
        source = _columns_source(data, bytes_valid)
        source.name = str(path)
        return source
    if not isinstance(data, list):
        raise InvalidInput(f"{path}: expected a JSON list of records or "
                           f'{{"results": [...]}}, got {type(data).__name__}')
    return Source(_object_rows(data, bytes_valid), len(data), str(path))


def _csv_header(path: Path, encoding: str, delimiter: str) -> list[str]:
    """The header row, checked: it must name at least one known column, each only once."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # big chunks are checked per row instead
    try:
        with open_text(path, encoding) as f:
            header = next(csv.reader(f, delimiter=delimiter), [])
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read the CSV header: {exc}") from exc
    names = [h.strip() for h in header]
    if names and not set(names) & KNOWN_COLUMNS:
        shown = ", ".join(repr(n[:30]) for n in names[:4])
        raise InvalidInput(
            f"{path}: the first line ({shown}) names no known column, so it looks like data, "
            "not a header. Add a header row, e.g. user_input,response,reference,"
            "retrieved_contexts (or question,answer,ground_truth,contexts)")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InvalidInput(f"{path}: the header names column(s) {', '.join(map(repr, dupes))} "
                           "more than once")
    return names


def _csv_rows(path: Path, encoding: str, delimiter: str, header: list[str]) -> Iterator[RawRow]:
    """CSV with a header row; list columns (contexts) hold JSON text, e.g. ``["a", "b"]``."""
    with open_text(path, encoding) as f:
        reader = csv.reader(f, delimiter=delimiter)
        try:
            next(reader)  # the header, checked by _csv_header
        except StopIteration:
            return
        index = 0
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield RawRow(index, fingerprint(str(exc).encode()), error=InvalidSample(
                    f"line {reader.line_num}: unreadable CSV ({exc})", row=index))
                index += 1
                continue
            if not any(c.strip() for c in cells):
                continue
            line_fp = fingerprint("\x1f".join(cells).encode("utf-8", "surrogateescape"))
            if len(cells) != len(header):
                yield RawRow(index, line_fp, error=InvalidSample(
                    f"line {reader.line_num}: {len(cells)} cells for {len(header)} columns",
                    row=index, expected="one cell per header column"))
            else:
                record = clean_tabular(dict(zip(header, cells, strict=True)))
                # CSV has no escapes: a surrogate in a cell is an undecodable byte.
                yield record_row(index, record, fp=line_fp, where=f"line {reader.line_num}",
                                 bytes_valid=False)
            index += 1


def _parquet_source(path: Path) -> Source:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingDependency("reading Parquet", "tables", "pyarrow") from exc
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid for a corrupt file
        raise InvalidInput(f"{path}: not a readable Parquet file ({exc})") from exc

    def rows() -> Iterator[RawRow]:
        index = 0
        for batch in pf.iter_batches(batch_size=_BATCH):
            for rec in batch.to_pylist():
                yield record_row(index, clean_tabular(rec))
                index += 1

    return Source(rows(), pf.metadata.num_rows, str(path))
