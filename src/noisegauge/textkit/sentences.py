"""Text utilities shared by judges, pipelines and hints: one sentence splitter, one stopword list.

The splitter knows abbreviations, initials and decimals ("Dr. Smith", "v2.3", "99.9%" do not
end a sentence), scraped text that lost its space ("Vancouver.Kings"), and Korean sentence
endings without a period (``합니다``).
"""

from __future__ import annotations

import re
from itertools import pairwise

__all__ = ["STOPWORDS", "content_words", "sentence_spans", "sentences", "trim_span"]

STOPWORDS = frozenset(["a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "onto", "about", "as", "than", "so", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had", "having", "will", "would", "shall", "should", "can", "could", "may", "might", "must", "it", "its", "it's", "they", "them", "their", "theirs", "this", "that", "these", "those", "there", "here", "he", "him", "his", "she", "her", "hers", "we", "us", "our", "ours", "you", "your", "yours", "i", "me", "my", "mine", "who", "whom", "whose", "which", "what", "when", "where", "why", "how", "also", "just", "only", "very", "too", "more", "most", "much", "many", "some", "any", "each", "every", "such", "own", "same", "other", "another", "both", "either", "neither", "all", "few", "s", "t", "not", "no", "nor", "up", "down", "out", "over", "under", "again", "further", "once", "during", "before", "after", "above", "below", "between", "through", "while", "because", "until", "against", "per", "via", "etc", "e", "g", "i", "ie", "eg", "one's", "said", "says", "say",
    # "X is known for Y" asserts Y: the hedge verb is not a fact the premise must repeat.
    "known",
    # Interjections that open answers ("Yes, X."): they state nothing the premise must hold.
    "yes", "yeah", "yep", "yup", "ok", "okay", "oh", "hi", "hello", "hey", "um", "uh"])

_WORD = re.compile(r"\w+", re.UNICODE)

_ABBREV_NEVER = frozenset(["dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "vs", "e.g", "i.e", "cf", "fig", "no", "nos", "vol", "approx", "gen", "col", "lt", "sgt", "rev", "hon", "mt", "ft", "u.s", "u.k", "u.n", "a.m", "p.m", "ph.d", "b.a", "m.a", "dept", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"])
_ABBREV_MAYBE_END = frozenset(["etc", "inc", "ltd", "corp", "co", "llc", "al"])

_END = re.compile(r"[.!?。！？]+[\"'”’)\]]*(?=\s)|[。！？]+"
                  # Scraped text that lost the space: "in Vancouver.Kings of Leon is"
                  r"|(?<=[a-z]{2}[.!?])(?=[A-Z][a-z])")
_KO_END = re.compile(r"(?:습니다|입니다|합니다|됩니다|니다|세요|어요|아요|해요|에요|예요)(?=\s)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.?[\"'”’)\]]*$")


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence boundaries inside ``text[start:end]``, trimmed of surrounding whitespace."""
    end = len(text) if end is None else end
    cuts = [start]
    for rx in (_END, _KO_END):
        for m in rx.finditer(text, start, end):
            if rx is _END and not _ends_sentence(text, m.start(), m.end(), end):
                continue
            cuts.append(m.end())
    cuts = sorted(set(cuts)) + [end]
    spans = []
    for a, b in pairwise(cuts):
        a2, b2 = trim_span(text, a, b)
        if a2 < b2:
            spans.append((a2, b2))
    return spans


def _ends_sentence(text: str, dot: int, after: int, limit: int) -> bool:
    if text[dot] != ".":
        return True
    m = _WORD_BEFORE.search(text, max(0, dot - 24), dot + 1)  # bounded: long texts stay linear
    word = m.group(1).lower().rstrip(".") if m else ""
    nxt = text[after:limit].lstrip()[:1]
    before = text[m.start(1) - 1] if m and m.start(1) > 0 else ""
    in_code = before == "-" or before.isdigit()
    if word in _ABBREV_NEVER or (len(word) == 1 and word.isalpha() and not in_code):
        return False  # "Dr. Smith", "J. Doe", "U.S. law"; but "SKU NG-TM-M." ends a sentence
    if "." in word and len(word) <= 6:
        return False  # other dotted abbreviations
    if nxt.islower() and nxt.isascii():
        return False  # lower-case continuation: the period was not a full stop
    return bool(nxt) or word not in _ABBREV_MAYBE_END


def trim_span(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (a line break also ends one), whitespace-trimmed;
    punctuation-only pieces are dropped."""
    out: list[str] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        out.extend(text[a:b] for a, b in sentence_spans(text, pos, pos + len(line))
                   if text[a:b].strip(" \t.!?。！？"))
        pos += len(line)
    return out


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that are not stopwords."""
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in STOPWORDS}
