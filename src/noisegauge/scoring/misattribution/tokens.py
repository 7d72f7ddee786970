"""How two quantities compare for misattribution (a detail must be the same amount), and what
a word or number of a text names."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from ...textkit.quantity import Quantity
from ...textkit.quantity import same_quantity as _same
from ...textkit.spans import Text, is_content

__all__ = ["like", "name_keys", "same_quantity", "stated"]

#: Misattribution compares amounts exactly (``same_quantity(..., exact=True)``).
same_quantity = partial(_same, exact=True)


def stated(x: Quantity, y: Quantity) -> bool:
    """``y`` states ``x``: the same quantity, or the same value where neither has a unit but
    the word after it ("Patch 2.3 lifted" / "Patch 2.3 raised")."""
    # ("$2.00" is not stated by "Zone 2": a price is never a counted word; a version is
    # stated by its bare number: "version 4.2" by "PayRollo 4.2", "3.1에서" by "v3.1")
    soft_x = not x.unit or x.unit == "version"
    soft_y = not y.unit or y.unit == "version"
    return same_quantity(x, y) or (soft_x and soft_y and x.value == y.value)


#: Spans of time, which state a span in another unit ("three months" / "90 days", "two
#: days" / "48 hours"): the only quantities ``same_quantity`` matches at another value.
_SPANS_OF_TIME = ("month", "second", "minute", "hour", "day", "week")


def like(t: Text, q: Quantity) -> list[Quantity]:
    """The quantities of ``t`` that may state ``q`` (the same value, or a span of time beside
    a span of time), in the text's order: ``same_quantity`` and ``stated`` are true of no
    other, so a search need test only these."""
    ks = t.by_value.get(q.value, ())
    if q.unit in _SPANS_OF_TIME:
        units = t.by_unit
        timed = [k for u in _SPANS_OF_TIME for k in units.get(u, ())]
        if timed:
            ks = tuple(sorted({*ks, *timed}))
    qs = t.quantities
    return [qs[k] for k in ks]


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
            if q is not None and q.unit:
                out[i] = f"#{q.value}:{q.unit}"
            else:
                before = t.tokens[i - 1].norm if i > 0 else ""
                out[i] = f"#{tok.norm}@{before}"
        elif is_content(tok):
            out[i] = tok.norm
    return out
