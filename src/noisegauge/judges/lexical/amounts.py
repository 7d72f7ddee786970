"""How a claim's amounts compare with a premise's: the same amount written two ways
("two-year" / "24-month", "만 8천 원" / "18,000원", "three months" / "90 days"), another amount
of the same kind, or a word that denies an amount ("unlimited", "free", "waived")."""

from __future__ import annotations

from ...textkit.quantity import CURRENCIES, FREE, WAIVED, Quantity, no_limit, same_quantity
from .analysis import Analysis

__all__ = ["NO_AMOUNT", "qty_match", "says"]


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


#: Words that deny an amount, and the units of the amount that denies them (empty: any).
_PRICES = CURRENCIES | {"percent"}
NO_AMOUNT: dict[str, frozenset[str]] = {"unlimit": frozenset(), "무제한": frozenset(),
                                         **dict.fromkeys(sorted(FREE | WAIVED), _PRICES)}


def says(text: Analysis, stem: str) -> bool:
    # "without limit", "no limit", "제한 없이": unlimited said in two words
    if stem in text.norms:
        return True
    if stem not in ("unlimit", "무제한"):
        return False
    unlimited = text.memo.get("no_limit")  # the same for every pair the text is in
    if unlimited is None:
        text.memo["no_limit"] = unlimited = bool(no_limit(text.tokens))
    return bool(unlimited)
