"""Inline SVG charts: the diagnosis scatter, the reading-band gauge, interval bars, curves,
and several shares against one axis (the top-k what-if).

Drawn in Python so the overview reads without JavaScript and every label goes through the
same escaping as the rest of the page.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .diagnosis import CP_LOW, NS_HIGH, QUADRANTS, Point, Quadrant, quadrant
from .markup import Html, el

__all__ = ["scatter", "band_gauge", "interval_bar", "curve_chart", "lines_chart"]

#: Above this many samples the scatter bins them (a dot per cell, sized by count).
MAX_DOTS = 1500


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg(w: int, h: int, label: str, *children: Any, cls: str = "chart") -> Html:
    return el("svg", {"class": cls, "viewBox": f"0 0 {w} {h}", "role": "img",
                      "aria-label": label, "xmlns": "http://www.w3.org/2000/svg"},
              el("title", None, label), *children)


def _y_sqrt(v: float) -> float:
    """Noise sensitivity on a square-root scale: 0.1 gets a third of the height, not a tenth."""
    return math.sqrt(max(0.0, min(1.0, v)))


def scatter(points: Sequence[Point], counts: Mapping[Quadrant, int]) -> Html:
    """Context precision (x) against noise sensitivity (y, both modes) with the four
    labelled quadrants; each dot links to its sample."""
    w, h, ml, mr, mt, mb = 520, 380, 52, 14, 14, 44
    pw, ph = w - ml - mr, h - mt - mb

    def X(v: float) -> float:
        return ml + pw * max(0.0, min(1.0, v))

    def Y(v: float) -> float:
        return mt + ph * (1 - _y_sqrt(v))

    parts: list[Html] = []
    xc, yc = X(CP_LOW), Y(NS_HIGH)
    boxes: dict[Quadrant, tuple[float, float, float, float]] = {"retrieval": (ml, mt, xc - ml, yc - mt), "generator": (xc, mt, ml + pw - xc, yc - mt),
             "noisy_retrieval": (ml, yc, xc - ml, mt + ph - yc),
             "healthy": (xc, yc, ml + pw - xc, mt + ph - yc)}
    for q, (x, y, bw, bh) in boxes.items():
        parts.append(el("rect", {"class": f"q q-{q}", "x": _f(x), "y": _f(y), "width": _f(bw),
                                 "height": _f(bh)}))
    for q, (x, y, bw, _bh) in boxes.items():
        label, _ = QUADRANTS[q]
        ty = y + 16  # top of each box: dots sit at the bottom edge (noise 0)
        parts.append(el("text", {"class": f"qlabel ql-{q}", "x": _f(x + bw / 2), "y": _f(ty),
                                 "text-anchor": "middle"},
                        f"{label} · {counts.get(q, 0)}"))
    for v in (0, 0.1, 0.25, 0.5, 1):
        parts.append(el("line", {"class": "grid", "x1": ml, "x2": ml + pw, "y1": _f(Y(v)), "y2": _f(Y(v))}))
        parts.append(el("text", {"class": "tick", "x": ml - 6, "y": _f(Y(v) + 4), "text-anchor": "end"},
                        f"{v:g}"))
    for v in (0, 0.25, 0.5, 0.75, 1):
        parts.append(el("text", {"class": "tick", "x": _f(X(v)), "y": mt + ph + 16,
                                 "text-anchor": "middle"}, f"{v:g}"))
    parts.append(el("text", {"class": "axis", "x": _f(ml + pw / 2), "y": h - 6, "text-anchor": "middle"},
                    "context precision (share of retrieved chunks that are relevant)"))
    parts.append(el("text", {"class": "axis", "x": 12, "y": _f(mt + ph / 2), "text-anchor": "middle",
                             "transform": f"rotate(-90 12 {_f(mt + ph / 2)})"},
                    "noise sensitivity (both modes, √ scale)"))
    parts.extend(_dots(points, X, Y) if len(points) <= MAX_DOTS else _bins(points, X, Y))
    return _svg(w, h, "Diagnosis: context precision against noise sensitivity, per sample",
                *parts, cls="chart scatter")


def _dots(points: Sequence[Point], X: Any, Y: Any) -> list[Html]:
    """One dot per sample; samples at the same place are spread in a small ring so each
    stays visible and clickable."""
    groups: dict[tuple[float, float], list[Point]] = defaultdict(list)
    for p in points:
        groups[(round(p.context_precision, 3), round(p.noise, 3))].append(p)
    out: list[Html] = []
    for (cp, ns), ps in groups.items():
        for k, p in enumerate(ps):
            dx = dy = 0.0
            if k:  # rings of 6, 12, 18... around the first dot
                ring, at = 1, k - 1
                while at >= 6 * ring:
                    at -= 6 * ring
                    ring += 1
                angle = at * 2 * math.pi / (6 * ring) + ring * 0.5
                dx, dy = 8 * ring * math.cos(angle), 8 * ring * math.sin(angle)
            q = quadrant(p)
            tip = (f"{p.id}: context precision {p.context_precision:.2f}, noise sensitivity "
                   f"{p.noise:.2f} (relevant {p.ns_relevant:.2f}, irrelevant {p.ns_irrelevant:.2f})")
            out.append(el("circle", {"class": f"dot d-{q}", "cx": _f(X(cp) + dx),
                                     "cy": _f(Y(ns) + dy), "r": "5", "data-s": p.index},
                          el("title", None, tip)))
    return out


def _bins(points: Sequence[Point], X: Any, Y: Any) -> list[Html]:
    cells: dict[tuple[int, int], list[Point]] = defaultdict(list)
    for p in points:
        cells[(min(19, int(p.context_precision * 20)), min(19, int(_y_sqrt(p.noise) * 20)))].append(p)
    biggest = max(len(v) for v in cells.values())
    out: list[Html] = []
    for (i, j), ps in cells.items():
        cx = X((i + 0.5) / 20)
        cy = Y(((j + 0.5) / 20) ** 2)
        r = 2.5 + 8 * math.sqrt(len(ps) / biggest)
        q = quadrant(ps[0])
        out.append(el("circle", {"class": f"dot d-{q}", "cx": _f(cx), "cy": _f(cy), "r": _f(r)},
                      el("title", None, f"{len(ps)} samples")))
    return out


#: (upper bound, css class) of the reading bands, for the gauge.
_BANDS = ((0.1, "b-zero"), (0.3, "b-occasional"), (0.4, "b-between"), (1.0, "b-red"))


def band_gauge(mean: float | None, ci: tuple[float, float] | None, label: str) -> Html:
    """A 0-1 track painted with the reading bands, the interval as a bar, the mean as a mark."""
    w, h, ml, mr = 460, 46, 8, 8
    pw = w - ml - mr

    def X(v: float) -> float:
        return ml + pw * max(0.0, min(1.0, v))

    parts: list[Html] = []
    lo = 0.0
    for hi, cls in _BANDS:
        parts.append(el("rect", {"class": f"band {cls}", "x": _f(X(lo)), "y": 8,
                                 "width": _f(X(hi) - X(lo)), "height": 14}))
        lo = hi
    for v in (0, 0.1, 0.3, 0.4, 1):
        parts.append(el("text", {"class": "tick", "x": _f(X(v)), "y": 38,
                                 "text-anchor": "start" if v == 0 else ("end" if v == 1 else "middle")},
                        f"{v:g}"))
    if ci is not None:
        parts.append(el("rect", {"class": "ci", "x": _f(X(ci[0])), "y": 12, "rx": 3,
                                 "width": _f(max(3.0, X(ci[1]) - X(ci[0]))), "height": 6}))
    if mean is not None:
        parts.append(el("circle", {"class": "mean", "cx": _f(X(mean)), "cy": 15, "r": 6}))
    return _svg(w, h, label, *parts, cls="chart gauge")


def interval_bar(mean: float | None, ci: tuple[float, float] | None) -> Html:
    """A small 0-1 track with the 95% interval and the mean, for table cells."""
    w, h = 120, 14
    parts: list[Html] = [el("line", {"class": "track", "x1": 1, "x2": w - 1, "y1": 7, "y2": 7})]
    if ci is not None:
        parts.append(el("rect", {"class": "ci", "x": _f(1 + (w - 2) * ci[0]), "y": 3,
                                 "width": _f(max(1.5, (w - 2) * (ci[1] - ci[0]))), "height": 8}))
    if mean is not None:
        parts.append(el("circle", {"class": "mean", "cx": _f(1 + (w - 2) * mean), "cy": 7, "r": 3}))
    label = "undefined" if mean is None else f"mean {mean:.3f}"
    return _svg(w, h, label, *parts, cls="chart ibar")


def _fraction_axes(title: str, n: int, ml: float, mt: float, pw: float, ph: float
                   ) -> tuple[Callable[[int], float], Callable[[float], float], list[Html]]:
    """A plot of fractions in [0, 1] over ``n`` evenly spaced points: the x of point ``k``,
    the y of a value (clamped), and the title with the grid and its ticks."""

    def X(k: int) -> float:
        return ml + (pw * k / (n - 1) if n > 1 else pw / 2)

    def Y(v: float) -> float:
        return mt + ph * (1 - max(0.0, min(1.0, v)))

    parts: list[Html] = [el("text", {"class": "ctitle", "x": ml, "y": 14}, title)]
    for v in (0, 0.25, 0.5, 0.75, 1):
        parts.append(el("line", {"class": "grid", "x1": ml, "x2": ml + pw, "y1": _f(Y(v)), "y2": _f(Y(v))}))
        parts.append(el("text", {"class": "tick", "x": ml - 5, "y": _f(Y(v) + 4), "text-anchor": "end"},
                        f"{v:g}"))
    return X, Y, parts


def curve_chart(name: str, points: Sequence[Mapping[str, Any]]) -> Html:
    """One metric of a stress curve: mean per noise level, with its 95% interval as a band."""
    w, h, ml, mr, mt, mb = 300, 190, 36, 12, 24, 34
    pw, ph = w - ml - mr, h - mt - mb
    X, Y, parts = _fraction_axes(name, len(points), ml, mt, pw, ph)
    defined = [(k, p) for k, p in enumerate(points) if p.get("mean") is not None]
    band = [(k, p["ci"]) for k, p in defined if p.get("ci")]
    if len(band) > 1:
        upper = " ".join(f"{_f(X(k))},{_f(Y(ci[1]))}" for k, ci in band)
        lower = " ".join(f"{_f(X(k))},{_f(Y(ci[0]))}" for k, ci in reversed(band))
        parts.append(el("polygon", {"class": "cband", "points": f"{upper} {lower}"}))
    if len(defined) > 1:
        parts.append(el("polyline", {"class": "cline", "points": " ".join(
            f"{_f(X(k))},{_f(Y(p['mean']))}" for k, p in defined)}))
    for k, p in enumerate(points):
        parts.append(el("text", {"class": "tick", "x": _f(X(k)), "y": mt + ph + 14,
                                 "text-anchor": "middle"}, str(p.get("level"))))
    for k, p in defined:
        ci = p.get("ci")
        tip = f"level {p.get('level')}: {p['mean']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") \
            + f", n={p.get('n')}"
        parts.append(el("circle", {"class": "cdot", "cx": _f(X(k)), "cy": _f(Y(p["mean"])), "r": 3.5},
                        el("title", None, tip)))
    parts.append(el("text", {"class": "axis", "x": _f(ml + pw / 2), "y": h - 4, "text-anchor": "middle"},
                    "injected distractors"))
    return _svg(w, h, f"{name} against injected noise", *parts, cls="chart curve")


def lines_chart(title: str, xs: Sequence[int], series: Sequence[tuple[str, Sequence[float | None]]],
                axis: str) -> Html:
    """Several fractions in [0, 1] against ``xs``, one line each (``series``: label, values;
    a None is a gap), with a legend. Lines are told apart by class ``l0``, ``l1``, …"""
    w, h, ml, mr, mt, mb = 560, 240, 36, 170, 24, 34
    pw, ph = w - ml - mr, h - mt - mb
    X, Y, parts = _fraction_axes(title, len(xs), ml, mt, pw, ph)
    for k, x in enumerate(xs):
        parts.append(el("text", {"class": "tick", "x": _f(X(k)), "y": mt + ph + 14,
                                 "text-anchor": "middle"}, str(x)))
    for s, (label, values) in enumerate(series):
        pts = [(k, v) for k, v in enumerate(values) if v is not None]
        if len(pts) > 1:
            parts.append(el("polyline", {"class": f"sline l{s}", "points": " ".join(
                f"{_f(X(k))},{_f(Y(v))}" for k, v in pts)}))
        for k, v in pts:
            parts.append(el("circle", {"class": f"sdot l{s}", "cx": _f(X(k)), "cy": _f(Y(v)), "r": 3},
                            el("title", None, f"{label} at {xs[k]}: {v:.3f}")))
        ly = mt + 10 + 18 * s
        parts.append(el("line", {"class": f"sline l{s}", "x1": ml + pw + 14, "x2": ml + pw + 30,
                                 "y1": ly, "y2": ly}))
        parts.append(el("text", {"class": "tick", "x": ml + pw + 36, "y": ly + 4}, label))
    parts.append(el("text", {"class": "axis", "x": _f(ml + pw / 2), "y": h - 4, "text-anchor": "middle"},
                    axis))
    return _svg(w, h, title, *parts, cls="chart curve lines")
