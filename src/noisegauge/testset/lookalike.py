"""Look-alike discovery: chunks that share a template but differ in an entity or a value.

Two chunks are look-alikes when their token sequences (the toolkit's stems, Korean
particles off) align for the most part and what differs is a few short spans: "Pro" for
"Team", "30 days" for "60 days", "2023" for "2024", "베이직" for "프로". Candidates are each
chunk's BM25 neighbours, so the search is linear in the corpus, not quadratic.

Whether a look-alike *conflicts* depends on the question: when the question names the
chunk's side of a differing span ("in 2024", "the Pro plan"), the other chunk is a trap of
kind ``look-alike``; when it names no side, both chunks answer it with other values, and the
row is flagged ``conflict`` for a person to settle.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from ..textkit.sentences import sentences
from ..textkit.spans import spanned
from .retrieve import Index

__all__ = ["Difference", "LookAlike", "LookAlikes", "compare", "compare_chunks"]

#: The least share of aligned tokens for two chunks to share a template.
MIN_RATIO = 0.6
#: The most tokens a differing span may have on either side.
MAX_SPAN = 4
#: BM25 neighbours of a chunk compared with it.
NEIGHBOURS = 12


@dataclass(frozen=True)
class Difference:
    """One differing span: its text in this chunk and in the other, and their stems."""

    mine: str
    theirs: str
    mine_terms: frozenset[str]
    theirs_terms: frozenset[str]


@dataclass(frozen=True)
class LookAlike:
    """Another chunk with this chunk's template."""

    other: int
    ratio: float
    differences: tuple[Difference, ...]

    @property
    def differs(self) -> str:
        """``"Pro vs Team; 30 days vs 60 days"``: the chunk's side first."""
        return "; ".join(f"{d.mine or '(nothing)'} vs {d.theirs or '(nothing)'}"
                         for d in self.differences)


def _tokens(text: str) -> tuple[list[str], list[tuple[int, int]], list[bool]]:
    t = spanned(text)
    keep = [i for i, tok in enumerate(t.tokens) if tok.kind != "sym" or tok.text in "$€£¥%₩"]
    return ([t.tokens[i].norm for i in keep], [t.spans[i] for i in keep],
            [t.tokens[i].stop for i in keep])


def compare(a: str, b: str) -> tuple[float, tuple[Difference, ...]] | None:
    """How ``a`` and ``b`` share a template: (alignment ratio, differing spans), or None
    when they do not (too different, or the same text).

    >>> r = compare("Pro customers get a refund within 30 days.",
    ...             "Team customers get a refund within 60 days.")
    >>> [(d.mine, d.theirs) for d in r[1]]
    [('Pro', 'Team'), ('30 days', '60 days')]
    """
    na, sa, stop_a = _tokens(a)
    nb, sb, _ = _tokens(b)
    if not na or not nb or na == nb:
        return None
    m = difflib.SequenceMatcher(None, na, nb, autojunk=False)
    ratio = m.ratio()
    if ratio < MIN_RATIO:
        return None
    diffs: list[Difference] = []
    ops = m.get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        if i2 - i1 > MAX_SPAN or j2 - j1 > MAX_SPAN:
            return None
        if all(stop_a[i] for i in range(i1, i2)) and tag != "insert":
            continue  # "could" for "can": wording, not a fact
        # a number keeps its unit ("30 days"), read from the aligned token after it
        ext = 0
        numeric = i2 > i1 and any(ch.isdigit() for ch in na[i2 - 1])
        if numeric and k + 1 < len(ops) and ops[k + 1][0] == "equal" and i2 < len(na) \
                and na[i2].isalpha() and not stop_a[i2] and a[sa[i2][0]].islower():
            ext = 1
        mine = a[sa[i1][0]:sa[i2 - 1 + ext][1]] if i2 > i1 else ""
        theirs = b[sb[j1][0]:sb[j2 - 1 + ext][1]] if j2 > j1 else ""
        # a side's terms that the other text also holds tell nothing apart
        diffs.append(Difference(mine, theirs, frozenset(na[i1:i2]) - set(nb),
                                frozenset(nb[j1:j2]) - set(na)))
    if not diffs:
        return None
    return ratio, tuple(diffs)


#: Sentences of a chunk compared, and the fewest tokens a sentence needs to carry a template.
MAX_SENTENCES = 8
MIN_SENTENCE_TOKENS = 5


def compare_chunks(a: str, b: str) -> tuple[float, tuple[Difference, ...]] | None:
    """``compare`` on the whole texts, else on their closest pair of sentences: a chunk
    that adds a sentence ("Requests above the limit receive HTTP 429") still shares the
    template of the one that states the same limit for another plan.

    >>> compare_chunks("The Pro plan allows 1,000 requests a minute. Above it, HTTP 429.",
    ...                "The Team plan allows 5,000 requests a minute.")[1][0].mine
    'Pro'
    """
    whole = compare(a, b)
    if whole is not None:
        return whole
    best: tuple[float, tuple[Difference, ...]] | None = None
    sa = [x for x in sentences(a)[:MAX_SENTENCES] if len(x.split()) >= MIN_SENTENCE_TOKENS]
    sb = [x for x in sentences(b)[:MAX_SENTENCES] if len(x.split()) >= MIN_SENTENCE_TOKENS]
    if len(sa) < 2 and len(sb) < 2:
        return None  # one sentence each: the whole texts were that comparison
    for x in sa:
        for y in sb:
            found = compare(x, y)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
    return best


class LookAlikes:
    """Each chunk's look-alikes in the corpus, found on first ask and kept."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._found: dict[int, tuple[LookAlike, ...]] = {}

    def of(self, i: int) -> tuple[LookAlike, ...]:
        """Look-alikes of chunk ``i``, the closest first."""
        if i not in self._found:
            chunks = self.index.chunks
            out: list[LookAlike] = []
            for j, _ in self.index.search(self.index.doc_terms[i], NEIGHBOURS + 1):
                if j == i:
                    continue
                found = compare_chunks(chunks[i].text, chunks[j].text)
                if found is not None:
                    out.append(LookAlike(j, *found))
            out.sort(key=lambda la: -la.ratio)
            self._found[i] = tuple(out)
        return self._found[i]

    def all_pairs(self) -> list[tuple[int, LookAlike]]:
        """Every (chunk, look-alike) pair of the corpus, each pair once, in chunk order."""
        pairs: list[tuple[int, LookAlike]] = []
        for i in range(len(self.index.chunks)):
            pairs += [(i, la) for la in self.of(i) if la.other > i]
        return pairs


def question_side(question_terms: Sequence[str], la: LookAlike) -> str:
    """``mine`` when the question names this chunk's side of a differing span, ``theirs``
    when it names the other's, ``neither`` when it names no side (a conflict)."""
    q = set(question_terms)
    mine = any(d.mine_terms & q - d.theirs_terms for d in la.differences)
    theirs = any(d.theirs_terms & q - d.mine_terms for d in la.differences)
    if mine and not theirs:
        return "mine"
    if theirs and not mine:
        return "theirs"
    return "neither" if not mine else "both"
