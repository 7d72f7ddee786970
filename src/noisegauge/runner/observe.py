"""Who wants to hear about finished runs: the pytest plugin collects every ``Report`` made in
a test session this way (``pytest --noisegauge-report=report.html``).

An observer is called with each ``Report`` ``aevaluate`` returns; a failing observer is a
bug in it and raises, it never changes the run's result silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["add_observer", "remove_observer", "notify"]

_OBSERVERS: list[Callable[[Any], None]] = []


def add_observer(fn: Callable[[Any], None]) -> None:
    if fn not in _OBSERVERS:
        _OBSERVERS.append(fn)


def remove_observer(fn: Callable[[Any], None]) -> None:
    if fn in _OBSERVERS:
        _OBSERVERS.remove(fn)


def notify(report: Any) -> None:
    for fn in list(_OBSERVERS):
        fn(report)
