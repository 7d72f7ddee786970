"""Writing RAGChecker's JSON format, so its users can switch both ways.

A record carries RAGChecker's fields (query_id, query, gt_answer, response, retrieved_context),
the claims, the four verdict matrices with its labels (Entailment/Neutral/Contradiction) and
per-sample metrics under its names; the file ends with its grouped aggregate
``{"overall": ..., "retriever": ..., "generator": ...}``, each value ``round(mean * 100, 1)``.

Two deliberate differences, both visible in the file: an undefined metric is ``null``
(RAGChecker writes 0.0) and aggregates average defined values only; each record also has a
``noisegauge`` object with our status and reason. Claims are written as text (a RAGChecker
triplet read from input becomes "subject predicate object").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from ..engine.catalogue import all_specs
from ..engine.matrix import ClaimVerdicts
from ..samples import Sample
from ..verdicts import Verdict
from .rows import sample_record

__all__ = [
    "RAGCHECKER_GROUPS",
    "RAGCHECKER_NAMES",
    "RagcheckerWriter",
    "ragchecker_aggregate",
    "ragchecker_groups",
    "ragchecker_names",
    "to_ragchecker_record",
]



def ragchecker_names() -> dict[str, str]:
    """Our metric name -> RAGChecker's, for every metric RAGChecker has (from the catalogue)."""
    return {s.name: s.ragchecker for s in all_specs() if s.ragchecker is not None}


def ragchecker_groups() -> dict[str, tuple[str, ...]]:
    """RAGChecker's aggregate groups (overall, retriever, generator) with its metric names."""
    groups: dict[str, tuple[str, ...]] = {"overall": (), "retriever": (), "generator": ()}
    for s in all_specs():
        if s.ragchecker is not None and s.ragchecker_group is not None:
            groups[s.ragchecker_group] += (s.ragchecker,)
    return groups


#: ``ragchecker_names()`` and ``ragchecker_groups()`` of the built-in metrics.
RAGCHECKER_NAMES: dict[str, str] = ragchecker_names()
RAGCHECKER_GROUPS: dict[str, tuple[str, ...]] = ragchecker_groups()

_LABELS = {Verdict.ENTAILED: "Entailment", Verdict.NEUTRAL: "Neutral",
           Verdict.CONTRADICTED: "Contradiction"}


def _labels(row: tuple[Verdict, ...]) -> list[str]:
    return [_LABELS[v] for v in row]


def to_ragchecker_record(index: int, row: Mapping[str, Any], sample: Mapping[str, Any] | None,
                         verdicts: Mapping[str, Any] | None) -> dict[str, Any]:
    """One RAGChecker result from our output row, the input sample record and the verdicts.

    ``sample`` is ``Sample.to_record()`` plus optional ``chunk_ids``; ``verdicts`` is
    ``ClaimVerdicts.to_dict()`` (None when the row could not be judged).
    """
    s = sample or {}
    chunks = list(s.get("retrieved_contexts", []))
    ids = s.get("chunk_ids") or [None] * len(chunks)
    out: dict[str, Any] = {
        "query_id": row.get("id") if row.get("id") is not None else str(index),
        "query": s.get("user_input"),
        "gt_answer": s.get("reference"),
        "response": s.get("response"),
        "retrieved_context": [{"doc_id": d, "text": t} for d, t in zip(ids, chunks, strict=True)],
    }
    if s.get("history"):  # a conversation (not a RAGChecker field): read back with the query
        out["history"] = list(s["history"])
    if verdicts is not None:
        cv = ClaimVerdicts.from_dict(dict(verdicts))
        out.update(
            response_claims=list(cv.response_claims),
            gt_answer_claims=list(cv.reference_claims),
            answer2response=_labels(cv.answer2response),
            response2answer=_labels(cv.response2answer),
            retrieved2response=[_labels(r) for r in cv.retrieved2response],
            retrieved2answer=[_labels(r) for r in cv.retrieved2answer],
        )
    metrics = row.get("metrics") or {}
    out["metrics"] = ({} if row.get("status") == "error" else
                      {theirs: metrics.get(ours) for ours, theirs in ragchecker_names().items()})
    out["noisegauge"] = {"index": index, "status": row.get("status"), "reason": row.get("reason"),
                         "error_kind": row.get("error_kind"), "undefined": row.get("undefined") or {}}
    return out


def ragchecker_aggregate(sums: Mapping[str, tuple[float, int]]) -> dict[str, dict[str, float | None]]:
    """Grouped aggregate from per-metric (sum, count) of defined values, RAGChecker-rounded."""
    out: dict[str, dict[str, float | None]] = {}
    for group, names in ragchecker_groups().items():
        out[group] = {}
        for name in names:
            total, n = sums.get(name, (0.0, 0))
            out[group][name] = round(total / n * 100, 1) if n else None
    return out


class RagcheckerWriter:
    """Streams records into ``{"results": [...], "metrics": {...}}`` without holding them."""

    def __init__(self, fh: IO[str]) -> None:
        self._fh = fh
        self._first = True
        self._sums: dict[str, list[float]] = {}  # name -> [sum, count]
        self._unreadable: list[dict[str, Any]] = []
        fh.write('{"results": [')

    def add(self, index: int, row: Mapping[str, Any], sample: Mapping[str, Any] | Sample | None,
            verdicts: Mapping[str, Any] | None) -> None:
        if isinstance(sample, Sample):
            rec: dict[str, Any] | None = sample_record(sample)
        else:
            rec = dict(sample) if sample is not None else None
        if rec is None:
            # No sample (unreadable row): RAGChecker has no way to hold it; list it at the end.
            self._unreadable.append({"index": index, "id": row.get("id"),
                                     "reason": row.get("reason")})
            return
        record = to_ragchecker_record(index, row, rec, verdicts)
        for name, value in record["metrics"].items():
            if value is not None:
                acc = self._sums.setdefault(name, [0.0, 0])
                acc[0] += value
                acc[1] += 1
        self._fh.write(("\n  " if self._first else ",\n  ") + json.dumps(record, ensure_ascii=False))
        self._first = False

    def close(self) -> None:
        sums = {k: (v[0], int(v[1])) for k, v in self._sums.items()}
        self._fh.write('\n],\n"metrics": ' + json.dumps(ragchecker_aggregate(sums), indent=2))
        if self._unreadable:
            self._fh.write(',\n"noisegauge": ' + json.dumps({"unreadable_rows": self._unreadable},
                                                             ensure_ascii=False))
        self._fh.write("}\n")
