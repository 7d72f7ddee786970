"""The lexical judge's rule families by id (``docs/reference/rules.md`` lists each with an
example). ``bench/ablation.py`` switches them off one at a time to measure what each earns;
nothing else turns one off."""

from __future__ import annotations

from ...infra.switches import RuleFamilies

__all__ = ["FAMILIES", "off", "on"]

FAMILIES = ("yes-no", "number", "code", "no-amount", "negation", "antonym", "slot-swap",
            "heading-swap", "colour-swap", "quantifier", "atomic-split", "refusal")

_SWITCH = RuleFamilies("lexical", FAMILIES)
on = _SWITCH.on
off = _SWITCH.off
