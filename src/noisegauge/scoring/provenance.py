"""A provenance hint for wrong claims that no chunk entails.

Under RAGChecker's algebra a claim that mixes up two product tiers ("the Pro plan needs a
90-day notice", when only the Enterprise chunk says 90 days) is *hallucination*: no chunk
entails it. Users still want to know where it most likely came from, so each unsupported
claim gets the chunk sharing most of its content words. It is a hint, never a verdict, and
no metric reads it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["closest_chunk", "content_words"]

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be
been being it its this that these those there their they them he she his her we our you your i
my me do does did not no can could will would should may might must has have had than then so
such also only just any all some more most other into over under about after before within""".split())

#: Below this share of shared content words a "closest" chunk is not worth naming.
MIN_OVERLAP = 0.5


def content_words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP}


def closest_chunk(claim: str, chunks: Sequence[str]) -> tuple[int, float] | None:
    """(index, share of the claim's content words found in it), or None below MIN_OVERLAP."""
    words = content_words(claim)
    if not words or not chunks:
        return None
    best_j, best = -1, 0.0
    for j, chunk in enumerate(chunks):
        share = len(words & content_words(chunk)) / len(words)
        if share > best:
            best_j, best = j, share
    return (best_j, round(best, 3)) if best >= MIN_OVERLAP else None
