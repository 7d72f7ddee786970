"""Misattribution's rule families by id (``docs/reference/rules.md``); ``bench/ablation.py``
switches them off one at a time, nothing else does."""

from __future__ import annotations

from ...infra.switches import RuleFamilies

__all__ = ["FAMILIES", "off", "on"]

FAMILIES = ("free", "denied", "own-numbers", "two-chunks", "variant", "entailed-swap", "own-chunk")

_SWITCH = RuleFamilies("misattribution", FAMILIES)
on = _SWITCH.on
off = _SWITCH.off
