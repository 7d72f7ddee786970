"""Chunk relevance from people's labels (``reference_context_ids``) or from the judge.

``relevance="auto"`` (the default) uses a row's labels when it has them and the judge's
reading otherwise; ``"labels"`` requires them; ``"judge"`` ignores them; ``"both"`` lets the
labels decide and keeps the judge's reading beside them, so their agreement can be reported.
The engine receives the chosen flags as an input; it never reads labels itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..engine.evidence import Evidence
from ..engine.matrix import ClaimVerdicts
from ..engine.metrics import chunk_relevance
from ..errors import InvalidInput, InvalidSample
from ..leaks.identity import chunk_sources
from ..samples import RELEVANT_IDS_FIELD, Sample

__all__ = ["RELEVANCE_MODES", "Relevance", "RelevanceMode", "check_relevance", "decide",
           "with_sources"]

RelevanceMode = Literal["auto", "labels", "judge", "both"]
RELEVANCE_MODES: tuple[str, ...] = ("auto", "labels", "judge", "both")


def check_relevance(mode: object) -> RelevanceMode:
    """A known mode, or InvalidInput naming the choices."""
    if mode in RELEVANCE_MODES:
        return mode  # type: ignore[return-value]
    raise InvalidInput(f"unknown relevance {mode!r}; use one of: {', '.join(RELEVANCE_MODES)} "
                       "(auto: the labels when a row has them, else the judge)")


@dataclass(frozen=True)
class Relevance:
    """What the engine is given for one sample: the flags (None: the judge's) and their origin."""

    flags: tuple[bool, ...] | None
    origin: Literal["labels", "judge"]
    keep_judge: bool = False


def decide(sample: Sample, mode: RelevanceMode, row: int | None = None) -> Relevance:
    """The relevance ``mode`` gives ``sample``; InvalidSample when it asks for missing labels."""
    labels = sample.relevant_ids
    if mode == "judge" or (labels is None and mode in ("auto", "both")):
        return Relevance(None, "judge")
    if labels is None:
        raise InvalidSample("is missing, and relevance=labels asks for it", row=row,
                            field=RELEVANT_IDS_FIELD,
                            expected="the ids of the relevant chunks (use --relevance auto to "
                                     "let the judge decide for unlabelled rows)")
    wanted = set(labels)
    flags = tuple(c in wanted for c in sample.chunk_ids or ())
    return Relevance(flags, "labels", keep_judge=mode == "both")


def with_sources(evidence: Evidence, cv: ClaimVerdicts, sample: Sample,
                 relevance: Relevance) -> Evidence:
    """``evidence`` whose chunks say their source, where their relevance came from and, with
    ``both``, what the judge read."""
    sources = chunk_sources(sample.retrieved_contexts, sample.chunk_ids)
    judged: Sequence[bool | None] = (chunk_relevance(cv) if relevance.keep_judge
                                     else [None] * cv.n_chunks)
    chunks = tuple(replace(c, source=sources[c.index] if c.index < len(sources) else None,
                           relevance_from=relevance.origin, relevant_by_judge=judged[c.index])
                   for c in evidence.chunks)
    return replace(evidence, chunks=chunks)
