"""How a claim's amounts compare with a premise's: the same amount written two ways
("two-year" / "24-month", "만 8천 원" / "18,000원", "three months" / "90 days"), another amount
of the same kind, or a word that denies an amount ("unlimited", "free", "waived")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .quantity import CURRENCIES, UNITS, Quantity, about_as_long, no_limit
from .text import Token

if TYPE_CHECKING:
    from .features import Analysis

__all__ = ["NO_AMOUNT", "qty_match", "said_otherwise", "same_quantity", "says"]


def same_quantity(q: Quantity, p: Quantity) -> bool:
    """The premise's ``p`` states the claim's ``q``: same value, compatible unit and rates."""
    q_unit, _, q_rate = q.unit.partition("/")
    p_unit, _, p_rate = p.unit.partition("/")
    q_rates = set(q_rate.split("+")) if q_rate else set()
    p_rates = set(p_rate.split("+")) if p_rate else set()
    hard = q_unit and not q_unit.startswith("w:")
    p_hard = p_unit and not p_unit.startswith("w:")
    # "$29 per month" is "$29 per user per month" said shorter; "$29 per year" is not.
    rate_ok = not q_rates or not p_rates or q_rates <= p_rates or p_rates <= q_rates
    # A price, share or time of day is not a number that counts something else ("$2.00" is
    # not the "2" of "Zone 2 off-peak", nor the other way round).
    if (q_unit in _STRICT_UNITS and p_unit.startswith("w:")) \
            or (p_unit in _STRICT_UNITS and q_unit.startswith("w:")):
        return False
    if rate_ok and about_as_long(q.value, q_unit, p.value, p_unit):
        return True  # "three months" / "90 days"
    return p.value == q.value and rate_ok and (not hard or not p_hard or p_unit == q_unit)


_STRICT_UNITS = frozenset(["usd", "eur", "gbp", "jpy", "krw", "percent", "clock"])


def qty_match(q: Quantity, prem: Analysis, window: range) -> str:
    """'same' when the premise states this value (compatible unit and rates), 'other' when the
    aligned window states the same kind of quantity with another value, else 'absent'."""
    q_unit = q.unit.partition("/")[0]
    other = False
    for p in prem.quantities:
        if same_quantity(q, p):
            return "same"
        if q_unit and p.unit.partition("/")[0] == q_unit and prem.sent_of[p.pos] in window:
            other = True
    return "other" if other else "absent"


def said_otherwise(prem: Analysis, claim: Analysis) -> dict[int, str]:
    """Claim tokens of a quantity the premise states in other words ("two-year" / "24-month",
    "만 8천 원" / "18,000원"): each read as the premise's number and unit word, so the overlap
    counts them as said."""
    out: dict[int, str] = {}
    ptoks, ctoks = prem.tokens, claim.tokens
    for q in claim.quantities:
        p = next((p for p in prem.quantities if same_quantity(q, p)), None)
        if p is None or ptoks[p.pos].norm == ctoks[q.pos].norm:
            continue
        out[q.pos] = ptoks[p.pos].norm
        k = q.pos + 1
        while k < len(ctoks) and k - q.pos <= 3 and not ctoks[k].stop \
                and (ctoks[k].kind == "num" or _unit_word(ctoks[k])):
            out[k] = ptoks[p.pos].norm  # "8천", "원" of "만 8천 원"; "year" of "two-year"
            k += 1
    return out


def _unit_word(tok: Token) -> bool:
    return tok.text.lower() in UNITS or tok.norm in UNITS or tok.text[:1] in ("천", "백", "원")


#: Words that deny an amount, and the units of the amount that denies them (empty: any).
_PRICES = CURRENCIES | {"percent"}
NO_AMOUNT: dict[str, frozenset[str]] = {"unlimit": frozenset(), "무제한": frozenset(),
                                         "free": _PRICES, "무료": _PRICES, "waiv": _PRICES,
                                         "면제": _PRICES}


def says(text: Analysis, stem: str) -> bool:
    # "without limit", "no limit", "제한 없이": unlimited said in two words
    return stem in text.norms or (stem in ("unlimit", "무제한") and bool(no_limit(text.tokens)))
