"""The leak table and the top-k table as text (``noisegauge leaks``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table

from ..report.fmt import LABELS
from .aggregate import Leaks, SourceLeaks
from .claims import LEAK_KINDS
from .identity import DIGEST_PREFIX
from .topk import TopKRow

__all__ = ["cumulative_line", "agreement_line", "source_label", "sources_table", "topk_table"]

_KIND_HEADS = {"relevant_noise": "rel. noise", "irrelevant_noise": "irr. noise",
               "misattributed": "misattr."}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _frac(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def source_label(s: SourceLeaks | str, snippet: str | None = None, width: int = 48) -> str:
    """A source's id; for one named by a digest, the digest and the start of its text."""
    name = s if isinstance(s, str) else s.source
    snippet = snippet if isinstance(s, str) else s.snippet
    if not name.startswith(DIGEST_PREFIX) or not snippet:
        return name
    text = " ".join(snippet.split())
    return f'{name[:len(DIGEST_PREFIX) + 8]}… "{text[:width]}{"…" if len(text) > width else ""}"'


def cumulative_line(leaks: Leaks, n: int = 5) -> str | None:
    """"5 sources carry 62% of leaked claims" (None when nothing leaked)."""
    carried = leaks.carried(n)
    if carried is None:
        return None
    n = min(n, len(leaks.cumulative))
    noun = "source carries" if n == 1 else "sources carry"
    return (f"{n} {noun} {carried:.0%} of leaked claims "
            f"({leaks.cumulative[n - 1]:,} of {leaks.leaked_claims:,}).")


def agreement_line(leaks: Leaks) -> str | None:
    a = leaks.agreement
    if a is None:
        return None
    kappa = "undefined (one class only)" if a.kappa is None else f"{a.kappa:.2f}"
    return (f"labels vs the judge's relevance on {a.n:,} chunks: agree {_pct(a.share)}, "
            f"Cohen's kappa {kappa}; relevant by labels only {a.labels_only:,}, by the judge "
            f"only {a.judge_only:,}.")


def sources_table(sources: Sequence[SourceLeaks]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("source", overflow="fold")
    for head in ("leaked", "share", *(_KIND_HEADS[k] for k in LEAK_KINDS), "retrieved",
                 "irrelevant"):
        table.add_column(head, justify="right", no_wrap=True)
    table.add_column("confused with", overflow="fold")
    for r, s in enumerate(sources, 1):
        table.add_row(str(r), source_label(s), f"{s.leaked_claims:,}", _pct(s.share),
                      *(f"{s.kinds.get(k, 0):,}" for k in LEAK_KINDS), f"{s.retrieved:,}",
                      f"{s.irrelevant:,}", s.confused_with or "-")
    return table


def topk_table(rows: tuple[TopKRow, ...]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("k", justify="right")
    for head in (f"{LABELS['claim_recall'].lower()}@k", f"{LABELS['context_precision'].lower()}@k",
                 "irrelevant kept", "leaks dropped"):
        table.add_column(head, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(str(r.k), _frac(r.claim_recall), _frac(r.context_precision),
                      _pct(r.irrelevant_kept), _pct(r.leaks_dropped))
    return table


