"""The lexical judge's tokens of a text, with their character spans, and how two quantities
compare for misattribution (stricter than entailment: a detail must be the same amount)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from ...judges.lexical.quantity import Quantity, about_as_long, quantities
from ...judges.lexical.slots import acronym
from ...judges.lexical.text import QUOTED, Token, tokenize

__all__ = ["Text", "analyse", "is_content", "name_keys", "same_quantity", "stated", "unit_of"]

#: Units of time that convert exactly.
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}

#: Weekdays shortened in a list ("Mon, Wed, Fri", "월·수·금", "Tue–Sat"): each is the weekday
#: written out ("Monday", "월요일"), so a claim that writes them out states the same days.
_WEEKDAYS = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
             "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
             "sat": "saturday", "sun": "sunday",
             **{k: k + "요일" for k in "월화수목금토일"}}
_FULL_DAYS = frozenset(_WEEKDAYS.values())
#: What stands between two weekdays of a list.
_DAY_JOINS = re.compile(r"[\s,·/~–\-]*(?:and|&|or|to|및|부터)?[\s,·/~–\-]*")


@dataclass(frozen=True)
class Text:
    tokens: tuple[Token, ...]
    spans: tuple[tuple[int, int], ...]
    quantities: tuple[Quantity, ...]
    #: tokens inside quotation marks: a name ("캐릭터 '소율'"), whatever its case
    quoted: frozenset[int] = frozenset()

    @property
    def norms(self) -> frozenset[str]:
        return frozenset(t.norm for t in self.tokens if not t.stop)


@lru_cache(maxsize=8192)
def analyse(text: str) -> Text:
    toks = tokenize(text)
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
        replace(t, stop=False) if i > 0 and len(t.text) == 1 and t.text.isupper()
        and t.text != "I" and toks[i - 1].capital and toks[i - 1].kind == "word"
        and spans[i][0] == spans[i - 1][1] + 1 else t
        for i, t in enumerate(toks))


def _weekdays(text: str, toks: Sequence[Token], spans: Sequence[tuple[int, int]]) -> tuple[Token, ...]:
    """Shortened weekdays written out, where one stands beside another weekday ("Mon, Wed",
    "화·목", "Sat and Sunday"): alone, "sat", "sun" and "월" are other words."""
    out = list(toks)
    for i, t in enumerate(toks):
        short = t.text.lower().rstrip(".")
        if short not in _WEEKDAYS or (t.hangul and len(t.text) != 1):
            continue
        for k in (i - 1, i + 1):
            if not 0 <= k < len(toks):
                continue
            near = toks[k].text.lower().rstrip(".")
            a, b = sorted((spans[i], spans[k]))
            if (near in _WEEKDAYS or near in _FULL_DAYS or toks[k].norm in _FULL_DAYS) \
                    and _DAY_JOINS.fullmatch(text[a[1]:b[0]]):
                out[i] = replace(t, norm=_WEEKDAYS[short], stop=False)
                break
    return tuple(out)


def unit_of(q: Quantity) -> tuple[str, frozenset[str]]:
    unit, _, rate = q.unit.partition("/")
    return unit, frozenset(rate.split("+")) if rate else frozenset()


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Same value, and units that agree ("$29 per month" is "$29 per user per month" said
    shorter; "30 days" is not "30 users", and "15%" is not a bare "15"; "three times a week"
    is "3 days per week"); one span in two units ("two days" / "48 hours"); or months and days
    that name one span ("three months" / "90 days")."""
    ua, ra = unit_of(a)
    ub, rb = unit_of(b)
    if ra and ra == rb and {ua, ub} == {"times", "day"} and not ra & {"day"}:
        ua = ub
    rates_agree = not ra or not rb or ra <= rb or rb <= ra
    if about_as_long(a.value, ua, b.value, ub):
        return rates_agree  # "three months" / "90 days"
    if ua != ub and ua in _SECONDS and ub in _SECONDS:
        return rates_agree and a.value * _SECONDS[ua] == b.value * _SECONDS[ub]  # "two days" / "48 hours"
    if a.value != b.value:
        return False
    hard_a = bool(ua) and not ua.startswith("w:")
    hard_b = bool(ub) and not ub.startswith("w:")
    if hard_a != hard_b or (hard_a and ua != ub):
        return False
    if ua and ub and ua != ub:
        return False  # two counted words: "12 이상" (12 or more) is not "12월"
    return rates_agree


def stated(x: Quantity, y: Quantity) -> bool:
    """``y`` states ``x``: the same quantity, or the same value where neither has a unit but
    the word after it ("Patch 2.3 lifted" / "Patch 2.3 raised")."""
    def hard(q: Quantity) -> bool:
        return bool(unit_of(q)[0]) and not unit_of(q)[0].startswith("w:")
    # ("$2.00" is not stated by "Zone 2": a price is never a counted word; a version is
    # stated by its bare number: "version 4.2" by "PayRollo 4.2", "3.1에서" by "v3.1")
    soft_x = not hard(x) or unit_of(x)[0] == "version"
    soft_y = not hard(y) or unit_of(y)[0] == "version"
    return same_quantity(x, y) or (soft_x and soft_y and x.value == y.value)


def is_content(t: Token) -> bool:
    """A word that can name an entity: not a stopword, or an acronym ("US" of "US customers",
    which the stopword list reads as "us")."""
    return t.kind in ("word", "code") and (not t.stop or acronym(t))


def name_keys(t: Text, idx: Sequence[int]) -> dict[int, str]:
    """What each content word or number among ``idx`` names, for telling whether two texts
    name the same thing: a word by its stem; a number by its value and unit, or, without a
    real unit, by the word before it ("Zone 2" is not the "2" of "2 bank accounts", and
    "PayRollo 5.0" not the "5" of "5 bank accounts")."""
    by_pos = {q.pos: q for q in t.quantities}
    out: dict[int, str] = {}
    for i in idx:
        tok = t.tokens[i]
        if tok.kind == "num":
            q = by_pos.get(i)
            unit = unit_of(q)[0] if q is not None else ""
            if unit and not unit.startswith("w:"):
                out[i] = f"#{q.value if q is not None else tok.norm}:{unit}"
            else:
                before = t.tokens[i - 1].norm if i > 0 else ""
                out[i] = f"#{tok.norm}@{before}"
        elif is_content(tok):
            out[i] = tok.norm
    return out
