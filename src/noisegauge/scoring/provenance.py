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
from functools import lru_cache

from ..textkit.sentences import content_words
from ..textkit.tokens import stem

__all__ = ["closest_chunk", "paraphrase_doubt"]


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


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in content_words(text))


def paraphrase_doubt(leaked_from: Sequence[int], chunks: Sequence[str],
                     reference_claims: Sequence[str], question: str,
                     entailed: Sequence[Sequence[bool]]) -> tuple[int, int] | None:
    """(chunk, reference claim) for an irrelevant-noise claim whose mode hangs on a verdict a
    word-based judge may misread, or None.

    Irrelevant noise came from a chunk that entails no reference claim. The chunk is in doubt
    when it names the question's subject (its names, else its words) and holds at least half of what a reference claim adds
    to the question, with no number of that claim missing from it ("LIC manages substantial
    funds" / "LIC is known for managing a large portfolio of investments"): the two are about
    the same thing, and whether they say the same thing is a paraphrase an LLM judge reads and a
    judge of words cannot. A missing number is a different value, not a paraphrase (the
    look-alike chunk "refunds within 2 days" against "within 5 days"). ``entailed[k][j]``: the
    judge's verdict of chunk j on reference claim k. The share is the provenance hint's
    (``MIN_OVERLAP``), fixed before this rule, not fitted to it.
    """
    asked = _stems(question)
    # The subject: the question's names ("LIC", "Team plan") when it has any, else its words.
    names = {stem(w) for w in re.findall(r"(?<!^)(?<![.?!] )\b[A-Z][\w-]*", question.strip())}
    subject = names or asked
    best: tuple[float, int, int] | None = None
    for j in leaked_from:
        words = _stems(chunks[j])
        if not words & subject:
            continue
        for k, claim in enumerate(reference_claims):
            adds = _stems(claim) - asked
            if not adds or entailed[k][j] or any(ch.isdigit() for w in adds - words for ch in w):
                continue
            share = len(adds & words) / len(adds)
            if share >= MIN_OVERLAP and (best is None or share > best[0]):
                best = (share, j, k)
    return None if best is None else (best[1], best[2])
