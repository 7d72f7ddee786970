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
   neither the reference nor the question state ("unlimited" and "no limit" count as a
   value), else at least two such content words; where the reference denies what the claim
   asserts ("the R3 has no mop" / "the R3 mops"; a "No, ..." answer to a yes/no question),
   the denied words are the detail;
2. a *window* of chunk ``j`` (a sentence, two adjacent ones, or a clause of a sentence that
   turns to another entity: "...; ...", ", while ...", "반면") states that detail: every
   number, code or name and half of the other words (rounded down; none beside a *specific*
   detail: an amount with a unit, a number of three digits, a code, a two-word name), or,
   without numbers or names, two thirds of the words and at least two (half, at least one,
   where the window swaps the entity, below);
3. that window is *about another entity*: it lacks a word the claim shares with the question
   or the reference (the asked entity, "Pro") or the asked numbered entity ("1학기"), shares
   another of the claim's content words (the same topic; not needed for a specific detail or
   a swap), and names something the claim, question and reference do not;
4. the claim does not name what the window is about: the words of its heading ("Enterprise
   plan:"), else its first word the question and reference do not state ("Our head of *sales*
   is ..."). A claim that does ("Unlike version 4.2, version 5.0 gets updates until 2028")
   states that entity's fact: noise or a comparison, not a misattribution.

A detail found nowhere (a true hallucination: "45-day", "NG-TM-M") is never flagged.

A wrong claim the judge reads as *entailed* by chunk ``j`` ("Northwind's chief financial
officer is David Kim" under "Northwind's chief technology officer is David Kim") counts as
noise by the algebra, and stays so; it also gets ``misattributed_from`` when, besides 1-4,
the window *swaps the entity*: a word of the question or reference that the window lacks
stands beside the same word as a window word no claim, question or reference states
("chief financial officer" / "chief technology officer", "일반 회원" / "VIP 회원"), or the two
are of one closed kind (colours, acronyms, seasons, weekdays), or the window is about
something the claim does not name (4: "Adult library cards: ...") and lacks what it asks.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..engine.evidence import MisattributedSpan
from ..judges.lexical.judge import answer_part
from ..judges.lexical.slots import acronym, closed_class
from ..judges.lexical.text import MONTHS, NEGATIONS, Quantity, Token, quantities, tokenize
from ..text import sentence_spans

__all__ = ["Detail", "distinguishing_detail", "find_misattributions"]

#: Korean bound nouns and auxiliaries the shared stopword list (English) does not hold: they
#: say nothing about an entity, so they are never a detail ("할 수 있습니다", "동안").
_KO_FUNCTION = frozenset(["수", "있", "없", "것", "등", "및", "때", "동안", "중", "후", "전", "통해",
                          "대해", "경우", "이내", "까지", "부터", "하", "되", "드립", "가능"])

_UNLIMITED = frozenset(["unlimit", "무제한"])

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


def _stated(x: Quantity, y: Quantity) -> bool:
    """``y`` states ``x``: the same quantity, or the same value where neither has a unit but
    the word after it ("Patch 2.3 lifted" / "Patch 2.3 raised")."""
    def hard(q: Quantity) -> bool:
        return bool(_unit(q)[0]) and not _unit(q)[0].startswith("w:")
    # ("$2.00" is not stated by "Zone 2": a price is never a counted word)
    return _same_quantity(x, y) or (not hard(x) and not hard(y) and x.value == y.value)


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
    #: The word before each of those ("Zone" of "Zone 2"), or "": what the number numbers.
    anchor_heads: tuple[str, ...] = ()

    @property
    def hard(self) -> bool:
        return bool(self.quantities or self.names)

    @property
    def specific(self) -> bool:
        """Unlikely to occur by chance: an amount with a unit ("23 kg", "12개월", "2 devices"), a
        number of three or more digits, a code, or a name of two words ("Rafael Quintero")."""
        return any(_unit(q)[0] or abs(q.value) >= 100 for q in self.quantities) \
            or len(self.names) >= 2 \
            or any(any(ch.isdigit() for ch in n) for n in self.names)


def distinguishing_detail(claim: str, reference: str, question: str = "") -> Detail | None:
    """The claim's detail (see the module docstring), or None when it has none."""
    c, r, q = _analyse(claim), _analyse(reference), _analyse(question)
    known = r.norms | q.norms
    stated = r.quantities + q.quantities
    qty = tuple(x for x in c.quantities if not any(_stated(x, y) for y in r.quantities))
    known_qty = tuple(x for x in c.quantities if any(_stated(x, y) for y in stated))
    in_qty = set()
    for x in c.quantities:
        in_qty.add(x.pos)
        if x.unit and x.pos + 1 < len(c.tokens) and not c.tokens[x.pos + 1].stop:
            in_qty.add(x.pos + 1)  # the unit word ("day" of "90-day") belongs to the number
    names: set[str] = set()
    words: set[str] = set()
    # "Yes, the R3 has a mop" where the reference says it has none: what the reference denies
    # is the detail, though it states the words.
    denied = (_denied(r) | _answered_no(r, q, c)) if not _negations(c) else frozenset()
    # What the claim is about (its first two words: "Classic 관리 콘솔에서도") is never denied.
    subject = {t.norm for t in [t for t in c.tokens if _content(t)][:2]}
    for i, t in enumerate(c.tokens):
        if t.stop or i in in_qty or t.kind == "num":
            continue
        if t.norm in known and not (t.norm in denied and t.norm not in subject):
            continue
        # "unlimited" is a value, like a number ("통화 무제한" against "통화 100분").
        if t.kind == "code" or t.text.lower() in MONTHS or (t.capital and i > 0) \
                or t.norm in _UNLIMITED:
            names.add(t.norm)
        elif t.kind == "word" and not (t.hangul and (len(t.norm) < 2 or t.norm in _KO_FUNCTION)):
            words.add(t.norm)
    names |= _unlimited_phrase(c) - known
    content = {t.norm for i, t in enumerate(c.tokens) if not t.stop and i not in in_qty}
    anchor = frozenset(content & known) - words
    topic = frozenset(content - anchor - names - words)
    qty = tuple(x for x in qty if x not in known_qty)  # a number the question asks about
    if not qty and not names and len(words) < 2:
        return None
    heads = tuple(c.tokens[x.pos - 1].norm if x.pos > 0 and _content(c.tokens[x.pos - 1]) else ""
                  for x in known_qty)
    return Detail(qty, frozenset(names), frozenset(words), anchor, topic, known_qty, heads)


#: A leading answer word ("No, ...", "아니요, ...") is not the negation of what follows.
_ANSWERS = frozenset(["no", "nope", "아니요", "아니오", "아뇨"])
#: Particles that end a Korean topic or place phrase ("R3에는"): what follows is the predicate.
_KO_TOPIC_ENDS = ("에는", "에서는", "은", "는", "이", "가", "에")


def _negations(t: _Text) -> list[int]:
    return [i for i, tok in enumerate(t.tokens)
            if tok.text.lower() in NEGATIONS
            and not (i == 0 and tok.text.lower() in _ANSWERS and len(t.tokens) > 1
                     and t.tokens[1].punct)]


def _denied(r: _Text) -> frozenset[str]:
    """Stems the reference denies: in English those after its first negation ("does not
    include phone support"); in Korean those between the topic and it ("R3에는 물걸레 기능이
    없습니다")."""
    neg = _negations(r)
    if not neg:
        return frozenset()
    k = neg[0]
    if r.tokens[k].hangul:
        start = next((i + 1 for i in range(k) if r.tokens[i].hangul
                      and r.tokens[i].text.endswith(_KO_TOPIC_ENDS)), 0)
        return frozenset(t.norm for t in r.tokens[start:k] if not t.stop)
    return frozenset(t.norm for t in r.tokens[k + 1:] if not t.stop)


#: Where a sentence turns to another entity: "...; ...", ", while ...", "..., 반면 ...".
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:while|whereas|but)\b)|(?<=[며고면]),\s+|\s+반면(?:에)?,?\s+")


def _unlimited_phrase(t: _Text) -> frozenset[str]:
    """"제한 없이" and "no limit" say "무제한" and "unlimited" (the stems chunks write)."""
    out = set()
    for a, b in zip(t.tokens, t.tokens[1:], strict=False):
        if a.norm == "제한" and b.norm in ("없", "없이"):
            out.add("무제한")
        elif a.text.lower() in ("no", "without") and b.norm == "limit":
            out.add("unlimit")
    return frozenset(out)


def _answered_no(r: _Text, q: _Text, c: _Text) -> frozenset[str]:
    """What a "No, ..." reference denies of a yes/no question: the question's words it does
    not repeat ("Can the youth pass be used on regional trains?" / "No, on buses only"),
    less the claim's first two words (what it is about: "the youth pass", "유학생보험도")."""
    first = r.tokens[0].text.lower() if r.tokens else ""
    if first not in _ANSWERS or len(r.tokens) < 2 or not r.tokens[1].punct:
        return frozenset()
    subject = [t.norm for t in c.tokens if _content(t)][:2]
    return q.norms - r.norms - set(subject)


def _windows(text: str) -> list[tuple[int, int]]:
    """Sentences, pairs of adjacent ones, and the clauses of a sentence that describes two
    entities ("Dr. Osei sees patients on Tuesdays, while Dr. Brenner ...")."""
    sents = sentence_spans(text) or [(0, len(text))]
    clauses = []
    for a, b in sents:
        start = a
        for m in _CLAUSE.finditer(text, a, b):
            clauses.append((start, m.start()))
            start = m.end()
        if start > a:
            clauses.append((start, b))
    return clauses + sents + [(sents[k][0], sents[k + 1][1]) for k in range(len(sents) - 1)]


def _match(d: Detail, chunk: _Text, idx: list[int], outside: frozenset[str],
           swapped: bool) -> list[int] | None:
    """Token indices of the detail inside the ``chunk`` window (token positions ``idx``), or
    None when the window does not state the detail about another entity. ``swapped``: the
    window puts another entity in the asked one's place (``_swapped``)."""
    if not idx:
        return None
    norms = {chunk.tokens[i].norm for i in idx if _content(chunk.tokens[i])}
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
    # or name, none beside a specific one ("lifted the maximum level to 70" / "raised the
    # level cap to 70"), else two thirds and at least two.
    # Beside another entity in the asked one's place, one word is enough ("싱가포르 리전에
    # 보관" / "싱가포르 리전에 저장").
    if d.hard:
        need: float = 0 if d.specific or swapped else len(d.words) // 2
    else:
        need = max(1, len(d.words) // 2) if swapped else max(2, 2 * len(d.words) / 3)
    if d.words and len(present) < need:
        return None
    if not hits:  # no number or name: the words are the detail
        hits = [i for i in idx if chunk.tokens[i].norm in present]
    lacks_qty = any(not any(p.pos in idx and _same_quantity(q, p) for p in chunk.quantities)
                    for q in d.anchor_quantities)
    if not lacks_qty and (not d.anchor or d.anchor <= norms):
        return None  # the window names what the claim is about: not another entity
    if not (d.specific or swapped) and not (d.anchor | d.topic) & norms \
            and len(present) < (2 if d.hard else 3):
        return None  # nothing of the claim's topic: a small detail only happens to occur there
    # Something in the window the claim, question and reference do not name: a word, or
    # another value of the claim's own numbered entity ("2학기" where it asks about "1학기",
    # "Zone 1" where it asks about "Zone 2").
    if not norms - outside and not (lacks_qty and any(
            p.pos in idx and p.value != q.value and (
                _unit(p)[0] == _unit(q)[0]
                or (head != "" and p.pos > 0 and chunk.tokens[p.pos - 1].norm == head))
            for q, head in zip(d.anchor_quantities, d.anchor_heads, strict=True)
            for p in chunk.quantities)):
        return None
    return sorted(set(hits))


def _content(t: Token) -> bool:
    """A word that can name an entity: not a stopword, or an acronym ("US" of "US customers",
    which the stopword list reads as "us")."""
    return t.kind in ("word", "code") and (not t.stop or acronym(t))


def _runs(toks: Sequence[Token], idx: Sequence[int], keep: Collection[str]) -> list[list[int]]:
    """Maximal runs of consecutive content tokens (positions in ``idx``) whose stems are not
    in ``keep``: the words one text has where the other has none."""
    runs: list[list[int]] = []
    for n, i in enumerate(idx):
        t = toks[i]
        if not _content(t) or t.norm in keep:
            continue
        if runs and runs[-1][-1] == idx[n - 1] and n > 0:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _beside(toks: Sequence[Token], idx: Sequence[int], run: list[int], step: int) -> str | None:
    """The stem of the content token next to ``run`` on side ``step`` (skipping up to two
    stopwords: "head of security"), or None."""
    pos = idx.index(run[0] if step < 0 else run[-1]) + step
    skipped = 0
    while 0 <= pos < len(idx):
        t = toks[idx[pos]]
        if _content(t) or t.kind == "num":
            return t.norm
        skipped += 1
        if skipped > 2:
            return None
        pos += step
    return None


def _same_place(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    # Korean compounds: "배송비" (shipping fee) and "배송" (shipping) head the same slot.
    return a == b or (min(len(a), len(b)) >= 2 and not a.isascii() and not b.isascii()
                      and (a.startswith(b) or b.startswith(a)))


def _one_kind(a: Token, b: Token) -> bool:
    ca = closed_class(a)
    return (ca is not None and ca == closed_class(b)) or (acronym(a) and acronym(b))


def _swapped(c: _Text, chunk: _Text, idx: list[int], asked: frozenset[str],
             outside: frozenset[str], d: Detail, markers: frozenset[str]) -> bool:
    """The window puts another entity where the claim names the asked one: a run of claim
    words it lacks (holding a word of the question or reference) and a run of window words
    nobody else states stand beside the same word, or are single words of one closed kind;
    or the window is about something the claim does not name (``markers``: "Adult library
    cards: ...", "Residents of Birch Tower have ...") and lacks something the claim asks
    about (a word, or the numbered entity "2학기")."""
    window = {chunk.tokens[i].norm for i in idx}
    cidx = list(range(len(c.tokens)))
    mine = [r for r in _runs(c.tokens, cidx, window) if any(c.tokens[i].norm in asked for i in r)]
    if markers and (mine or any(
            not any(p.pos in idx and _same_quantity(q, p) for p in chunk.quantities)
            for q in d.anchor_quantities)):
        return True
    theirs = _runs(chunk.tokens, idx, outside)
    for r in mine:
        for w in theirs:
            if len(r) == 1 and len(w) == 1 and _one_kind(c.tokens[r[0]], chunk.tokens[w[0]]):
                return True
            if any(_same_place(_beside(c.tokens, cidx, r, s), _beside(chunk.tokens, idx, w, s))
                   for s in (-1, 1)):
                return True
    return False


def _markers(text: str, chunk: _Text, idx: list[int], a: int, b: int,
             known: frozenset[str]) -> frozenset[str]:
    """What the window is about, besides what the question and reference name: the words of
    its heading ("VIP 회원 연회비:", "Model TR-220 (black):"), else its first such word ("Our
    head of *sales* is ...", "Version *5.0* receives ...")."""
    colon = text.find(":", a, b)
    units = {q.pos + 1 for q in chunk.quantities if q.unit}  # "kg" of "7~15kg" names nothing
    named = [i for i in idx if (_content(chunk.tokens[i]) or chunk.tokens[i].kind == "num")
             and chunk.tokens[i].norm not in known and i not in units]
    if colon >= 0:
        head = [i for i in idx if chunk.spans[i][1] <= colon]
        if 0 < len(head) <= 6:
            return frozenset(chunk.tokens[i].norm for i in named if i in head)
    return frozenset(chunk.tokens[i].norm for i in named[:1])


def find_misattributions(claim: str, chunks: Sequence[str], reference: str,
                         question: str = "", *,
                         entailed_by: Collection[int] = ()) -> tuple[MisattributedSpan, ...]:
    """One span per chunk that states the claim's wrong detail about another entity.
    ``entailed_by``: the chunks the judge reads as entailing the (wrong) claim; only those
    are looked at then, and only a window that swaps the entity counts."""
    claim = answer_part(claim)  # "Can I ...? Yes, ...": the answer is the claim
    d = distinguishing_detail(claim, reference, question)
    if d is None:
        return ()
    c = _analyse(claim)
    asked = _analyse(reference).norms | _analyse(question).norms
    outside = c.norms | asked
    named = frozenset(t.norm for t in c.tokens if _content(t) or t.kind == "num")
    out: list[MisattributedSpan] = []
    for j, text in enumerate(chunks):
        if entailed_by and j not in entailed_by:
            continue
        chunk = _analyse(text)
        for a, b in sorted(_windows(text), key=lambda w: w[1] - w[0]):
            idx = [i for i, (s, e) in enumerate(chunk.spans) if s >= a and e <= b]
            markers = frozenset().union(*(
                _markers(text, chunk, [i for i in idx if s <= chunk.spans[i][0] < e], s, e, asked)
                for s, e in sentence_spans(text, a, b) or [(a, b)]))
            # A claim that names what the window is about says that entity's fact (noise, or
            # a comparison: "Unlike version 4.2, version 5.0 ..."), not another's.
            if markers & named:
                continue
            swapped = _swapped(c, chunk, idx, asked, outside, d, markers)
            hits = _match(d, chunk, idx, outside, swapped)
            if hits is None or (entailed_by and not swapped):
                continue
            start, end = chunk.spans[hits[0]][0], chunk.spans[hits[-1]][1]
            if end - start > MAX_SPAN:
                end = chunk.spans[hits[0]][1]
            out.append(MisattributedSpan(j, start, end, text[start:end]))
            break
    return tuple(out)
