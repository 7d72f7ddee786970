"""Answer Relevancy (Ragas' definition) as a pure function over embedded questions.

The judge writes questions the response answers; the metric is the mean cosine similarity
of their embeddings to the user's question, and 0 when the response is non-committal (it
declines or evades, so it answers nothing). A negative mean is clipped to 0, since every
metric here is a fraction in [0, 1]. With no question and no evasion (nothing to compare),
the value is undefined with a reason, never 0 or NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .metrics import MetricValue

__all__ = ["ANSWER_RELEVANCY", "NO_QUESTIONS", "EMPTY_RESPONSE", "RelevancyEvidence",
           "answer_relevancy", "cosine"]

ANSWER_RELEVANCY = "answer_relevancy"
NO_QUESTIONS = "no question could be written from the response"
EMPTY_RESPONSE = "empty response"


@dataclass(frozen=True)
class RelevancyEvidence:
    """What the value was computed from: the written questions, each one's similarity to
    the user's question, whether the response was non-committal, and who wrote them
    (``judge``: in its extraction; ``rules``: templates over the response's claims)."""

    questions: tuple[str, ...]
    similarities: tuple[float, ...]
    noncommittal: bool
    source: str

    def to_dict(self) -> dict[str, object]:
        # A non-committal answer is 0 without embedding: its questions carry no similarity.
        sims = self.similarities if self.similarities else (None,) * len(self.questions)
        return {"questions": [{"text": q, "similarity": s}
                              for q, s in zip(self.questions, sims, strict=True)],
                "noncommittal": self.noncommittal, "source": self.source}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RelevancyEvidence:
        """The evidence ``to_dict`` wrote (a resumed row is rebuilt from it)."""
        questions = data.get("questions") or []
        sims = [q.get("similarity") for q in questions]
        return cls(questions=tuple(str(q["text"]) for q in questions),
                   similarities=() if any(v is None for v in sims) else
                   tuple(float(v) for v in sims),
                   noncommittal=bool(data.get("noncommittal")), source=str(data.get("source")))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0.0 when either vector is all zeros).

    >>> round(cosine([1.0, 0.0], [1.0, 1.0]), 4)
    0.7071
    """
    if len(a) != len(b):
        raise ValueError(f"vectors of different lengths: {len(a)} and {len(b)}")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0.0 or nb == 0.0 else dot / (na * nb)


def answer_relevancy(question: Sequence[float], generated: Sequence[Sequence[float]],
                     noncommittal: bool) -> tuple[MetricValue, tuple[float, ...]]:
    """The value and each generated question's similarity to ``question``.

    >>> answer_relevancy([1.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], False)[0].value
    0.5
    >>> answer_relevancy([1.0, 0.0], [[1.0, 0.0]], True)[0].value
    0.0
    """
    sims = tuple(cosine(question, g) for g in generated)
    if noncommittal:
        return MetricValue(0.0), sims
    if not sims:
        return MetricValue(None, NO_QUESTIONS), sims
    return MetricValue(max(0.0, min(1.0, sum(sims) / len(sims)))), sims
