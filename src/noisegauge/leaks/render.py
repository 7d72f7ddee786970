"""The leak table and the top-k table as terminal tables (``noisegauge leaks``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.catalogue import label
from ..infra.tables import Col, Fitted
from .aggregate import SourceLeaks
from .claims import LEAK_KINDS
from .text import frac, pct, source_label
from .topk import TopKRow

__all__ = ["sources_table", "topk_table"]

_KIND_HEADS = {"relevant_noise": "rel. noise", "irrelevant_noise": "irr. noise",
               "misattributed": "misattr."}


def sources_table(sources: Sequence[SourceLeaks]) -> Fitted:
    cols = [Col("#", "key", justify="right"), Col("source", "text"), Col("leaked"),
            Col("share"), *(Col(_KIND_HEADS[k]) for k in LEAK_KINDS), Col("retrieved"),
            Col("irrelevant"), Col("confused with", "text")]
    rows = [[str(r), source_label(s), f"{s.leaked_claims:,}", pct(s.share),
             *(f"{s.kinds.get(k, 0):,}" for k in LEAK_KINDS), f"{s.retrieved:,}",
             f"{s.irrelevant:,}", s.confused_with or "-"] for r, s in enumerate(sources, 1)]
    return Fitted(cols, rows)


def topk_table(rows: tuple[TopKRow, ...]) -> Fitted:
    cols = [Col("k", "key", justify="right"),
            *(Col(head) for head in (f"{label('claim_recall').lower()}@k",
                                     f"{label('context_precision').lower()}@k",
                                     "irrelevant kept", "leaks dropped"))]
    return Fitted(cols, [[str(r.k), frac(r.claim_recall), frac(r.context_precision),
                          pct(r.irrelevant_kept), pct(r.leaks_dropped)] for r in rows])
