"""Answer Relevancy: does the response answer the question that was asked?

Ragas' definition. The judge writes ``strictness`` questions (3 by default) that the
response answers, in the same call that extracts the response's claims when it can
(``extract_with_questions``: the LLM judge), else by rules over those claims
(``scoring.questions``: lexical, NLI, fake, precomputed). The questions and the user's
question are embedded; the value is their mean cosine similarity, 0 for a non-committal
response (``engine.relevancy``). No reference or chunk is needed.

>>> from noisegauge import AnswerRelevancy, FakeJudge
>>> m = AnswerRelevancy(judge=FakeJudge(), embeddings="hashing")
>>> r = m.score(user_input="Can the Pro plan be cancelled anytime?",
...             response="The Pro plan can be cancelled anytime.", reference="It can.",
...             retrieved_contexts=[])
>>> r.value > 0.5, r.sample.relevancy.questions
(True, ('Can the Pro plan be cancelled anytime?',))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from ..embeddings import Embedder, get_embedder
from ..engine.metrics import MetricValue
from ..engine.relevancy import (
    ANSWER_RELEVANCY,
    EMPTY_RESPONSE,
    NO_QUESTIONS,
    RelevancyEvidence,
    answer_relevancy,
)
from ..errors import JudgeOutputError
from ..judges.lexical.turns import standalone_question
from ..samples import Sample
from .asking import Asked, QuestionRequest, QuestionWriter, extract_asking, with_relevancy
from .metrics import Metric
from .questions import rule_questions

__all__ = ["AnswerRelevancy", "QuestionWriter", "QuestionRequest", "Asked",
           "asked_question", "extract_asking", "with_relevancy"]


def asked_question(sample: Sample) -> str:
    """The question the response is measured against: in a chat the standalone one, made by
    the offline rules whatever the judge (no call: an LLM judge's questions come from its
    standalone claims, and "And for monthly plans?" alone would be compared with them),
    a single turn's question as it is."""
    if not sample.history:
        return sample.user_input
    return standalone_question(sample.user_input, sample.history) or sample.user_input


@dataclass(frozen=True)
class AnswerRelevancy(Metric):
    """Mean cosine similarity between the user's question and ``strictness`` questions the
    response answers; 0 when the response is non-committal. Higher is better. In a chat
    (``sample.history``) the user's question is the standalone one ("And for monthly
    plans?" is "How long can monthly plans be refunded?", ``asked_question``).

    ``embeddings``: ``"minilm"`` (default, offline), ``"openai:MODEL"``, ``"hashing"``, an
    ``Embedder``, or a LangChain ``Embeddings`` object.
    """

    embeddings: Embedder | str | Any = field(default=None, kw_only=True)
    strictness: int = field(default=3, kw_only=True)
    metric: ClassVar[str] = ANSWER_RELEVANCY

    def __post_init__(self) -> None:
        if not isinstance(self.strictness, int) or self.strictness < 1:
            raise ValueError(f"strictness must be a positive number of questions, got "
                             f"{self.strictness!r}")
        super().__post_init__()
        object.__setattr__(self, "embeddings", get_embedder(self.embeddings))

    def score_options(self) -> dict[str, Any]:
        return {"relevancy": self}

    async def measure(self, sample: Sample, claims: Sequence[str],
                      asked: Asked | None) -> tuple[MetricValue, RelevancyEvidence | None]:
        """The value for a judged sample: questions (the judge's or by rules), embedded."""
        if not sample.response.strip():
            return MetricValue(None, EMPTY_RESPONSE), None
        question = asked_question(sample)
        if asked is None:
            questions, noncommittal = rule_questions(claims, sample.response, self.strictness,
                                                     question)
            asked = Asked(tuple(questions), noncommittal, "rules")
        if asked.noncommittal:
            return MetricValue(0.0), RelevancyEvidence(asked.questions, (), True, asked.source)
        if not asked.questions:
            return MetricValue(None, NO_QUESTIONS), None
        embedder = cast(Embedder, self.embeddings)  # resolved in __post_init__
        vectors = await embedder.embed([question, *asked.questions])
        if len(vectors) != len(asked.questions) + 1:
            raise JudgeOutputError(f"embedder returned {len(vectors)} vectors for "
                                   f"{len(asked.questions) + 1} texts")
        value, sims = answer_relevancy(vectors[0], vectors[1:], False)
        return value, RelevancyEvidence(asked.questions, tuple(round(s, 6) for s in sims),
                                        False, asked.source)
