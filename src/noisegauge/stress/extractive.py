"""A naive extractive "pipeline": the offline demo and a baseline, NOT a recommendation.

It answers with the context sentences that share the most words with the question, so a
topically close distractor ("Enterprise plan ... 90 days' notice" next to "Pro plan ...
30 days' notice") gets copied into the answer exactly the way a careless generator would
copy it. That is the point: it leaks noise, measurably and deterministically.

``strict=True`` is the offline stand-in for the seed article's first mitigation ("disregard
context that does not directly answer the question"): it only keeps sentences that mention
one of the question's key entities (plan names, SKUs, other capitalised or numeric tokens).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..textkit.sentences import STOPWORDS, sentences

__all__ = ["ExtractivePipeline", "content_terms", "key_entities", "NO_ANSWER"]

NO_ANSWER = "I don't know."

#: Words that the shared stopword list drops but that pick the right sentence for a question
#: ("notice *before* a price change", "refund *only* within 14 days").
_QUESTION_CUES = frozenset(["before", "after", "during", "until", "not", "no", "only", "more",
                            "most", "between"])
_STOP = (STOPWORDS - _QUESTION_CUES) | {"long", "get"}  # "how long", "do I get": no content
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_QUESTION_WORDS = frozenset({"what", "how", "when", "where", "which", "who", "why", "is", "are",
                             "can", "do", "does", "will", "i"})


def _stem(word: str) -> str:
    # Crude on purpose (this is a baseline): "refunds"/"refunded" -> "refund".
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_terms(text: str) -> set[str]:
    """Lower-cased, stemmed content words; Hangul words become character bigrams so that
    particles (환불은 / 환불을) do not hide a shared word."""
    terms: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if _HANGUL.search(word):
            terms.update(word[i:i + 2] for i in range(len(word) - 1))
        elif word not in _STOP and (len(word) > 1 or word.isdigit()):
            terms.add(_stem(word))
    return terms


def key_entities(question: str) -> set[str]:
    """Entity-like tokens of a question: SKU codes, capitalised words (not the question word
    that opens the sentence), words with digits. Lower-cased."""
    out: set[str] = set()
    for k, word in enumerate(_WORD.findall(question)):
        has_digit = any(ch.isdigit() for ch in word)
        capitalised = word[:1].isupper() and not (k == 0 and word.lower() in _QUESTION_WORDS)
        if (has_digit or capitalised) and word.lower() not in _QUESTION_WORDS:
            out.add(word.lower())
    return out


class ExtractivePipeline:
    """Answer = the best-overlapping context sentences (at most ``max_sentences``; those
    scoring at least ``ratio`` of the best), in the order they appear in the contexts."""

    cacheable = False  # cheaper to recompute than to look up

    def __init__(self, *, strict: bool = False, max_sentences: int = 3, ratio: float = 0.5) -> None:
        self.strict = strict
        self.max_sentences = max_sentences
        self.ratio = ratio

    def identity(self) -> dict[str, Any]:
        return {"pipeline": "extractive", "variant": "strict" if self.strict else "default",
                "max_sentences": self.max_sentences, "ratio": self.ratio, "version": 1}

    def answer(self, question: str, contexts: Sequence[str]) -> str:
        q_terms = content_terms(question)
        entities = key_entities(question) if self.strict else set()
        scored: list[tuple[int, int, str]] = []  # (score, position, sentence)
        seen: set[str] = set()
        for sentence in (s for chunk in contexts for s in sentences(chunk)):
            if sentence in seen:
                continue  # a sentence repeated across chunks is said once
            seen.add(sentence)
            if entities and not entities & {w.lower() for w in _WORD.findall(sentence)}:
                continue  # strict: a sentence about another plan/SKU is disregarded
            scored.append((len(q_terms & content_terms(sentence)), len(scored), sentence))
        best = max((s for s, _, _ in scored), default=0)
        if best == 0:
            return NO_ANSWER
        keep = sorted((x for x in scored if x[0] >= self.ratio * best),
                      key=lambda x: (-x[0], x[1]))[: self.max_sentences]
        chosen = [s for _, _, s in sorted(keep, key=lambda x: x[1])]
        return " ".join(s if s.endswith((".", "!", "?", "。")) else s + "." for s in chosen)

    async def generate(self, question: str, contexts: Sequence[str]) -> str:
        return self.answer(question, contexts)
