"""The leak table and the top-k table as terminal tables (``noisegauge leaks``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table

from ..engine.catalogue import label
from .aggregate import SourceLeaks
from .claims import LEAK_KINDS
from .text import frac, pct, source_label
from .topk import TopKRow

__all__ = ["sources_table", "topk_table"]

_KIND_HEADS = {"relevant_noise": "rel. noise", "irrelevant_noise": "irr. noise",
               "misattributed": "misattr."}


def sources_table(sources: Sequence[SourceLeaks]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("source", overflow="fold")
    for head in ("leaked", "share", *(_KIND_HEADS[k] for k in LEAK_KINDS), "retrieved",
                 "irrelevant"):
        table.add_column(head, justify="right", no_wrap=True)
    table.add_column("confused with", overflow="fold")
    for r, s in enumerate(sources, 1):
        table.add_row(str(r), source_label(s), f"{s.leaked_claims:,}", pct(s.share),
                      *(f"{s.kinds.get(k, 0):,}" for k in LEAK_KINDS), f"{s.retrieved:,}",
                      f"{s.irrelevant:,}", s.confused_with or "-")
    return table


def topk_table(rows: tuple[TopKRow, ...]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("k", justify="right")
    for head in (f"{label('claim_recall').lower()}@k", f"{label('context_precision').lower()}@k",
                 "irrelevant kept", "leaks dropped"):
        table.add_column(head, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(str(r.k), frac(r.claim_recall), frac(r.context_precision),
                      pct(r.irrelevant_kept), pct(r.leaks_dropped))
    return table


