"""The lexical judge's rule families by id (``docs/reference/rules.md`` lists each with an
example). ``bench/ablation.py`` switches them off one at a time to measure what each earns;
nothing else turns one off."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FAMILIES", "off", "on"]

FAMILIES = ("yes-no", "number", "value-of-another", "code", "month", "no-amount", "negation",
            "antonym", "slot-swap", "heading-swap", "colour-swap", "titled-swap", "quoted-swap",
            "quantifier", "said-otherwise", "alias", "atomic-split", "refusal")

_OFF: set[str] = set()


def on(family: str) -> bool:
    """Whether rule family ``family`` is in force (always, outside the ablation bench)."""
    return family not in _OFF


@contextmanager
def off(*families: str) -> Iterator[None]:
    """Rule families ``families`` switched off inside the block (the ablation bench)."""
    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise ValueError(f"unknown lexical rule families {sorted(unknown)}; known: {FAMILIES}")
    before = set(_OFF)
    _OFF.update(families)
    try:
        yield
    finally:
        _OFF.clear()
        _OFF.update(before)
