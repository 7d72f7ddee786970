"""Short, plain-text views of result rows for places with little room: a pytest failure, a
JUnit ``<failure>``, a Markdown step summary. The question, the sample's numbers, and the
claims that went wrong with the chunk each came from, never a wall of JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..io.results import history_turns
from ..thresholds import Outcome, SampleFailure

__all__ = ["WrongClaim", "wrong_claims", "clip", "sample_lines", "outcome_lines"]

#: Buckets worth showing, most telling first.
_ORDER = {"relevant_noise": 0, "irrelevant_noise": 1, "hallucination": 2}
_LABEL = {"relevant_noise": "leaked from relevant chunk",
          "irrelevant_noise": "leaked from irrelevant chunk",
          "hallucination": "in no chunk"}


def clip(text: str, limit: int = 120) -> str:
    """One line, at most ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class WrongClaim:
    text: str
    bucket: str
    chunks: tuple[int, ...]         # leaked_from, or misattributed_from for a hallucination
    chunk_text: str | None          # the first of those chunks, when the row carries its input

    @property
    def label(self) -> str:
        if self.bucket == "hallucination" and self.chunks:
            return "misattributed from chunk"
        return _LABEL.get(self.bucket, self.bucket)


def wrong_claims(row: Mapping[str, Any], limit: int = 3) -> list[WrongClaim]:
    """The row's leaked (noise) claims first, then hallucinations; at most ``limit``."""
    chunks: Sequence[str] = (row.get("input") or {}).get("retrieved_contexts") or []
    found = []
    for claim in row.get("response_claims") or []:
        bucket = claim.get("bucket")
        if bucket not in _ORDER:
            continue
        where = tuple(claim.get("leaked_from") or claim.get("misattributed_from") or ())
        first = where[0] if where else None
        text = chunks[first] if first is not None and 0 <= first < len(chunks) else None
        found.append(WrongClaim(str(claim.get("text", "")), str(bucket), where, text))
    found.sort(key=lambda c: _ORDER[c.bucket])
    return found[:limit]


def _values(row: Mapping[str, Any], names: Sequence[str]) -> str:
    metrics = row.get("metrics") or {}
    parts = []
    for name in names:
        v = metrics.get(name)
        parts.append(f"{name} {'undefined' if v is None else f'{v:.3f}'}")
    return ", ".join(parts)


def sample_lines(failure: SampleFailure, names: Sequence[str], *, claims: int = 3,
                 indent: str = "") -> list[str]:
    """A few lines on one failing sample: id, values, question, its wrong claims."""
    row = failure.row
    head = f"{indent}{failure.id}"
    if failure.error:
        return [f"{head}: could not be scored: {clip(str(row.get('reason')), 200)}"]
    lines = [f"{head}: {_values(row, names)}"]
    inp = row.get("input") or {}
    turns = history_turns(inp) if isinstance(inp, Mapping) else []
    if turns:  # a conversation: the last turn before the question gives it its meaning
        role, text = turns[-1]
        n = len(turns) - 1
        more = f"{n} earlier turn{'s' if n > 1 else ''}, then " if n else ""
        lines.append(f"{indent}  after {more}{role}: {clip(text)}")
    question = inp.get("user_input") if isinstance(inp, Mapping) else None
    if question:
        lines.append(f"{indent}  Q: {clip(question)}")
    for c in wrong_claims(row, claims):
        where = ", ".join(str(j) for j in c.chunks)
        src = f" {where}" if where else ""
        lines.append(f"{indent}  - {clip(c.text, 110)!r} ({c.label}{src})")
        if c.chunk_text:
            lines.append(f"{indent}      chunk {c.chunks[0]}: {clip(c.chunk_text, 100)!r}")
    return lines


def outcome_lines(outcomes: Sequence[Outcome]) -> list[str]:
    return [("  FAIL " if not o.passed else "  ok   ") + o.message for o in outcomes]
