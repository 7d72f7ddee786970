"""Misattribution of one claim: the chunks that state its detail about another entity."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from ...engine.evidence import MisattributedSpan
from ...textkit.quantity import CURRENCIES, Quantity, free_at
from ...textkit.sentences import sentence_spans
from ...textkit.spans import Text, is_content, spanned
from ...textkit.tokens import answer_part
from .detail import FREE, UNLIMITED, Detail, denies, distinguishing_detail, korean_name, negated
from .rules import on
from .tokens import like, name_keys, same_quantity, stated
from .windows import heading_of, in_place, markers_of, swaps_entity, windows

__all__ = ["MAX_SPAN", "find_misattributions"]

#: A detail spread wider than this in a chunk is marked by its first part only
#: (the span covers the numbers, codes and names; the words only when there are none).
MAX_SPAN = 120


def match(d: Detail, chunk: Text, idx: Sequence[int], outside: frozenset[str],
          swapped: bool | Callable[[], bool], elsewhere: Collection[Quantity | str] = frozenset(),
          norms: frozenset[str] | None = None,
          stating: Mapping[Quantity, Sequence[Quantity]] | None = None,
          in_place: Callable[[], bool] | None = None,
          capitals: frozenset[str] = frozenset()) -> list[int] | None:
    """Token indices of the detail inside the ``chunk`` window (token positions ``idx``), or
    None when the window does not state the detail about another entity. ``swapped``: the
    window puts another entity in the asked one's place (``swaps_entity``; a function is asked
    only where the answer matters). ``elsewhere``: the detail's numbers and names another chunk
    states; one of those may be missing from the window ("Under the current Stage 2 restrictions, North residents may water three times a week" takes
    "Stage 2" from a notice and "3 days per week" from the South district's chunk), as long as
    the window states one. ``norms``: the window's content stems, and ``stating``: the chunk's quantities that state each of the
    detail's, when known. ``in_place``: given for a window of the asked entity's own chunk
    (``_own_chunks``): whether the window puts another entity in its place by its words
    alone (``windows.in_place``); without that, or a variant or another number of the asked entity,
    the window is that entity's own sentence (a stale or other-case value, a conflict inside
    its chunk), not another entity's. ``capitals``: the stems the claim, question or
    reference write capitalised (the asked entity's name, of which a variant can be named)."""
    if not idx:
        return None
    inside = frozenset(idx)
    if norms is None:
        norms = frozenset(chunk.tokens[i].norm for i in idx if is_content(chunk.tokens[i]))
    hits: list[int] = []
    quantities: list[Quantity] = []
    names: set[str] = set()
    for q in d.quantities:
        found = [p for p in (stating[q] if stating is not None else like(chunk, q))
                 if p.pos in inside and same_quantity(q, p)]
        if not found:
            if elsewhere and q in elsewhere:
                continue
            return None
        quantities.append(q)
        p = found[0]
        hits.append(p.pos)
        if p.pos + 1 < len(chunk.tokens) and any(p.what) and not chunk.tokens[p.pos + 1].stop:
            hits.append(p.pos + 1)
    for n in d.names:
        at = [i for i in _free(chunk) if i in inside] if n == FREE \
            else [i for i in idx if chunk.tokens[i].norm == n]
        if not at:
            if n in elsewhere:
                continue
            return None
        names.add(n)
        hits.append(at[0])
    here = replace(d, quantities=tuple(quantities), names=frozenset(names))
    # What the window states of a detail read in two places must be the telling part, a
    # value (an amount with a unit...), not what a general notice said ("Stage 2") nor only
    # a name ("AF19" of "AF19보다 ... 에너지효율은 1등급", which compares).
    if d.hard and (not hits or (here != d and not (here.specific and here.quantities))):
        return None
    d = here
    if callable(swapped):
        swapped = swapped()
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
    if not hits or (d.names == {FREE} and not d.quantities):
        # no number or name (or only "free"): the words are the detail too
        hits = sorted(set(hits) | {i for i in idx if chunk.tokens[i].norm in present})
    lacks_qty = any(not any(p.pos in inside and same_quantity(q, p) for p in like(chunk, q))
                    for q in d.anchor_quantities)
    # "Lumo Reader Pro" where the claim asks about the "Lumo Reader": another model, though
    # the window names all the asked one's words. In the asked entity's own chunk the name
    # must go on in the same phrase (not "... notice period. Legacy rule ...") from a word
    # written as a name ("Reader"; not the "refund" of "Refund Policy v3" beside a claim
    # that says "refundable").
    variant = on("variant") and any(
        k > 0 and k - 1 in inside and chunk.tokens[k - 1].norm in d.anchor
        and chunk.tokens[k].capital and is_content(chunk.tokens[k])
        and chunk.tokens[k].norm not in outside
        and (in_place is None or (chunk.tokens[k - 1].norm in capitals
                                  and chunk.spans[k][0] - chunk.spans[k - 1][1] <= 1))
        for k in idx)
    if not lacks_qty and not variant and (not d.anchor or d.anchor <= norms):
        return None  # the window names what the claim is about: not another entity
    if not (d.specific or swapped) and not (d.anchor | d.topic) & norms \
            and len(present) < (2 if d.hard else 3):
        return None  # nothing of the claim's topic: a small detail only happens to occur there
    # Something in the window the claim, question and reference do not name: a word, or
    # another value of the claim's own numbered entity ("2학기" where it asks about "1학기",
    # "Zone 1" where it asks about "Zone 2").
    renumbered = lacks_qty and any(
        p.pos in inside and p.value != q.value and (
            p.what == q.what
            or (head != "" and p.pos > 0 and chunk.tokens[p.pos - 1].norm == head))
        for q, head in zip(d.anchor_quantities, d.anchor_heads, strict=True)
        for p in chunk.quantities)
    if not norms - outside and not renumbered:
        return None
    if in_place is not None and not (variant or renumbered or in_place()):
        return None  # the asked entity's own chunk says it of that entity: no other entity
    return sorted(set(hits))


def find_misattributions(claim: str, chunks: Sequence[str], reference: str,
                         question: str = "", *,
                         entailed_by: Collection[int] = ()) -> tuple[MisattributedSpan, ...]:
    """One span per chunk that states the claim's wrong detail about another entity.
    ``entailed_by``: the chunks the judge reads as entailing the (wrong) claim. A window of
    one of those that swaps the entity counts first; else every chunk is looked at as for a
    hallucination, unless one of those chunks states the detail and is not found so: then
    the claim was read about its own entity (a chunk the reference words otherwise)."""
    claim = answer_part(claim)  # "Can I ...? Yes, ...": the answer is the claim
    d = distinguishing_detail(claim, reference, question)
    if d is None:
        return ()
    if on("own-numbers"):
        d = _less_own(d, chunks, reference)
    if entailed_by:
        swapped = _find(claim, d, chunks, reference, question, entailed_by)
        if swapped:
            return swapped
    found = _find(claim, d, chunks, reference, question, ())
    flagged = {m.chunk for m in found}
    if any(j not in flagged and _states(d, spanned(chunks[j])) for j in entailed_by):
        return ()
    return found


def _less_own(d: Detail, chunks: Sequence[str], reference: str) -> Detail:
    """The detail less the numbers the asked entity's own chunk states (the chunk that states
    every number of the reference): "8 hours ... and 20 hours with the case" mixes the other
    model's 8 with its own 20, and only the 8 was carried. One number always stays, unless
    the claim also says "free" ("no monthly fee, and you can open it with just $25", where
    $25 is the asked account's own): then "free" is the detail."""
    if len(d.quantities) < (1 if d.free else 2):
        return d
    own = _own(chunks, reference)
    if own is None:
        return d
    mine = spanned(chunks[own])
    kept = tuple(q for q in d.quantities if not any(same_quantity(q, p) for p in like(mine, q)))
    if not kept and d.free:
        return replace(d, quantities=(), names=d.names | {FREE}, free=False)
    return replace(d, quantities=kept) if kept else d


def _own(chunks: Sequence[str], reference: str) -> int | None:
    """The asked entity's own chunk: the one chunk that states every number of the reference."""
    return _own_chunk(tuple(chunks), reference)


@lru_cache(maxsize=256)
def _own_chunk(chunks: tuple[str, ...], reference: str) -> int | None:
    """``_own``, once per sample: the same for each of its claims."""
    ref = spanned(reference).quantities
    own = [j for j, x in enumerate(chunks)
           if all(any(same_quantity(r, p) for p in like(spanned(x), r)) for r in ref)]
    return own[0] if ref and len(own) == 1 else None


def _own_chunks(claim: Text, chunks: tuple[str, ...], reference: str,
                question: str) -> frozenset[int]:
    """The asked entity's own chunks for ``claim``: those that state the reference sentence
    nearest it (the one sharing most of its content stems: every number of that sentence
    and two thirds of its content stems, at least two), every word the claim shares with
    that sentence, and every name it shares with the question (what it is about: the "Team"
    of "Does the Team plan include SSO?", not the Scale chunk a "No, SSO comes with the
    Scale plan" reference restates). A stale or other-case sentence in such a chunk
    ("Legacy rule from Billing Policy v2: Pro cancellations require a 60-day notice period"
    beside the current 30 days) is about the same entity."""
    mine = {t.norm for t in claim.tokens if is_content(t)}
    asked = {t.norm for t in claim.tokens if is_content(t) and (t.capital or t.kind == "code")} \
        & spanned(question).norms
    best: list[Text] = []
    top = 0
    for a, b in sentence_spans(reference) or [(0, len(reference))]:
        r = spanned(reference[a:b])
        shared = len(mine & {t.norm for t in r.tokens if is_content(t)})
        if shared > top:
            best, top = [r], shared
        elif shared == top and shared:
            best.append(r)
    about = [asked | (mine & {t.norm for t in r.tokens if is_content(t)}) for r in best]
    return frozenset(j for j in range(len(chunks)) for r, need in zip(best, about, strict=True)
                     if need <= spanned(chunks[j]).norms and _says(r, spanned(chunks[j])))


def _says(sentence: Text, chunk: Text) -> bool:
    """``chunk`` states ``sentence``: its numbers, and two thirds of its content stems."""
    words = {t.norm for t in sentence.tokens if is_content(t)}
    return len(words) >= 2 and len(words & chunk.norms) >= 2 * len(words) / 3 \
        and all(any(same_quantity(q, p) for p in like(chunk, q)) for q in sentence.quantities)


def _free(t: Text) -> list[int]:
    """Where a text says "free": in words (``free_at``), or as no amount ("Monthly fee: $0")."""
    zero = [q.pos for q in t.quantities if q.value == 0 and q.unit in CURRENCIES]
    return sorted({*free_at(t.tokens),
                   *(i - 1 if i > 0 and t.tokens[i - 1].kind == "sym" else i for i in zero)})


def _states(d: Detail, chunk: Text) -> bool:
    """The chunk states the detail somewhere: its numbers and names, else most of its words."""
    if d.hard:
        return all(any(same_quantity(q, p) for p in like(chunk, q)) for q in d.quantities) \
            and d.names - {FREE} <= chunk.norms and (FREE not in d.names or bool(_free(chunk)))
    return len(d.words & chunk.norms) >= max(1, 2 * len(d.words) / 3)


def _find(claim: str, d: Detail, chunks: Sequence[str], reference: str, question: str,
          entailed_by: Collection[int]) -> tuple[MisattributedSpan, ...]:
    c = spanned(claim)
    asked = spanned(reference).norms | spanned(question).norms
    outside = c.norms | asked
    keys = name_keys(c, range(len(c.tokens)))
    # The detail's own numbers and people: in "A: Yes, up to 5 GB per month" under "Q: ... in
    # Mexico?" and in "재활의학과 | 박서연 교수" they are what was carried over, not what the
    # window is about (unless nothing else is).
    people = frozenset(c.tokens[i].norm for i in range(len(c.tokens)) if korean_name(c, i))
    # (not a number after the word that numbers the asked entity: "Aero 15" beside the asked
    # "Aero 13" names the other model)
    carried = frozenset(keys[q.pos] for q in d.quantities if q.pos in keys and not (
        q.pos > 0 and c.tokens[q.pos - 1].norm in set(d.anchor_heads) - {""})) \
        | (d.names & people)
    named = frozenset(keys.values()) - carried
    # A number or name is the detail whatever the claim denies beside it ("up to 60 minutes
    # without extra charges"); denied words are the detail only without one.
    denies = negated(c) and not d.hard
    texts = [spanned(t) for t in chunks]
    # Parts of the detail may come from other chunks only where no one chunk states it all
    # ("two checked bags of up to 32 kg": the chunk with both is where it came from): which
    # chunks state each number, and name each name (not a code: "AF19" in "AF19보다 ...
    # 1등급" names the compared model).
    whole = d.hard and any(_states(d, t) for t in texts)
    stating: dict[Quantity | str, set[int]] = {} if whole or not on("two-chunks") else {
        **{q: {k for k, t in enumerate(texts) if any(stated(q, p) for p in like(t, q))}
           for q in d.quantities},
        **{n: {k for k, t in enumerate(texts) if n in t.norms} for n in d.names
           if n != FREE and n not in UNLIMITED and not any(ch.isdigit() for ch in n)}}
    capitals = frozenset(t.norm for x in (c, spanned(question), spanned(reference))
                         for t in x.tokens if t.capital)
    own = _own_chunks(c, tuple(chunks), reference, question) if on("own-chunk") \
        else frozenset()
    out: list[MisattributedSpan] = []
    for j, text in enumerate(chunks):
        if entailed_by and j not in entailed_by:
            continue
        chunk = texts[j]
        elsewhere = frozenset(x for x, ks in stating.items() if ks - {j})
        heading = _heading(text, asked)
        here = {q: [p for p in like(chunk, q) if same_quantity(q, p)] for q in d.quantities}
        if any(not ps and q not in elsewhere for q, ps in here.items()):
            continue  # a number of the detail the chunk never states: no window of it does
        for w in _windows(text, asked):
            # A claim that denies ("방문 설치도 지원되지 않습니다") was not carried from a window
            # that asserts the same words.
            if denies and not w.negated:
                continue
            # A claim that names what the window is about says that entity's fact (noise, or
            # a comparison: "Unlike version 4.2, version 5.0 ..."), not another's.
            markers = w.markers
            if (markers - carried) & named or (markers and markers <= carried) \
                    or (heading - carried) & named:
                continue
            swapped = _once(partial(swaps_entity, c, chunk, w.idx, asked, outside, d, markers))
            placed = _once(partial(in_place, c, chunk, w.idx, asked, outside)) \
                if j in own else None
            hits = match(d, chunk, w.idx, outside, swapped, elsewhere, w.norms, here,
                         placed, capitals)
            if hits is None or (entailed_by and not swapped()):
                continue
            start, end = chunk.spans[hits[0]][0], chunk.spans[hits[-1]][1]
            if end - start > MAX_SPAN:
                end = chunk.spans[hits[0]][1]
            out.append(MisattributedSpan(j, start, end, text[start:end]))
            break
    return tuple(out)


@dataclass(frozen=True)
class _Window:
    """A window of a chunk (``windows``), read once per chunk and question/reference."""

    a: int
    b: int
    idx: list[int]          # its token positions in the chunk
    markers: frozenset[str]  # what it is about (``markers_of``, per sentence)
    norms: frozenset[str]    # its content stems
    negated: bool            # it denies something (``negated``)


@lru_cache(maxsize=2048)
def _windows(text: str, asked: frozenset[str]) -> tuple[_Window, ...]:
    """The windows of chunk ``text``, shortest first, with what the search asks of each: the
    same for every claim of a sample, so they are worked out once."""
    chunk = spanned(text)
    out = []
    # A sentence stands in several windows (alone, in pairs, cut into clauses): what it is
    # about is read once.
    read: dict[tuple[int, int, tuple[int, ...]], frozenset[str]] = {}

    def about(s: int, e: int, idx: list[int]) -> frozenset[str]:
        inside = tuple(i for i in idx if s <= chunk.spans[i][0] < e)
        got = read.get((s, e, inside))
        if got is None:
            read[(s, e, inside)] = got = markers_of(text, chunk, list(inside), s, e, asked)
        return got

    for a, b in sorted(windows(text), key=lambda w: w[1] - w[0]):
        idx = [i for i, (s, e) in enumerate(chunk.spans) if s >= a and e <= b]
        markers = frozenset().union(*(about(s, e, idx)
                                      for s, e in sentence_spans(text, a, b) or [(a, b)]))
        out.append(_Window(a, b, idx, markers,
                           frozenset(chunk.tokens[i].norm for i in idx if is_content(chunk.tokens[i])),
                           denies([chunk.tokens[i] for i in idx])))
    return tuple(out)


def _once(fn: Callable[[], bool]) -> Callable[[], bool]:
    """``fn``, called at most once (``swaps_entity`` is asked only where it matters)."""
    memo: list[bool] = []

    def call() -> bool:
        if not memo:
            memo.append(fn())
        return memo[0]
    return call


@lru_cache(maxsize=2048)
def _heading(text: str, asked: frozenset[str]) -> frozenset[str]:
    return heading_of(text, spanned(text), asked)
