"""Per-sample results: a status, every metric, the evidence and the judge usage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..engine.evidence import Evidence, MisattributedSpan, build_evidence
from ..engine.matrix import ClaimVerdicts
from ..engine.metrics import METRIC_NAMES, NO_RESPONSE_CLAIMS, Compat, MetricValue, compute_metrics
from ..engine.relevancy import RelevancyEvidence
from ..judges.base import Usage
from .misattribution import find_misattributions
from .provenance import closest_chunk

__all__ = ["DIAGNOSTIC_NAMES", "Status", "SampleResult", "MetricResult", "result_from_verdicts",
           "error_result", "with_misattributions"]

#: Diagnostics beside the metric family: never part of its algebra, never in ``metrics``.
DIAGNOSTIC_NAMES: tuple[str, ...] = ("noise_misattribution",)

Status = Literal["ok", "undefined", "error"]


@dataclass(frozen=True)
class SampleResult:
    """Everything known about one scored sample.

    ``status`` is ``error`` when the sample could not be judged (``reason`` says why),
    ``undefined`` when the response or the reference yielded no claims, else ``ok``.
    Individual metrics can still be undefined in an ``ok`` sample (e.g. no chunks).
    """

    index: int | None
    id: str | None
    status: Status
    reason: str | None
    metrics: Mapping[str, MetricValue] = field(default_factory=dict)
    verdicts: ClaimVerdicts | None = None
    evidence: Evidence | None = None
    usage: Usage = field(default_factory=Usage)
    #: ``noise_misattribution``: share of response claims carrying a detail stated in a chunk
    #: about another entity (see ``scoring.misattribution``).
    diagnostics: Mapping[str, MetricValue] = field(default_factory=dict)
    #: Answer Relevancy's questions and similarities, when it was asked for.
    relevancy: RelevancyEvidence | None = None

    def value(self, name: str) -> float | None:
        mv = self.metrics.get(name) or self.diagnostics.get(name)
        return None if mv is None else mv.value

    def to_row(self) -> dict[str, Any]:
        """The JSONL row shape promised in CONTRACTS.md."""
        ev = self.evidence.to_dict() if self.evidence is not None else None
        usage = self.usage
        row: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "reason": self.reason,
            "metrics": {name: (self.metrics[name].value if name in self.metrics else None)
                        for name in METRIC_NAMES},
            "undefined": {name: mv.reason for name, mv in (*self.metrics.items(),
                                                          *self.diagnostics.items())
                          if mv.value is None},
            "diagnostics": {name: mv.value for name, mv in self.diagnostics.items()},
            "response_claims": ev["response_claims"] if ev else [],
            "reference_claims": ev["reference_claims"] if ev else [],
            "chunks": ev["chunks"] if ev else [],
            **({"uncertain": {k: list(v) for k, v in self.verdicts.uncertain_counts().items()}}
               if self.verdicts is not None and self.verdicts.scores is not None else {}),
            "usage": {"calls": usage.calls, "cached_calls": usage.cached_calls,
                      "retries": usage.retries, "prompt_tokens": usage.prompt_tokens,
                      "completion_tokens": usage.completion_tokens, "cost_usd": usage.cost_usd,
                      "re_asks": usage.re_asks, "fallbacks": usage.fallbacks,
                      "timeouts": usage.timeouts, "failed_calls": usage.failed_calls},
        }
        if self.relevancy is not None:
            row["answer_relevancy"] = self.relevancy.to_dict()
        return row


@dataclass(frozen=True)
class MetricResult:
    """One metric for one sample, as the seed documents use it: ``result.value``.

    ``sample`` holds the whole judged pass (both noise modes, every sibling metric and
    the evidence), so reading another metric costs nothing.
    """

    name: str
    value: float | None
    status: Status
    reason: str | None
    sample: SampleResult

    def __float__(self) -> float:
        if self.value is None:
            raise ValueError(f"{self.name} is {self.status}: {self.reason}")
        return self.value


def misattribution_metric(evidence: Evidence) -> MetricValue:
    """Share of response claims that are misattributed (undefined without claims)."""
    claims = evidence.response_claims
    if not claims:
        return MetricValue(None, NO_RESPONSE_CLAIMS)
    return MetricValue(sum(1 for c in claims if c.misattributed_from) / len(claims))


def _with_hints(evidence: Evidence, chunks: Sequence[str], reference: str,
                question: str) -> Evidence:
    claims = []
    for c in evidence.response_claims:
        if c.entailed_by:
            claims.append(c)
            continue
        hint = closest_chunk(c.text, chunks, reference)
        if hint is not None:
            c = replace(c, closest_chunk=hint[0], closest_overlap=hint[1])
        if c.bucket == "hallucination":
            spans = find_misattributions(c.text, chunks, reference, question)
            c = replace(c, misattributed_from=tuple(m.chunk for m in spans),
                        misattributed_spans=spans)
        claims.append(c)
    return replace(evidence, response_claims=tuple(claims))


def with_misattributions(result: SampleResult,
                         found: Mapping[int, Sequence[MisattributedSpan]]) -> SampleResult:
    """``result`` with the misattributions of its response claims replaced by ``found``
    (claim index -> spans; claims not in it keep theirs), e.g. from an LLM judge."""
    if result.evidence is None:
        return result
    claims = tuple(
        replace(c, misattributed_from=tuple(m.chunk for m in found[i]),
                misattributed_spans=tuple(found[i])) if i in found else c
        for i, c in enumerate(result.evidence.response_claims))
    evidence = replace(result.evidence, response_claims=claims)
    return replace(result, evidence=evidence,
                   diagnostics={**result.diagnostics,
                                "noise_misattribution": misattribution_metric(evidence)})


def result_from_verdicts(cv: ClaimVerdicts, *, index: int | None = None, id: str | None = None,
                         usage: Usage | None = None,
                         chunks: Sequence[str] | None = None,
                         reference: str = "", question: str = "",
                         compat: Compat | None = None) -> SampleResult:
    """Metrics, status and evidence of a judged sample; ``chunks`` (with the ``reference``
    and ``question`` texts) enable provenance hints and misattribution for claims no chunk
    entails; ``compat="ragchecker"`` gives RAGChecker's values where a denominator is empty
    (the status still says why)."""
    metrics = compute_metrics(cv, compat=compat)
    status: Status = "ok"
    reason = None
    if not cv.response_claims:
        status, reason = "undefined", "no response claims (empty or refusal answer)"
    elif not cv.reference_claims:
        status, reason = "undefined", "no reference claims"
    evidence = build_evidence(cv)
    if chunks is not None:
        evidence = _with_hints(evidence, chunks, reference, question)
    return SampleResult(index=index, id=id, status=status, reason=reason, metrics=metrics,
                        verdicts=cv, evidence=evidence, usage=usage or Usage(),
                        diagnostics={"noise_misattribution": misattribution_metric(evidence)})


def error_result(reason: str, *, index: int | None = None, id: str | None = None,
                 usage: Usage | None = None) -> SampleResult:
    return SampleResult(index=index, id=id, status="error", reason=reason,
                        metrics={name: MetricValue(None, "error") for name in METRIC_NAMES},
                        usage=usage or Usage(),
                        diagnostics={name: MetricValue(None, "error") for name in DIAGNOSTIC_NAMES})
