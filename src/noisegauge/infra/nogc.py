"""Pause the cyclic garbage collector while a CPU-bound step builds many small containers.

CPython's collector runs a pass for every few hundred new containers, and a full pass walks
every tracked object, caches included: the lexical judge builds tuples, sets and dicts by the
million and spent about half of its analysis time in those passes. Nothing it builds holds a
reference cycle, so the passes free nothing; reference counting frees what dies as before.
(Mercurial's ``util.nogc`` does the same for the same reason.)
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["nogc"]

P = ParamSpec("P")
R = TypeVar("R")


def nogc(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with the collector paused while it runs (and left as it was afterwards: a
    caller that disabled it keeps it disabled; a nested call does not re-enable it early)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()
    return wrapper
