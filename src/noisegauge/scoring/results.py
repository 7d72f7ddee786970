"""Per-sample results: a status, every metric, the evidence and the judge usage.

A result and its output row (``to_row``, the CONTRACTS JSONL shape) carry the same
information: ``SampleResult.from_row`` rebuilds the result from a row, hints included, so a
run's ``Report`` can be built from the rows it journals and a resumed run reports exactly
what an uninterrupted one does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..engine import catalogue
from ..engine.catalogue import compute_metrics
from ..engine.evidence import (
    ChunkEvidence,
    Evidence,
    MisattributedSpan,
    ReferenceClaimEvidence,
    ResponseClaimEvidence,
    build_evidence,
)
from ..engine.matrix import ClaimVerdicts
from ..engine.metrics import NO_REFERENCE, NO_RESPONSE_CLAIMS, Compat, MetricValue
from ..engine.relevancy import RelevancyEvidence
from ..infra.nogc import nogc
from ..judges.base import Usage
from ..verdicts import Verdict
from .failures import ErrorKind
from .misattribution import find_misattributions
from .misattribution import rules as misattribution_rules
from .provenance import closest_chunk, paraphrase_doubt

__all__ = ["JudgeEvidence", "MetricResult", "SampleResult", "Status",
           "error_result", "needs_reference", "result_from_verdicts", "with_misattributions"]

Status = Literal["ok", "undefined", "error"]


@dataclass(frozen=True)
class JudgeEvidence:
    """With several judges: what one judge group (other than the main one) found."""

    judge: Mapping[str, Any]
    metrics: tuple[str, ...]
    status: Status
    reason: str | None
    evidence: Evidence | None

    def to_dict(self) -> dict[str, Any]:
        ev = self.evidence.to_dict() if self.evidence is not None else None
        return {"judge": dict(self.judge), "metrics": list(self.metrics), "status": self.status,
                "reason": self.reason,
                "response_claims": ev["response_claims"] if ev else [],
                "reference_claims": ev["reference_claims"] if ev else [],
                "chunks": ev["chunks"] if ev else []}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeEvidence:
        return cls(judge=data.get("judge") or {}, metrics=tuple(data.get("metrics") or ()),
                   status=data.get("status", "ok"), reason=data.get("reason"),
                   evidence=evidence_from_dict(data))


@dataclass(frozen=True)
class SampleResult:
    """Everything known about one scored sample.

    ``status`` is ``error`` when the sample could not be judged (``reason`` says why and
    ``error_kind`` what failed), ``undefined`` when the response or the reference yielded
    no claims, else ``ok``. Individual metrics can still be undefined in an ``ok`` sample
    (e.g. no chunks). With several judges, ``evidence`` is the main judge's (the one that
    produced noise sensitivity) and ``by_judge`` holds the others'.
    """

    index: int | None
    id: str | None
    status: Status
    reason: str | None
    metrics: Mapping[str, MetricValue] = field(default_factory=dict)
    verdicts: ClaimVerdicts | None = None
    evidence: Evidence | None = None
    usage: Usage = field(default_factory=Usage)
    error_kind: ErrorKind | None = None
    by_judge: tuple[JudgeEvidence, ...] = ()
    #: ``noise_misattribution``: share of response claims carrying a detail stated in a chunk
    #: about another entity (see ``scoring.misattribution``).
    diagnostics: Mapping[str, MetricValue] = field(default_factory=dict)
    #: Answer Relevancy's questions and similarities, when it was asked for.
    relevancy: RelevancyEvidence | None = None

    def value(self, name: str) -> float | None:
        mv = self.metrics.get(name) or self.diagnostics.get(name)
        return None if mv is None else mv.value

    def to_row(self, extra: Sequence[str] = ()) -> dict[str, Any]:
        """The JSONL row shape promised in CONTRACTS.md, plus the ``extra`` metric columns."""
        ev = self.evidence.to_dict() if self.evidence is not None else None
        usage = self.usage
        metrics: dict[str, float | None] = {}
        undefined: dict[str, str | None] = {}
        family = catalogue.family()
        for name in (*family, *extra):
            mv = self.metrics.get(name)
            metrics[name] = None if mv is None else mv.value
            # An extra column of an error row has no reason of its own: the row's says it.
            if mv is not None and mv.value is None and (name in family
                                                        or self.status != "error"):
                undefined[name] = mv.reason
        undefined.update((name, mv.reason) for name, mv in self.diagnostics.items()
                         if mv.value is None)
        row: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "reason": self.reason,
            "error_kind": self.error_kind,
            "metrics": metrics,
            "undefined": undefined,
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
        if self.by_judge:
            row["evidence_by_judge"] = [j.to_dict() for j in self.by_judge]
        if self.relevancy is not None:
            row["answer_relevancy"] = self.relevancy.to_dict()
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any], verdicts: Mapping[str, Any] | None = None, *,
                 index: int | None = None) -> SampleResult:
        """The result a row was written from (``to_row(extra)`` gives the row back)."""
        undefined = row.get("undefined") or {}

        def values(block: Mapping[str, Any] | None) -> dict[str, MetricValue]:
            out: dict[str, MetricValue] = {}
            for name, value in (block or {}).items():
                if value is not None:
                    out[name] = MetricValue(float(value))
                elif name in undefined:
                    out[name] = MetricValue(None, undefined[name])
            return out

        metrics = values(row.get("metrics"))
        cv = ClaimVerdicts.from_dict(dict(verdicts)) if verdicts else None
        evidence = evidence_from_dict(row)
        if evidence is None and cv is not None:
            evidence = build_evidence(cv)
        return cls(index=index if index is not None else row.get("index"), id=row.get("id"),
                   status=row["status"], reason=row.get("reason"), metrics=metrics, verdicts=cv,
                   evidence=evidence, usage=Usage.from_dict(dict(row.get("usage") or {})),
                   error_kind=row.get("error_kind"),
                   by_judge=tuple(JudgeEvidence.from_dict(d)
                                  for d in row.get("evidence_by_judge") or ()),
                   diagnostics=values(row.get("diagnostics")),
                   relevancy=(RelevancyEvidence.from_dict(row["answer_relevancy"])
                              if row.get("answer_relevancy") else None))


def _floats(values: Sequence[float] | None) -> tuple[float, ...] | None:
    return None if values is None else tuple(values)


def _pair(values: Sequence[int] | None) -> tuple[int, int] | None:
    return None if values is None else (int(values[0]), int(values[1]))


def evidence_from_dict(data: Mapping[str, Any]) -> Evidence | None:
    """Evidence from its ``to_dict`` form (None when there is none: no claims, no chunks)."""
    resp, ref, chunks = (data.get("response_claims") or [], data.get("reference_claims") or [],
                         data.get("chunks") or [])
    if not (resp or ref or chunks) and data.get("status") == "error":
        return None
    return Evidence(
        response_claims=tuple(ResponseClaimEvidence(
            text=c["text"], correct=c["correct"], reference_verdict=Verdict(c["reference_verdict"]),
            entailed_by=tuple(c["entailed_by"]), contradicted_by=tuple(c["contradicted_by"]),
            bucket=c["bucket"], leaked_from=tuple(c["leaked_from"]),
            closest_chunk=c.get("closest_chunk"), closest_overlap=c.get("closest_overlap"),
            misattributed_from=tuple(c.get("misattributed_from") or ()),
            misattributed_spans=tuple(MisattributedSpan(int(m["chunk"]), int(m["start"]),
                                                        int(m["end"]), str(m.get("detail", "")))
                                      for m in c.get("misattributed_spans") or ()),
            reference_score=c.get("reference_score"), chunk_scores=_floats(c.get("chunk_scores")),
            uncertain=tuple(c.get("uncertain") or ()),
            paraphrase_doubt=_pair(c.get("paraphrase_doubt")))
            for c in resp),
        reference_claims=tuple(ReferenceClaimEvidence(
            text=c["text"], entailed_by=tuple(c["entailed_by"]), in_response=c["in_response"],
            response_verdict=Verdict(c["response_verdict"]),
            response_score=c.get("response_score"), chunk_scores=_floats(c.get("chunk_scores")),
            uncertain=tuple(c.get("uncertain") or ())) for c in ref),
        chunks=tuple(ChunkEvidence(index=c["index"], relevant=c["relevant"],
                            entails_reference_claims=tuple(c["entails_reference_claims"]),
                            entails_response_claims=tuple(c["entails_response_claims"]),
                            source=c.get("source"), relevance_from=c.get("relevance_from"),
                            relevant_by_judge=c.get("relevant_by_judge"))
                     for c in chunks))


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


@nogc
def _with_hints(evidence: Evidence, chunks: Sequence[str], reference: str,
                question: str, cv: ClaimVerdicts | None = None) -> Evidence:
    """On each wrong claim that no chunk entails: a ``closest_chunk`` hint, and the chunks it
    is misattributed from; on a wrong claim read as entailed (noise), the chunks among those
    that state it about another entity."""
    claims = []
    for c in evidence.response_claims:
        if c.correct:
            claims.append(c)
            continue
        if c.bucket == "irrelevant_noise" and c.chunk_scores is not None and cv is not None:
            # A scored judge (offline: it reads words); an LLM's verdicts carry no scores.
            doubt = paraphrase_doubt(c.leaked_from, chunks, cv.reference_claims, question,
                                     [[v is Verdict.ENTAILED for v in row]
                                      for row in cv.retrieved2answer])
            c = replace(c, paraphrase_doubt=doubt) if doubt else c
        if c.entailed_by:
            spans = find_misattributions(c.text, chunks, reference, question,
                                         entailed_by=c.entailed_by) \
                if misattribution_rules.on("entailed-swap") else ()
            claims.append(replace(c, misattributed_from=tuple(m.chunk for m in spans),
                                  misattributed_spans=spans) if spans else c)
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
                         reference: str | None = "", question: str = "",
                         compat: Compat | None = None,
                         relevant: Sequence[bool] | None = None) -> SampleResult:
    """Metrics, status and evidence of a judged sample; ``chunks`` (with the ``reference``
    and ``question`` texts) enable provenance hints and misattribution for wrong claims no
    chunk entails; ``compat="ragchecker"`` gives RAGChecker's values where a denominator is
    empty (the status still says why); ``relevant``: chunk relevance from labels (None: the
    judge's). ``reference=None``: the sample has no reference (``_without_reference``)."""
    if reference is None:
        return _without_reference(cv, index=index, id=id, usage=usage, compat=compat)
    metrics = compute_metrics(cv, compat=compat, relevant=relevant)
    status: Status = "ok"
    reason = None
    if not cv.response_claims:
        status, reason = "undefined", "no response claims (empty or refusal answer)"
    elif not cv.reference_claims:
        status, reason = "undefined", "no reference claims"
    evidence = build_evidence(cv, relevant)
    if chunks is not None:
        evidence = _with_hints(evidence, chunks, reference, question, cv)
    return SampleResult(index=index, id=id, status=status, reason=reason, metrics=metrics,
                        verdicts=cv, evidence=evidence, usage=usage or Usage(),
                        diagnostics={"noise_misattribution": misattribution_metric(evidence)})


#: The checks that read the reference or its claims: a metric reading any is undefined
#: without a reference (faithfulness reads only retrieved2response).
_REFERENCE_CHECKS = frozenset({"answer2response", "response2answer", "retrieved2answer"})


def needs_reference(name: str) -> bool:
    """Whether metric ``name`` is undefined without a reference (anchors: faithfulness is
    RAGChecker's only reference-free metric; hallucination needs the reference to call a
    claim wrong)."""
    try:
        checks = catalogue.spec(name).checks
    except KeyError:
        return True
    return bool(set(checks) & _REFERENCE_CHECKS)


def _without_reference(cv: ClaimVerdicts, *, index: int | None, id: str | None,
                       usage: Usage | None, compat: Compat | None) -> SampleResult:
    """A sample scored without a reference: faithfulness from the response claims against
    the chunks; every metric that needs the reference is undefined, "no reference" (also
    under ``compat="ragchecker"``: RAGChecker has no such row, and 0.0 would read as a
    score). In the evidence a claim no chunk entails is ``hallucination`` in the
    reference-free sense (unsupported), one a chunk entails ``grounded``; ``correct`` is
    unknown and written false."""
    computed = compute_metrics(cv, compat=compat)
    metrics = {name: MetricValue(None, NO_REFERENCE) if needs_reference(name) else mv
               for name, mv in computed.items()}
    # Extra columns read from the verdicts (ranked context precision) say it too, not the
    # reason their empty denominators would give.
    metrics.update((s.name, MetricValue(None, NO_REFERENCE)) for s in catalogue.all_specs()
                   if s.kind == "extra" and s.compute is not None and needs_reference(s.name))
    evidence = build_evidence(cv)
    claims = tuple(replace(c, bucket="grounded" if c.entailed_by else "hallucination",
                           leaked_from=()) for c in evidence.response_claims)
    evidence = replace(evidence, response_claims=claims)
    if cv.response_claims:
        status: Status = "undefined"
        reason = f"{NO_REFERENCE}: only faithfulness is defined without one"
    else:
        status, reason = "undefined", "no response claims (empty or refusal answer)"
    return SampleResult(index=index, id=id, status=status, reason=reason, metrics=metrics,
                        verdicts=cv, evidence=evidence, usage=usage or Usage(),
                        diagnostics={"noise_misattribution": MetricValue(None, NO_REFERENCE)})


def error_result(reason: str, *, index: int | None = None, id: str | None = None,
                 usage: Usage | None = None, kind: ErrorKind | None = None) -> SampleResult:
    return SampleResult(index=index, id=id, status="error", reason=reason or "(no reason given)",
                        metrics={name: MetricValue(None, "error") for name in catalogue.family()},
                        usage=usage or Usage(), error_kind=kind,
                        diagnostics={name: MetricValue(None, "error") for name in catalogue.diagnostics()})
