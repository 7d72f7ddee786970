"""CI gates shared by the commands: ``--fail-above METRIC=VALUE`` / ``--fail-below``.

A gate on a metric no sample defined fails: an undefined mean cannot show the bar was met.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import click

from ..engine.catalogue import canonical
from ..engine.metrics import METRIC_RANGE

__all__ = ["Gate", "parse_gates", "check_gates"]

Gate = tuple[str, float, str]  # (metric, threshold, "above" | "below")


def parse_gates(values: tuple[str, ...], direction: str) -> list[Gate]:
    """Read ``METRIC=VALUE`` options (metric names may use RAGChecker's aliases)."""
    gates = []
    for text in values:
        name, sep, raw = text.partition("=")
        try:
            threshold = float(raw)
        except ValueError:
            threshold = float("nan")
        if not sep or not name.strip() or math.isnan(threshold):
            raise click.BadParameter(f"{text!r}: expected METRIC=VALUE, e.g. "
                                     "noise_sensitivity_relevant=0.3",
                                     param_hint=f"--fail-{direction}")
        lo, hi = METRIC_RANGE
        if not lo <= threshold <= hi:  # -5 always fails, 1e999 (inf) never does: both say nothing
            never = (threshold < lo) == (direction == "below")
            raise click.BadParameter(
                f"{text!r}: {raw.strip()} is outside the range of every metric, "
                f"[{lo:g}, {hi:g}], so this gate would {'never' if never else 'always'} fail; "
                f"give a value from {lo:g} to {hi:g}", param_hint=f"--fail-{direction}")
        gates.append((canonical(name), threshold, direction))
    return gates


def check_gates(gates: list[Gate], mean_of: Callable[[str], float | None],
                where: str = "") -> list[str]:
    """Messages of the gates that failed, given each metric's mean."""
    failed = []
    for name, threshold, direction in gates:
        mean = mean_of(name)
        if mean is None:
            failed.append(f"--fail-{direction} {name}={threshold:g}: no sample defined "
                          f"{name}{where}, so the gate cannot pass")
        elif (mean > threshold) if direction == "above" else (mean < threshold):
            sign = ">" if direction == "above" else "<"
            failed.append(f"--fail-{direction} {name}={threshold:g}: mean{where} {mean:.4f} "
                          f"{sign} {threshold:g}")
    return failed
