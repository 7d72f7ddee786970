"""The Sources tab: which documents leak across the run, and what another top-k would keep."""

from __future__ import annotations

from ..leaks.aggregate import Leaks, SourceLeaks
from ..leaks.claims import LEAK_KINDS
from ..leaks.text import agreement_line, cumulative_line, source_label
from ..leaks.topk import CAVEAT, STRESS_COMMAND
from .data import BUCKETS
from .fmt import fmt, label, sample_link
from .markup import Html, el
from .svg import lines_chart

__all__ = ["sources_section"]


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _row(rank: int, s: SourceLeaks) -> Html:
    kinds = [el("span", {"class": f"badge b-{BUCKETS[k][0]}", "title": BUCKETS[k][1]},
                f"{BUCKETS[k][1]} {s.kinds[k]:,}") for k in LEAK_KINDS if s.kinds.get(k)]
    examples = [el("div", {"class": "ex"}, sample_link(ex.position, str(ex.sample)), " ", ex.text,
                   None if ex.context is None else el("div", {"class": "ctx muted"}, ex.context))
                for ex in s.examples]
    return el("tr", None,
              el("td", {"class": "num"}, str(rank)),
              el("td", {"class": "src"}, el("code", None, source_label(s, width=80)), kinds, examples),
              el("td", {"class": "num"}, f"{s.leaked_claims:,}"),
              el("td", {"class": "num"}, _pct(s.share)),
              el("td", {"class": "num"}, f"{s.retrieved:,}"),
              el("td", {"class": "num"}, f"{s.irrelevant:,}"),
              el("td", {"class": "src"}, el("code", None, s.confused_with) if s.confused_with
                 else el("span", {"class": "muted"}, "–")))


def _topk(leaks: Leaks) -> Html:
    rows = leaks.topk
    if not rows:
        return el("p", {"class": "muted"}, "No sample retrieved any chunk.")
    series = [(f"{label('claim_recall')}@k", [r.claim_recall for r in rows]),
              (f"{label('context_precision')}@k", [r.context_precision for r in rows]),
              ("irrelevant chunks kept", [r.irrelevant_kept for r in rows]),
              ("leaked claims dropped", [r.leaks_dropped for r in rows])]
    head = el("tr", None, el("th", {"class": "num"}, "k"),
              [el("th", {"class": "num"}, head) for head, _ in series])
    body = [el("tr", None, el("td", {"class": "num"}, str(r.k)),
               el("td", {"class": "num"}, fmt(r.claim_recall)),
               el("td", {"class": "num"}, fmt(r.context_precision)),
               el("td", {"class": "num"}, _pct(r.irrelevant_kept)),
               el("td", {"class": "num"}, _pct(r.leaks_dropped))) for r in rows]
    return el("section", {"class": "card", "id": "topk"},
              el("h2", None, "What another top-k would have kept"),
              lines_chart("keeping each sample's first k chunks", [r.k for r in rows], series,
                          "k (chunks kept)"),
              el("table", {"class": "metrics"}, el("thead", None, head), el("tbody", None, body)),
              el("p", {"class": "muted"}, CAVEAT.split(": " + STRESS_COMMAND)[0], ": ",
                 el("code", None, STRESS_COMMAND)))


def sources_section(leaks: Leaks) -> Html:
    shown = leaks.sources
    lines = [cumulative_line(leaks) or "No claim leaked from any source.",
             agreement_line(leaks)]
    if leaks.unsourced:  # counted, never guessed: say which rows are missing and why
        lines.append(f"{leaks.unsourced:,} rows carry neither chunk ids nor texts, so their "
                     "sources are unknown and not counted (pass --input INPUT, or score again).")
    head = el("tr", None, *(el("th", {"class": "num"} if k in (0, 2, 3, 4, 5) else None, t)
                            for k, t in enumerate(["#", "source", "leaked claims", "share",
                                                   "retrieved", "irrelevant", "confused with"])))
    table = el("table", {"class": "metrics sources"}, el("thead", None, head),
               el("tbody", None, [_row(r, s) for r, s in enumerate(shown, 1)]))
    more = (f" The first {len(shown):,} of {leaks.total_sources:,} are listed; "
            "`noisegauge leaks RESULTS --json OUT` writes them all."
            if leaks.total_sources > len(shown) else "")
    return el("section", {"class": "panel", "id": "p-sources", "data-tab": "sources"},
              el("h2", {"class": "section"}, "Which documents leak"),
              el("p", {"class": "muted"},
                 f"{leaks.leaked_claims:,} wrong claims were carried into answers by "
                 f"{leaks.leaking:,} sources. A source is a "
                 "chunk's id, or a digest of its text when the data gives none. Confused with: the "
                 "relevant source it most often came with when it leaked (none on a tie)." + more),
              el("section", {"class": "card", "style": "margin-bottom:16px"},
                 [el("p", None, el("b", None, line)) for line in lines if line],
                 table if shown else el("p", {"class": "muted"}, "No source was retrieved.")),
              _topk(leaks))
