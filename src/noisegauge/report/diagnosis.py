"""Retrieval or generator? The reading bands and the quadrant diagnosis, as pure functions.

Users read a mean noise sensitivity against three bands (about 0 / 0.1-0.3 / above 0.4)
and cross it with context precision, per sample: low context precision *and* high noise
sensitivity means retrieval brought the noise (fix retrieval first); high context precision
but high noise sensitivity means the generator copied noise out of mostly right chunks (fix
the generator or its prompt). This module turns per-sample points into those quadrants and
the run into a one-paragraph verdict naming the side to fix and the samples that drive it.
No I/O, no HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Band", "Point", "Quadrant", "QUADRANTS", "Verdict", "CP_LOW", "NS_HIGH",
           "MISATTRIBUTED_COUNTS", "band", "quadrant", "diagnose"]

#: How the metrics count a misattributed claim (said by the report's legend and diagnosis):
#: misattribution is a diagnostic beside the buckets, never one of them.
MISATTRIBUTED_COUNTS = ("the metrics count it in its own bucket: hallucination where no chunk "
                        "entails it, relevant or irrelevant noise where the judge reads a chunk "
                        "as entailing it")

#: Context precision below this is "low": most retrieved chunks are not relevant.
CP_LOW = 0.5
#: Noise sensitivity (both modes added) from this up is "high" for one sample: it leaves the
#: "about 0" band, i.e. at least one claim in ten was copied wrong out of a chunk.
NS_HIGH = 0.1

Quadrant = Literal["retrieval", "generator", "noisy_retrieval", "healthy"]
Side = Literal["retrieval", "generator", "both", "none", "undetermined"]

#: quadrant -> (label shown on the scatter, what it means)
QUADRANTS: dict[Quadrant, tuple[str, str]] = {
    "retrieval": ("fix retrieval first",
                  "low context precision and high noise sensitivity: the noise was retrieved"),
    "generator": ("fix the generator or its prompt",
                  "high context precision but high noise sensitivity: the model copied noise "
                  "out of mostly relevant chunks"),
    "noisy_retrieval": ("noisy but harmless",
                        "low context precision, low noise sensitivity: the model ignored the "
                        "noise (tighter retrieval would save tokens, not fix answers)"),
    "healthy": ("healthy", "high context precision, low noise sensitivity"),
}


@dataclass(frozen=True)
class Band:
    key: Literal["zero", "low", "occasional", "between", "red"]
    label: str
    advice: str


_ZERO = Band("zero", "about 0", "the generator ignores noise; every wrong claim is at least not "
             "copied from the context")
_LOW = Band("low", "near 0", "below the 0.1 mark: leakage is rare; glance at the flagged samples")
_OCCASIONAL = Band("occasional", "occasional leakage (0.1-0.3)", "triage the flagged questions "
                   "(often two similar entities, tiers, versions or dates)")
_BETWEEN = Band("between", "more than occasional (0.3-0.4)", "more than occasional leakage, "
                "short of the red flag: triage the flagged questions now")
_RED = Band("red", "red flag (above 0.4)", "a large share of the answer comes from chunks that "
            "should not inform it")


def band(value: float) -> Band:
    """The reading of a mean noise sensitivity: about 0 (< 0.05), near 0 (< 0.1),
    occasional (0.1-0.3), between (0.3-0.4], red flag (above 0.4)."""
    if value < 0.05:
        return _ZERO
    if value < 0.1:
        return _LOW
    if value <= 0.3:
        return _OCCASIONAL
    if value <= 0.4:
        return _BETWEEN
    return _RED


@dataclass(frozen=True)
class Point:
    """One sample on the scatter: its context precision and noise sensitivity (both modes)."""

    index: int
    id: str
    context_precision: float
    ns_relevant: float
    ns_irrelevant: float
    misattributed: int = 0  # response claims carrying another entity's detail

    @property
    def noise(self) -> float:
        return self.ns_relevant + self.ns_irrelevant  # the modes never count the same claim


def quadrant(p: Point, cp_low: float = CP_LOW, ns_high: float = NS_HIGH) -> Quadrant:
    high = p.noise >= ns_high
    low_cp = p.context_precision < cp_low
    if high:
        return "retrieval" if low_cp else "generator"
    return "noisy_retrieval" if low_cp else "healthy"


@dataclass(frozen=True)
class Verdict:
    """``side``: what to fix; ``text``: the paragraph; ``drivers``: (index, id) of the
    samples that drive it, worst first; ``counts``: samples per quadrant."""

    side: Side
    headline: str
    text: str
    drivers: tuple[tuple[int, str], ...]
    counts: dict[Quadrant, int]

    def plain(self) -> str:
        """The paragraph with the driving samples named."""
        if not self.drivers:
            return self.text
        return f"{self.text} Driven by: {', '.join(i for _, i in self.drivers)}."


def _pct(k: int, n: int) -> str:
    return f"{k} of {n}"


def diagnose(points: Sequence[Point], *, left_out: int = 0, cp_low: float = CP_LOW,
             ns_high: float = NS_HIGH, max_drivers: int = 5) -> Verdict:
    """The run's verdict from its samples' points. ``left_out``: samples that could not be
    placed (error, undefined, or no retrieved chunks), mentioned so nothing hides."""
    counts: dict[Quadrant, int] = dict.fromkeys(QUADRANTS, 0)
    for p in points:
        counts[quadrant(p, cp_low, ns_high)] += 1
    n = len(points)
    skipped = (f" {left_out} sample(s) could not be placed (error, undefined, or no chunks) "
               "and are left out.") if left_out else ""
    if n == 0:
        return Verdict("undetermined", "Not enough data to diagnose",
                       "No sample has both context precision and noise sensitivity defined, so "
                       "the run cannot be placed on the retrieval-vs-generator map." + skipped,
                       (), counts)
    leaking = sorted((p for p in points if p.noise >= ns_high),
                     key=lambda p: (-p.noise, p.index))
    misattr = sum(p.misattributed for p in points)
    mis_note = (f" Besides, {misattr} claim(s) in {sum(1 for p in points if p.misattributed)} "
                "sample(s) carry a detail stated in a chunk about another entity (misattributed "
                f"noise; {MISATTRIBUTED_COUNTS})." if misattr else "")
    if not leaking:
        noisy = counts["noisy_retrieval"]
        extra = (f" Retrieval is noisy (context precision below {cp_low:g} in {_pct(noisy, n)} "
                 "samples) but harmless here; tightening it would save tokens, not fix answers."
                 if noisy * 2 > n else "")
        return Verdict("none", "The generator ignores noise",
                       f"No sample copies wrong claims out of its chunks (noise sensitivity below "
                       f"{ns_high:g} in all {n} samples)." + extra + mis_note + skipped, (), counts)
    k = len(leaking)
    mean_rel = sum(p.ns_relevant for p in points) / n
    mean_irr = sum(p.ns_irrelevant for p in points) / n
    if band(mean_rel).key == "zero" and band(mean_irr).key == "zero":
        # A few leaking samples do not make a run to fix: the verdict follows the means the
        # overview shows, and names the samples to look at.
        worst = tuple((p.index, p.id) for p in leaking[:max_drivers])
        return Verdict("none", "Noise is about 0 overall",
                       f"Both noise modes read about 0 (relevant {mean_rel:.3f}, irrelevant "
                       f"{mean_irr:.3f}), so neither retrieval nor the generator needs fixing "
                       f"for it; {_pct(k, n)} samples do copy wrong claims out of their chunks "
                       f"(noise sensitivity ≥ {ns_high:g}): worth a look." + mis_note + skipped,
                       worst, counts)
    retr = [p for p in leaking if p.context_precision < cp_low]
    gen = [p for p in leaking if p.context_precision >= cp_low]
    w_r = sum(p.noise for p in retr)
    w_g = sum(p.noise for p in gen)
    share = w_r / (w_r + w_g)
    rel = sum(p.ns_relevant for p in leaking)
    irr = sum(p.ns_irrelevant for p in leaking)
    lead = f"{_pct(k, n)} samples copy wrong claims out of their chunks (noise sensitivity ≥ {ns_high:g})."
    side: Side
    if share >= 2 / 3:
        side, drivers = "retrieval", retr
        headline = "Fix retrieval first"
        body = (f" {_pct(len(retr), k)} of them have low context precision (below {cp_low:g}): "
                "the wrong claims come with chunks that should not have been retrieved. Tighten "
                "retrieval (chunking, embeddings, reranking, a smaller top-k) before the prompt.")
    elif share <= 1 / 3:
        side, drivers = "generator", gen
        headline = "Fix the generator or its prompt"
        body = (f" {_pct(len(gen), k)} of them retrieved mostly relevant chunks (context "
                f"precision {cp_low:g} or more) and still copied noise: ask the model to answer "
                "only from the passage about the asked entity, or add a verification step.")
    else:
        side, drivers = "both", leaking
        headline = "Both retrieval and the generator"
        body = (f" {len(retr)} of them have low context precision (fix retrieval) and "
                f"{len(gen)} high context precision (fix the generator or its prompt); "
                "neither side dominates.")
    mode = ""
    if rel >= 0.4 * (rel + irr):
        share_rel = round(100 * rel / (rel + irr))
        mode = (f" {share_rel}% of the leakage comes from relevant chunks: a wrong or outdated "
                "detail inside a chunk that is otherwise right, which a smaller top-k does not "
                "remove; check chunking and stale documents.")
    picked = tuple((p.index, p.id) for p in sorted(drivers, key=lambda p: (-p.noise, p.index))
                   [:max_drivers])
    return Verdict(side, headline, lead + body + mode + mis_note + skipped, picked, counts)
