"""The three-way verdict a judge gives a claim against a premise."""

from __future__ import annotations

from enum import Enum

__all__ = ["Verdict", "parse_verdict"]


class Verdict(str, Enum):
    """Whether a premise entails, is silent on, or contradicts a claim.

    Only ``ENTAILED`` counts as true in every metric (as in RAGChecker's ``to_bool``).
    """

    ENTAILED = "entailed"
    NEUTRAL = "neutral"
    CONTRADICTED = "contradicted"

    def __str__(self) -> str:
        return self.value


_ALIASES: dict[str, Verdict] = {
    "entailed": Verdict.ENTAILED,
    "entailment": Verdict.ENTAILED,
    "entails": Verdict.ENTAILED,
    "supported": Verdict.ENTAILED,
    "neutral": Verdict.NEUTRAL,
    "not_mentioned": Verdict.NEUTRAL,
    "unsupported": Verdict.NEUTRAL,
    "contradicted": Verdict.CONTRADICTED,
    "contradiction": Verdict.CONTRADICTED,
    "contradicts": Verdict.CONTRADICTED,
    "refuted": Verdict.CONTRADICTED,
}


def parse_verdict(value: object) -> Verdict:
    """Read a verdict written by us, by RAGChecker (``Entailment``...) or as a bool.

    >>> parse_verdict("Entailment")
    <Verdict.ENTAILED: 'entailed'>
    """
    if isinstance(value, Verdict):
        return value
    if isinstance(value, bool):
        return Verdict.ENTAILED if value else Verdict.NEUTRAL
    if isinstance(value, str):
        key = value.strip().lower().replace(" ", "_").replace("-", "_")
        if key in _ALIASES:
            return _ALIASES[key]
    raise ValueError(
        f"unknown verdict {value!r}: expected one of entailed/neutral/contradicted "
        "(or RAGChecker's Entailment/Neutral/Contradiction)"
    )
