"""Misattributed noise: a wrong detail carried from one entity's chunk onto another.

"The Pro plan needs a 90-day notice", when only the Enterprise chunk says 90 days, is wrong
and entailed by no chunk, so RAGChecker's algebra counts it as hallucination. It was not
made up, though: the detail that makes it wrong was read in a chunk about another entity.
Such a claim gets ``misattributed_from`` (the chunks) with the matched span, and the sample
the diagnostic ``noise_misattribution`` (share of response claims). The eleven metrics and
their algebra never change; this is a diagnostic beside them.

Offline, token alignment decides (the lexical judge's tokens: stems, numbers with units,
product codes, months). A hallucinated claim is misattributed from chunk ``j`` when

1. it has a *distinguishing detail*: its numbers (with units), codes, months or names that
   neither the reference nor the question state, else at least two such content words;
2. one sentence (or two adjacent ones) of chunk ``j`` states that detail: every number,
   code or name and half of the other words (rounded down), or, without numbers or names, two
   thirds of the words and at least two;
3. that window is *about another entity*: it lacks a word the claim shares with the question
   or the reference (the asked entity, "Pro"), shares another of the claim's content words
   (the same topic; three detail words matched are topic enough, two beside a number or name),
   and names something the
   claim, question and reference do not.

A detail found nowhere (a true hallucination: "45-day", "NG-TM-M") is never flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..engine.evidence import MisattributedSpan
from ..judges.lexical.text import MONTHS, Quantity, Token, quantities, tokenize
from ..text import sentence_spans

__all__ = ["Detail", "distinguishing_detail", "find_misattributions"]

#: Korean bound nouns and auxiliaries the shared stopword list (English) does not hold: they
#: say nothing about an entity, so they are never a detail ("할 수 있습니다", "동안").
_KO_FUNCTION = frozenset(["수", "있", "없", "것", "등", "및", "때", "동안", "중", "후", "전", "통해",
                          "대해", "경우", "이내", "까지", "부터", "하", "되", "드립", "가능"])

#: A detail spread wider than this in a chunk is marked by its first part only
#: (the span covers the numbers, codes and names; the words only when there are none).
MAX_SPAN = 120


@dataclass(frozen=True)
class _Text:
    tokens: tuple[Token, ...]
    spans: tuple[tuple[int, int], ...]
    quantities: tuple[Quantity, ...]

    @property
    def norms(self) -> frozenset[str]:
        return frozenset(t.norm for t in self.tokens if not t.stop)


@lru_cache(maxsize=8192)
def _analyse(text: str) -> _Text:
    toks = tokenize(text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for t in toks:  # tokens are verbatim substrings, in order
        k = text.find(t.text, pos)
        k = pos if k < 0 else k
        spans.append((k, k + len(t.text)))
        pos = k + len(t.text)
    return _Text(toks, tuple(spans), tuple(quantities(toks)))


def _unit(q: Quantity) -> tuple[str, frozenset[str]]:
    unit, _, rate = q.unit.partition("/")
    return unit, frozenset(rate.split("+")) if rate else frozenset()


def _same_quantity(a: Quantity, b: Quantity) -> bool:
    """Same value, and units that agree ("$29 per month" is "$29 per user per month" said
    shorter; "30 days" is not "30 users", and "15%" is not a bare "15")."""
    if a.value != b.value:
        return False
    ua, ra = _unit(a)
    ub, rb = _unit(b)
    hard_a = bool(ua) and not ua.startswith("w:")
    hard_b = bool(ub) and not ub.startswith("w:")
    if hard_a != hard_b or (hard_a and ua != ub):
        return False
    if ua and ub and ua != ub:
        return False  # two counted words: "12 이상" (12 or more) is not "12월"
    return not ra or not rb or ra <= rb or rb <= ra


@dataclass(frozen=True)
class Detail:
    """What makes a claim wrong: hard items (numbers with units, codes, months, names) and
    soft content words, none of which the reference or the question state."""

    quantities: tuple[Quantity, ...]
    names: frozenset[str]   # codes, months, capitalised words (stems)
    words: frozenset[str]   # other content stems
    anchor: frozenset[str]  # claim stems shared with the question/reference: what it is about
    topic: frozenset[str]   # the rest of the claim's content stems
    #: The claim's numbers the question/reference state too ("Toolkit 3.2", "the 13-inch"):
    #: part of what it is about, like ``anchor``.
    anchor_quantities: tuple[Quantity, ...] = ()

    @property
    def hard(self) -> bool:
        return bool(self.quantities or self.names)


def distinguishing_detail(claim: str, reference: str, question: str = "") -> Detail | None:
    """The claim's detail (see the module docstring), or None when it has none."""
    c, r, q = _analyse(claim), _analyse(reference), _analyse(question)
    known = r.norms | q.norms
    stated = r.quantities + q.quantities
    qty = tuple(x for x in c.quantities if not any(_same_quantity(x, y) for y in r.quantities))
    known_qty = tuple(x for x in c.quantities if any(_same_quantity(x, y) for y in stated))
    in_qty = set()
    for x in c.quantities:
        in_qty.add(x.pos)
        if x.unit and x.pos + 1 < len(c.tokens) and not c.tokens[x.pos + 1].stop:
            in_qty.add(x.pos + 1)  # the unit word ("day" of "90-day") belongs to the number
    names: set[str] = set()
    words: set[str] = set()
    for i, t in enumerate(c.tokens):
        if t.stop or i in in_qty or t.norm in known or t.kind == "num":
            continue
        if t.kind == "code" or t.text.lower() in MONTHS or (t.capital and i > 0):
            names.add(t.norm)
        elif t.kind == "word" and not (t.hangul and (len(t.norm) < 2 or t.norm in _KO_FUNCTION)):
            words.add(t.norm)
    content = {t.norm for i, t in enumerate(c.tokens) if not t.stop and i not in in_qty}
    anchor = frozenset(content & known)
    topic = frozenset(content - anchor - names - words)
    qty = tuple(x for x in qty if x not in known_qty)  # a number the question asks about
    if not qty and not names and len(words) < 2:
        return None
    return Detail(qty, frozenset(names), frozenset(words), anchor, topic, known_qty)


def _windows(text: str) -> list[tuple[int, int]]:
    sents = sentence_spans(text) or [(0, len(text))]
    return sents + [(sents[k][0], sents[k + 1][1]) for k in range(len(sents) - 1)]


def _match(d: Detail, chunk: _Text, a: int, b: int, outside: frozenset[str]) -> list[int] | None:
    """Token indices of the detail inside ``chunk`` window [a, b), or None when the window
    does not state the detail about another entity."""
    idx = [i for i, (s, e) in enumerate(chunk.spans) if s >= a and e <= b]
    if not idx:
        return None
    norms = {chunk.tokens[i].norm for i in idx if not chunk.tokens[i].stop}
    hits: list[int] = []
    for q in d.quantities:
        found = [p for p in chunk.quantities if p.pos in idx and _same_quantity(q, p)]
        if not found:
            return None
        p = found[0]
        hits.append(p.pos)
        if p.pos + 1 < len(chunk.tokens) and p.unit and not chunk.tokens[p.pos + 1].stop:
            hits.append(p.pos + 1)
    for n in d.names:
        at = [i for i in idx if chunk.tokens[i].norm == n]
        if not at:
            return None
        hits.append(at[0])
    present = d.words & norms
    # Words are paraphrased ("includes", "cannot"): half of them (rounded down) with a number
    # or name, else two thirds and at least two.
    need = len(d.words) // 2 if d.hard else max(2, 2 * len(d.words) / 3)
    if d.words and len(present) < need:
        return None
    if not hits:  # no number or name: the words are the detail
        hits = [i for i in idx if chunk.tokens[i].norm in present]
    lacks_qty = any(not any(p.pos in idx and _same_quantity(q, p) for p in chunk.quantities)
                    for q in d.anchor_quantities)
    if not lacks_qty and (not d.anchor or d.anchor <= norms):
        return None  # the window names what the claim is about: not another entity
    if not (d.anchor | d.topic) & norms and len(present) < (2 if d.hard else 3):
        return None  # nothing of the claim's topic: a small detail only happens to occur there
    if not norms - outside:
        return None  # nothing in the window the claim, question and reference do not name
    return sorted(set(hits))


def find_misattributions(claim: str, chunks: Sequence[str], reference: str,
                         question: str = "") -> tuple[MisattributedSpan, ...]:
    """One span per chunk that states the claim's wrong detail about another entity."""
    d = distinguishing_detail(claim, reference, question)
    if d is None:
        return ()
    outside = _analyse(claim).norms | _analyse(reference).norms | _analyse(question).norms
    out: list[MisattributedSpan] = []
    for j, text in enumerate(chunks):
        chunk = _analyse(text)
        for a, b in sorted(_windows(text), key=lambda w: w[1] - w[0]):
            hits = _match(d, chunk, a, b, outside)
            if hits is None:
                continue
            start, end = chunk.spans[hits[0]][0], chunk.spans[hits[-1]][1]
            if end - start > MAX_SPAN:
                end = chunk.spans[hits[0]][1]
            out.append(MisattributedSpan(j, start, end, text[start:end]))
            break
    return tuple(out)
