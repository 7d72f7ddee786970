"""OpenInference traces in OTLP/JSON (an ``ExportTraceServiceRequest`` per file, or JSON Lines
of them) as samples: one per trace, the row id being the trace id.

Spans of one trace may be spread over lines: they are grouped by trace id, holding only the
flattened attributes of each span (the documents' texts, not the raw JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    RerankerAttributes,
    SpanAttributes,
)

from ..errors import InvalidInput, InvalidSample
from .encoding import byte_lines
from .rows import RawRow, fingerprint, record_row

__all__ = ["read_traces", "trace_rows"]

_KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
_LLM = OpenInferenceSpanKindValues.LLM.value
_RETRIEVER = OpenInferenceSpanKindValues.RETRIEVER.value
_RERANKER = OpenInferenceSpanKindValues.RERANKER.value


@dataclass
class _Span:
    span_id: str
    parent: str
    start: int
    attrs: dict[str, Any]


@dataclass
class _Trace:
    spans: list[_Span] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _any_value(value: Any) -> Any:
    """An OTLP AnyValue as a Python value (arrays as lists)."""
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in value["arrayValue"].get("values", [])]
    return None


def _requests(path: Path) -> Iterator[tuple[int, Any]]:
    """Each request with its line number; JSON Lines are streamed one line at a time, a single
    pretty-printed document is read whole (its size bounds the memory)."""
    lines = byte_lines(path, "utf-8")
    first = next((ln for ln in lines if ln.strip()), None)
    if first is None:
        return
    try:
        yield 1, json.loads(first)
    except json.JSONDecodeError:
        yield 1, json.loads(path.read_bytes())  # one indented document
        return
    for lineno, line in enumerate(lines, start=2):
        if line.strip():
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                yield lineno, exc


def _collect(path: Path) -> tuple[dict[str, _Trace], list[str]]:
    traces: dict[str, _Trace] = {}
    bad: list[str] = []
    for lineno, request in _requests(path):
        if not isinstance(request, Mapping):
            bad.append(f"{path} line {lineno}: not an ExportTraceServiceRequest object")
            continue
        for rs in request.get("resourceSpans") or []:
            for ss in (rs or {}).get("scopeSpans") or []:
                for span in (ss or {}).get("spans") or []:
                    tid = str(span.get("traceId") or "")
                    if not tid:
                        bad.append(f"{path} line {lineno}: a span without a traceId")
                        continue
                    trace = traces.setdefault(tid, _Trace())
                    attrs: dict[str, Any] = {}
                    for kv in span.get("attributes") or []:
                        if isinstance(kv, Mapping) and "key" in kv:
                            attrs[str(kv["key"])] = _any_value(kv.get("value"))
                    trace.spans.append(_Span(str(span.get("spanId") or ""),
                                             str(span.get("parentSpanId") or ""),
                                             int(span.get("startTimeUnixNano") or 0), attrs))
    return traces, bad


def _text(trace: _Trace, tid: str, span: _Span, key: str) -> str | None:
    value = span.attrs.get(key)
    if value is None or isinstance(value, str):
        return value
    trace.problems.append(f"trace {tid}: span {span.span_id} attribute {key} is "
                          f"{type(value).__name__}, expected a string")
    return None


def _documents(span: _Span, prefix: str) -> list[tuple[str, str | None]]:
    docs: dict[int, dict[str, Any]] = {}
    for key, value in span.attrs.items():
        if key.startswith(prefix + "."):
            index, _, name = key[len(prefix) + 1:].partition(".")
            if index.isdigit():
                docs.setdefault(int(index), {})[name] = value
    out = []
    for i in sorted(docs):
        content = docs[i].get(DocumentAttributes.DOCUMENT_CONTENT)
        if isinstance(content, str):
            doc_id = docs[i].get(DocumentAttributes.DOCUMENT_ID)
            out.append((content, None if doc_id is None else str(doc_id)))
    return out


def _messages(span: _Span, prefix: str) -> list[dict[str, str]]:
    msgs = _documents_like(span, prefix)
    return [{"role": str(m.get(MessageAttributes.MESSAGE_ROLE, "")),
             "content": str(m.get(MessageAttributes.MESSAGE_CONTENT, ""))} for m in msgs]


def _documents_like(span: _Span, prefix: str) -> list[dict[str, Any]]:
    items: dict[int, dict[str, Any]] = {}
    for key, value in span.attrs.items():
        if key.startswith(prefix + "."):
            index, _, name = key[len(prefix) + 1:].partition(".")
            if index.isdigit():
                items.setdefault(int(index), {})[name] = value
    return [items[i] for i in sorted(items)]


def _record(tid: str, trace: _Trace, references: Mapping[str, Mapping[str, Any]]
            ) -> tuple[dict[str, Any] | None, str | None]:
    spans = sorted(trace.spans, key=lambda s: s.start)
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if not s.parent]
    for s in spans:
        if s.parent and s.parent not in ids:
            trace.problems.append(f"trace {tid}: span {s.span_id} has a missing parent "
                                  f"{s.parent}")
    root = roots[0] if roots else spans[0]
    llms = [s for s in spans if s.attrs.get(_KIND) == _LLM]
    llm = llms[-1] if llms else None
    question = _text(trace, tid, root, SpanAttributes.INPUT_VALUE)
    answer = _text(trace, tid, root, SpanAttributes.OUTPUT_VALUE)
    if llm is not None:
        if question is None:
            users = [m for m in _messages(llm, SpanAttributes.LLM_INPUT_MESSAGES)
                     if m["role"] == "user"]
            question = users[-1]["content"] if users else None
        if answer is None:
            outs = _messages(llm, SpanAttributes.LLM_OUTPUT_MESSAGES)
            answer = outs[-1]["content"] if outs else None
    if question is None:
        return None, f"trace {tid}: no question (input.value or an LLM user message)"
    if answer is None:
        return None, f"trace {tid}: no answer (output.value or an LLM output message)"
    before = [s for s in spans if llm is None or s.start <= llm.start]
    rerankers = [s for s in before if s.attrs.get(_KIND) == _RERANKER]
    if rerankers:
        docs = _documents(rerankers[-1], RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS)
    else:
        docs = [d for s in before if s.attrs.get(_KIND) == _RETRIEVER
                for d in _documents(s, SpanAttributes.RETRIEVAL_DOCUMENTS)]
    seen: set[tuple[str, str | None]] = set()
    unique = [d for d in docs if not (d in seen or seen.add(d))]  # type: ignore[func-returns-value]
    record: dict[str, Any] = {"id": tid, "user_input": question, "response": answer,
                              "retrieved_contexts": [t for t, _ in unique]}
    if unique and all(i is not None for _, i in unique):
        record["retrieved_context_ids"] = [i for _, i in unique]
    ref = _find_reference(root, question, references)
    if ref is None:
        return None, f"trace {tid}: no reference (none in --references matches its question or metadata id)"
    record["reference"] = ref["reference"]
    if ref.get("reference_context_ids") is not None:
        record["reference_context_ids"] = ref["reference_context_ids"]
    return record, None


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _find_reference(root: _Span, question: str, references: Mapping[str, Mapping[str, Any]]
                    ) -> Mapping[str, Any] | None:
    meta = root.attrs.get(SpanAttributes.METADATA)
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except json.JSONDecodeError:
            meta = None
    if isinstance(meta, Mapping) and meta.get("id") is not None:
        found = references.get("id:" + str(meta["id"]))
        if found is not None:
            return found
    return references.get("q:" + _norm(question))


def load_references(path: Path) -> dict[str, Mapping[str, Any]]:
    """GOLDEN rows keyed by ``id:ID`` and by the normalised question ``q:TEXT``."""
    out: dict[str, Mapping[str, Any]] = {}
    for lineno, line in enumerate(byte_lines(path, "utf-8"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path} line {lineno}: invalid JSON ({exc.msg})") from None
        ref = row.get("reference") if isinstance(row, Mapping) else None
        if not isinstance(ref, str):
            raise InvalidInput(f"{path} line {lineno}: needs a 'reference' string")
        if row.get("id") is not None:
            out["id:" + str(row["id"])] = row
        if isinstance(row.get("user_input"), str):
            out["q:" + _norm(row["user_input"])] = row
    return out


def trace_rows(path: Path, references: Mapping[str, Mapping[str, Any]] | None = None
               ) -> Iterator[RawRow]:
    """One row per trace, in order of first appearance; a broken trace is an error row naming
    the trace id and what is missing, a problem in a scored trace is logged in its metadata."""
    traces, bad = _collect(path)
    index = 0
    for problem in bad:
        yield RawRow(index, fingerprint(problem.encode()), error=InvalidSample(problem, row=index))
        index += 1
    for tid, trace in traces.items():
        record, error = _record(tid, trace, references or {})
        if record is None:
            yield RawRow(index, fingerprint(tid.encode()), error=InvalidSample(
                (error or "") + "".join("; " + p for p in trace.problems), row=index),
                record={"id": tid})
        else:
            if trace.problems:
                record["metadata"] = {"trace_problems": trace.problems}
            yield record_row(index, record)
        index += 1


def read_traces(path: str | Path, references: str | Path | None = None) -> list[RawRow]:
    """The rows of an OTLP/JSON export (see ``trace_rows``)."""
    refs = load_references(Path(references)) if references is not None else None
    return list(trace_rows(Path(path), refs))
