"""A dependency-free baseline embedder: hashed counts of words and character n-grams.

Two texts are close when they share words or word pieces, in any script (Hangul syllables
count as characters). No meaning beyond that: it is the baseline the neural embedders are
measured against, and a zero-install fallback.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)


def _bucket(token: str, dim: int) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big") % dim


class HashingEmbedder:
    """Unit vectors of ``dim`` hashed features: words, and character ``n``-grams within words."""

    def __init__(self, dim: int = 4096, n: int = 3) -> None:
        self.dim = dim
        self.n = n

    def identity(self) -> dict[str, Any]:
        return {"embedder": "hashing", "dim": self.dim, "n": self.n}

    def vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for word in _WORD.findall(text.lower()):
            v[_bucket("w:" + word, self.dim)] += 1.0
            padded = f"<{word}>"
            for i in range(max(1, len(padded) - self.n + 1)):
                v[_bucket("c:" + padded[i:i + self.n], self.dim)] += 0.5
        norm = math.sqrt(sum(x * x for x in v))
        return [x / norm for x in v] if norm else v

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(t) for t in texts]
