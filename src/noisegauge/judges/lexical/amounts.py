"""How a claim's amounts compare with a premise's: the same amount written two ways
("two-year" / "24-month", "만 8천 원" / "18,000원", "three months" / "90 days"), another amount
of the same kind, or a word that denies an amount ("unlimited", "free", "waived")."""

from __future__ import annotations

from ...textkit.quantity import CURRENCIES, FREE, UNITS, WAIVED, Quantity, no_limit, same_quantity
from ...textkit.tokens import Token
from .analysis import Analysis

__all__ = ["NO_AMOUNT", "qty_match", "said_otherwise", "says"]


def qty_match(q: Quantity, prem: Analysis, window: range) -> str:
    """'same' when the premise states this value (compatible unit and rates), 'other' when the
    aligned window states the same kind of quantity with another value, else 'absent'."""
    other = False
    for p in prem.quantities:
        if same_quantity(q, p):
            return "same"
        if any(q.what) and p.what == q.what and prem.sent_of[p.pos] in window:
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
                                         **dict.fromkeys(sorted(FREE | WAIVED), _PRICES)}


def says(text: Analysis, stem: str) -> bool:
    # "without limit", "no limit", "제한 없이": unlimited said in two words
    return stem in text.norms or (stem in ("unlimit", "무제한") and bool(no_limit(text.tokens)))
