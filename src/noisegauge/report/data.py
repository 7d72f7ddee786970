"""From result rows (the ``score --out`` JSONL shape) to the report's view model.

The view model is what the page needs and nothing else: per sample the texts, each claim's
bucket and character span in the response, the chunks with their relevance and the spans
that support, contradict or leaked a claim; per run the summaries, the bucket totals and the
diagnosis. Chunk texts are stored once in a shared table (runs retrieve the same documents
again and again), and claims are compact lists, so a 1,000-sample report stays small.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import catalogue
from ..engine.summary import MetricSummary, summarize
from ..errors import InvalidInput, InvalidSample
from ..io.results import history_turns, iter_results, read_results
from ..judges.base import Usage
from ..leaks.aggregate import Leaks, tally
from .align import best_unit, locate
from .diagnosis import Point, Verdict, diagnose

__all__ = ["BUCKETS", "RunInfo", "Model", "ChunkTable", "iter_results", "read_results",
           "fill_inputs", "sample_view", "build_model"]

#: bucket -> (short code used in the page data, label)
BUCKETS: dict[str, tuple[str, str]] = {
    "grounded": ("g", "grounded"),
    "self_knowledge": ("s", "self-knowledge"),
    "relevant_noise": ("rn", "relevant noise"),
    "irrelevant_noise": ("in", "irrelevant noise"),
    "hallucination": ("h", "hallucination"),
    "misattributed": ("m", "misattributed"),
}
#: Sources listed in the report's Sources tab (the rest are counted in its headline).
SOURCES_SHOWN = 20
#: A chunk's sentence must hold this share of a claim's words to be marked as its evidence.
EVIDENCE_RECALL = 0.3


@dataclass(frozen=True)
class RunInfo:
    """What the report says about the run itself."""

    title: str
    source: str | None = None
    judges: tuple[Mapping[str, Any], ...] = ()
    scored_at: str | None = None
    generated_at: str | None = None


def fill_inputs(rows: Sequence[dict[str, Any]], input_path: str | Path) -> int:
    """Give rows without ``input`` the texts of the original input file (row ``index``, else
    position). Returns how many rows were filled. For results written before rows carried
    their input."""
    from ..io.readers import open_source  # the readers pull in more than a report needs
    from ..io.rows import input_record
    from ..samples import Sample

    samples: dict[int, Sample] = {}
    for raw in open_source(Path(input_path)):
        if raw.sample is not None:
            samples[raw.index] = raw.sample
        elif raw.record is not None and raw.error is None:
            try:
                samples[raw.index] = Sample.from_record(raw.record, row=raw.index)
            except InvalidSample:
                continue  # the results hold this row as an error row anyway
    filled = 0
    for pos, row in enumerate(rows):
        idx = row.get("index", pos)
        sample = samples.get(idx) if isinstance(idx, int) else None
        if "input" not in row and sample is not None:
            if row.get("id") is not None and sample.id is not None and str(sample.id) != str(row["id"]):
                raise InvalidInput(f"row {idx}: id {row['id']!r} in the results but {sample.id!r} in "
                                   f"{input_path}; pass the input file these results came from")
            row["input"] = input_record(sample)
            filled += 1
    return filled


class ChunkTable:
    """Chunk texts stored once; samples refer to them by position."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}

    def add(self, text: str) -> int:
        k = self._index.get(text)
        if k is None:
            k = self._index[text] = len(self.texts)
            self.texts.append(text)
        return k


def _ints(value: Any) -> list[int]:
    return [int(v) for v in value] if isinstance(value, list) else []


def _conversation_text(inp: Mapping[str, Any]) -> str:
    """The question and the earlier turns of a chat's row (``history``: messages with a
    ``content``), which a standalone claim may borrow words from; empty for a single turn."""
    history = inp.get("history")
    if not isinstance(history, list) or not history:
        return ""
    turns = [str(t.get("content", "")) if isinstance(t, Mapping) else str(t) for t in history]
    return "\n".join([*turns, str(inp.get("user_input") or "")])


def _claim_view(claim: Mapping[str, Any], response: str, chunks: Sequence[str],
                context: str = "") -> dict[str, Any]:
    text = str(claim.get("text", ""))
    bucket = str(claim.get("bucket", ""))
    entailed, contradicted = _ints(claim.get("entailed_by")), _ints(claim.get("contradicted_by"))
    mis = _ints(claim.get("misattributed_from"))
    view: dict[str, Any] = {"t": text, "b": BUCKETS.get(bucket, ("", ""))[0] or bucket,
                            "ok": bool(claim.get("correct"))}
    if entailed:
        view["e"] = entailed
    if contradicted:
        view["x"] = contradicted
    if claim.get("leaked_from"):
        view["l"] = _ints(claim.get("leaked_from"))
    if mis:
        view["m"] = mis
        view["b"] = BUCKETS["misattributed"][0]
    if claim.get("closest_chunk") is not None:
        view["cl"] = int(claim["closest_chunk"])
    span = locate(text, response, context) if response else None
    if span is not None:
        view["sp"] = list(span)
    evidence: list[list[Any]] = []
    for kind, idx in (("e", entailed), ("x", contradicted)):
        for j in idx:
            if 0 <= j < len(chunks):
                unit = best_unit(text, chunks[j], EVIDENCE_RECALL)
                if unit is not None:
                    evidence.append([j, unit[0], unit[1], kind])
    for m in claim.get("misattributed_spans") or []:
        if isinstance(m, Mapping) and isinstance(m.get("chunk"), int):
            evidence.append([m["chunk"], int(m["start"]), int(m["end"]), "m",
                             str(m.get("detail", ""))])
    if evidence:
        view["ev"] = evidence
    return view


def _metric_value(row: Mapping[str, Any], name: str) -> float | None:
    for key in ("metrics", "diagnostics"):
        block = row.get(key) or {}
        if name in block:
            v = block[name]
            return None if v is None else float(v)
    return None


def sample_view(row: Mapping[str, Any], position: int, names: Sequence[str],
                table: ChunkTable) -> dict[str, Any]:
    """One sample as the page script reads it (short keys; absent means empty)."""
    raw = row.get("input")
    inp: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    chunks = [str(c) for c in (inp.get("retrieved_contexts") or [])]
    response = str(inp.get("response") or "")
    rel = {int(c["index"]): c.get("relevant") for c in row.get("chunks") or []
           if isinstance(c, Mapping) and isinstance(c.get("index"), int)}
    ids = inp.get("chunk_ids") or []
    view: dict[str, Any] = {
        "n": row.get("index", position), "id": None if row.get("id") is None else str(row["id"]),
        "s": row.get("status"), "m": [_metric_value(row, n) for n in names],
    }
    if row.get("reason"):
        view["w"] = str(row["reason"])
    if row.get("undefined"):
        view["u"] = {str(k): str(v) for k, v in row["undefined"].items() if v}
    if inp:
        view.update(q=str(inp.get("user_input") or ""), a=response,
                    r=str(inp.get("reference") or ""))
        turns = history_turns(inp)
        if turns:  # the conversation before the question: [[role, text], ...], oldest first
            view["hi"] = [list(t) for t in turns]
        view["k"] = [[table.add(text), None if rel.get(j) is None else int(bool(rel[j])),
                      ids[j] if j < len(ids) else None] for j, text in enumerate(chunks)]
        meta = inp.get("metadata")
        if isinstance(meta, Mapping) and meta:
            view["md"] = {str(k): v if isinstance(v, (str, int, float, bool)) or v is None
                          else json.dumps(v, ensure_ascii=False) for k, v in meta.items()}
    context = _conversation_text(inp)
    view["c"] = [_claim_view(c, response, chunks, context)
                 for c in row.get("response_claims") or [] if isinstance(c, Mapping)]
    view["g"] = [[str(c.get("text", "")), int(bool(c.get("in_response"))),
                  _ints(c.get("entailed_by"))]
                 for c in row.get("reference_claims") or [] if isinstance(c, Mapping)]
    for key in ("level", "repeat", "item_id"):
        if key in row:
            view[key] = row[key]
    return view


@dataclass
class Model:
    """Everything the HTML renderer needs."""

    info: RunInfo
    names: tuple[str, ...]
    summaries: dict[str, MetricSummary]
    status: dict[str, int]
    usage: Usage
    buckets: dict[str, int]
    verdict: Verdict
    points: list[Point]
    samples: list[dict[str, Any]]
    chunks: ChunkTable
    extra: dict[str, Any] = field(default_factory=dict)  # compare / stress parts
    leaks: Leaks | None = None  # the Sources tab


def metric_names(rows: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The family in its usual order, then any extra metric columns, then diagnostics."""
    family, known = catalogue.family(), catalogue.diagnostics()
    extra: dict[str, None] = {}
    diag: dict[str, None] = {}
    for row in rows:
        for name in row.get("metrics") or {}:
            if name not in family:
                extra.setdefault(name)
        for name in row.get("diagnostics") or {}:
            diag.setdefault(name)
    return (*family, *extra, *(d for d in known if d in diag),
            *(d for d in diag if d not in known))


def _point(row: Mapping[str, Any], position: int) -> Point | None:
    if row.get("status") != "ok":
        return None
    cp = _metric_value(row, "context_precision")
    rel = _metric_value(row, "noise_sensitivity_relevant")
    irr = _metric_value(row, "noise_sensitivity_irrelevant")
    if cp is None or rel is None or irr is None:
        return None
    mis = sum(1 for c in row.get("response_claims") or [] if c.get("misattributed_from"))
    index = row.get("index", position)
    return Point(int(index), str(row.get("id") if row.get("id") is not None else f"row {index}"),
                 cp, rel, irr, mis)


def build_model(rows: Sequence[Mapping[str, Any]], info: RunInfo) -> Model:
    names = metric_names(rows)
    status = {"ok": 0, "undefined": 0, "error": 0}
    usage = Usage()
    buckets = dict.fromkeys(BUCKETS, 0)
    table = ChunkTable()
    samples: list[dict[str, Any]] = []
    points: list[Point] = []
    for pos, row in enumerate(rows):
        status[str(row.get("status"))] = status.get(str(row.get("status")), 0) + 1
        usage.add(Usage.from_dict(dict(row.get("usage") or {})))
        for c in row.get("response_claims") or []:
            b = "misattributed" if c.get("misattributed_from") else str(c.get("bucket"))
            if b in buckets:
                buckets[b] += 1
        samples.append(sample_view(row, pos, names, table))
        p = _point(row, pos)
        if p is not None:
            points.append(p)
    errors = status.get("error", 0)
    summaries = {n: summarize(n, (_metric_value(r, n) for r in rows if r.get("status") != "error"),
                              errors) for n in names}
    verdict = diagnose(points, left_out=len(rows) - len(points))
    return Model(info, names, summaries, status, usage, buckets, verdict, points, samples, table,
                 leaks=tally(rows, top=SOURCES_SHOWN))
