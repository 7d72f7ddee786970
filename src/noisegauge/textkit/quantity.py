"""Numbers with their units in a token stream: "30 days", "$49 per month", "1만 8천 원",
"18:00", "the 5th", "v2.3". Compared by value and unit, never as text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from .tokens import _NUMBER_WORDS, MONTHS, Token, _ko_stem, _parse_number, stem

__all__ = ["CURRENCIES", "FREE", "FREE_WORDS", "UNITS", "WAIVED", "Quantity", "about_as_long",
           "free_at", "no_limit", "quantities", "same_quantity"]

# Units and their canonical names; plural and Korean forms map to the same name.
UNITS = {
    "%": "percent", "percent": "percent", "percentage": "percent", "퍼센트": "percent",
    "$": "usd", "dollar": "usd", "dollars": "usd", "usd": "usd", "달러": "usd",
    "€": "eur", "euro": "eur", "euros": "eur", "eur": "eur", "£": "gbp", "pound": "gbp",
    "pounds": "gbp", "¥": "jpy", "yen": "jpy", "₩": "krw", "won": "krw", "원": "krw",
    "second": "second", "seconds": "second", "sec": "second", "초": "second",
    "minute": "minute", "minutes": "minute", "min": "minute", "분": "minute",
    "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour", "시간": "hour",
    "day": "day", "days": "day", "일": "day", "영업일": "day", "일간": "day", "년간": "year",
    "개월간": "month", "주간": "week", "week": "week", "weeks": "week", "주": "week",
    "month": "month", "months": "month", "개월": "month", "달": "month",
    "year": "year", "years": "year", "yr": "year", "년": "year",
    "gb": "gb", "mb": "mb", "kb": "kb", "tb": "tb", "kg": "kg", "g": "g", "mg": "mg",
    "km": "km", "m": "m", "cm": "cm", "mm": "mm", "mile": "mile", "miles": "mile",
    "user": "user", "users": "user", "seat": "user", "seats": "user", "명": "user",
    "times": "times", "x": "times", "배": "times", "version": "version", "버전": "version",
    "million": "million", "billion": "billion", "trillion": "trillion",
}
_CURRENCY_SIGNS = {"$", "€", "£", "¥", "₩"}
#: The units that are money.
CURRENCIES = frozenset(["usd", "eur", "gbp", "jpy", "krw"])


@dataclass(frozen=True)
class Quantity:
    """A number with what it measures: 30 day, 49.99 usd per month, 2.3 version, 5 employees."""

    value: float
    #: The canonical unit ("day", "usd", "clock", "date-7" for a day of July, "month-of-year"),
    #: "" when none was found.
    unit: str
    pos: int  # index of the token carrying the number
    #: What it is per ("$29 per user per month": month and user); empty for no rate.
    rates: frozenset[str] = frozenset()
    #: The stem of the noun a number without a unit counts ("5 employees": "employe"), or "".
    counted: str = ""

    @property
    def what(self) -> tuple[str, str]:
        """(unit, counted noun): two quantities of one kind share it."""
        return self.unit, self.counted


#: Korean number words that multiply the number before them: "1만 8천 원" is 18,000 won.
_KO_MULTIPLIERS = {"억": 100_000_000, "만": 10_000, "천": 1_000, "백": 100}


def _ko_compound(tokens: tuple[Token, ...], i: int) -> tuple[float, str, int] | None:
    """"1만 8천 원" from token ``i``: the value, the unit said after it ("원"), and the index
    of the last token used; None when no multiplier follows the number."""
    total, k, last = 0.0, i, -1
    rest = ""
    lead = tokens[i].text if tokens[i].hangul else ""
    if lead in ("만", "천"):
        # "만 8천 원", "만 원": a bare multiplier is one of it (not "만 16세", full age)
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        small = after is not None and after.kind == "num" and i + 2 < len(tokens) \
            and (_KO_MULTIPLIERS.get(tokens[i + 2].text[:1], 10**9) < _KO_MULTIPLIERS[lead])
        if not (small or (after is not None and _ko_stem(after.text) == "원")):
            return None
        total, last, k = float(_KO_MULTIPLIERS[lead]), _KO_MULTIPLIERS[lead], i + 1
        if not small:
            return total, "krw", i + 1
    while k + 1 < len(tokens) and tokens[k].kind == "num":
        nxt = tokens[k + 1].text
        mult = _KO_MULTIPLIERS.get(nxt[:1])
        v = _parse_number(tokens[k].text)
        if mult is None or v is None or (last >= 0 and mult >= last):
            break
        total += v * mult
        last, rest, k = mult, nxt[1:], k + 2
        if rest:
            break  # "8천원": the unit is in the same word
    if last < 0:
        return None
    if not rest and k + 1 < len(tokens) and tokens[k].kind == "num" \
            and _ko_stem(tokens[k + 1].text) in UNITS:
        total += _parse_number(tokens[k].text) or 0.0  # "2만 3,000원"
        rest, k = tokens[k + 1].text, k + 2
    elif not rest and k < len(tokens) and tokens[k].hangul:
        rest, k = tokens[k].text, k + 1
    unit = UNITS.get(_ko_stem(rest), "") if rest else ""
    return total, unit, k - 1


_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$", re.IGNORECASE)
#: Korean words before an hour that say which half of the day it is in ("오후 6시" is 18:00).
_KO_PM = frozenset(["오후", "저녁", "밤"])
_KO_AM = frozenset(["오전", "아침", "새벽"])


def _clock(tokens: tuple[Token, ...], i: int) -> tuple[float, int] | None:
    """A time of day at token ``i`` as hours since midnight ("18:00", "7 p.m.", "6pm",
    "오후 6시"), and the index of its last token; None when it is none."""
    tok = tokens[i]
    if tok.kind != "num":
        return None
    if ":" in tok.text:
        h, _, m = tok.text.partition(":")
        return int(h) + int(m) / 60, i
    v = _parse_number(tok.text)
    if v is None or v > 24:
        return None
    nxt = tokens[i + 1].text.lower() if i + 1 < len(tokens) else ""
    half = ""
    last = i + 1
    if nxt in ("a", "p") and i + 2 < len(tokens) and tokens[i + 2].text.lower() == "m" \
            and not tokens[i + 1].punct:
        half, last = nxt, i + 2
    elif nxt in ("am", "pm"):
        half = nxt[0]
    elif nxt.startswith("시") and tokens[i + 1].hangul and not nxt.startswith("시간"):
        prev = tokens[i - 1].norm if i > 0 else ""
        half = "p" if prev in _KO_PM else "a" if prev in _KO_AM else ""
        minutes = 0.0
        if nxt == "시" and i + 3 < len(tokens) and tokens[i + 2].kind == "num" \
                and tokens[i + 3].text.startswith("분"):
            minutes, last = (_parse_number(tokens[i + 2].text) or 0.0) / 60, i + 3  # "12시 20분"
        if not half:
            return v + minutes, last  # "18시", "10시": the hour as written
        if prev == "밤" and v == 12:
            return minutes, last  # "밤 12시" is midnight
        return v % 12 + (12 if half == "p" else 0) + minutes, last
    if not half:
        return None
    return v % 12 + (12 if half == "p" else 0), last


def quantities(tokens: tuple[Token, ...]) -> list[Quantity]:
    """Numbers with units: the next token's unit, else a preceding currency sign or month."""
    found: list[Quantity] = []
    skip = -1
    for i, tok in enumerate(tokens):
        value: float | None
        if i <= skip:
            continue
        if tok.kind != "num" and not (
                (tok.norm in _WORD_START_STEMS and tok.text.lower() in _WORD_STARTS)
                or tok.text[:1].isdigit() or (tok.hangul and tok.norm in _KO_RELATIVE_DAY)):
            continue  # most words: nothing below reads them
        compound = _ko_compound(tokens, i) if tok.kind == "num" or tok.text in ("만", "천") \
            else None
        if compound is not None:
            value, unit, skip = compound
            found.append(Quantity(value, unit, i))
            continue
        clock = _clock(tokens, i)
        if clock is not None:
            found.append(Quantity(clock[0], "clock", i))
            skip = clock[1]
            continue
        if tok.kind == "word" and _ORDINAL.match(tok.text):  # "the 5th" is not "the 20th"
            found.append(Quantity(float(_ORDINAL.match(tok.text).group(1)), "ordinal", i))  # type: ignore[union-attr]
            continue
        if tok.kind == "num":
            if tok.norm.startswith("v"):
                found.append(Quantity(_version_value(tok.norm), "version", i))
                continue
            value = _parse_number(tok.text)
        elif tok.kind == "word" and tok.text.lower() in _NUMBER_WORDS:
            value = float(_NUMBER_WORDS[tok.text.lower()])
        elif tok.kind == "word" and tok.text.lower() in _RELATIVE_DAY:
            value = _RELATIVE_DAY[tok.text.lower()]  # "the next business day" is one
        elif tok.hangul and tok.norm in _KO_RELATIVE_DAY:
            found.append(Quantity(_KO_RELATIVE_DAY[tok.norm], "day", i))  # "익일 배송"
            continue
        else:
            continue
        if value is None:
            continue
        unit = ""
        nxt = _unit_key(tokens[i + 1]) if i + 1 < len(tokens) else ""
        prev = tokens[i - 1].text.lower() if i > 0 else ""
        after = i + 2  # first token after the unit, where a rate ("per month") may follow
        if prev in _CURRENCY_SIGNS:
            unit, after = UNITS[prev], i + 1
        elif nxt in UNITS:
            unit = UNITS[nxt]
        elif tok.kind == "num" and 1000 <= value <= 2100 and value == int(value) and "," not in tok.text:
            unit = "year"
        elif (prev in MONTHS and not tok.punct) or (nxt in MONTHS and not tokens[i + 1].punct):
            # "1 July", "July 1"; not the "60" of "1 July, 60 tiers". The month is part of the
            # unit: "31 October" is not the "31" of "31 March".
            month = MONTHS[prev] if prev in MONTHS and not tok.punct else MONTHS[nxt]
            unit = f"date-{month}"
        elif prev in ("version", "v", "버전"):
            unit = "version"
        elif tok.kind == "num" and i + 1 < len(tokens) and tokens[i + 1].norm == "월" \
                and value in range(1, 13):
            unit = "month-of-year"  # "12월" is December, not a count of 12
        if not unit and i + 2 < len(tokens) and tokens[i + 1].kind == "word" \
                and not tokens[i + 1].stop and not tokens[i + 1].hangul \
                and UNITS.get(_unit_key(tokens[i + 2])) in _TIME_UNITS:
            unit, after = str(UNITS[_unit_key(tokens[i + 2])]), i + 3  # "one business day"
        if not unit and i + 1 < len(tokens) and tokens[i + 1].kind == "word" \
                and not tokens[i + 1].stop and not tokens[i + 1].text.startswith(_KO_BOUNDS):
            unit = _COUNTED + tokens[i + 1].norm  # "5 employees": the counted noun
        if tok.kind == "word" and not unit:
            continue  # "one" without a unit is usually a pronoun, not a quantity
        if tok.text.lower() in _RELATIVE_DAY and unit != "day":
            continue  # "next week" is a date, not a week's duration
        rates = _rate(tokens, after, prev) if unit else frozenset()
        calendar = unit == "year" and 1000 <= value <= 2100 and value == int(value)  # "2026"
        if unit in _IN_SMALLER and not calendar:
            unit, value = _IN_SMALLER[unit][0], value * _IN_SMALLER[unit][1]
        counted = unit.removeprefix(_COUNTED) if unit.startswith(_COUNTED) else ""
        found.append(Quantity(value, "" if counted else unit, i, rates, counted))
    return _per_korean_period(tokens, found)


#: Marks a counted noun while ``quantities`` reads one number (never leaves it).
_COUNTED = "w:"
#: "8 이상" (8 or more), "10 이하", "3 미만": bounds, not what is counted.
_KO_BOUNDS = ("이상", "이하", "미만", "초과")
#: A duration said in a larger unit is compared in the smaller one: "two-year" is "24 months",
#: "1.5 hours" is "90 minutes", "2 weeks" is "14 days" (a day is not turned into hours).
_IN_SMALLER = {"year": ("month", 12.0), "week": ("day", 7.0), "hour": ("minute", 60.0)}


def about_as_long(a: float, a_unit: str, b: float, b_unit: str) -> bool:
    """Months and days that name one span: "three months" and "90 days", "12 months" and
    "365 days" (a month of 28-31 days; no exact conversion exists)."""
    if {a_unit, b_unit} != {"month", "day"}:
        return False
    months, days = (a, b) if a_unit == "month" else (b, a)
    return months > 0 and abs(months * 30.44 - days) <= max(1.5, months * 1.5)


def _per_korean_period(tokens: tuple[Token, ...], found: list[Quantity]) -> list[Quantity]:
    """"1년에 40만 원", "한 달에 2회": a period of one said with "에" before an amount is the
    amount's rate, not a duration of its own."""
    out: list[Quantity] = []
    skip = False
    for k, q in enumerate(found):
        nxt = found[k + 1] if k + 1 < len(found) else None
        if skip:
            skip = False
            continue
        word = tokens[q.pos + 1].text if q.pos + 1 < len(tokens) else ""
        period = _KO_PERIOD.get(word)
        if nxt is not None and period and tokens[q.pos].text == "1" and not nxt.rates \
                and any(nxt.what) and nxt.pos <= q.pos + 4:
            out.append(Quantity(nxt.value, nxt.unit, nxt.pos, frozenset([period]), nxt.counted))
            skip = True
            continue
        out.append(q)
    return out


_KO_PERIOD = {"년에": "year", "달에": "month", "개월에": "month", "주에": "week", "일에": "day"}


#: Days said by their place: "next-day", "the next business day", "same day", "익일", "당일".
_RELATIVE_DAY = {"next": 1.0, "same": 0.0}
_KO_RELATIVE_DAY = {"익일": 1.0, "당일": 0.0, "다음날": 1.0}
_PER = frozenset(["per", "a", "an", "each", "every"])
#: The words (not numbers) a quantity may start at: "만 원", "five", "next", ("the 5th" starts
#: with a digit).
_WORD_STARTS = frozenset(["만", "천", *_NUMBER_WORDS, *_RELATIVE_DAY])
#: Their stems: a word whose stem is none of these is none of them (a set lookup on the
#: stem each token carries, where lower-casing every token's text cost a fifth of an analysis).
_WORD_START_STEMS = frozenset(stem(w) for w in _WORD_STARTS)
_KO_RATE = {"월": "month", "매월": "month", "월간": "month", "연": "year", "매년": "year",
            "연간": "year", "년간": "year", "주간": "week", "매주": "week", "일간": "day", "매일": "day"}
_TIME_UNITS = frozenset(["second", "minute", "hour", "day", "week", "month", "year"])
_RATE_UNITS = _TIME_UNITS | {"user", "seat"}
_ADVERB_RATE = {"monthly": "month", "annually": "year", "yearly": "year", "weekly": "week",
                "daily": "day", "hourly": "hour"}


def _rate(tokens: tuple[Token, ...], j: int, prev: str) -> frozenset[str]:
    """"$49 per month", "$49/month", "$49 monthly", "월 49달러" -> month; several rates
    ("$29 per user per month") -> month and user (a seat is a user)."""
    found: set[str] = set()
    while j < len(tokens) and len(found) < 3:
        w = tokens[j].text.lower()
        step = 1
        if w in _PER and j + 1 < len(tokens):
            w, step = _unit_key(tokens[j + 1]), 2
        elif w in _ADVERB_RATE:
            found.add(_ADVERB_RATE[w])
            j += 1
            continue
        else:
            w = _unit_key(tokens[j])
        unit = UNITS.get(w)
        if unit not in _RATE_UNITS or (step == 1 and found):
            break  # "$49 month" once, but "per user month" is not a second rate
        found.add("user" if unit == "seat" else str(unit))
        j += step
    if not found and prev in _KO_RATE:
        found.add(_KO_RATE[prev])
    return frozenset(found)


_LATIN_UNIT_KO = re.compile(r"^([a-z%]+)[\uac00-\ud7a3]")


def _unit_key(tok: Token) -> str:
    low = tok.text.lower()
    if low not in UNITS and tok.norm not in UNITS:
        m = _LATIN_UNIT_KO.match(low)  # "4kg이면": the unit with a Korean ending
        if m and m.group(1) in UNITS:
            return m.group(1)
    return tok.norm if low not in UNITS and tok.norm in UNITS else low


def _version_value(norm: str) -> float:
    try:
        return float(norm[1:]) if norm.count(".") <= 1 else float(norm[1:].split(".")[0])
    except ValueError:
        return -1.0


def no_limit(tokens: Sequence[Token]) -> frozenset[str]:
    """"Unlimited" said in two words: "제한 없이" gives "무제한", "no limit" and "without limit"
    give "unlimit" (the stems a text that says it in one word has)."""
    out = set()
    for a, b in pairwise(tokens):
        if a.norm == "제한" and b.norm in ("없", "없이"):
            out.add("무제한")
        elif a.text.lower() in ("no", "without") and b.norm == "limit":
            out.add("unlimit")
    return frozenset(out)


#: Stems that say something costs nothing, and that a charge is waived.
FREE = frozenset(["free", "무료", "complimentari"])
WAIVED = frozenset(["waiv", "면제"])
_CHARGES = frozenset(["fee", "charg", "cost", "요금", "비용", "수수료", "부담"])
#: The stems a "free" phrase is made of ("no extra charge"): the value, not words of its own.
FREE_WORDS = FREE | _CHARGES | {"extra"}


def free_at(tokens: Sequence[Token]) -> list[int]:
    """Where a text says "free": the word ("free", "무료"), or a charge denied ("no fee", "no
    extra charge", "at no cost", "without charge", "추가 요금 없이", "수수료 없음"): the index of
    the phrase's first token."""
    out = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        word = t.norm in FREE and not (i > 0 and tokens[i - 1].text.lower() in ("not", "no"))
        denied = low in ("no", "without") and any(
            tokens[k].norm in _CHARGES for k in range(i + 1, min(i + 3, len(tokens))))
        if word or denied:
            out.append(i)
        elif t.norm in _CHARGES and i + 1 < len(tokens) and tokens[i + 1].norm in ("없", "없이", "없음"):
            out.append(i - 1 if i > 0 and tokens[i - 1].text == "추가" else i)
    return out


#: Units of time that convert exactly.
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
#: A price, share or time of day is never a number that counts something else.
_STRICT_UNITS = CURRENCIES | {"percent", "clock"}


def same_quantity(a: Quantity, b: Quantity, *, exact: bool = False) -> bool:
    """``b`` states ``a``: the same value, rates that agree ("$29 per month" is "$29 per user
    per month" said shorter; "$29 per year" is not), months and days that name one span
    ("three months" / "90 days").

    Loose (entailment): a number with a unit is stated by the bare number, and counted nouns
    may differ ("5 employees" / "5 staff"), but a price, share or time of day never counts
    something else ("$2.00" is not the "2" of "Zone 2"). ``exact`` (misattribution: a detail
    must be the same amount): units must match, "15%" is not a bare "15", counted nouns
    match; one span in two units is one ("two days" / "48 hours"), and "three times a week"
    is "3 days per week"."""
    ua, ub, ra, rb = a.unit, b.unit, a.rates, b.rates
    if exact and ra and ra == rb and {ua, ub} == {"times", "day"} and "day" not in ra:
        ua = ub
    rates_agree = not ra or not rb or ra <= rb or rb <= ra
    if not exact and ((ua in _STRICT_UNITS and b.counted) or (ub in _STRICT_UNITS and a.counted)):
        return False
    if about_as_long(a.value, ua, b.value, ub):
        return rates_agree  # "three months" / "90 days"
    if exact and ua != ub and ua in _SECONDS and ub in _SECONDS:
        return rates_agree and a.value * _SECONDS[ua] == b.value * _SECONDS[ub]  # "two days" / "48 hours"
    if a.value != b.value or not rates_agree:
        return False
    if not exact:
        return not ua or not ub or ua == ub
    return ua == ub and not (a.counted and b.counted and a.counted != b.counted)
