"""The compare and stress sections of the page (overview and samples are in ``html``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine import catalogue
from .compare import Comparison
from .data import BUCKETS
from .fmt import ci_text, direction, fmt, label, sample_link
from .markup import Html, el
from .stressview import StressView
from .svg import curve_chart

__all__ = ["compare_section", "stress_section"]


def compare_section(c: Comparison) -> Html:
    rows = []
    for d in c.diffs:
        if d.n == 0:
            rows.append(el("tr", None, el("td", None, label(d.name)),
                           el("td", {"colspan": "6", "class": "muted"}, "no sample defined in both runs")))
            continue
        cls = "delta" + (" better" if d.better == "this" else " worse" if d.better == "other" else "")
        verdict = {"this": f"{c.this_label} is better", "other": f"{c.other_label} is better"}.get(
            d.better or "", "no clear difference" if not catalogue.neutral(d.name) else "no direction")
        rows.append(el("tr", None, el("td", {"class": "name"}, label(d.name),
                                      direction(d.name)),
                       el("td", {"class": "num"}, fmt(d.mean_this)), el("td", {"class": "num"}, fmt(d.mean_other)),
                       el("td", {"class": f"num {cls}"}, f"{d.diff:+.3f}" if d.diff is not None else "–"),
                       el("td", {"class": "num"}, ci_text(d.ci)),
                       el("td", {"class": "num"}, "–" if d.p_value is None else f"{d.p_value:.3g}"),
                       el("td", None, f"{verdict} (n = {d.n})")))
    head = el("tr", None, *(el("th", {"class": "num"} if k in (1, 2, 3, 4, 5) else None, t) for k, t in enumerate(
        ["metric", c.this_label, c.other_label, "Δ this − other", "95% interval", "p", "reading"])))

    def changes(title: str, items: Sequence[Any], total: int, cls: str) -> Html:
        lis = [el("li", None, sample_link(ch.position, ch.id), " noise ",
                  f"{fmt(ch.noise_other, 2)} → {fmt(ch.noise_this, 2)}", ", precision ",
                  f"{fmt(ch.precision_other, 2)} → {fmt(ch.precision_this, 2)}")
               for ch in items]
        more = f" (the {len(items)} biggest moves)" if total > len(items) else ""
        return el("section", {"class": "card"}, el("h2", None, el("span", {"class": f"delta {cls}"}, title),
                                                   f" · {total:,}{more}"),
                  el("ul", None, lis) if lis else el("p", {"class": "muted"}, "none"))

    note = (f"Paired by {c.paired_by}: {len(c.pairs):,} samples in both runs"
            + (f"; {c.unmatched_this:,} only in this run" if c.unmatched_this else "")
            + (f"; {c.unmatched_other:,} only in {c.other_label}" if c.unmatched_other else "")
            + ". Δ is this run minus the other, averaged over the samples both define; interval: "
              "paired bootstrap; p: sign-flip permutation test. Open a sample to see both runs' claims.")
    return el("section", {"class": "panel", "id": "p-compare", "data-tab": "compare"},
              el("h2", {"class": "section"}, f"Compared with {c.other_label}"),
              el("p", {"class": "muted"}, note),
              el("section", {"class": "card", "style": "margin-bottom:16px"},
                 el("table", {"class": "metrics"}, el("thead", None, head), el("tbody", None, rows))),
              el("div", {"class": "grid2"},
                 changes("Better", c.better, c.n_better, "better"),
                 changes("Worse", c.worse, c.n_worse, "worse")))


def stress_section(s: StressView) -> Html:
    metrics = s.curve.get("metrics") or {}
    shown = [s.name for s in catalogue.all_specs() if s.key and s.name in metrics] or list(metrics)
    charts = [el("div", {"class": "card"}, curve_chart(label(n), metrics[n])) for n in shown]
    levels = list(s.curve.get("levels") or [])
    head = el("tr", None, el("th", None, "metric"),
              [el("th", {"class": "num"}, f"level {lv}") for lv in levels])
    body = []
    for n in shown:
        by_level = {p.get("level"): p for p in metrics[n]}
        cells = []
        for lv in levels:
            p = by_level.get(lv, {})
            cells.append(el("td", {"class": "num", "title": f"{ci_text(p.get('ci'))} n={p.get('n')}"},
                            fmt(p.get("mean")), el("br"), el("span", {"class": "muted"}, ci_text(p.get("ci")))))
        body.append(el("tr", None, el("td", None, label(n)), cells))
    flips: list[Html] = []
    for f in s.flips:
        items = []
        for fl in f.get("flips") or []:
            claims = [el("li", None, el("span", {"class": f"badge b-{BUCKETS.get(str(c.get('bucket')), ('h',))[0]}"},
                                        str(c.get("bucket", "")).replace("_", " ")), " ", str(c.get("text", "")),
                         [el("div", {"class": "leak"}, f"leaked from chunk #{lf.get('index', 0) + 1}"
                             + (f" ({lf.get('kind')})" if lf.get("kind") else "") + ": ",
                             el("i", None, str(lf.get("text", ""))[:400]))
                          for lf in c.get("leaked_from") or []])
                      for c in fl.get("incorrect_claims") or []]
            items.append(el("li", None, el("b", None, f"level {fl.get('level')}, repeat {fl.get('repeat')}: "),
                            str(fl.get("answer") or ""), el("ul", None, claims)))
        flips.append(el("details", {"class": "flip", "open": not flips},
                        el("summary", None, el("span", {"class": "fq"}, str(f.get("question", ""))), " ",
                           el("span", {"class": "chip"}, f"flips at level {f.get('first_flip_level')}"),
                           el("span", {"class": "muted"}, f" {len(items)} wrong noisy answer(s)")),
                        el("div", {"class": "muted"}, "clean answer: ", str(f.get("clean_answer") or "")),
                        el("ul", None, items)))

    def show(v: Any) -> str:
        return ", ".join(map(str, v)) if isinstance(v, list) else str(v)

    config = ", ".join(f"{k}: {show(v)}" for k, v in s.run.items()
                       if k in ("pipeline", "judge", "strategy", "position", "repeats", "seed")
                       and v is not None)
    return el("section", {"class": "panel", "id": "p-stress", "data-tab": "stress"},
              el("h2", {"class": "section"}, "Stress test: how the metrics move as noise is injected"),
              el("p", {"class": "muted"}, f"From {s.source}. " + (config + ". " if config else "")
                 + "Mean over questions per level; the band is the 95% interval."),
              el("div", {"class": "curves"}, charts),
              el("section", {"class": "card", "style": "margin:16px 0"}, el("h2", None, "Per level"),
                 el("table", {"class": "metrics"}, el("thead", None, head), el("tbody", None, body))),
              el("section", {"class": "card"},
                 el("h2", None, f"Flipped questions · {len(s.flips):,}"),
                 el("p", {"class": "muted"}, "Answered correctly on clean retrieval and wrongly "
                    "with noise, with the leaked claims and the chunks they came from. Click a "
                    "question to open it."),
                 flips or el("p", {"class": "muted"}, "No question flipped.")))
