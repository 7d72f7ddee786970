"""The report's "Checked by people" panel: each metric as the judge, people and the
corrected estimate give it, and how often the judge agreed with people on claims."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .fmt import direction, fmt, label
from .markup import Html, el

if TYPE_CHECKING:
    from ..people.estimate import Estimate

__all__ = ["people_section"]


def _span(low: float | None, high: float | None) -> str:
    return "–" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def people_section(est: Estimate) -> Html:
    pct = f"{est.confidence:.0%}"
    head = el("tr", None, *(el("th", {"class": "num"} if k else None, t) for k, t in enumerate(
        ["metric", "judge", "people", f"{pct} interval", "n", "corrected", f"{pct} interval", "n / N"])))
    rows = [el("tr", None, el("td", {"class": "name"}, label(name), direction(name)),
               el("td", {"class": "num"}, fmt(m.judge)),
               el("td", {"class": "num"}, fmt(m.human.estimate)),
               el("td", {"class": "num"}, _span(m.human.low, m.human.high)),
               el("td", {"class": "num"}, str(m.human.n)),
               el("td", {"class": "num"}, el("b", None, fmt(m.corrected.estimate))),
               el("td", {"class": "num"}, _span(m.corrected.low, m.corrected.high)),
               el("td", {"class": "num"}, f"{m.corrected.n} / {m.corrected.N}"))
            for name, m in est.metrics.items()]
    a = est.agreement
    agree = (el("p", None, f"On {a.claims} labelled claims the judge agreed with people on "
                           f"{a.accuracy or 0:.0%} (correct or wrong; Cohen's κ "
                           f"{fmt(a.kappa, 2)})"
                           + (f"; on {a.chunk_accuracy:.0%} of {a.chunks} chunks' relevance."
                              if a.chunk_accuracy is not None else "."))
             if a.claims else None)
    buckets = list(a.confusion)
    confusion = el("table", {"class": "metrics", "id": "people-confusion"},
                   el("thead", None, el("tr", None, el("th", None, "judge ↓ · people →"),
                                        *(el("th", {"class": "num"}, b) for b in buckets))),
                   el("tbody", None, [el("tr", None, el("td", None, j),
                                         *(el("td", {"class": "num"}, str(a.confusion[j][p]))
                                           for p in buckets)) for j in buckets]))
    intro = (f"{len(est.labelled) + len(est.from_values)} of {est.samples} samples labelled by "
             "people. Corrected: prediction-powered inference (PPI++), people's labels fixing "
             "the judge's errors and the judge's values on the other samples narrowing the "
             "interval. It holds if the labelled samples are a uniform random sample and "
             "people labelled before looking at the judge's verdicts.")
    halves = sorted({m.halve_at for m in est.metrics.values() if m.halve_at is not None})
    intro += (f" Design: {est.design} (each label weighted by 1 / its inclusion probability); "
              f"target: {'the mean over these ' + str(est.samples) + ' samples' if est.target == 'finite' else 'the superpopulation mean'}."
              + (f" About {halves[-1]} labels would halve the corrected intervals." if halves
                 else ""))
    return el("section", {"class": "panel", "id": "p-people", "data-tab": "people"},
              el("h2", {"class": "section"}, "Checked by people"),
              el("p", {"class": "muted"}, intro),
              el("section", {"class": "card", "style": "margin-bottom:16px"},
                 el("table", {"class": "metrics", "id": "people-table"},
                    el("thead", None, head), el("tbody", None, rows))),
              agree, el("section", {"class": "card"}, el("h3", None, "Claims by bucket"), confusion)
              if a.claims else None,
              el("ul", {"class": "muted"}, [el("li", None, n) for n in est.notes()]) if est.notes() else None)
