"""RAGChecker's metric algebra: one pure function per metric over a sample's verdicts
(anchors §1.5, §2.4). Their names, directions, labels and RAGChecker's empties are facts of
the catalogue (``engine.catalogue``), which computes them all in one pass.

Only ``entailed`` counts as true. A metric whose denominator is empty is *undefined*
with a reason; it is never NaN and never a silent 0 (RAGChecker returns 0.0 there,
Ragas NaN or an exception).

``compat="ragchecker"`` gives RAGChecker's own numbers instead: its ``computation.py`` agrees
with ours wherever every denominator is non-empty, and where one is empty it writes 0.0 (with
R response claims, G reference claims and n chunks):

- precision when R = 0; recall when G = 0; f1 unless precision and recall are both > 0;
- claim_recall and context_precision when G = 0; context_precision when n = 0 (claim_recall
  is 0.0 there in both modes: no reference claim is covered);
- context_utilization when no reference claim is covered by a chunk (G = 0 and n = 0 included);
- both noise modes when R = 0, G = 0 or n = 0; hallucination, self_knowledge and
  faithfulness when R = 0 or n = 0 (where we count every claim as unsupported).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from ..errors import InvalidInput
from ..verdicts import Verdict
from .matrix import ClaimVerdicts

__all__ = ["NO_REFERENCE", "COMPAT_MODES", "Compat", "Judged", "METRIC_RANGE", "MetricValue", "check_compat", "chunk_relevance",
           "claim_flags", "relevance_of", "claim_recall", "context_precision", "context_utilization", "f1",
           "faithfulness", "hallucination", "noise_sensitivity_irrelevant",
           "noise_sensitivity_relevant", "precision", "recall", "self_knowledge"]

#: ``None`` is our default (typed undefined); ``"ragchecker"`` reproduces its computation.py.
Compat = Literal["ragchecker"]
COMPAT_MODES: tuple[str, ...] = ("ragchecker",)

NO_RESPONSE_CLAIMS = "no response claims"
NO_REFERENCE_CLAIMS = "no reference claims"
NO_CHUNKS = "no retrieved chunks"
NO_RELEVANCE = "no reference claims, so no chunk can be judged relevant"
NO_COVERED_REFERENCE = "no reference claim is entailed by any chunk"
#: The sample has no reference at all (a trace without a golden row): every metric that
#: reads the reference is undefined with this reason.
NO_REFERENCE = "no reference"


#: Every metric's value, and so every mean, lies in this closed interval (gates check it).
METRIC_RANGE: tuple[float, float] = (0.0, 1.0)


@dataclass(frozen=True)
class MetricValue:
    """One metric for one sample: a fraction in ``METRIC_RANGE``, or ``None`` with a reason."""

    value: float | None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


def _mean(flags: Sequence[bool], undefined_reason: str) -> MetricValue:
    if not flags:
        return MetricValue(None, undefined_reason)
    return MetricValue(sum(flags) / len(flags))


def chunk_relevance(cv: ClaimVerdicts) -> tuple[bool, ...]:
    """A chunk is relevant iff it entails at least one reference claim."""
    return tuple(
        any(row[j] is Verdict.ENTAILED for row in cv.retrieved2answer) for j in range(cv.n_chunks)
    )


@dataclass(frozen=True)
class ClaimFlags:
    """Per-response-claim booleans the noise metrics are built from."""

    correct: tuple[bool, ...]
    relevant_faithful: tuple[bool, ...]
    irrelevant_faithful: tuple[bool, ...]  # exclusive: never true when relevant_faithful is
    faithful: tuple[bool, ...]


def claim_flags(cv: ClaimVerdicts, relevant: Sequence[bool] | None = None) -> ClaimFlags:
    rel = chunk_relevance(cv) if relevant is None else tuple(relevant)
    correct = tuple(v is Verdict.ENTAILED for v in cv.answer2response)
    rel_f: list[bool] = []
    irr_f: list[bool] = []
    faithful: list[bool] = []
    for row in cv.retrieved2response:
        supported = [v is Verdict.ENTAILED for v in row]
        by_relevant = any(s and r for s, r in zip(supported, rel, strict=True))
        by_irrelevant = any(s and not r for s, r in zip(supported, rel, strict=True))
        rel_f.append(by_relevant)
        irr_f.append(by_irrelevant and not by_relevant)
        faithful.append(any(supported))
    return ClaimFlags(correct, tuple(rel_f), tuple(irr_f), tuple(faithful))


def check_compat(compat: object) -> Compat | None:
    """``None`` or a known compatibility mode; anything else is refused with the choices."""
    if compat is None or compat == "ragchecker":
        return compat
    raise InvalidInput(f"unknown compat mode {compat!r}; use one of: {', '.join(COMPAT_MODES)} "
                       "(or None, the default: a metric without a denominator is undefined)")


def relevance_of(cv: ClaimVerdicts, relevant: Sequence[bool] | None) -> tuple[bool, ...]:
    """``relevant`` (one flag per chunk, e.g. from people's labels), checked for shape; None:
    the judge's (``chunk_relevance``)."""
    if relevant is None:
        return chunk_relevance(cv)
    rel = tuple(bool(r) for r in relevant)
    if len(rel) != cv.n_chunks:
        raise ValueError(f"relevant has {len(rel)} flags, expected one per chunk ({cv.n_chunks})")
    return rel


@dataclass(frozen=True)
class Judged:
    """One sample's verdicts and what several metrics read from them, each worked out once
    (a metric function takes this, so the eleven share one pass). ``labels``: which chunks
    are relevant when known otherwise than from the judge (people's labels); by default a
    chunk is relevant iff it entails a reference claim."""

    cv: ClaimVerdicts
    labels: tuple[bool, ...] | None = None

    @cached_property
    def relevant(self) -> tuple[bool, ...]:
        return relevance_of(self.cv, self.labels)

    @property
    def knows_relevance(self) -> bool:
        """Labels say which chunks are relevant without any reference claim; the judge cannot."""
        return bool(self.cv.reference_claims) or self.labels is not None

    @cached_property
    def flags(self) -> ClaimFlags:
        return claim_flags(self.cv, self.relevant)

    @cached_property
    def incorrect(self) -> tuple[bool, ...]:
        return tuple(not c for c in self.flags.correct)

    @cached_property
    def covered(self) -> tuple[bool, ...]:
        """Per reference claim: entailed by some chunk."""
        return tuple(any(v is Verdict.ENTAILED for v in row) for row in self.cv.retrieved2answer)

    @cached_property
    def in_response(self) -> tuple[bool, ...]:
        """Per reference claim: entailed by the response."""
        return tuple(v is Verdict.ENTAILED for v in self.cv.response2answer)


def _noise(j: Judged, by: tuple[bool, ...]) -> MetricValue:
    if not j.knows_relevance:  # no chunk can be judged relevant
        return MetricValue(None, NO_RESPONSE_CLAIMS if not j.cv.response_claims else NO_RELEVANCE)
    return _mean([i and r for i, r in zip(j.incorrect, by, strict=True)], NO_RESPONSE_CLAIMS)


def noise_sensitivity_relevant(j: Judged) -> MetricValue:
    """Wrong claims entailed by a relevant chunk, over response claims."""
    return _noise(j, j.flags.relevant_faithful)


def noise_sensitivity_irrelevant(j: Judged) -> MetricValue:
    """Wrong claims entailed only by irrelevant chunks, over response claims."""
    return _noise(j, j.flags.irrelevant_faithful)


def hallucination(j: Judged) -> MetricValue:
    """Wrong claims no chunk entails, over response claims."""
    return _mean([i and not fa for i, fa in zip(j.incorrect, j.flags.faithful, strict=True)],
                 NO_RESPONSE_CLAIMS)


def self_knowledge(j: Judged) -> MetricValue:
    """Correct claims no chunk entails, over response claims."""
    return _mean([c and not fa for c, fa in zip(j.flags.correct, j.flags.faithful, strict=True)],
                 NO_RESPONSE_CLAIMS)


def faithfulness(j: Judged) -> MetricValue:
    """Claims some chunk entails, over response claims."""
    return _mean(list(j.flags.faithful), NO_RESPONSE_CLAIMS)


def precision(j: Judged) -> MetricValue:
    """Response claims the reference entails (correctness)."""
    return _mean(list(j.flags.correct), NO_RESPONSE_CLAIMS)


def recall(j: Judged) -> MetricValue:
    """Reference claims the response entails (completeness)."""
    return _mean(list(j.in_response), NO_REFERENCE_CLAIMS)


def f1(j: Judged) -> MetricValue:
    """Harmonic mean of precision and recall; undefined with either."""
    p, r = precision(j), recall(j)
    if p.value is None or r.value is None:
        return MetricValue(None, p.reason or r.reason)
    if p.value + r.value == 0:
        return MetricValue(0.0)
    return MetricValue(2 * p.value * r.value / (p.value + r.value))


def claim_recall(j: Judged) -> MetricValue:
    """Reference claims some chunk entails."""
    return _mean(list(j.covered), NO_REFERENCE_CLAIMS)


def context_precision(j: Judged) -> MetricValue:
    """Chunks that entail a reference claim, over chunks."""
    if j.cv.n_chunks == 0:
        return MetricValue(None, NO_CHUNKS)
    if not j.knows_relevance:
        return MetricValue(None, NO_RELEVANCE)
    return _mean(list(j.relevant), NO_CHUNKS)


def context_utilization(j: Judged) -> MetricValue:
    """Of the reference claims the chunks cover, the share the response states."""
    used = [iv for cov, iv in zip(j.covered, j.in_response, strict=True) if cov]
    return _mean(used, NO_REFERENCE_CLAIMS if not j.cv.reference_claims else NO_COVERED_REFERENCE)
