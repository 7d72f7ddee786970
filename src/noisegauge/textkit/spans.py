"""A text's tokens with their character spans, quantities and quoted names: what a
diagnostic needs to point back into the text it read."""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TypeVar

from .names import WEEKDAY_SHORT, WEEKDAYS, acronym
from .quantity import Quantity, quantities
from .tokens import QUOTED, Token, tokenize_by_sentence

__all__ = ["Text", "is_content", "spanned"]

K = TypeVar("K", bound=Hashable)

#: What stands between two weekdays of a list.
_DAY_JOINS = re.compile(r"[\s,·/~–\-]*(?:and|&|or|to|및|부터)?[\s,·/~–\-]*")


@dataclass(frozen=True)
class Text:
    tokens: tuple[Token, ...]
    spans: tuple[tuple[int, int], ...]
    quantities: tuple[Quantity, ...]
    #: tokens inside quotation marks: a name ("캐릭터 '소율'"), whatever its case
    quoted: frozenset[int] = frozenset()

    @cached_property
    def norms(self) -> frozenset[str]:
        return frozenset(t.norm for t in self.tokens if not t.stop)

    @cached_property
    def by_value(self) -> dict[float, tuple[int, ...]]:
        """Indices into ``quantities`` of each value, in order (a lookup, not a scan)."""
        return _indices_by([q.value for q in self.quantities])

    @cached_property
    def by_unit(self) -> dict[str, tuple[int, ...]]:
        """Indices into ``quantities`` of each unit, in order."""
        return _indices_by([q.unit for q in self.quantities])


def _indices_by(keys: Sequence[K]) -> dict[K, tuple[int, ...]]:
    """The positions of each key in ``keys``, in order."""
    out: dict[K, list[int]] = {}
    for k, key in enumerate(keys):
        out.setdefault(key, []).append(k)
    return {key: tuple(ks) for key, ks in out.items()}


@lru_cache(maxsize=8192)
def spanned(text: str) -> Text:
    """Tokens of ``text`` with their spans; shortened weekdays in a list written out, and a
    capital letter after a name part of it ("Zip S")."""
    toks = tokenize_by_sentence(text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for t in toks:  # tokens are verbatim substrings, in order
        k = text.find(t.text, pos)
        k = pos if k < 0 else k
        spans.append((k, k + len(t.text)))
        pos = k + len(t.text)
    inside = [m.span(1) for m in QUOTED.finditer(text)]
    quoted = frozenset(i for i, (a, b) in enumerate(spans) if any(s <= a and b <= e for s, e in inside))
    toks = _letters(_weekdays(text, toks, spans), spans)
    return Text(toks, tuple(spans), tuple(quantities(toks)), quoted)


def _letters(toks: Sequence[Token], spans: Sequence[tuple[int, int]]) -> tuple[Token, ...]:
    """A capital letter right after a name is part of it ("Zip S", "Zone A"), not a stopword;
    not "100 W", "Q." or "I"."""
    return tuple(
        t._replace(stop=False) if i > 0 and len(t.text) == 1 and t.text.isupper()
        and t.text != "I" and toks[i - 1].capital and toks[i - 1].kind == "word"
        and spans[i][0] == spans[i - 1][1] + 1 else t
        for i, t in enumerate(toks))


def _weekdays(text: str, toks: Sequence[Token], spans: Sequence[tuple[int, int]]) -> tuple[Token, ...]:
    """Shortened weekdays written out, where one stands beside another weekday ("Mon, Wed",
    "화·목", "Sat and Sunday"): alone, "sat", "sun" and "월" are other words."""
    out = list(toks)
    for i, t in enumerate(toks):
        short = t.text.lower().rstrip(".")
        if short not in WEEKDAY_SHORT or (t.hangul and len(t.text) != 1):
            continue
        for k in (i - 1, i + 1):
            if not 0 <= k < len(toks):
                continue
            near = toks[k].text.lower().rstrip(".")
            a, b = sorted((spans[i], spans[k]))
            if (near in WEEKDAY_SHORT or near in WEEKDAYS or toks[k].norm in WEEKDAYS) \
                    and _DAY_JOINS.fullmatch(text[a[1]:b[0]]):
                out[i] = t._replace(norm=WEEKDAY_SHORT[short], stop=False)
                break
    return tuple(out)


def is_content(t: Token) -> bool:
    """A word that can name an entity: not a stopword, or an acronym ("US" of "US customers",
    which the stopword list reads as "us")."""
    return t.kind in ("word", "code") and (not t.stop or acronym(t))
