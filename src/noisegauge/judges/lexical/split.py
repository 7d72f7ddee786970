"""Splitting text into claims, with each claim's character span in the source.

Rules, in order: markdown blocks (headings, bullets, numbered items, quotes) -> sentences
(abbreviations, initials and decimals do not end a sentence; Hangul endings such as
``합니다`` do, even without a period) -> coordinated clauses, split only where the right
side is clearly a clause of its own -> in long clauses, relative clauses, appositives and second
predicates as facts of their own (``atoms.py``). Nothing is dropped: text without punctuation is a
claim; only short headings (labels such as "## Pricing"), questions and bare interjections
("Yes!", "Cool.") are not claims ("Did you know that X?" claims X). A clause
starting with "It"/"They"/"This plan" gets the previous sentence's subject when it is
unambiguous, and bullets under a lead-in ("The Pro plan includes:") get the lead-in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...textkit.refusal import is_refusal
from ...textkit.sentences import sentence_spans, trim_span
from .atoms import atomic_parts
from .rules import on

__all__ = ["ClaimSpan", "extract_spans", "is_refusal"]


@dataclass(frozen=True)
class ClaimSpan:
    """A claim and where it came from: ``source[start:end]`` is the text it was made from."""

    text: str
    start: int
    end: int


_MARKER = re.compile(r"^[ \t]*(?:(#{1,6})[ \t]+|>[ \t]*|(?:[-*+•·]|\d{1,3}[.)])[ \t]+)")
_INLINE_MD = re.compile(r"\*\*|__|`|~~|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")

_SUBJECT_START = frozenset(["it", "they", "he", "she", "we", "this", "that", "these", "those", "there", "the", "a", "an", "its", "their", "his", "her", "our"])
_AUX = frozenset(["is", "are", "was", "were", "be", "been", "has", "have", "had", "can", "could", "will", "would", "shall", "should", "may", "might", "must", "does", "did", "do", "cost", "costs", "include", "includes", "included", "offer", "offers", "offered", "provide", "provides", "provided", "require", "requires", "required", "support", "supports", "supported", "allow", "allows", "allowed", "contain", "contains", "became", "becomes", "remain", "remains", "remained", "use", "uses", "used", "lets", "let", "gives", "give", "gave", "takes", "take", "took", "makes", "make", "made"])
_PRONOUN = frozenset(["it", "they", "he", "she", "this", "these", "its", "their"])
_COORD = re.compile(r"(?:,\s+(?:and|but|while|whereas|so|yet)|;)\s+")
_KO_COORD = re.compile(r"(?<=[\uac00-\ud7a3])(?:고|며|지만|으며|는데|으나|이며|이고),\s+")


#: A spreadsheet formula ("=HYPERLINK(...)", "@SUM(", "+CMD("), not an answer to a question.
_FORMULA = re.compile(r"^[=@]|^[+\-]\s*[A-Za-z_][\w.]*\s*\(")
#: A Korean sentence ends in a predicate ("...보관됩니다", "...있어요"; "... 이다" after a word).
_KO_SENTENCE = re.compile(r"(?:니다|요|\s\S*다)[.!?…\s]*$")
_FINAL_STOP = (".", "!", "?", "…", "。", "！", "？", "؟", "۔", "।", "።")


def _bare(text: str) -> bool:
    """A bare answer ("Delhi", "30 days.", "-40"), which needs its question to be checked:
    at most eight words and no English verb of a sentence; never a formula, nor a sentence in
    a script that has no such verbs here (a Korean predicate ending; elsewhere three words
    and a final stop, or four words: "המדיניות מאפשרת ביטול בכל עת.")."""
    words = text.split()
    if len(words) > 8 or _FORMULA.match(text) or any(w.lower() in _AUX for w in words):
        return False
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(1 for ch in letters if ch.isascii() or "\u00c0" <= ch <= "\u024f")
    if not letters or latin * 2 >= len(letters):
        return True
    if any("\uac00" <= ch <= "\ud7a3" for ch in letters):
        return not _KO_SENTENCE.search(text)
    return not (len(words) >= 4 or (len(words) >= 3 and text.rstrip().endswith(_FINAL_STOP)))


def _clean(fragment: str) -> str:
    """Claim text from source text: markdown emphasis and links removed, whitespace collapsed."""
    fragment = _LINK.sub(r"\1", fragment)
    fragment = _INLINE_MD.sub("", fragment)
    return " ".join(fragment.split())


@dataclass
class _Block:
    start: int
    end: int
    heading: bool = False
    bullet: bool = False
    after_blank: bool = False


def _blocks(text: str) -> list[_Block]:
    """Paragraphs, list items and headings; wrapped lines continue the open block."""
    blocks: list[_Block] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        body = line.rstrip("\r\n")
        if not body.strip() or set(body.strip()) <= set("-=*_|: "):
            blocks.append(_Block(line_start, line_start))  # blank line or rule: closes the block
            continue
        m = _MARKER.match(body)
        if m:
            blocks.append(_Block(line_start + m.end(), line_start + len(body),
                                 heading=bool(m.group(1)), bullet=not m.group(1)))
        elif blocks and blocks[-1].end > blocks[-1].start and not blocks[-1].heading:
            blocks[-1].end = line_start + len(body)  # continuation of a paragraph or item
        else:
            blocks.append(_Block(line_start, line_start + len(body)))
    kept: list[_Block] = []
    blank = False
    for b in blocks:
        if b.end > b.start:
            b.after_blank = blank
            kept.append(b)
        blank = b.end == b.start
    return kept


def _clauses(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Split a sentence at coordinations whose right side has its own subject and verb."""
    bounds = [(a, a)]  # (end of the left part, start of the right part)
    for rx in (_COORD, _KO_COORD):
        for m in rx.finditer(text, a, b):
            right = text[m.end():b].split()
            left_words = len(text[bounds[-1][1]:m.start()].split())
            ok = (len(right) >= 2 and left_words >= 2) if rx is _KO_COORD else \
                (_is_clause(right, loose=m.group().startswith(";")) and left_words >= 3)
            if ok and m.start() > bounds[-1][1]:
                keep = len(m.group().rstrip(", \t\n")) if rx is _KO_COORD else 0  # keep 이고 on the left
                bounds.append((m.start() + keep, m.end()))
    bounds.sort()
    out = []
    starts = [r for _, r in bounds]
    ends = [lo for lo, _ in bounds[1:]] + [b]
    for x, y in zip(starts, ends, strict=True):
        x2, y2 = trim_span(text, x, y)
        while y2 > x2 and text[y2 - 1] in ",;":
            y2 -= 1
        if x2 < y2:
            out.append((x2, y2))
    return out


def _is_clause(words: list[str], loose: bool = False) -> bool:
    if len(words) < 3:
        return False
    first = words[0].lower()
    if not loose and first not in _SUBJECT_START and not words[0][:1].isupper():
        return False
    return any(w.lower().strip(",.") in _AUX for w in words[1:7])


def _subject(claim: str) -> str | None:
    """The leading noun phrase of a simple sentence ("The Pro plan costs..." -> "The Pro plan")."""
    words = claim.split()
    for i, w in enumerate(words[:9]):
        if w.lower() in _AUX:
            subj = words[:i]
            if 1 <= len(subj) <= 8 and not any(s.endswith(",") for s in subj) \
                    and subj[0].lower() not in _PRONOUN and (subj[0][:1].isupper()):
                return " ".join(subj)
            return None
    return None


def _resolve(claim: str, subject: str | None) -> str:
    """Replace a leading pronoun or "This <noun>" with ``subject`` when that is unambiguous."""
    if not subject:
        return claim
    words = claim.split(" ", 2)
    first = words[0].lower()
    rest = claim[len(words[0]):]
    if first in ("it", "they"):
        return subject + rest
    if first in ("its", "their"):
        return subject + "'s" + rest
    if first in ("he", "she") and all(w[:1].isupper() for w in subject.split()):
        return subject + rest
    if first in ("this", "these", "that") and len(words) > 1:
        noun = words[1].lower().rstrip("s")
        if subject.lower().rstrip("s").endswith(noun) and len(noun) > 2:
            return subject + claim[len(words[0]) + 1 + len(words[1]):]
    return claim


_FILLER = frozenset(["yes", "yeah", "yep", "yup", "no", "nope", "nah", "sure", "ok", "okay", "oh", "wow", "well", "hi", "hello", "hey", "thanks", "thank", "you", "cool", "great", "nice", "really", "indeed", "right", "haha", "lol", "hmm", "um", "uh", "ah", "awesome", "interesting", "true", "exactly", "agreed", "i", "agree", "that's", "that", "is", "so", "amazing", "lovely", "good", "fun", "funny", "sorry", "apologies", "unfortunately", "afraid", "죄송합니다", "죄송해요", "미안합니다", "네", "예", "아니요", "아뇨", "음", "와", "오", "그래요", "맞아요", "좋아요", "감사합니다"])
_DID_YOU_KNOW = re.compile(r"^(?:(?:so|and|but|well|oh),?\s+)?(?:did|do)\s+you\s+know\s+(?:that\s+)?",
                           re.IGNORECASE)


def _refusal(text: str) -> bool:
    return on("refusal") and is_refusal(text)


def _as_claim(c: ClaimSpan) -> ClaimSpan | None:
    """None for what states nothing (a question, "Yes!", "Cool.", a refusal);
    "Did you know that X?" is X."""
    words = re.findall(r"[^\W_]+(?:'[^\W_]+)?", c.text.lower())
    if all(w in _FILLER for w in words) or _refusal(c.text):
        return None
    if c.text.rstrip("\"'”’)] ").endswith(("?", "？")):
        m = _DID_YOU_KNOW.match(c.text)
        if not m:
            return None
        body = c.text[m.end():].rstrip().rstrip("?？").rstrip()
        return ClaimSpan(body[:1].upper() + body[1:], c.start, c.end) if body else None
    return c


def extract_spans(text: str, question: str | None = None) -> list[ClaimSpan]:
    """Claims of ``text`` with their source spans; see the module docstring for the rules.

    >>> [c.text for c in extract_spans("The Pro plan costs $49.99. It includes SSO.")]
    ['The Pro plan costs $49.99.', 'The Pro plan includes SSO.']
    """
    claims: list[ClaimSpan] = []
    subject: str | None = None
    lead_in: int | None = None  # index of a claim ending in ":" that introduces a list
    prefix: str | None = None
    for block in _blocks(text):
        if block.heading:
            if len(text[block.start:block.end].split()) > 3:
                claims.append(ClaimSpan(_clean(text[block.start:block.end]), block.start, block.end))
            subject = lead_in = prefix = None
            continue
        if block.after_blank and prefix is not None:
            prefix = None  # a blank line after the items ends the list
        if block.bullet and lead_in is not None:
            prefix = claims.pop(lead_in).text  # "The plan includes:" becomes part of each item
            lead_in = None
        elif not block.bullet:
            lead_in = prefix = None
        for sa, sb in sentence_spans(text, block.start, block.end):
            if _refusal(text[sa:sb]):
                continue  # "I can't confirm whether X": the whole sentence asserts nothing
            for ca, cb in _clauses(text, sa, sb):
                if _refusal(text[ca:cb]):
                    continue
                parts = atomic_parts(text, ca, cb) if on("atomic-split") else [(text[ca:cb], ca, cb)]
                for part, pa, pb in parts:
                    claim = _resolve(_clean(part), subject) if pa == ca else _clean(part)
                    if prefix:
                        claim = f"{prefix} {claim}"
                    claims.append(ClaimSpan(claim, pa, pb))
                    if pa == sa:
                        subject = _subject(claim) or subject
        if not block.bullet and claims and claims[-1].text.endswith(":") \
                and claims[-1].start >= block.start:
            lead_in = len(claims) - 1
    claims = [c for c in claims if not _refusal(c.text)]  # never a claim, question or not
    kept = [c for c in (_as_claim(c) for c in claims) if c is not None]
    if kept or not question:
        claims = kept  # questions and bare interjections state nothing
    if question and len(claims) == 1 and _bare(claims[0].text):
        # A bare answer ("Delhi") becomes checkable together with what it answers; the
        # judge checks the part after "? " and uses the question as context only.
        only = claims[0]
        asked = " ".join(question.split()).rstrip(" ?.!\"'”’") + "?"
        claims = [ClaimSpan(f"{asked} {only.text}", only.start, only.end)]
    return claims
