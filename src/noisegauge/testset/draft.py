"""Drafting a reference: which chunks hold the answer, and which of their sentences say it.

Offline and deterministic. A question's content terms (``retrieve.terms``) are weighted by
their rarity in the corpus (BM25's idf); a sentence *bears the answer* when it covers the
question's weight (with its chunk's heading and source name, which carry the tier or year)
and says something the question does not, of the kind asked for (a number for "how many",
a name for "who"). The best chunk is the one with the best such sentence; its best sentence,
and a second one as good, are the extractive reference.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..textkit.sentences import sentences
from ..textkit.tokens import tokenize
from .retrieve import Index, terms

__all__ = ["Ranked", "answer_kind", "rank_chunks", "sentence_score", "draft_reference",
           "NO_ANSWER_BELOW"]

#: A best chunk scoring below this answers nothing: the row is ``no_answer``.
NO_ANSWER_BELOW = 0.5
#: A second sentence of the chunk joins the reference when it scores this share of the best.
SECOND_SENTENCE = 0.9
#: BM25 candidates read for each question.
CANDIDATES = 20

_NUMBER_Q = re.compile(r"\b(how (many|much|long|old|far|often|big|large)|what (year|percentage|"
                       r"number|amount|price)|when)\b|몇|얼마|언제", re.IGNORECASE)
_NAME_Q = re.compile(r"\b(who|whom|whose|which|where)\b|누구|어느|어디", re.IGNORECASE)


def answer_kind(question: str) -> str:
    """``number`` (how many, when, 몇), ``name`` (who, which), or ``any``.

    >>> answer_kind("How many days do I have?"), answer_kind("Who wrote it?")
    ('number', 'name')
    """
    if _NUMBER_Q.search(question):
        return "number"
    if _NAME_Q.search(question):
        return "name"
    return "any"


@dataclass(frozen=True)
class Ranked:
    """A candidate chunk: its score and its sentences, best first, with their scores."""

    index: int
    score: float
    coverage: float
    sentences: tuple[tuple[str, float], ...]


def sentence_score(index: Index, q_terms: Sequence[str], kind: str, sentence: str,
                   context_terms: frozenset[str]) -> tuple[float, float]:
    """(score, coverage) of ``sentence`` as the answer to a question of ``q_terms``.

    Coverage: the share of the question's weight found in the sentence or its chunk's
    heading (``context_terms``); the score lowers it for a sentence that adds nothing to the
    question, or nothing of the kind asked for.
    """
    q = set(q_terms)
    total = sum(index.idf(t) for t in q)
    if not total:
        return 0.0, 0.0
    s_terms = set(terms(sentence))
    coverage = sum(index.idf(t) for t in q & (s_terms | context_terms)) / total
    new = s_terms - q
    score = coverage
    if not new:
        score *= 0.3
    elif kind == "number" and not any(t.kind == "num" and t.norm not in q
                                      for t in tokenize(sentence)):
        score *= 0.7
    elif kind == "name" and not any(t.capital and t.norm not in q for t in tokenize(sentence)[1:]):
        score *= 0.85
    # a sentence that covers the question in few words says it more plainly
    return score * (1.0 - min(0.1, 0.002 * max(0, len(s_terms) - 20))), coverage


def rank_chunks(index: Index, question: str, candidates: Sequence[int] | None = None
                ) -> list[Ranked]:
    """Candidate chunks (BM25's best, or the given ones), best answer first."""
    q_terms = terms(question)
    kind = answer_kind(question)
    if candidates is None:
        candidates = [i for i, _ in index.search(q_terms, CANDIDATES)]
    out: list[Ranked] = []
    for i in candidates:
        chunk = index.chunks[i]
        context = frozenset(terms(f"{chunk.title} {chunk.source}"))
        scored = sorted(((s, *sentence_score(index, q_terms, kind, s, context))
                         for s in sentences(chunk.text)), key=lambda x: -x[1])
        if not scored:
            continue
        best, cov = scored[0][1], scored[0][2]
        chunk_cov = sentence_score(index, q_terms, "any", chunk.text, context)[1]
        out.append(Ranked(i, 0.85 * best + 0.15 * chunk_cov, cov,
                          tuple((s, sc) for s, sc, _ in scored)))
    out.sort(key=lambda r: -r.score)
    return out


def draft_reference(ranked: Ranked, text: str) -> str:
    """The extractive reference from one chunk (``text``): its best sentence, and a second
    as good, in the chunk's own order."""
    best = ranked.sentences[0]
    picked = [best[0]]
    if len(ranked.sentences) > 1 and ranked.sentences[1][1] >= SECOND_SENTENCE * best[1] > 0:
        picked.append(ranked.sentences[1][0])
    return " ".join(sorted(picked, key=text.find))


def confidence(ranked: Sequence[Ranked]) -> float:
    """How sure the draft is: the best chunk's coverage, less when the runner-up is close."""
    if not ranked:
        return 0.0
    best = ranked[0].score
    second = ranked[1].score if len(ranked) > 1 else 0.0
    margin = (best - second) / best if best else 0.0
    return max(0.0, min(1.0, ranked[0].coverage * (0.6 + 0.4 * margin)))
