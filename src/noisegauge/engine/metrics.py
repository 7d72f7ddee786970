"""RAGChecker's metric algebra as one pure function (anchors §1.5, §2.4).

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
from typing import Literal

from ..errors import InvalidInput
from ..verdicts import Verdict
from .matrix import ClaimVerdicts

__all__ = ["COMPAT_MODES", "Compat", "METRIC_CHECKS", "METRIC_NAMES", "METRIC_RANGE", "MetricValue",
           "check_compat", "chunk_relevance", "claim_flags", "compute_metrics", "relevance_of"]

#: ``None`` is our default (typed undefined); ``"ragchecker"`` reproduces its computation.py.
Compat = Literal["ragchecker"]
COMPAT_MODES: tuple[str, ...] = ("ragchecker",)

METRIC_NAMES: tuple[str, ...] = (
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "hallucination",
    "self_knowledge",
    "faithfulness",
    "precision",
    "recall",
    "f1",
    "claim_recall",
    "context_precision",
    "context_utilization",
)

#: The checks (``ClaimVerdicts`` matrices) each metric reads: a doubtful verdict in one of
#: them is a doubt about that metric.
METRIC_CHECKS: dict[str, tuple[str, ...]] = {
    "noise_sensitivity_relevant": ("answer2response", "retrieved2response", "retrieved2answer"),
    "noise_sensitivity_irrelevant": ("answer2response", "retrieved2response", "retrieved2answer"),
    "hallucination": ("answer2response", "retrieved2response"),
    "self_knowledge": ("answer2response", "retrieved2response"),
    "faithfulness": ("retrieved2response",),
    "precision": ("answer2response",),
    "recall": ("response2answer",),
    "f1": ("answer2response", "response2answer"),
    "claim_recall": ("retrieved2answer",),
    "context_precision": ("retrieved2answer",),
    "context_utilization": ("retrieved2answer", "response2answer"),
}

NO_RESPONSE_CLAIMS = "no response claims"
NO_REFERENCE_CLAIMS = "no reference claims"
NO_CHUNKS = "no retrieved chunks"
NO_RELEVANCE = "no reference claims, so no chunk can be judged relevant"
NO_COVERED_REFERENCE = "no reference claim is entailed by any chunk"


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


def compute_metrics(cv: ClaimVerdicts, *, compat: Compat | None = None,
                    relevant: Sequence[bool] | None = None) -> dict[str, MetricValue]:
    """Every RAGChecker metric for one sample, keyed by the names in ``METRIC_NAMES``;
    ``compat="ragchecker"`` for RAGChecker's values where a denominator is empty.
    ``relevant``: which chunks are relevant, when known otherwise than from the judge (labels);
    by default a chunk is relevant iff it entails a reference claim."""
    out = _typed_metrics(cv, relevant)
    return out if check_compat(compat) is None else _ragchecker_empties(cv, out)


def _typed_metrics(cv: ClaimVerdicts, relevant: Sequence[bool] | None = None) -> dict[str, MetricValue]:
    rel = relevance_of(cv, relevant)
    f = claim_flags(cv, rel)
    # Labels say which chunks are relevant without any reference claim; the judge cannot.
    has_ref = bool(cv.reference_claims) or relevant is not None
    out: dict[str, MetricValue] = {}

    # Generator-side metrics: denominator = response claims.
    incorrect = [not c for c in f.correct]
    if has_ref:
        out["noise_sensitivity_relevant"] = _mean(
            [i and r for i, r in zip(incorrect, f.relevant_faithful, strict=True)], NO_RESPONSE_CLAIMS)
        out["noise_sensitivity_irrelevant"] = _mean(
            [i and r for i, r in zip(incorrect, f.irrelevant_faithful, strict=True)], NO_RESPONSE_CLAIMS)
    else:
        reason = NO_RESPONSE_CLAIMS if not cv.response_claims else NO_RELEVANCE
        out["noise_sensitivity_relevant"] = MetricValue(None, reason)
        out["noise_sensitivity_irrelevant"] = MetricValue(None, reason)
    out["hallucination"] = _mean(
        [i and not fa for i, fa in zip(incorrect, f.faithful, strict=True)], NO_RESPONSE_CLAIMS)
    out["self_knowledge"] = _mean(
        [c and not fa for c, fa in zip(f.correct, f.faithful, strict=True)], NO_RESPONSE_CLAIMS)
    out["faithfulness"] = _mean(list(f.faithful), NO_RESPONSE_CLAIMS)

    # Overall: correctness and completeness against the reference.
    precision = _mean(list(f.correct), NO_RESPONSE_CLAIMS)
    recall = _mean([v is Verdict.ENTAILED for v in cv.response2answer], NO_REFERENCE_CLAIMS)
    out["precision"] = precision
    out["recall"] = recall
    if precision.value is None or recall.value is None:
        out["f1"] = MetricValue(None, precision.reason or recall.reason)
    elif precision.value + recall.value == 0:
        out["f1"] = MetricValue(0.0)
    else:
        p, r = precision.value, recall.value
        out["f1"] = MetricValue(2 * p * r / (p + r))

    # Retriever-side metrics.
    covered = [any(v is Verdict.ENTAILED for v in row) for row in cv.retrieved2answer]
    out["claim_recall"] = _mean(covered, NO_REFERENCE_CLAIMS)
    if cv.n_chunks == 0:
        out["context_precision"] = MetricValue(None, NO_CHUNKS)
    elif not has_ref:
        out["context_precision"] = MetricValue(None, NO_RELEVANCE)
    else:
        out["context_precision"] = _mean(list(rel), NO_CHUNKS)
    in_response = [v is Verdict.ENTAILED for v in cv.response2answer]
    used = [iv for cov, iv in zip(covered, in_response, strict=True) if cov]
    out["context_utilization"] = _mean(
        used, NO_REFERENCE_CLAIMS if not has_ref else NO_COVERED_REFERENCE)
    return out


_ZERO = MetricValue(0.0)


def _ragchecker_empties(cv: ClaimVerdicts, out: dict[str, MetricValue]) -> dict[str, MetricValue]:
    """``out`` with each empty-denominator case replaced by RAGChecker's branch for it."""
    r, g, n = len(cv.response_claims), len(cv.reference_claims), cv.n_chunks
    if r == 0:
        out["precision"] = _ZERO
    if g == 0:
        out["recall"] = _ZERO
    p, rc = out["precision"].value, out["recall"].value
    assert p is not None and rc is not None  # defined above or by the typed pass
    out["f1"] = MetricValue(2 * p * rc / (p + rc)) if p > 0 and rc > 0 else _ZERO
    # evaluate_retrieval guards len(retrieved2answer) > 0 and len(retrieved2answer[0]) > 0
    if g == 0 or n == 0:
        out["claim_recall"] = out["context_precision"] = _ZERO
    if not any(v is Verdict.ENTAILED for row in cv.retrieved2answer for v in row):
        out["context_utilization"] = _ZERO
    if r == 0 or n == 0:
        out["hallucination"] = out["self_knowledge"] = out["faithfulness"] = _ZERO
    if r == 0 or n == 0 or g == 0:
        out["noise_sensitivity_relevant"] = out["noise_sensitivity_irrelevant"] = _ZERO
    return out
