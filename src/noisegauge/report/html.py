"""The page: overview, compare and stress sections drawn here; samples drawn by the page
script from one embedded JSON block (paged, so 10,000 samples open fast).

Everything from the data is escaped by ``markup.el``; the CSS and script are package files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from ..engine import catalogue
from ..engine.summary import methods_note
from ..infra.pages import page_script
from .compare import Comparison
from .data import BUCKETS, Model
from .diagnosis import CP_LOW, MISATTRIBUTED_COUNTS, NS_HIGH, QUADRANTS, band
from .fmt import ci_text, direction, fmt, label, lower_names, sample_link, short
from .markup import Html, el, join, json_for_script
from .sections import compare_section, stress_section
from .sources import sources_section
from .stressview import StressView
from .svg import band_gauge, interval_bar, scatter

__all__ = ["page_data", "render_page"]



def _groups() -> list[tuple[str, tuple[str, ...]]]:
    """The report's metric groups, titled, each with its metrics in catalogue order."""
    specs = catalogue.all_specs()
    return [(title, tuple(s.name for s in specs if s.group == g))
            for g, title in catalogue.GROUPS.items()]


def _asset(name: str) -> str:
    text = resources.files("noisegauge.report").joinpath("assets").joinpath(name).read_text(
        encoding="utf-8")
    if "</style" in text.lower() or "</script" in text.lower():
        raise ValueError(f"asset {name} must not close its own element")
    return text


def _judge_text(ident: Mapping[str, Any]) -> Html:
    name = str(ident.get("judge", "judge"))
    lexical = name == "lexical"  # its "model" is a weights hash; the version says more
    lead = ("version",) if lexical else ("model",)
    main = " ".join(str(ident[k]) for k in lead if ident.get(k) is not None)
    rest = ", ".join(f"{k} {v}" for k, v in ident.items()
                     if k not in ("judge", *lead) and v is not None)
    return el("span", None, f"{name} {main}".strip(), " ", el("small", None, rest) if rest else None)


def _meta(m: Model) -> Html:
    st, u = m.status, m.usage
    cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:,.4f}"
    items = [
        ("dataset", el("span", None, m.info.source or m.info.title)),
        ("judge", join([_judge_text(j) for j in m.info.judges], "; ") if m.info.judges
         else el("span", {"class": "muted"}, "not recorded in the results")),
        ("samples", el("span", None, f"{sum(st.values()):,} ",
                       el("small", None, f"ok {st.get('ok', 0):,} · undefined {st.get('undefined', 0):,}"
                                         f" · error {st.get('error', 0):,}"))),
        ("judge calls", el("span", None, f"{u.calls:,} ", el("small", None, f"{u.cached_calls:,} cached"))),
        ("tokens", el("span", None, f"{u.prompt_tokens + u.completion_tokens:,} ",
                      el("small", None, f"{u.prompt_tokens:,} prompt + {u.completion_tokens:,} completion"))),
        ("cost", el("span", None, cost)),
        ("scored", el("span", None, m.info.scored_at or "–")),
        ("report made", el("span", None, m.info.generated_at or "–")),
    ]
    return el("div", {"class": "meta card"}, [el("div", None, el("div", {"class": "k"}, k),
                                                 el("div", {"class": "v"}, v)) for k, v in items])


def _verdict(m: Model) -> Html:
    v = m.verdict
    drivers = None
    if v.drivers:
        drivers = el("p", {"class": "drivers"}, "Driven by: ",
                     [sample_link(pos, sid) for pos, sid in v.drivers])
    return el("section", {"class": f"card verdict side-{v.side}", "id": "verdict"},
              el("div", {"class": "kicker"}, "Verdict"), el("h2", None, v.headline),
              el("p", None, v.text), drivers)


def _modes(m: Model) -> Html:
    rows = []
    for name in ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant"):
        s = m.summaries.get(name)
        mean = s.mean if s else None
        ci = s.ci if s else None
        if mean is None:
            reading = el("span", {"class": "reading r-none"}, "undefined")
            advice = "No sample defines it."
        else:
            b = band(mean)
            reading = el("span", {"class": f"reading r-{b.key}"}, b.label)
            advice = b.advice[:1].upper() + b.advice[1:] + "."
            if ci is not None and band(ci[0]).key != band(ci[1]).key:
                advice += (f" The 95% interval reaches from “{band(ci[0]).label}” to "
                           f"“{band(ci[1]).label}”: more samples would settle it.")
        n = f"n = {s.n}" if s else ""
        rows.append(el("div", {"class": "mode"},
                       el("div", {"class": "head"}, el("span", {"class": "name"}, label(name)),
                          el("span", {"class": "value num"}, fmt(mean)),
                          el("span", {"class": "ci num"}, ci_text(ci), " ", n), reading),
                       band_gauge(mean, ci, f"{label(name)} on the reading bands"),
                       el("p", {"class": "advice"}, advice)))
    return el("section", {"class": "card"},
              el("h2", None, "Noise sensitivity against the reading bands"),
              el("p", {"class": "muted"}, "Bands: about 0 · 0.1–0.3 occasional leakage · above "
                 "0.4 red flag. The bar is the 95% interval, the mark the mean. Lower is better."),
              rows)


def _diagnosis(m: Model) -> Html:
    notes = [el("li", None, el("b", None, QUADRANTS[q][0]), ": ", QUADRANTS[q][1])
             for q in ("retrieval", "generator")]
    return el("section", {"class": "card"},
              el("h2", None, "Retrieval or generator?"),
              scatter(m.points, m.verdict.counts),
              el("ul", {"class": "quad-notes"}, notes,
                 el("li", None, f"High noise sensitivity: {NS_HIGH:g} or more (both modes); low "
                                f"context precision: below {CP_LOW:g}. Click a dot to open its sample.")))


def _buckets(m: Model) -> Html:
    total = sum(m.buckets.values())
    stack = []
    items = []
    for key, (code, name) in BUCKETS.items():
        k = m.buckets.get(key, 0)
        if total and k:
            stack.append(el("div", {"class": f"bg-{code}", "style": f"width:{100 * k / total:.2f}%",
                                    "title": f"{name}: {k}"}))
        items.append(el("li", {"class": f"sw-{code}"}, name,
                        el("span", {"class": "n num"}, f"{k:,}",
                           el("span", {"class": "muted"}, f" · {100 * k / total:.0f}%" if total else ""))))
    return el("section", {"class": "card"},
              el("h2", None, f"Where the {total:,} response claims fall"),
              el("div", {"class": "stack", "role": "img", "aria-label": "response claims by bucket"}, stack),
              el("ul", {"class": "legend"}, items),
              el("p", {"class": "bucket-notes"},
                 "Relevant / irrelevant noise: wrong claims a relevant / only an irrelevant chunk "
                 "entails. Hallucination: wrong and entailed by no chunk. Misattributed: a "
                 "wrong claim whose detail is stated in a chunk about another entity "
                 f"(shown apart; {MISATTRIBUTED_COUNTS})."))


def _metrics(m: Model) -> Html:
    body = []
    groups = _groups()
    for title, names in groups:
        present = [n for n in names if n in m.summaries]
        if not present:
            continue
        body.append(el("tr", {"class": "group"}, el("td", {"colspan": "6"}, title)))
        for n in present:
            s = m.summaries[n]
            body.append(el("tr", None,
                           el("td", {"class": "name"}, label(n), direction(n)),
                           el("td", {"class": "num"}, "undefined" if s.mean is None else fmt(s.mean)),
                           el("td", {"class": "num"}, ci_text(s.ci)),
                           el("td", None, interval_bar(s.mean, s.ci)),
                           el("td", {"class": "num"}, f"{s.n:,}"),
                           el("td", {"class": "num"}, f"{s.undefined:,} / {s.errors:,}")))
    others = [n for n in m.names if not any(n in g for _, g in groups)]
    for n in others:
        s = m.summaries[n]
        body.append(el("tr", None, el("td", {"class": "name"}, n),
                       el("td", {"class": "num"}, fmt(s.mean)), el("td", {"class": "num"}, ci_text(s.ci)),
                       el("td", None, interval_bar(s.mean, s.ci)), el("td", {"class": "num"}, f"{s.n:,}"),
                       el("td", {"class": "num"}, f"{s.undefined:,} / {s.errors:,}")))
    head = el("tr", None, el("th", None, "metric"), el("th", {"class": "num"}, "mean"),
              el("th", {"class": "num"}, "95% interval"), el("th", None, ""),
              el("th", {"class": "num"}, "n"), el("th", {"class": "num"}, "undef. / errors"))
    return el("section", {"class": "card"}, el("h2", None, "The metric family"),
              el("table", {"class": "metrics"}, el("thead", None, head), el("tbody", None, body)),
              el("p", {"class": "muted", "style": "margin-top:8px;font-size:12.5px"},
                 "Means over samples that define the metric; undefined values are counted, never "
                 "averaged in as 0. " + methods_note(m.summaries.values()) + "."))


def _overview(m: Model) -> Html:
    return el("section", {"class": "panel", "id": "p-overview", "data-tab": "overview"},
              _meta(m), _verdict(m),
              el("div", {"class": "grid2"}, _modes(m), _diagnosis(m)),
              el("div", {"class": "grid2 wide-left"}, _metrics(m), _buckets(m)))


def _samples_panel(n: int) -> Html:
    return join([
        el("section", {"class": "panel", "id": "p-samples", "data-tab": "samples"},
           el("div", {"class": "filters", "id": "filters"}),
           el("div", {"id": "list"}, el("noscript", None, el("p", {"class": "empty"},
              f"The {n:,} samples are drawn by the page script; enable JavaScript to browse them."))),
           el("div", {"class": "pager", "id": "pager"})),
        el("section", {"class": "panel", "id": "p-sample", "data-tab": "samples"}),
    ])


def page_data(m: Model, other: Sequence[dict[str, Any]] | None, c: Comparison | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "names": list(m.names), "labels": {n: label(n) for n in m.names},
        "short": {n: short(n) for n in m.names}, "lower": lower_names(),
        "buckets": dict(BUCKETS.values()),
        "chunks": m.chunks.texts, "samples": m.samples,
    }
    if other is not None and c is not None:
        data["other"] = list(other)
        data["otherLabel"] = c.other_label
        data["thisLabel"] = c.this_label
        data["pairs"] = {str(i): j for i, j in c.pairs}
    return data


def render_page(m: Model, *, comparison: Comparison | None = None,
                other_samples: Sequence[dict[str, Any]] | None = None,
                stress: StressView | None = None, people: Html | None = None) -> str:
    """The whole HTML document (``people``: the "Checked by people" panel)."""
    tabs = [("overview", "Overview", None), ("samples", "Samples", len(m.samples))]
    if m.leaks is not None:
        tabs.append(("sources", "Sources", m.leaks.total_sources))
    if people is not None:
        tabs.append(("people", "Checked by people", None))
    if comparison is not None:
        tabs.append(("compare", "Compare", None))
    if stress is not None:
        tabs.append(("stress", "Stress", None))
    nav = el("nav", {"class": "tabs", "aria-label": "sections"},
             [el("a", {"href": f"#{k}", "class": "tab", "data-tab": k}, t,
                 el("span", {"class": "count"}, f"{n:,}") if n is not None else None)
              for k, t, n in tabs])
    header = el("header", {"class": "top"},
                el("div", {"class": "row"}, el("span", {"class": "brand"}, "noisegauge"),
                   el("h1", None, m.info.title)), nav)
    panels = [_overview(m), _samples_panel(len(m.samples))]
    if m.leaks is not None:
        panels.append(sources_section(m.leaks))
    if people is not None:
        panels.append(people)
    if comparison is not None:
        panels.append(compare_section(comparison))
    if stress is not None:
        panels.append(stress_section(stress))
    body = el("body", None, header, el("main", None, panels),
              el("footer", None, "Made by noisegauge. One self-contained file: no network, no "
                                 "external assets."),
              el("div", {"class": "tip", "id": "tip", "hidden": True}),
              el("script", {"type": "application/json", "id": "ng-data"},
                 json_for_script(page_data(m, other_samples, comparison))),
              el("script", None, Html(page_script(_asset("report.js")))))
    head = el("head", None, el("meta", {"charset": "utf-8"}),
              el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
              el("title", None, f"noisegauge report · {m.info.title}"),
              el("style", None, Html(_asset("report.css"))))
    return "<!DOCTYPE html>\n" + el("html", {"lang": "en"}, head, body) + "\n"

