"""What a claim says there is none of, against what a premise's "Label: value" lines say.

"The Everyday Debit card doesn't charge any foreign transaction fee" against "Foreign
transaction fee: 2.75% of each purchase"; "CS 201 has no prerequisites" against
"Prerequisite: CS 101"; "실적과 상관없이" against "전월 실적: 30만 원 이상". The two share
nearly every word, so overlap reads them as one statement; the label line says the thing
exists and what it is, and the claim says it does not (or does not matter). A line that
says there is none ("Annual fee: $0", "Prerequisites: none") agrees with the claim instead.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from ...textkit.quantity import FREE, WAIVED, quantities
from ...textkit.sentences import sentence_spans
from ...textkit.tokens import Token, tokenize

__all__ = ["denied_phrase", "labels_of", "line_labels"]

#: Verbs and words between a negation and what it denies ("doesn't charge any fee", "there
#: is no fee", "has no prerequisites"): stems.
_BRIDGE = frozenset(["charg", "has", "have", "need", "requir", "includ", "offer", "come", "ani",
                     "get", "pay", "take", "there", "is", "are", "be", "a", "an", "the", "with"])
#: Korean words that say a condition does not matter ("실적과 상관없이"): stems.
_REGARDLESS = frozenset(["상관없", "관계없", "무관하게", "무관"])
#: A value that says there is none, or that it costs nothing.
_NONE = frozenset(["none", "no", "not", "nil", "n/a", "없", "없음", "미제공", "불가", "-"]) | FREE | WAIVED
#: "Label: value" on a line of its own, after an optional bullet; the label is short.
_LINE = re.compile(r"^[\s·•\-*–]*([^:\n]{1,60}?)\s*:\s*(\S[^\n]*)$", re.MULTILINE)


def denied_phrase(tokens: Sequence[Token], negations: Collection[int]) -> frozenset[str]:
    """The stems of what the claim says there is none of: the words right after an English
    negation, past a verb ("doesn't charge any *foreign transaction fee*", "no *monthly fee*"),
    or the noun right before a Korean one ("*수수료* 없이", "*실적*과 상관없이"); empty when
    there is none."""
    for i in sorted(negations):
        if tokens[i].hangul:
            if i > 0 and tokens[i - 1].hangul and not tokens[i - 1].stop:
                return frozenset([tokens[i - 1].norm])
            continue
        out: list[str] = []
        for u in tokens[i + 1:i + 8]:
            if u.punct and out:
                break
            if not out and (u.stop or u.norm in _BRIDGE):
                continue
            if u.stop or u.kind != "word":
                break
            out.append(u.norm)
            if len(out) == 4:
                break
        if out:
            return frozenset(out)
    for i, t in enumerate(tokens):
        if t.hangul and t.norm in _REGARDLESS and i > 0 and not tokens[i - 1].stop:
            return frozenset([tokens[i - 1].norm])
    return frozenset()


def labels_of(labels: Sequence[tuple[frozenset[str], bool]], denied: frozenset[str]) -> set[bool]:
    """What the lines whose label holds every ``denied`` stem say: True for none, False for a
    value. A Korean stem matches one a syllable longer or shorter ("실적" / "실", where the
    stemmer took "적" for a suffix)."""
    def has(label: frozenset[str], d: str) -> bool:
        return d in label or (not d.isascii() and any(
            not x.isascii() and abs(len(x) - len(d)) == 1 and (x.startswith(d) or d.startswith(x))
            for x in label))
    return {none for label, none in labels if denied and all(has(label, d) for d in denied)}


@lru_cache(maxsize=4096)
def line_labels(text: str) -> tuple[tuple[frozenset[str], bool], ...]:
    """Each "Label: value" line or sentence of ``text``: the label's content stems, and whether
    its value says there is none ("none", "free", "$0", "없음") rather than giving one."""
    out = []
    for m in (m for a, b in sentence_spans(text) or [(0, len(text))]
              for m in _LINE.finditer(text[a:b])):
        label = frozenset(t.norm for t in tokenize(m.group(1)) if not t.stop)
        value = tokenize(m.group(2))
        if not label or len(label) > 6 or not any(not t.stop or t.kind == "num" for t in value):
            continue
        none = any(t.norm in _NONE or t.text.lower() in _NONE for t in value) \
            or any(q.value == 0 for q in quantities(tuple(value)))
        out.append((label, none))
    return tuple(out)
