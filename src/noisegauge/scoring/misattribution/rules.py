"""Misattribution's rule families by id (``docs/reference/rules.md``); ``bench/ablation.py``
switches them off one at a time, nothing else does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FAMILIES", "off", "on"]

FAMILIES = ("free", "denied", "own-numbers", "two-chunks", "variant", "relabelled",
            "entailed-swap", "named-heading")

_OFF: set[str] = set()


def on(family: str) -> bool:
    """Whether rule family ``family`` is in force (always, outside the ablation bench)."""
    return family not in _OFF


@contextmanager
def off(*families: str) -> Iterator[None]:
    """Rule families ``families`` switched off inside the block (the ablation bench)."""
    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise ValueError(f"unknown misattribution rule families {sorted(unknown)}; known: {FAMILIES}")
    before = set(_OFF)
    _OFF.update(families)
    try:
        yield
    finally:
        _OFF.clear()
        _OFF.update(before)
