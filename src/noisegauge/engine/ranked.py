"""Rank-aware context precision, as Ragas users know it, from the same chunk relevance.

Ragas' ``context_precision`` is the mean of precision@k over the ranks k that hold a
relevant chunk. It reads the same relevance as RAGChecker's unranked ``context_precision``
(a chunk is relevant iff it entails a reference claim), so it costs no judge call.
"""

from __future__ import annotations

from collections.abc import Sequence

from .matrix import ClaimVerdicts
from .metrics import NO_CHUNKS, NO_RELEVANCE, Judged, MetricValue, relevance_of

__all__ = ["RANKED_CONTEXT_PRECISION", "context_precision_ranked", "ranked_context_precision",
           "ranked_precision"]

RANKED_CONTEXT_PRECISION = "context_precision_ranked"


def ranked_precision(relevant: Sequence[bool]) -> float:
    """Mean precision@k over relevant ranks; 0.0 when chunks exist but none is relevant.

    >>> ranked_precision([True, False, True])  # (1/1 + 2/3) / 2
    0.8333333333333333
    >>> ranked_precision([False, True])
    0.5
    """
    hits = 0
    total = 0.0
    for k, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def ranked_context_precision(cv: ClaimVerdicts,
                             relevant: Sequence[bool] | None = None) -> MetricValue:
    """``context_precision_ranked`` for one sample.

    Undefined without chunks or without reference claims (relevance cannot be judged).
    Chunks that are all irrelevant score 0.0, like the unranked precision: the retrieval
    demonstrably failed, and skipping those samples would flatter the mean.
    """
    if cv.n_chunks == 0:
        return MetricValue(None, NO_CHUNKS)
    if not cv.reference_claims and relevant is None:
        return MetricValue(None, NO_RELEVANCE)
    return MetricValue(ranked_precision(relevance_of(cv, relevant)))


def context_precision_ranked(j: Judged) -> MetricValue:
    """``ranked_context_precision`` over a judged pass (the catalogue's function)."""
    return ranked_context_precision(j.cv, j.labels)
