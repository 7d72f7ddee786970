"""From a sample to its ``ClaimVerdicts``: two extractions, then the four checks, concurrently.

Call pattern per sample (what a batching judge sees): ``extract(response)`` and
``extract(reference)`` at once; then response claims against [reference, *chunks] and
reference claims against [response, *chunks] at once. The reference is extracted once
and shared by every mode and metric.

In a conversation (``sample.history``) both are read with the turns before the question, by
a judge that can (``ConversationalExtractor``), so their claims stand on their own; the
turns are never a premise: claims are checked against the reference, the response and the
chunks only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..engine.matrix import ClaimVerdicts, VerdictScores
from ..errors import JudgeOutputError
from ..judges.base import (
    BatchChecker,
    ConversationalExtractor,
    Judge,
    SampleJudge,
    ScoredChecker,
    conversation_turns,
)
from ..samples import Sample, Turn
from ..verdicts import Verdict
from .asking import QuestionRequest, extract_asking

__all__ = ["judge_sample", "check_matrix"]


async def check_matrix(judge: Judge, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
    """``result[p][c]``: claim c against premise p, validated for shape."""
    if not claims or not premises:
        return [[] for _ in premises]
    if isinstance(judge, BatchChecker):
        result = await judge.check_many(premises, claims)
    else:
        result = list(await asyncio.gather(*(judge.check(p, claims) for p in premises)))
    if len(result) != len(premises) or any(len(r) != len(claims) for r in result):
        raise JudgeOutputError(
            f"judge returned a {len(result)}-premise verdict matrix with row lengths "
            f"{[len(r) for r in result]}; expected {len(premises)} rows of {len(claims)}")
    for row in result:
        for v in row:
            if not isinstance(v, Verdict):
                raise JudgeOutputError(f"judge returned {v!r}, which is not a Verdict")
    return result


async def _scored_matrix(judge: ScoredChecker, premises: Sequence[str],
                         claims: Sequence[str]) -> tuple[list[list[Verdict]], list[list[float]]]:
    """``check_matrix`` with scores, from a judge that gives them."""
    if not claims or not premises:
        return [[] for _ in premises], [[] for _ in premises]
    result = await judge.check_many_scored(premises, claims)
    if len(result) != len(premises) or any(len(r) != len(claims) for r in result):
        raise JudgeOutputError(f"judge returned a {len(result)}-premise scored matrix; expected "
                               f"{len(premises)} rows of {len(claims)}")
    verdicts = [[v for v, _ in row] for row in result]
    for row in verdicts:
        for v in row:
            if not isinstance(v, Verdict):
                raise JudgeOutputError(f"judge returned {v!r}, which is not a Verdict")
    return verdicts, [[float(x) for _, x in row] for row in result]


async def _extract(judge: Judge, text: str, question: str,
                   history: Sequence[Turn] = ()) -> list[str]:
    if not text.strip():
        return []
    history = conversation_turns(history)
    if history and isinstance(judge, ConversationalExtractor):
        method = "extract_in_conversation"
        claims = await judge.extract_in_conversation(text, question, history)
    else:
        method = "extract"
        claims = await judge.extract(text, question)
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise JudgeOutputError(f"judge.{method} returned {type(claims).__name__}, expected list[str]")
    return [c for c in claims if c.strip()]


async def judge_sample(sample: Sample, judge: Judge, *,
                       questions: QuestionRequest | None = None) -> ClaimVerdicts:
    """Run the judge's share of the work for one sample. ``questions``: also have the judge
    write the questions the response answers (Answer Relevancy), in the same call when it can."""
    if sample.reference is None:
        return await _judge_without_reference(sample, judge, questions)
    if isinstance(judge, SampleJudge):
        return await judge.judge_sample(sample)
    chunks = list(sample.retrieved_contexts)
    if questions is not None:
        response_claims = extract_asking(judge, sample, questions, _extract)
    else:
        response_claims = _extract(judge, sample.response, sample.user_input, sample.history)
    resp_claims, ref_claims = await asyncio.gather(
        response_claims,
        # The reference may be written for the last turn only: read with the same history.
        _extract(judge, sample.reference, sample.user_input, sample.history),
    )
    n = len(chunks)
    scores = None
    if isinstance(judge, ScoredChecker):
        (resp_m, resp_s), (ref_m, ref_s) = await asyncio.gather(
            _scored_matrix(judge, [sample.reference, *chunks], resp_claims),
            _scored_matrix(judge, [sample.response, *chunks], ref_claims),
        )
        scores = VerdictScores(
            answer2response=tuple(resp_s[0]) if resp_claims else (),
            response2answer=tuple(ref_s[0]) if ref_claims else (),
            retrieved2response=tuple(tuple(resp_s[1 + j][i] for j in range(n))
                                     for i in range(len(resp_claims))),
            retrieved2answer=tuple(tuple(ref_s[1 + j][k] for j in range(n))
                                   for k in range(len(ref_claims))),
            band=judge.uncertain_band,
        )
    else:
        resp_m, ref_m = await asyncio.gather(
            check_matrix(judge, [sample.reference, *chunks], resp_claims),
            check_matrix(judge, [sample.response, *chunks], ref_claims),
        )
    return ClaimVerdicts(
        response_claims=tuple(resp_claims),
        reference_claims=tuple(ref_claims),
        answer2response=tuple(resp_m[0]) if resp_claims else (),
        response2answer=tuple(ref_m[0]) if ref_claims else (),
        retrieved2response=tuple(tuple(resp_m[1 + j][i] for j in range(n)) for i in range(len(resp_claims))),
        retrieved2answer=tuple(tuple(ref_m[1 + j][k] for j in range(n)) for k in range(len(ref_claims))),
        n_chunks=n,
        scores=scores,
    )


async def _judge_without_reference(sample: Sample, judge: Judge,
                                   questions: QuestionRequest | None) -> ClaimVerdicts:
    """No reference: only the response's claims against the chunks. The reference checks
    are not made; their places hold ``neutral`` so the matrices keep their shapes, and
    every metric reading them is undefined ("no reference", ``scoring.results``)."""
    chunks = list(sample.retrieved_contexts)
    if questions is not None:
        claims = await extract_asking(judge, sample, questions, _extract)
    else:
        claims = await _extract(judge, sample.response, sample.user_input, sample.history)
    n = len(chunks)
    scores = None
    if isinstance(judge, ScoredChecker):
        matrix, s = await _scored_matrix(judge, chunks, claims)
        scores = VerdictScores(answer2response=(0.0,) * len(claims), response2answer=(),
                               retrieved2response=tuple(tuple(s[j][i] for j in range(n))
                                                        for i in range(len(claims))),
                               retrieved2answer=(), band=judge.uncertain_band)
    else:
        matrix = await check_matrix(judge, chunks, claims)
    return ClaimVerdicts(
        response_claims=tuple(claims), reference_claims=(),
        answer2response=(Verdict.NEUTRAL,) * len(claims), response2answer=(),
        retrieved2response=tuple(tuple(matrix[j][i] for j in range(n)) for i in range(len(claims))),
        retrieved2answer=(), n_chunks=n, scores=scores)
