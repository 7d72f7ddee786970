"""Misattribution decided by the judge itself, when it offers to.

A judge with ``find_sources(question, reference, chunks, claims)`` (the LLM judge with
``misattribution="llm"``) is asked once per sample, and only for samples with wrong claims no
chunk entails, which chunk states the detail that makes each claim wrong, about another entity,
quoting the words. A quote that is not in the named chunk is not trusted (the claim is then
not misattributed). A judge without the method, or one that answers ``None``, leaves the
offline token alignment's answer in place.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..engine.evidence import MisattributedSpan
from ..samples import Sample
from .failures import failure_kind
from .results import SampleResult, with_misattributions

__all__ = ["SourceFinder", "ask_sources", "quote_span"]

log = logging.getLogger("noisegauge")


@runtime_checkable
class SourceFinder(Protocol):
    async def find_sources(self, question: str, reference: str, chunks: Sequence[str],
                           claims: Sequence[str]) -> list[Mapping[str, Any] | None] | None:
        """Per claim: ``{"chunk": j, "detail": "quoted words"}`` or None (no such chunk);
        None instead of a list: not offered (the offline alignment decides)."""
        ...


def quote_span(quote: str, text: str) -> tuple[int, int] | None:
    """Where ``quote`` stands in ``text``: exact, else ignoring case and runs of spaces."""
    quote = quote.strip()
    if not quote:
        return None
    k = text.find(quote)
    if k >= 0:
        return k, k + len(quote)
    pattern = r"\s+".join(re.escape(part) for part in quote.split())
    m = re.search(pattern, text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


async def ask_sources(judge: Any, sample: Sample, result: SampleResult) -> SampleResult:
    """``result`` with the judge's misattributions, when the judge offers them."""
    finder = getattr(judge, "find_sources", None)
    if (not callable(finder) or result.evidence is None or result.status == "error"
            or sample.reference is None):  # without a reference no claim is known wrong
        return result
    claims = result.evidence.response_claims
    asked = [i for i, c in enumerate(claims) if c.bucket == "hallucination"]
    if not asked:
        return result
    chunks = list(sample.retrieved_contexts)
    try:
        answers = await finder(sample.user_input, sample.reference, chunks,
                               [claims[i].text for i in asked])
    except Exception as exc:  # a diagnostic must not cost the row: keep the offline answer
        if failure_kind(exc) is None:
            raise  # ... but a bug is a bug
        log.warning("row %s: misattribution call failed (%s: %s); token alignment kept",
                    result.index, type(exc).__name__, exc)
        return result
    if answers is None:
        return result
    found: dict[int, tuple[MisattributedSpan, ...]] = {}
    # A short answer leaves the rest unflagged; it is not a reason to lose the ones given.
    for i, answer in zip(asked, answers, strict=False):
        found[i] = ()
        if not isinstance(answer, Mapping):
            continue
        j = answer.get("chunk")
        if not isinstance(j, int) or not 0 <= j < len(chunks):
            continue
        span = quote_span(str(answer.get("detail") or ""), chunks[j])
        if span is not None:
            found[i] = (MisattributedSpan(j, span[0], span[1], chunks[j][span[0]:span[1]]),)
    return with_misattributions(result, found)
