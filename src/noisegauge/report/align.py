"""Where a claim stands in a text: its character span, for highlighting.

Claims are extracted text: a lexical judge copies a clause (markdown and extra spaces
removed, sometimes a subject put back), an LLM judge paraphrases. So a claim is located in
steps: the exact text (case-insensitive), then the same after normalising whitespace,
markdown and end punctuation, then the sentence, clause or run of clauses whose content
words overlap the claim's best (F1 of stems, so the smallest unit that says the claim wins).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..textkit.sentences import sentence_spans
from ..textkit.tokens import tokenize

__all__ = ["Span", "locate", "best_unit", "content_stems"]

Span = tuple[int, int]

#: A unit must hold at least this share of the claim's content words to be its span.
MIN_RECALL = 0.5

_CLAUSE_CUT = re.compile(r"[,;:—–]\s+(?:(?:and|but|while|which|so)\s+)?|\s+(?:and|but|while|which|so)\s+|(?<=[\uac00-\ud7a3])(?:고|며|지만),?\s+")
_MD = re.compile(r"\*\*|__|`|~~")
_TRAIL = " \t\r\n.,;:!?。！？\"'”’)"


def content_stems(text: str) -> frozenset[str]:
    return _stems(text)


@lru_cache(maxsize=65536)
def _stems(text: str) -> frozenset[str]:
    return frozenset(t.norm for t in tokenize(text) if not t.stop)


def _normalised(text: str) -> tuple[str, list[int]]:
    """``text`` lower-cased, markdown emphasis dropped, whitespace runs as one space; and
    for each kept character its index in ``text``."""
    out: list[str] = []
    where: list[int] = []
    i = 0
    space = False
    while i < len(text):
        m = _MD.match(text, i)
        if m:
            i = m.end()
            continue
        ch = text[i]
        if ch.isspace():
            space = bool(out)
        else:
            if space:
                out.append(" ")
                where.append(i - 1)
                space = False
            out.append(ch.lower())
            where.append(i)
        i += 1
    return "".join(out), where


def _exact(claim: str, text: str) -> Span | None:
    k = text.lower().find(claim.lower())
    if k >= 0 and claim:
        return k, k + len(claim)
    core = claim.strip(_TRAIL)
    if len(core) < 3:
        return None
    norm, where = _normalised(text)
    for needle in (_normalised(claim)[0], _normalised(core)[0]):
        k = norm.find(needle)
        if k >= 0:
            return where[k], where[k + len(needle) - 1] + 1
    return None


@lru_cache(maxsize=4096)
def _units(text: str) -> tuple[Span, ...]:
    """Sentences, their clauses, and runs of consecutive clauses inside a sentence."""
    units: list[Span] = []
    for a, b in sentence_spans(text) or [(0, len(text))]:
        units.append((a, b))
        cuts = [a]
        for m in _CLAUSE_CUT.finditer(text, a, b):
            cuts.extend((m.start(), m.end()))
        cuts.append(b)
        pieces = [(cuts[k], cuts[k + 1]) for k in range(0, len(cuts) - 1, 2)]
        pieces = [p for p in pieces if p[1] > p[0]]
        if len(pieces) > 1:
            for i in range(len(pieces)):
                for j in range(i, min(len(pieces), i + 4)):
                    if (i, j) != (0, len(pieces) - 1):
                        units.append((pieces[i][0], pieces[j][1]))
    return tuple(units)


def best_unit(claim: str, text: str, min_recall: float = MIN_RECALL) -> Span | None:
    """The sentence/clause span of ``text`` sharing most content words with ``claim``
    (F1; ties go to the shorter), or None when less than ``min_recall`` of them are there."""
    want = _stems(claim)
    if not want or not text:
        return None
    best: tuple[float, int] = (0.0, 0)
    span: Span | None = None
    for a, b in _units(text):
        have = _stems(text[a:b])
        hit = len(want & have)
        if not hit or hit / len(want) < min_recall:
            continue
        f1 = 2 * hit / (len(want) + len(have))
        key = (round(f1, 9), -(b - a))
        if key > best:
            best, span = key, (a, b)
    if span is None:
        return None
    a, b = span
    while b > a and text[b - 1] in _TRAIL[:5]:  # keep a closing period out of the mark
        b -= 1
    return a, b


def locate(claim: str, text: str, context: str = "") -> Span | None:
    """Span of ``claim`` in ``text``: exact, normalised, else the best-overlap unit.

    ``context``: the conversation before ``text`` (a chat's earlier turns and question). A
    claim made standalone with it ("Monthly plans can be refunded within seven days." for
    "Seven days.") holds words only the conversation says; they do not count, so the claim
    maps to the sentence it was made from."""
    if not claim.strip() or not text:
        return None
    plain = _locate(claim, text)
    if plain is not None or not context:
        return plain
    only_there = _stems(context) - _stems(text)
    kept = " ".join(t.text for t in tokenize(claim) if t.norm not in only_there)
    return best_unit(kept, text) if kept.strip() else None


def _locate(claim: str, text: str) -> Span | None:
    found = _exact(claim.strip(), text)
    # A bare answer's claim carries its question ("How old …? From 55."): the answer part
    # is what the response says, and the question's words only dilute the overlap.
    _, sep, answer = claim.rpartition("? ")
    if sep and answer.strip():
        return found or _exact(answer.strip(), text) or best_unit(answer, text) \
            or best_unit(claim, text)
    return found or best_unit(claim, text)
