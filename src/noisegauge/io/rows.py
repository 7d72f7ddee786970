"""One input row as read from any source, before it becomes a ``Sample``.

Readers never raise for a bad row: they yield a ``RawRow`` carrying an ``InvalidSample``
that names the row and field, so the run reports it and goes on.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidSample
from ..samples import FIELD_ALIASES, Sample

__all__ = ["KNOWN_COLUMNS", "MAX_DEPTH", "RawRow", "clean_tabular", "find_bad_text", "fingerprint", "too_deep_row", "input_record",
           "record_row", "sample_record", "sample_row", "too_deep"]

#: Deepest nesting of lists and objects accepted in a row (a real row needs about 4).
MAX_DEPTH = 64

#: Fields whose value is a list or object; tabular sources (CSV) carry them as JSON text.
JSON_FIELDS = frozenset(FIELD_ALIASES["retrieved_contexts"]) | {
    "response_claims", "gt_answer_claims", "answer2response", "response2answer",
    "retrieved2response", "retrieved2answer", "metadata", "chunk_ids", "ground_truths",
    "retrieved_context_ids", "reference_context_ids",
    "distractors", "draft",  # a golden row's own traps and how it was drafted (testset)
    "history"}  # the turns before the question: [{"role", "content"}]
#: Fields that may hold a conversation (a list of messages) instead of text: a table cell
#: is decoded only when it is a JSON list of objects, so a question that merely starts
#: with "[" stays a question.
CONVERSATION_FIELDS = frozenset(FIELD_ALIASES["user_input"])

_ID_KEYS = frozenset(FIELD_ALIASES["id"])

#: Column names a table of samples (or of distractor chunks) may have; a CSV whose first
#: line names none of them has no header.
KNOWN_COLUMNS = frozenset(n for names in FIELD_ALIASES.values() for n in names) | JSON_FIELDS | {
    "text", "content", "page_content", "doc_id", "status", "reason", "error_kind"}


@dataclass(frozen=True)
class RawRow:
    """Row ``index`` (0-based input position): a record, a ready ``Sample``, or an error.

    ``fingerprint`` identifies the row's content, so a resumed run reuses a stored result
    only for a row that did not change.
    """

    index: int
    fingerprint: str
    record: Mapping[str, Any] | None = None
    sample: Sample | None = None
    error: InvalidSample | None = None
    #: The decoded value when it was not an object (a bare string line, say), for readers
    #: such as the distractor pool that accept those.
    value: Any = None


def fingerprint(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists/objects deeper than ``limit`` (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _record_fingerprint(record: Any) -> str:
    # ensure_ascii keeps lone surrogates (undecodable bytes) hashable as escapes.
    return fingerprint(json.dumps(record, sort_keys=True, default=str).encode("ascii"))


def find_bad_text(value: Any, path: str = "") -> str | None:
    """The first field holding text that cannot be encoded as UTF-8: a surrogate, from bytes
    that were not UTF-8 (decoded with surrogateescape) or a lone surrogate escape."""
    found = _bad_text(value, path)
    return found[0] if found is not None else None


def _bad_text(value: Any, path: str = "") -> tuple[str, str] | None:
    """``find_bad_text``'s field and the text found there."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "(row)", value
        return None
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _bad_text(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for j, v in enumerate(value):
            found = _bad_text(v, f"{path}[{j}]")
            if found:
                return found
    return None


def _bad_text_error(field: str, text: str, index: int, prefix: str,
                    bytes_valid: bool) -> InvalidSample:
    """Undecodable bytes, or a lone surrogate (a ``\\ud800`` escape in valid JSON, a Python
    string holding one): each named for what it is, with its fix."""
    k, char = next((k, c) for k, c in enumerate(text) if "\ud800" <= c <= "\udfff")
    # surrogateescape turns each undecodable byte into U+DC80..U+DCFF, and only those.
    if not bytes_valid and "\udc80" <= char <= "\udcff":
        return InvalidSample(f"{prefix}contains bytes that are not valid UTF-8", row=index,
                             field=field, expected="UTF-8 text")
    return InvalidSample(
        f"{prefix}holds a lone surrogate (\\u{ord(char):04x} at character {k + 1}), which is not "
        "encodable text", row=index, field=field,
        expected="text: a \\u escape of a surrogate needs its pair (e.g. \\ud83d\\ude00 for "
                 "one emoji); remove it, or write the character itself")


def too_deep_row(index: int, fp: str, where: str = "") -> RawRow:
    """The error row of a record nested deeper than ``MAX_DEPTH`` (one message whether the
    JSON parser gave up on it or the record was checked after parsing: which of the two
    happens depends on the Python version's recursion limits)."""
    prefix = f"{where}: " if where else ""
    return RawRow(index, fp, error=InvalidSample(
        f"{prefix}nested more than {MAX_DEPTH} levels deep", row=index,
        expected="an object with user_input, response, reference, retrieved_contexts"))


def record_row(index: int, record: Any, *, fp: str | None = None, where: str = "",
               bytes_valid: bool = True) -> RawRow:
    """Check the generic shape of a decoded record (an object, encodable text).

    ``bytes_valid``: the record was read from valid UTF-8 (or from objects), so a surrogate
    in it is a lone surrogate, not an undecodable byte."""
    prefix = f"{where}: " if where else ""
    if too_deep(record):
        return too_deep_row(index, fp or fingerprint(repr(type(record)).encode()), where)
    digest = fp or _record_fingerprint(record)
    if not isinstance(record, Mapping):
        return RawRow(index, digest, error=InvalidSample(
            f"{prefix}a record must be an object, got {type(record).__name__}", row=index,
            expected="an object with user_input, response, reference, retrieved_contexts"),
            value=record)
    bad = _bad_text(record)
    if bad is not None:
        return RawRow(index, digest, error=_bad_text_error(*bad, index, prefix, bytes_valid))
    if record.get("status") == "error":  # e.g. a failed generation in stress's samples.jsonl
        reason = record.get("reason") or "no reason given"
        return RawRow(index, digest, error=InvalidSample(
            f"{prefix}the input marks this row as failed: {reason}", row=index, field="status"),
            record=record)  # kept for its id
    return RawRow(index, digest, record=record)


def sample_record(sample: Sample) -> dict[str, Any]:
    """``Sample.to_record()`` plus ``chunk_ids`` when the chunks have ids (RAGChecker's
    ``doc_id``): what the journal keeps and the RAGChecker writer reads."""
    data: dict[str, Any] = sample.to_record()
    if sample.chunk_ids is not None:
        data["chunk_ids"] = list(sample.chunk_ids)
    return data


def input_record(sample: Sample) -> dict[str, Any]:
    """The texts a result row was computed from (``sample_record`` without the id, which the
    row has), so the row reads, and reports, without the input file."""
    data = sample_record(sample)
    data.pop("id", None)
    return data


def sample_row(index: int, sample: Sample) -> RawRow:
    data = sample_record(sample)
    if sample.precomputed is not None:
        data["precomputed"] = sample.precomputed.to_dict()
    return RawRow(index, _record_fingerprint(data), sample=sample)


def _clean_value(value: Any) -> Any:
    """numpy/pandas/pyarrow values to plain Python: arrays to lists, NaN/NA to None."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Mapping):
        return {k: _clean_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_value(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return _clean_value(tolist())
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def clean_tabular(record: Mapping[str, Any]) -> dict[str, Any]:
    """A row of a table as a plain record; JSON text in list-typed columns is decoded."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in _ID_KEYS and isinstance(value, float) and math.isnan(value):
            out[str(key)] = value  # kept: a NaN id is refused with its row, not dropped
            continue
        value = _clean_value(value)
        if key in JSON_FIELDS and isinstance(value, str):
            text = value.strip()
            if text[:1] in ("[", "{"):
                try:
                    value = json.loads(text)
                except json.JSONDecodeError:
                    pass  # left as text: Sample validation names the field and the fix
            elif not text:
                value = None
        elif key in CONVERSATION_FIELDS and isinstance(value, str) and value.lstrip()[:1] == "[":
            try:
                decoded = json.loads(value)
            except json.JSONDecodeError:
                decoded = None
            if isinstance(decoded, list) and decoded and all(isinstance(m, Mapping)
                                                             for m in decoded):
                value = decoded
        out[str(key)] = value
    return out
