"""Several embedders side by side: ``get_embedder("minilm+hashing")``.

Each part's vector is normalised and weighted, then the parts are concatenated, so the
cosine of two combined vectors is the weighted mean of the parts' cosines. The English
MiniLM model reads Korean as jamo pieces; adding the script-agnostic n-gram part keeps
Korean answers ranked by what they share with the question (bench/answer_relevancy.py).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["CombinedEmbedder"]


def _unit(v: Sequence[float], weight: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v))
    return [weight * x / norm for x in v] if norm else [0.0 for _ in v]


class CombinedEmbedder:
    """Concatenated, weighted unit vectors of ``parts`` (weights default to equal)."""

    def __init__(self, parts: Sequence[Any], weights: Sequence[float] | None = None) -> None:
        if not parts:
            raise ValueError("a combined embedder needs at least one part")
        self.parts = list(parts)
        w = list(weights) if weights is not None else [1.0] * len(self.parts)
        if len(w) != len(self.parts) or any(x <= 0 for x in w):
            raise ValueError("one positive weight per part")
        total = math.sqrt(sum(x * x for x in w))
        self.weights = [x / total for x in w]

    def identity(self) -> dict[str, Any]:
        return {"embedder": "combined", "parts": [p.identity() for p in self.parts],
                "weights": [round(x, 6) for x in self.weights]}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        outs = await asyncio.gather(*(p.embed(texts) for p in self.parts))
        return [[x for part, w in zip(outs, self.weights, strict=True) for x in _unit(part[i], w)]
                for i in range(len(texts))]
