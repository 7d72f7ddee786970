"""Lexical retrieval over the corpus: BM25 (``bm25s``) on the text toolkit's stems.

Stems, not surface words, so "refunds" finds "refund" and "요금제의" finds "요금제"; the
same terms give every other step its word weights (``idf``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..errors import MissingDependency
from ..textkit.tokens import tokenize
from .corpus import Chunk

__all__ = ["Index", "terms"]


@lru_cache(maxsize=65_536)
def terms(text: str) -> tuple[str, ...]:
    """The content terms of ``text``: stems of words that are not stopwords, numbers, codes.

    >>> terms("The Pro plans cost $12")
    ('pro', 'plan', 'cost', '12')
    """
    return tuple(t.norm for t in tokenize(text) if not t.stop and t.kind != "sym")


def _bm25() -> Any:
    try:
        import bm25s  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependency("noisegauge testset (retrieval)", "testset", "bm25s") from None
    return bm25s


class Index:
    """BM25 over the chunks' searchable text (heading, source name, paragraph)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = list(chunks)
        self.doc_terms = [terms(c.searchable) for c in self.chunks]
        self.term_sets = [frozenset(t) for t in self.doc_terms]
        df: Counter[str] = Counter()
        for s in self.term_sets:
            df.update(s)
        n = len(self.chunks)
        self._idf = {t: math.log(1 + (n - k + 0.5) / (k + 0.5)) for t, k in df.items()}
        #: Weight of a term no chunk holds: as rare as a term in one chunk.
        self.oov_idf = math.log(1 + (n - 0.5) / 1.5)
        self._bm25 = _bm25().BM25()
        # bm25s cannot index an empty document: a chunk of only stopwords gets a placeholder
        self._bm25.index([list(t) or ["\x00"] for t in self.doc_terms], show_progress=False)
        self._vocab = set(df)

    def idf(self, term: str) -> float:
        return self._idf.get(term, self.oov_idf)

    def search(self, query_terms: Sequence[str], k: int) -> list[tuple[int, float]]:
        """(chunk index, score) of the ``k`` best chunks for the terms, best first; only
        chunks sharing a term with the query."""
        known = [t for t in query_terms if t in self._vocab]
        if not known or not self.chunks:
            return []
        k = min(k, len(self.chunks))
        docs, scores = self._bm25.retrieve([known], k=k, show_progress=False)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
