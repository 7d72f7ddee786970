"""A chunk shown to the pipeline, and which of a golden item's chunks are its own.

Shared by every distractor source (``distractors.py``, ``counterfactual.py``) and the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .golden import GoldenItem

__all__ = ["Chunk", "Kind", "normalize", "relevant_chunks", "without_relevant"]

Kind = Literal["relevant", "distractor", "counterfactual"]


@dataclass(frozen=True)
class Chunk:
    """A chunk put in front of the pipeline, with where it came from."""

    text: str
    kind: Kind
    source: str  # golden | pool | others | hard | counterfactual
    id: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "source": self.source, "text": self.text,
                **({"meta": dict(self.meta)} if self.meta else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Chunk:
        return cls(text=data["text"], kind=data["kind"], source=data["source"], id=data.get("id"),
                   meta=dict(data.get("meta") or {}))


def normalize(text: str) -> str:
    """Whitespace- and case-insensitive form used to keep relevant chunks out of distractors."""
    return " ".join(text.casefold().split())


def relevant_chunks(item: GoldenItem) -> list[Chunk]:
    ids = item.chunk_ids or (None,) * len(item.relevant)
    return [Chunk(text, "relevant", "golden", ids[j] if ids[j] is not None else f"{item.id}#{j}")
            for j, text in enumerate(item.relevant)]


def without_relevant(item: GoldenItem, candidates: Sequence[Chunk]) -> list[Chunk]:
    own = {normalize(t) for t in item.relevant}
    seen: set[str] = set()
    out = []
    for c in candidates:
        key = normalize(c.text)
        if key not in own and key not in seen:
            seen.add(key)
            out.append(c)
    return out
