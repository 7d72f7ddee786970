"""Where in a chunk a detail may have been read: windows (sentences, pairs, clauses), what a
window is about (its markers), and whether it puts another entity in the asked one's place."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ...textkit.names import acronym, closed_class
from ...textkit.sentences import sentence_spans
from ...textkit.spans import Text, is_content
from ...textkit.tokens import Token
from .detail import Detail
from .tokens import name_keys, same_quantity

__all__ = ["heading_of", "in_place", "markers_of", "swaps_entity", "windows"]

#: Where a sentence turns to another entity: "...; ...", ", while ...", "..., 반면 ...".
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:while|whereas|but)\b)|(?<=[며고면]),\s+|\s+반면(?:에)?,?\s+")


def windows(text: str) -> list[tuple[int, int]]:
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


def _runs(toks: Sequence[Token], idx: Sequence[int], keep: Collection[str]) -> list[list[int]]:
    """Maximal runs of consecutive content tokens (positions in ``idx``) whose stems are not
    in ``keep``: the words one text has where the other has none."""
    runs: list[list[int]] = []
    for n, i in enumerate(idx):
        t = toks[i]
        if not is_content(t) or t.norm in keep:
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
        if is_content(t) or t.kind == "num":
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


def swaps_entity(c: Text, chunk: Text, idx: list[int], asked: frozenset[str],
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
            not any(p.pos in idx and same_quantity(q, p) for p in chunk.quantities)
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


def in_place(c: Text, chunk: Text, idx: list[int], asked: frozenset[str],
             outside: frozenset[str]) -> bool:
    """The window names another entity where the claim names the asked one, by its words
    alone (no heading: in the asked entity's own chunk a heading such as "Legacy rule from
    Billing Policy v2:" or "자주 묻는 질문(2023년):" is no other entity): a run of claim words
    it lacks (holding a word of the question or reference) and a run of window words nobody
    else states are single words of one closed kind, or stand beside the same word, on
    either side ("Maple Court residents" / "Residents of Birch Tower")."""
    window = {chunk.tokens[i].norm for i in idx}
    cidx = list(range(len(c.tokens)))
    mine = [r for r in _runs(c.tokens, cidx, window) if any(c.tokens[i].norm in asked for i in r)]
    units = {q.pos + 1 for q in chunk.quantities}  # the "년" of "2023년" names nothing
    theirs = _runs(chunk.tokens, [i for i in idx if i not in units], outside)
    for r in mine:
        near = {_beside(c.tokens, cidx, r, s) for s in (-1, 1)} - {None}
        for w in theirs:
            if len(r) == 1 and len(w) == 1 and _one_kind(c.tokens[r[0]], chunk.tokens[w[0]]):
                return True
            if any(_same_place(a, _beside(chunk.tokens, idx, w, s)) for a in near for s in (-1, 1)):
                return True
    return False


_LABELS = frozenset(["q", "a", "faq", "question", "answer", "note", "질문", "답변", "답", "참고"])


def markers_of(text: str, chunk: Text, idx: list[int], a: int, b: int,
             known: frozenset[str]) -> frozenset[str]:
    """What the window is about, besides what the question and reference name: the words of
    its heading ("VIP 회원 연회비:", "Model TR-220 (black):"), else its first such word ("Our
    head of *sales* is ...", "Version *5.0* receives ...")."""
    colon = text.find(":", a, b)
    units = {q.pos + 1 for q in chunk.quantities if any(q.what)}  # "kg" of "7~15kg" names nothing
    keys = name_keys(chunk, idx)
    named = [i for i in idx if i in keys and chunk.tokens[i].norm not in known and i not in units]
    if colon >= 0:
        head = [i for i in idx if chunk.spans[i][1] <= colon]
        # "Q: ...", "A: ...", "질문: ...": a label, not what the window is about; a question
        # is about all it names ("Q: When can members of the Defined Contribution scheme ...")
        if len(head) == 1 and chunk.tokens[head[0]].text.lower() in _LABELS:
            if chunk.tokens[head[0]].text.lower() in ("q", "question", "질문"):
                return frozenset(keys[i] for i in named if i not in head)
            head = []
        if 0 < len(head) <= 6:
            return frozenset(keys[i] for i in named if i in head)
    return frozenset(keys[i] for i in named[:1])


def heading_of(text: str, chunk: Text, known: frozenset[str]) -> frozenset[str]:
    """What the whole chunk is about, besides what the question and reference name: its first
    line when that is a title ("Aero 15 specs", "Premier Checking") or a label ("어린이 자료실:
    평일 09:00~18:00"); nothing for a chunk that starts with a plain sentence."""
    end = text.find("\n")
    idx = _label(text, chunk, 0, end if end >= 0 else len(text))
    if not idx and end >= 0 and ":" not in text[:end]:
        idx = _short([i for i, (_, b) in enumerate(chunk.spans) if b <= end], chunk)
    units = {q.pos + 1 for q in chunk.quantities if any(q.what)}
    keys = name_keys(chunk, idx)
    return frozenset(keys[i] for i in idx if i in keys and chunk.tokens[i].norm not in known
                     and i not in units)


def _label(text: str, chunk: Text, a: int, b: int) -> list[int]:
    """The tokens before the first colon of ``text[a:b]``, when there are one to six and they
    are not "Q" or "A" alone; else none."""
    colon = text.find(":", a, b)
    if colon < 0:
        return []
    return _short([i for i, (s, e) in enumerate(chunk.spans) if s >= a and e <= colon], chunk)


def _short(idx: list[int], chunk: Text) -> list[int]:
    """``idx`` when it is a heading's length (one to six tokens, not a lone "Q"/"A")."""
    if not 0 < len(idx) <= 6 or (len(idx) == 1 and chunk.tokens[idx[0]].text.lower() in _LABELS):
        return []
    return idx
