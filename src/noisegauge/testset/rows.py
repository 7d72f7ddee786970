"""The GOLDEN row ``noisegauge testset`` writes, one JSON object a line.

This is the shape ``noisegauge review``, ``testset export`` and ``stress --strategy siblings``
read; it is fixed here and in ``docs/reference/golden.md``.

```
{
  "id": "q0001",                        # the question's id (from --questions / --from-log, else q0001...)
  "user_input": "What is the refund window on the Pro plan?",
  "history": [{"role": "user", "content": "..."}, ...],   # only from a chat log: the turns before
                                        # user_input, oldest first (as `score` reads them)
  "reference": "Pro plan charges can be refunded within 30 days.",   # null when status is no_answer
  "retrieved_contexts": ["<text of a chunk that holds the answer>", ...],   # [] when no_answer
  "retrieved_context_ids": ["kb/refunds.md#2", ...],                       # same order, same length
  "distractors": [                      # traps, look-alike first, then conflicting, then topical
    {"id": "kb/refunds.md#3", "text": "...", "kind": "look-alike",   # look-alike | topical | conflicting
     "differs": "Pro vs Team"},                                     # the detail that differs, or null
    {"id": "kb/refunds-2023.md#2", "text": "...", "kind": "conflicting", "differs": "30 days vs 14 days"}
  ],
  "draft": {
    "method": "extractive",             # "extractive", or the generator's spec ("openai:gpt-4o-mini")
    "question": "given",                # where the question came from: given | log | template | <generator spec>
    "confidence": 0.82,                 # 0-1: how sure the drafter is that the reference answers the question
    "judge": "lexical",                 # the judge that checked the reference and the traps
    "reviewed": false                   # true only on rows a person kept (testset export)
  },
  "status": "drafted",                  # drafted | no_answer | conflict
  "reason": null,                       # why, when status is not drafted ("no answer found in the corpus: ...")
  "conflicts": [],                      # ids of chunks stating another value for the same thing (to settle)
  "metadata": {"source": "questions"}   # questions | log | generated; from a log also "response",
                                        # "log_context_ids"; any metadata of the question row
}
```

Rules every row keeps (tests check them):

* ``reference`` is drawn only from ``retrieved_contexts`` (extractive: sentences of those chunks;
  generator: a text the judge found entailed by them);
* no distractor holds the answer (the judge checks each against the reference);
* ``status == "no_answer"``: ``reference`` is null, ``retrieved_contexts`` is empty; never an
  invented reference. Such a row cannot be scored until a person writes one (``review``) or
  drops it; ``stress`` and ``score`` skip it;
* ``status == "conflict"``: another chunk states another value for the same thing; its id is
  in ``conflicts`` and it is a distractor of kind ``conflicting``; the reference was drafted
  from the best-ranked chunk, and a person settles which one is right;
* ``draft.reviewed`` is false on every row ``testset`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..samples import HISTORY_FIELD, Turn

__all__ = ["DISTRACTOR_KINDS", "STATUSES", "Distractor", "Draft", "GoldenRow", "KIND_ORDER"]

#: The kinds of trap, in the order a row lists them (and ``siblings`` injects them).
DISTRACTOR_KINDS: tuple[str, ...] = ("look-alike", "conflicting", "topical")
KIND_ORDER: dict[str, int] = {k: i for i, k in enumerate(DISTRACTOR_KINDS)}
#: A row's status.
STATUSES: tuple[str, ...] = ("drafted", "no_answer", "conflict")

Kind = Literal["look-alike", "topical", "conflicting"]
Status = Literal["drafted", "no_answer", "conflict"]


@dataclass(frozen=True)
class Distractor:
    """A chunk that looks like the answer and is not: the trap a stress test injects."""

    id: str
    text: str
    kind: Kind
    #: The detail that differs ("30 days vs 90 days", "Pro vs Team"), or None (topical).
    differs: str | None = None

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "kind": self.kind, "differs": self.differs}


@dataclass(frozen=True)
class Draft:
    """How a row was made, and how sure the drafter is."""

    method: str
    question: str
    confidence: float
    judge: str
    reviewed: bool = False

    def to_record(self) -> dict[str, Any]:
        return {"method": self.method, "question": self.question,
                "confidence": round(self.confidence, 4), "judge": self.judge,
                "reviewed": self.reviewed}


@dataclass(frozen=True)
class GoldenRow:
    """One GOLDEN row (see the module docstring for the JSON form)."""

    id: str
    user_input: str
    reference: str | None
    retrieved_contexts: tuple[str, ...]
    retrieved_context_ids: tuple[str, ...]
    distractors: tuple[Distractor, ...]
    draft: Draft
    status: Status = "drafted"
    reason: str | None = None
    conflicts: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: From a chat log: the conversation before ``user_input``, oldest first.
    history: tuple[Turn, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """The JSON object written to GOLDEN.jsonl; ``history`` only for a conversation, so
        a single-turn row is as it always was."""
        turns = ({HISTORY_FIELD: [{"role": t.role, "content": t.content} for t in self.history]}
                 if self.history else {})
        return {"id": self.id, "user_input": self.user_input, **turns, "reference": self.reference,
                "retrieved_contexts": list(self.retrieved_contexts),
                "retrieved_context_ids": list(self.retrieved_context_ids),
                "distractors": [d.to_record() for d in self.distractors],
                "draft": self.draft.to_record(), "status": self.status, "reason": self.reason,
                "conflicts": list(self.conflicts), "metadata": dict(self.metadata)}


def sort_distractors(items: Sequence[Distractor]) -> tuple[Distractor, ...]:
    """Look-alike first, then conflicting, then topical; stable within a kind."""
    return tuple(sorted(items, key=lambda d: KIND_ORDER[d.kind]))
