"""A provenance hint for wrong claims that no chunk entails.

Under RAGChecker's algebra a claim that mixes up two product tiers ("the Pro plan needs a
90-day notice", when only the Enterprise chunk says 90 days) is *hallucination*: no chunk
entails it. Users still want to know where it most likely came from, so each unsupported
claim gets the chunk sharing most of its content words. It is a hint, never a verdict, and
no metric reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..textkit.sentences import content_words

__all__ = ["closest_chunk"]


#: Below this share of shared content words a "closest" chunk is not worth naming.
MIN_OVERLAP = 0.5


@lru_cache(maxsize=4096)
def _words(chunk: str) -> frozenset[str]:
    """A chunk's content words, read once per chunk (every wrong claim of a sample asks)."""
    return frozenset(content_words(chunk))


def closest_chunk(claim: str, chunks: Sequence[str], reference: str = "") -> tuple[int, float] | None:
    """(index, share of the claim's content words found in it), or None when no chunk is close.

    A wrong claim is wrong because of the words the reference does not have ("90" where the
    reference says "30"), so the chunk that carries most of *those* words wins; the overall
    share breaks ties and names a chunk when the wrong words appear nowhere.
    """
    words = content_words(claim)
    if not words or not chunks:
        return None
    novel = words - content_words(reference)
    best: tuple[int, float] = (0, 0.0)
    best_j = -1
    for j, chunk in enumerate(chunks):
        have = _words(chunk)
        key = (len(novel & have), len(words & have) / len(words))
        if key > best:
            best_j, best = j, key
    novel_hits, share = best
    if novel_hits == 0 and share < MIN_OVERLAP:
        return None
    return best_j, round(share, 3)
