"""Finer claims from one long English clause: one fact per claim where the grammar says so.

A long sentence states several facts ("X, a Y, did Z, which led to W"); checked whole, it
needs one chunk that says everything, and one missing fact hides among many found words.
Four patterns are split off, each keeping the words it is about:

* a non-restrictive relative clause: "..., Per Mertesacker, who retired" -> "Per Mertesacker
  retired ...";
* an appositive after a name: "Media Play News, one of five trades" -> "Media Play News is one
  of five trades";
* a participle phrase about the subject: "LIC is the largest insurer, known for its
  investments" -> "LIC is known for its investments";
* a second predicate of the same subject: "He was waived in 2018 and was re-signed" -> "He was
  re-signed".

Short clauses (support-bot answers) are left whole. Each part's span covers the source text
it came from and the parts cover the clause, so no text is dropped.
"""

from __future__ import annotations

import re

__all__ = ["MIN_WORDS", "atomic_parts"]

#: Clauses shorter than this stay whole: they rarely hold two facts, and splitting them
#: only separates a fact from the words that identify it.
MIN_WORDS = 12

_REL = re.compile(r",\s+(which|who|whose)\s+")
_APPOS = re.compile(r"(?<=[A-Za-z)\"”]),\s+(?=(?:a|an|one of|now|formerly|also known as|known as|"
                    r"the (?:only|first|largest|oldest|second|third|former|current)|"
                    r"[A-Za-z]+(?:-based)?\s+(?:city|town|village|company|band|group))\s)")
#: A participle phrase about the subject: "X is Y, known for Z" -> "X is known for Z".
_PARTICIPLE = re.compile(r",\s+((?:known|established|founded|based|located|headquartered|born|"
                         r"created|owned|operated|built|designed|developed|written|directed|"
                         r"produced|released|published|named|called|considered|regarded|formed|"
                         r"best known|widely known|well known|famous|noted|renowned)"
                         r"\s+(?:for|in|as|by|on|at|from|to|through|with|after|under)\s)")
_AND_PRED = re.compile(r"(?:,\s+|\s+)and\s+(?=(?:was|were|is|are|has|had|have|later|then|also|"
                       r"[a-z]{3,}ed)\s)")
_DET = frozenset(["the", "a", "an", "his", "her", "their", "its", "our", "this", "that"])
_LOWER_OK = frozenset(["of", "the", "de", "van", "von", "and", "for", "&"])

Part = tuple[str, int, int]  # (claim text, start, end) in source coordinates


def _antecedent(left: str) -> str | None:
    """The noun phrase right before a comma: a run of capitalised words ("Per Mertesacker",
    "Bank of England"), else the words from the last determiner ("the new academy")."""
    words = left.split()
    run: list[str] = []
    for w in reversed(words[-6:]):
        if w.lstrip("\"“(")[:1].isupper() or (run and w.lower() in _LOWER_OK and w.lower() != "the"):
            run.insert(0, w)
        else:
            break
    while run and run[0].lower() in _LOWER_OK:
        run.pop(0)
    if run:
        return " ".join(run).strip("\"“”,;:")
    for k in range(len(words) - 1, max(-1, len(words) - 5), -1):
        if words[k].lower() in _DET and k < len(words) - 1:
            return " ".join(words[k:])
    return None


def _subject(words: list[str]) -> str | None:
    """Leading words before the first verb-like word (1-5 words), for a second predicate."""
    for i, w in enumerate(words[:9]):
        low = w.lower().strip(",")
        if i > 0 and (low in ("is", "was", "are", "were", "has", "had", "have", "became", "will")
                      or (low.endswith("ed") and len(low) > 4)):
            subj = words[:i]
            if subj and not any(s.endswith(",") for s in subj) and subj[0].lower() != "in":
                return " ".join(subj)
            return None
    return None


def _end_of_insert(text: str, a: int, b: int) -> int:
    """Where an inserted phrase starting at ``a`` ends: the next comma, else the clause end."""
    k = text.find(", ", a, b)
    return b if k < 0 else k


def atomic_parts(text: str, a: int, b: int) -> list[Part]:
    """``text[a:b]`` (one clause) as one or more facts; see the module docstring."""
    span = text[a:b]
    if len(span.split()) < MIN_WORDS or not span.isascii():
        return [(span, a, b)]
    m = _REL.search(text, a, b) or _APPOS.search(text, a, b)
    if m and len(text[a:m.start()].split()) >= 3:
        head = _antecedent(text[a:m.start()])
        rel = m.re is _REL
        inner_start = m.start(1) if rel else m.end()
        inner_end = _end_of_insert(text, m.end(), b)
        inner = text[m.end():inner_end].strip().rstrip(".")
        if head and len(inner.split()) >= 2:
            if rel:
                glue = f"{head}'s " if m.group(1) == "whose" else f"{head} "
            else:
                glue = f"{head} is "
            fact = glue + inner
            if inner_end < b:  # "X, who did Y, did Z": the main clause spans both sides
                rest = (text[a:m.start()] + text[inner_end:b]).strip()
                main = [(t, a, b) for t, _, _ in atomic_parts(rest, 0, len(rest))]
            else:
                main = atomic_parts(text, a, m.start())
            return [*main, (fact, inner_start, inner_end)]
    m = _PARTICIPLE.search(text, a, b)
    if m and len(text[a:m.start()].split()) >= 4:
        subj = _subject(text[a:m.start()].split())
        inner_end = _end_of_insert(text, m.end(), b)
        inner = text[m.start(1):inner_end].strip().rstrip(".")
        if subj and len(inner.split()) >= 3:
            if inner_end < b:
                rest = (text[a:m.start()] + text[inner_end:b]).strip()
                main = [(t, a, b) for t, _, _ in atomic_parts(rest, 0, len(rest))]
            else:
                main = atomic_parts(text, a, m.start())
            return [*main, (f"{subj} is {inner}", m.start(1), inner_end)]
    m = _AND_PRED.search(text, a, b)
    if m and len(text[a:m.start()].split()) >= 4 and len(text[m.end():b].split()) >= 3:
        subj = _subject(text[a:m.start()].split())
        if subj:
            return [(text[a:m.start()].rstrip(", "), a, m.start()),
                    *[(f"{subj} {t}" if s == m.end() else t, s, e)
                      for t, s, e in atomic_parts(text, m.end(), b)]]
    return [(span, a, b)]
