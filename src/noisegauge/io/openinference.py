"""OpenInference traces (OpenTelemetry spans with OpenInference attributes) as samples: one
per trace, the row id being the trace id.

Two entry points share one mapping (``rows_from_spans``):

- spans already in hand (``TraceSpan`` records, e.g. read from a Phoenix server), grouped by
  trace in memory;
- OTLP/JSON files (``open_traces``): an ``ExportTraceServiceRequest`` per file, or JSON Lines
  of them as the OpenTelemetry collector's file exporter writes them, or a directory of such
  files. Spans are streamed (ijson) and grouped by trace id in a temporary SQLite index, so
  memory holds one span at a time while reading and one trace at a time while scoring,
  however the spans of a trace are spread over lines and files.

The mapping: ``user_input`` is the root span's ``input.value`` (else the last user message of
the generating LLM span), ``response`` its ``output.value`` (else the LLM span's last output
message); ``retrieved_contexts`` are the documents the generator saw: the output documents
of the last RERANKER that started before the LLM span, else every RETRIEVER span's documents
in start order, deduplicated, with ``document.id`` as ``retrieved_context_ids``; the LLM
span's user and assistant turns before the question are the conversation's ``history``.

A problem that leaves the trace scorable (a span whose parent is in no file read, an
attribute of the wrong type) is kept in the sample's metadata as ``trace_problems`` and
logged; a trace without a question or an answer is an error row naming the trace and the
attribute. Nothing is dropped silently.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import pickle
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.metrics import NO_REFERENCE
from ..errors import InvalidInput, InvalidSample, MissingDependency
from ..samples import Sample
from .rows import RawRow, fingerprint

try:
    from openinference.semconv.trace import (
        DocumentAttributes,
        MessageAttributes,
        OpenInferenceSpanKindValues,
        RerankerAttributes,
        SpanAttributes,
    )
except ImportError as exc:  # pragma: no cover - the extra is installed in CI
    raise MissingDependency("reading OpenInference traces", "traces",
                            "openinference-semantic-conventions and opentelemetry-proto") from exc

__all__ = ["NO_REFERENCE", "References", "TraceSpan", "load_references", "open_traces",
           "read_otlp_spans", "rows_from_spans"]

log = logging.getLogger("noisegauge")


_KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
_LLM = OpenInferenceSpanKindValues.LLM.value
_RETRIEVER = OpenInferenceSpanKindValues.RETRIEVER.value
_RERANKER = OpenInferenceSpanKindValues.RERANKER.value
#: Keys of a trace's metadata that name its golden row (``--references``).
_METADATA_ID_KEYS = ("reference_id", "golden_id", "example_id", "id")


@dataclass(frozen=True)
class TraceSpan:
    """One span, as the mapping needs it.

    ``attributes`` are OpenInference attributes, flat (``retrieval.documents.0.document.id``,
    as OTLP carries them) or nested (``{"retrieval": {"documents": [{"document": ...}]}}``,
    as some clients return them): both read the same. ``kind`` is the OpenInference span
    kind (``LLM``, ``RETRIEVER``, ``RERANKER``, ...); None reads it from the attributes.
    ``parent_id`` is None (or "") for a root span. ``problems``: what a reader found wrong
    in the span (an unreadable attribute), reported with its trace.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str | None
    start_time_ns: int
    attributes: Mapping[str, Any]
    problems: tuple[str, ...] = ()


# --- references --------------------------------------------------------------------------------

def _norm(text: str) -> str:
    """Question text as references are joined by: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def _question_of(value: Any) -> str | None:
    """A golden row's question: text, or the last user turn of a list of messages."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for m in reversed(value):
            if isinstance(m, Mapping) and str(m.get("role", m.get("type"))) in ("user", "human"):
                content = m.get("content")
                return content if isinstance(content, str) else None
    return None


@dataclass
class References:
    """Golden rows (``reference`` and optional ``reference_context_ids``), found by an id in
    a trace's metadata or by the trace's question (whitespace and case normalised)."""

    by_id: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    by_question: dict[str, Mapping[str, Any]] = field(default_factory=dict)

    def add(self, row: Mapping[str, Any], where: str) -> None:
        ref = row.get("reference", row.get("ground_truth"))
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidInput(f"{where}: needs a 'reference' (the reference answer, a "
                               "non-empty string)")
        if row.get("id") is not None:
            key = str(row["id"])
            if key in self.by_id:
                raise InvalidInput(f"{where}: id {key!r} is used by an earlier row too; ids "
                                   "must be unique")
            self.by_id[key] = row
        question = _question_of(row.get("user_input", row.get("question")))
        if question is not None and question.strip():
            key = _norm(question)
            other = self.by_question.get(key)
            if other is not None and other.get("reference", other.get("ground_truth")) != ref:
                raise InvalidInput(f"{where}: the question {question[:60]!r} is in an earlier "
                                   "row with a different reference, so a trace asking it "
                                   "matches two; give each row an id and put it in the "
                                   "traces' metadata, or keep one row")
            self.by_question[key] = row
        elif row.get("id") is None:
            raise InvalidInput(f"{where}: needs a 'user_input' (the question) or an 'id' to "
                               "join the traces by")

    def find(self, question: str, ids: Sequence[str]) -> Mapping[str, Any] | None:
        for key in ids:
            if key in self.by_id:
                return self.by_id[key]
        return self.by_question.get(_norm(question))


def load_references(path: str | Path) -> References:
    """A golden JSONL file (``user_input``, ``reference``, optional ``id`` and
    ``reference_context_ids``) as ``References``; a bad line is refused with its number."""
    from .results import iter_objects

    refs = References()
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"references file not found: {p}")
    for lineno, row in iter_objects(p, "expected golden rows with user_input and reference"):
        refs.add(row, f"{p} line {lineno}")
    return refs


# --- attributes ---------------------------------------------------------------------------------

def _flatten(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Nested attributes as OTLP's dotted keys (a list of objects is indexed; a list of plain
    values stays a list, as an OTLP array attribute)."""
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [(str(k), v) for k, v in attrs.items()]
    while stack:
        key, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((f"{key}.{k}", v) for k, v in value.items())
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            stack.extend((f"{key}.{i}", v) for i, v in enumerate(value))
        else:
            out[key] = value
    return out


def _items(attrs: Mapping[str, Any], prefix: str) -> list[tuple[int, dict[str, Any]]]:
    """The indexed objects under ``prefix`` (``prefix.N.name``), in index order."""
    found: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attrs.items():
        if key.startswith(start):
            index, _, name = key[len(start):].partition(".")
            if index.isdigit() and name:
                found.setdefault(int(index), {})[name] = value
    return sorted(found.items())


@dataclass
class _Trace:
    trace_id: str
    spans: list[TraceSpan]
    problems: list[str] = field(default_factory=list)

    def text(self, span: TraceSpan, attrs: Mapping[str, Any], key: str) -> str | None:
        value = attrs.get(key)
        if value is None or isinstance(value, str):
            return value
        self.problems.append(f"span {span.span_id} ({span.name}): attribute {key} has type "
                             f"{type(value).__name__}, expected a string")
        return None

    def documents(self, span: TraceSpan, attrs: Mapping[str, Any], prefix: str
                  ) -> list[tuple[str | None, str]]:
        out: list[tuple[str | None, str]] = []
        for i, doc in _items(attrs, prefix):
            content = doc.get(DocumentAttributes.DOCUMENT_CONTENT)
            if not isinstance(content, str):
                self.problems.append(
                    f"span {span.span_id} ({span.name}): {prefix}.{i} has "
                    + ("no document.content" if content is None else
                       f"a document.content of type {type(content).__name__}, expected a string")
                    + "; that document is left out")
                continue
            doc_id = doc.get(DocumentAttributes.DOCUMENT_ID)
            if doc_id is not None and not isinstance(doc_id, (str, int)):
                self.problems.append(f"span {span.span_id} ({span.name}): {prefix}.{i}'s "
                                     f"document.id has type {type(doc_id).__name__}; ignored")
                doc_id = None
            out.append((None if doc_id is None else str(doc_id), content))
        return out

    def messages(self, span: TraceSpan, attrs: Mapping[str, Any], prefix: str
                 ) -> list[dict[str, str]]:
        out = []
        for i, msg in _items(attrs, prefix):
            role = msg.get(MessageAttributes.MESSAGE_ROLE)
            content = msg.get(MessageAttributes.MESSAGE_CONTENT)
            if not isinstance(role, str) or not isinstance(content, str):
                self.problems.append(f"span {span.span_id} ({span.name}): {prefix}.{i} needs a "
                                     "string message.role and message.content; left out")
                continue
            out.append({"role": role, "content": content})
        return out


def _kind(span: TraceSpan, attrs: Mapping[str, Any]) -> str | None:
    kind = span.kind if span.kind is not None else attrs.get(_KIND)
    return kind.upper() if isinstance(kind, str) else None


def _metadata_ids(attrs: Mapping[str, Any]) -> list[str]:
    """Ids a span's ``metadata`` (a JSON object as text, or flattened) names its golden row by."""
    meta: Any = attrs.get(SpanAttributes.METADATA)
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    if not isinstance(meta, Mapping):
        prefix = SpanAttributes.METADATA + "."
        meta = {k[len(prefix):]: v for k, v in attrs.items() if k.startswith(prefix)}
    return [str(meta[k]) for k in _METADATA_ID_KEYS
            if isinstance(meta.get(k), (str, int)) and not isinstance(meta.get(k), bool)]


def _record(trace: _Trace, references: References | None) -> tuple[dict[str, Any] | None, str]:
    """The trace's record, or None and what is missing."""
    tid = trace.trace_id
    spans = sorted(trace.spans, key=lambda s: (s.start_time_ns, s.span_id))
    flat = [_flatten(s.attributes) for s in spans]
    for s in spans:
        trace.problems.extend(f"span {s.span_id} ({s.name}): {p}" for p in s.problems)
    ids = {s.span_id for s in spans}
    roots = [i for i, s in enumerate(spans) if not s.parent_id]
    for s in spans:
        if s.parent_id and s.parent_id not in ids:
            trace.problems.append(f"span {s.span_id} ({s.name}): its parent {s.parent_id} is "
                                  "in no file read (an orphan: another file may hold it)")
    if not roots:
        trace.problems.append("no root span (every span has a parent): the earliest span "
                              "stands in for it")
    elif len(roots) > 1:
        trace.problems.append(f"{len(roots)} root spans: the earliest is read as the root")
    r = roots[0] if roots else 0
    root, rattrs = spans[r], flat[r]
    kinds = [_kind(s, a) for s, a in zip(spans, flat, strict=True)]
    llm = next((i for i in reversed(range(len(spans))) if kinds[i] == _LLM), None)

    question = trace.text(root, rattrs, SpanAttributes.INPUT_VALUE)
    answer = trace.text(root, rattrs, SpanAttributes.OUTPUT_VALUE)
    history: list[dict[str, str]] = []
    if llm is not None:
        inputs = trace.messages(spans[llm], flat[llm], SpanAttributes.LLM_INPUT_MESSAGES)
        last_user = next((k for k in reversed(range(len(inputs)))
                          if inputs[k]["role"] == "user"), None)
        if question is None and last_user is not None:
            question = inputs[last_user]["content"]
        if last_user is not None:  # the turns before the question, without the system prompt
            history = [m for m in inputs[:last_user] if m["role"] in ("user", "assistant")]
        if answer is None:
            outputs = trace.messages(spans[llm], flat[llm], SpanAttributes.LLM_OUTPUT_MESSAGES)
            answer = outputs[-1]["content"] if outputs else None
    if question is None or not question.strip():
        return None, (f"trace {tid}: no question: the root span {root.span_id} has no "
                      f"{SpanAttributes.INPUT_VALUE} and no LLM span has a user message in "
                      f"{SpanAttributes.LLM_INPUT_MESSAGES}")
    if answer is None:
        return None, (f"trace {tid}: no answer: the root span {root.span_id} has no "
                      f"{SpanAttributes.OUTPUT_VALUE} and no LLM span has "
                      f"{SpanAttributes.LLM_OUTPUT_MESSAGES}")

    before = [i for i in range(len(spans))
              if llm is None or spans[i].start_time_ns <= spans[llm].start_time_ns]
    rerankers = [i for i in before if kinds[i] == _RERANKER]
    if rerankers:
        i = rerankers[-1]
        docs = trace.documents(spans[i], flat[i], RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS)
    else:
        docs = [d for i in before if kinds[i] == _RETRIEVER
                for d in trace.documents(spans[i], flat[i], SpanAttributes.RETRIEVAL_DOCUMENTS)]
    unique = list(dict.fromkeys(docs))  # two retrievers returning one document: once
    record: dict[str, Any] = {"id": tid, "user_input": question, "response": answer,
                              "retrieved_contexts": [text for _, text in unique]}
    if any(doc_id is not None for doc_id, _ in unique):
        record["retrieved_context_ids"] = [doc_id for doc_id, _ in unique]
    if history:
        record["history"] = history
    ref = None
    if references is not None:
        ref = references.find(question, [k for a in flat for k in _metadata_ids(a)])
    if ref is not None:
        record["reference"] = ref.get("reference", ref.get("ground_truth"))
        if ref.get("reference_context_ids") is not None:
            record["reference_context_ids"] = ref["reference_context_ids"]
    meta: dict[str, Any] = {}
    if trace.problems:
        meta["trace_problems"] = list(trace.problems)
    if meta:
        record["metadata"] = meta
    return record, ""


def _trace_row(index: int, trace: _Trace, references: References | None) -> RawRow:
    record, missing = _record(trace, references)
    problems = trace.problems
    fp = fingerprint(pickle.dumps((trace.trace_id, record or missing, problems)))
    if record is None:
        message = missing + "".join(f"; {p}" for p in problems)
        return RawRow(index, fp, error=InvalidSample(message, row=index),
                      record={"id": trace.trace_id})
    if problems:
        log.warning("trace %s: %s", trace.trace_id, "; ".join(problems))
    try:
        sample = Sample.from_record(record, row=index, allow_no_reference=True)
    except InvalidSample as exc:
        return RawRow(index, fp, error=InvalidSample(f"trace {trace.trace_id}: {exc}",
                                                     row=index), record={"id": trace.trace_id})
    return RawRow(index, fp, sample=sample)


def rows_from_spans(spans: Iterable[TraceSpan], references: References | None = None,
                    ) -> Iterator[RawRow]:
    """One row per trace, in order of the trace's first span: a ``Sample`` (its id the trace
    id; without a matching reference, ``reference`` is None and the metrics that need one
    are undefined, "no reference"), or an error naming the trace and the missing attribute.

    The spans are grouped by trace in memory; ``open_traces`` reads files in bounded memory.
    """
    traces: dict[str, list[TraceSpan]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    for index, (tid, group) in enumerate(traces.items()):
        yield _trace_row(index, _Trace(tid, group), references)


# --- OTLP/JSON files --------------------------------------------------------------------------

_SPANS_PREFIX = "resourceSpans.item.scopeSpans.item.spans.item"
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def _otlp_id(value: Any, nbytes: int) -> str | None:
    """An OTLP/JSON id as lower-case hex: OTLP/JSON writes hex, the protobuf JSON mapping
    (``MessageToJson``) base64; None when it is neither."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        return None
    if len(value) == 2 * nbytes:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == nbytes else None


def _any_value(value: Any) -> Any:
    """A protobuf ``AnyValue`` as a Python value."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "int_value":
        return int(value.int_value)
    return getattr(value, which)


def _span_of(raw: Any, where: str) -> tuple[TraceSpan | None, str | None]:
    """A span object of an OTLP/JSON export (parsed by protobuf's JSON mapping, attribute by
    attribute when the whole fails), or None and why."""
    from google.protobuf import json_format
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    if not isinstance(raw, Mapping):
        return None, f"{where}: a span that is not an object"
    ids: dict[str, str] = {}
    for key, nbytes in _ID_BYTES.items():
        hexid = _otlp_id(raw.get(key), nbytes)
        if hexid is None:
            return None, (f"{where}: span {raw.get('spanId')!r} has an unreadable {key} "
                          f"{raw.get(key)!r} (expected {nbytes} bytes as hex or base64)")
        ids[key] = hexid
    if not ids["traceId"]:
        return None, f"{where}: span {raw.get('spanId')!r} has no traceId"
    rest = {k: v for k, v in raw.items() if k not in _ID_BYTES and k != "attributes"}
    problems: list[str] = []
    span = Span()
    try:
        json_format.ParseDict(rest, span, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        problems.append(f"unreadable span fields ({exc}); read without them")
        span = Span(name=str(raw.get("name") or ""))
    attrs: dict[str, Any] = {}
    given = raw.get("attributes") or []
    if not isinstance(given, list):
        problems.append(f"attributes has type {type(given).__name__}, expected a list; ignored")
        given = []
    for kv in given:
        parsed = KeyValue()
        try:
            json_format.ParseDict(kv, parsed, ignore_unknown_fields=True)
        except (json_format.ParseError, TypeError, AttributeError) as exc:
            name = kv.get("key") if isinstance(kv, Mapping) else None
            problems.append(f"attribute {name!r} is unreadable ({str(exc)[:120]}); ignored")
            continue
        attrs[parsed.key] = _any_value(parsed.value)
    return TraceSpan(ids["traceId"], ids["spanId"], ids["parentSpanId"] or None, span.name,
                     None, int(span.start_time_unix_nano), attrs, tuple(problems)), None


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise InvalidInput(f"traces not found: {path}")
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_file()
                   and p.suffix.lower() in (".json", ".jsonl", ".ndjson"))
    if not found:
        raise InvalidInput(f"{path}: a directory with no .json or .jsonl trace exports")
    return found


def _first_line_is_json(path: Path) -> bool:
    """Whether the file is JSON Lines (its first non-blank line a whole JSON value), read
    without holding more than that line."""
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                try:
                    json.loads(line)
                    return True
                except ValueError:
                    return False
    return True


def read_otlp_spans(path: Path, problems: list[str]) -> Iterator[TraceSpan]:
    """The spans of one OTLP/JSON file, streamed; problems without a trace (an unreadable
    line, a span without a trace id) are appended to ``problems``, naming file and line."""
    try:
        import ijson
    except ImportError as exc:
        raise MissingDependency("reading OTLP/JSON traces", "traces", "ijson") from exc

    def spans_of(stream: Any, where: str) -> Iterator[TraceSpan]:
        n = 0
        try:
            for raw in ijson.items(stream, _SPANS_PREFIX, use_float=True):
                n += 1
                span, problem = _span_of(raw, f"{where}, span {n}")
                if span is not None:
                    yield span
                else:
                    problems.append(problem or f"{where}: unreadable span {n}")
        except ijson.JSONError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            problems.append(f"{where}: not valid JSON after {n} spans ({first}); the rest of it "
                            "is not read, so traces with spans there may be incomplete")

    if _first_line_is_json(path):
        with path.open("rb") as f:
            for lineno, line in enumerate(f, start=1):
                if line.strip():
                    yield from spans_of(line, f"{path} line {lineno}")
    else:
        with path.open("rb") as f:
            yield from spans_of(f, str(path))


class _SpanIndex:
    """Spans in a temporary SQLite file, by trace id and reading order: a trace's spans come
    back together wherever they were in the input."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="noisegauge-traces-")
        self.db = sqlite3.connect(Path(self._dir.name) / "spans.sqlite3")
        self.db.execute("CREATE TABLE spans (seq INTEGER PRIMARY KEY, trace TEXT, span BLOB)")
        self.n = 0

    def add(self, spans: Iterable[TraceSpan]) -> None:
        batch: list[tuple[int, str, bytes]] = []
        for span in spans:
            batch.append((self.n, span.trace_id, pickle.dumps(span, pickle.HIGHEST_PROTOCOL)))
            self.n += 1
            if len(batch) >= 256:
                self.db.executemany("INSERT INTO spans VALUES (?, ?, ?)", batch)
                batch.clear()
        self.db.executemany("INSERT INTO spans VALUES (?, ?, ?)", batch)

    def traces(self) -> list[str]:
        self.db.execute("CREATE INDEX IF NOT EXISTS by_trace ON spans (trace, seq)")
        return [t for (t,) in self.db.execute(
            "SELECT trace FROM spans GROUP BY trace ORDER BY MIN(seq)")]

    def spans(self, trace: str) -> list[TraceSpan]:
        return [pickle.loads(b) for (b,) in self.db.execute(
            "SELECT span FROM spans WHERE trace = ? ORDER BY seq", (trace,))]

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()


@dataclass
class OpenTraces:
    """An indexed export: ``total`` rows (problems without a trace first, then one per
    trace); iterate once."""

    total: int
    _index: _SpanIndex
    _problems: list[str]
    _traces: list[str]
    _references: References | None

    def __iter__(self) -> Iterator[RawRow]:
        try:
            for index, problem in enumerate(self._problems):
                yield RawRow(index, fingerprint(problem.encode("utf-8", "replace")),
                             error=InvalidSample(problem, row=index))
            start = len(self._problems)
            for k, tid in enumerate(self._traces):
                yield _trace_row(start + k, _Trace(tid, self._index.spans(tid)),
                                 self._references)
        finally:
            self._index.close()


def open_traces(path: str | Path, references: References | str | Path | None = None
                ) -> OpenTraces:
    """Index the OTLP/JSON export at ``path`` (a file or a directory of them) and return its
    rows (see ``rows_from_spans``). The reading pass happens here, so an unreadable export
    fails before any scoring."""
    refs = (load_references(references) if isinstance(references, (str, Path))
            else references)
    index = _SpanIndex()
    problems: list[str] = []
    try:
        for file in _files(Path(path)):
            index.add(read_otlp_spans(file, problems))
        index.db.commit()
        traces = index.traces()
    except BaseException:
        index.close()
        raise
    if not traces and not problems:
        index.close()
        raise InvalidInput(f"{path}: no spans found (expected an OTLP/JSON "
                           '{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]} per file '
                           "or per line)")
    return OpenTraces(len(problems) + len(traces), index, problems, traces, refs)
