"""The questions a response answers, asked of the judge in the pass that extracts its
claims (Answer Relevancy's share of ``judge_sample``); the metric itself is in ``relevancy``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from ..engine.metrics import MetricValue
from ..engine.relevancy import ANSWER_RELEVANCY, RelevancyEvidence
from ..errors import JudgeOutputError
from ..judges.base import ConversationalExtractor, Judge, conversation_turns
from ..samples import Sample, Turn
from .results import SampleResult

__all__ = ["Asked", "QuestionRequest", "QuestionWriter", "RelevancyMeasure", "extract_asking",
           "with_relevancy"]


@runtime_checkable
class QuestionWriter(Protocol):
    """A judge that writes the questions a text answers while it extracts the claims."""

    async def extract_with_questions(self, text: str, question: str | None,
                                     n: int) -> Mapping[str, Any] | None:
        """``{"claims": [...], "questions": [...], "noncommittal": bool}``, or None when
        it cannot (then the claims come from ``extract`` and the questions from rules)."""
        ...


@dataclass(frozen=True)
class Asked:
    questions: tuple[str, ...]
    noncommittal: bool
    source: str  # "judge" | "rules"


@dataclass
class QuestionRequest:
    """Asks ``judge_sample`` for ``n`` questions; ``asked`` holds what the judge wrote."""

    n: int
    asked: Asked | None = None


async def extract_asking(judge: Judge, sample: Sample, request: QuestionRequest,
                         extract: Callable[[Judge, str, str, Sequence[Turn]], Awaitable[list[str]]]
                         ) -> list[str]:
    """The response's claims; the judge's questions go into ``request`` when it writes them.
    In a conversation a judge that reads the history extracts with it, and the questions
    come from rules over those standalone claims (a question written from "Seven days."
    alone would be about nothing)."""
    writer = getattr(judge, "extract_with_questions", None)
    in_chat = bool(conversation_turns(sample.history)) and isinstance(judge, ConversationalExtractor)
    if callable(writer) and sample.response.strip() and not in_chat:
        out = await writer(sample.response, sample.user_input, request.n)
        if out is not None:
            claims, questions = out.get("claims"), out.get("questions")
            if (not isinstance(claims, list) or not all(isinstance(c, str) for c in claims)
                    or not isinstance(questions, list)
                    or not all(isinstance(q, str) for q in questions)):
                raise JudgeOutputError("judge.extract_with_questions returned "
                                       f"{type(out).__name__} without claims/questions lists")
            request.asked = Asked(tuple(q.strip() for q in questions if q.strip())[:request.n],
                                  bool(out.get("noncommittal")), "judge")
            return [c for c in claims if c.strip()]
    return await extract(judge, sample.response, sample.user_input, sample.history)


def with_relevancy(result: SampleResult, value: MetricValue,
                   evidence: RelevancyEvidence | None) -> SampleResult:
    return replace(result, metrics={**result.metrics, ANSWER_RELEVANCY: value},
                   relevancy=evidence)


class RelevancyMeasure(Protocol):
    """What a judged pass needs of Answer Relevancy (``relevancy.AnswerRelevancy`` is one)."""

    @property
    def strictness(self) -> int: ...

    async def measure(self, sample: Sample, claims: Sequence[str],
                      asked: Asked | None) -> tuple[MetricValue, RelevancyEvidence | None]: ...
