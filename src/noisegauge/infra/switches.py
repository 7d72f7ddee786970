"""Named rule families that a bench can switch off one at a time (``bench/ablation.py``);
nothing else turns one off, so in every run each family is in force."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RuleFamilies"]


class RuleFamilies:
    """The families of one rule set (``kind`` names it in errors), each on unless switched off."""

    def __init__(self, kind: str, families: tuple[str, ...]) -> None:
        self.kind = kind
        self.families = families
        self._off: set[str] = set()

    def on(self, family: str) -> bool:
        """Whether rule family ``family`` is in force (always, outside the ablation bench)."""
        return family not in self._off

    @contextmanager
    def off(self, *families: str) -> Iterator[None]:
        """Rule families ``families`` switched off inside the block (the ablation bench)."""
        unknown = set(families) - set(self.families)
        if unknown:
            raise ValueError(f"unknown {self.kind} rule families {sorted(unknown)}; "
                             f"known: {self.families}")
        before = set(self._off)
        self._off.update(families)
        try:
            yield
        finally:
            self._off.clear()
            self._off.update(before)
