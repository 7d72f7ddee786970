"""Per-claim evidence: why each number is what it is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..verdicts import Verdict
from .matrix import ClaimVerdicts, VerdictScores
from .metrics import claim_flags, relevance_of

__all__ = ["Bucket", "MisattributedSpan", "ResponseClaimEvidence", "ReferenceClaimEvidence", "ChunkEvidence",
           "Evidence", "build_evidence"]

Bucket = Literal["relevant_noise", "irrelevant_noise", "hallucination", "self_knowledge", "grounded"]


@dataclass(frozen=True)
class MisattributedSpan:
    """Where chunk ``chunk`` states a wrong claim's detail about another entity:
    ``chunk_text[start:end] == detail`` (e.g. "90-day")."""

    chunk: int
    start: int
    end: int
    detail: str


@dataclass(frozen=True)
class ResponseClaimEvidence:
    """A response claim, its correctness, its support, and where it falls."""

    text: str
    correct: bool
    reference_verdict: Verdict
    entailed_by: tuple[int, ...]
    contradicted_by: tuple[int, ...]
    bucket: Bucket
    leaked_from: tuple[int, ...]  # chunks a noise claim is attributed to; empty otherwise
    #: For a claim no chunk entails: the chunk sharing most of its words (a hint, not a verdict).
    closest_chunk: int | None = None
    closest_overlap: float | None = None
    #: For a hallucination whose wrong detail a chunk states about another entity: those
    #: chunks, and the span of the detail in each (a diagnostic; no metric of the family reads it).
    misattributed_from: tuple[int, ...] = ()
    misattributed_spans: tuple[MisattributedSpan, ...] = ()
    #: The judge's scores, when it gives them: vs the reference, and vs each chunk.
    reference_score: float | None = None
    chunk_scores: tuple[float, ...] | None = None
    #: Verdicts inside the judge's uncertainty band: "reference" and/or chunk indices.
    uncertain: tuple[str | int, ...] = ()
    #: For irrelevant noise read by a word-based judge: (chunk, reference claim) that share
    #: most of the reference claim's words, yet the judge found no entailment. Whether the
    #: noise is relevant or irrelevant hangs on that verdict, which may be a paraphrase such a
    #: judge cannot read (a diagnostic: no metric reads it).
    paraphrase_doubt: tuple[int, int] | None = None


@dataclass(frozen=True)
class ReferenceClaimEvidence:
    text: str
    entailed_by: tuple[int, ...]
    in_response: bool
    response_verdict: Verdict
    response_score: float | None = None
    chunk_scores: tuple[float, ...] | None = None
    #: Verdicts inside the judge's uncertainty band: "response" and/or chunk indices.
    uncertain: tuple[str | int, ...] = ()


@dataclass(frozen=True)
class ChunkEvidence:
    index: int
    relevant: bool
    entails_reference_claims: tuple[int, ...]
    entails_response_claims: tuple[int, ...]
    #: The chunk's source: its id when the data gives one, else a digest of its text.
    source: str | None = None
    #: Where ``relevant`` came from: "labels" (people's) or "judge" (entails a reference claim).
    relevance_from: str | None = None
    #: The judge's reading when labels decided ``relevant`` (``--relevance both``).
    relevant_by_judge: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "relevant": self.relevant,
                "entails_reference_claims": list(self.entails_reference_claims),
                "entails_response_claims": list(self.entails_response_claims),
                "source": self.source, "relevance_from": self.relevance_from,
                "relevant_by_judge": self.relevant_by_judge}


@dataclass(frozen=True)
class Evidence:
    response_claims: tuple[ResponseClaimEvidence, ...]
    reference_claims: tuple[ReferenceClaimEvidence, ...]
    chunks: tuple[ChunkEvidence, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; verdicts become their string values.

        Written out by hand: ``dataclasses.asdict`` deep-copies every field and was the
        runner's largest cost with cheap judges.
        """
        return {
            "response_claims": [
                {"text": c.text, "correct": c.correct, "reference_verdict": c.reference_verdict.value,
                 "entailed_by": list(c.entailed_by), "contradicted_by": list(c.contradicted_by),
                 "bucket": c.bucket, "leaked_from": list(c.leaked_from),
                 "closest_chunk": c.closest_chunk, "closest_overlap": c.closest_overlap,
                 "misattributed_from": list(c.misattributed_from),
                 "misattributed_spans": [{"chunk": m.chunk, "start": m.start, "end": m.end,
                                          "detail": m.detail} for m in c.misattributed_spans],
                 "reference_score": c.reference_score,
                 "chunk_scores": None if c.chunk_scores is None else list(c.chunk_scores),
                 "uncertain": list(c.uncertain),
                 "paraphrase_doubt": None if c.paraphrase_doubt is None
                 else list(c.paraphrase_doubt)}
                for c in self.response_claims],
            "reference_claims": [
                {"text": c.text, "entailed_by": list(c.entailed_by), "in_response": c.in_response,
                 "response_verdict": c.response_verdict.value,
                 "response_score": c.response_score,
                 "chunk_scores": None if c.chunk_scores is None else list(c.chunk_scores),
                 "uncertain": list(c.uncertain)}
                for c in self.reference_claims],
            "chunks": [c.to_dict() for c in self.chunks],
        }


def _doubts(scores: VerdictScores | None, side: str, own: float | None,
            chunks: tuple[float, ...] | None) -> tuple[str | int, ...]:
    if scores is None or own is None or chunks is None:
        return ()
    return ((side,) if scores.uncertain(own) else ()) + tuple(
        j for j, x in enumerate(chunks) if scores.uncertain(x))


def _indices(row: tuple[Verdict, ...], verdict: Verdict) -> tuple[int, ...]:
    return tuple(j for j, v in enumerate(row) if v is verdict)


def build_evidence(cv: ClaimVerdicts, relevant: Sequence[bool] | None = None) -> Evidence:
    """Evidence derived from the same flags the metrics use, so the two always agree
    (``relevant``: as in ``compute_metrics``)."""
    rel = relevance_of(cv, relevant)
    f = claim_flags(cv, rel)
    sc = cv.scores
    resp: list[ResponseClaimEvidence] = []
    for i, text in enumerate(cv.response_claims):
        row = cv.retrieved2response[i]
        entailed_by = _indices(row, Verdict.ENTAILED)
        bucket: Bucket
        leaked: tuple[int, ...] = ()
        if f.correct[i]:
            bucket = "grounded" if f.faithful[i] else "self_knowledge"
        elif f.relevant_faithful[i]:
            bucket = "relevant_noise"
            leaked = tuple(j for j in entailed_by if rel[j])
        elif f.irrelevant_faithful[i]:
            bucket = "irrelevant_noise"
            leaked = tuple(j for j in entailed_by if not rel[j])
        else:
            bucket = "hallucination"
        own = sc.answer2response[i] if sc else None
        chunk_scores = sc.retrieved2response[i] if sc else None
        resp.append(ResponseClaimEvidence(
            text=text, correct=f.correct[i], reference_verdict=cv.answer2response[i],
            entailed_by=entailed_by, contradicted_by=_indices(row, Verdict.CONTRADICTED),
            bucket=bucket, leaked_from=leaked, reference_score=own, chunk_scores=chunk_scores,
            uncertain=_doubts(sc, "reference", own, chunk_scores),
        ))
    ref = [
        ReferenceClaimEvidence(
            text=text, entailed_by=_indices(cv.retrieved2answer[k], Verdict.ENTAILED),
            in_response=cv.response2answer[k] is Verdict.ENTAILED,
            response_verdict=cv.response2answer[k],
            response_score=sc.response2answer[k] if sc else None,
            chunk_scores=sc.retrieved2answer[k] if sc else None,
            uncertain=_doubts(sc, "response", sc.response2answer[k] if sc else None,
                              sc.retrieved2answer[k] if sc else None),
        )
        for k, text in enumerate(cv.reference_claims)
    ]
    chunks = [
        ChunkEvidence(
            index=j, relevant=rel[j],
            entails_reference_claims=tuple(
                k for k, row in enumerate(cv.retrieved2answer) if row[j] is Verdict.ENTAILED),
            entails_response_claims=tuple(
                i for i, row in enumerate(cv.retrieved2response) if row[j] is Verdict.ENTAILED),
        )
        for j in range(cv.n_chunks)
    ]
    return Evidence(tuple(resp), tuple(ref), tuple(chunks))
