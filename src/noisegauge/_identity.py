"""What identifies an object's answers, for cache keys and result metadata."""

from __future__ import annotations

from typing import Any

__all__ = ["identity_of"]


def identity_of(obj: object, kind: str) -> dict[str, Any]:
    """``obj.identity()`` when it defines one, else ``{kind: "module.Class"}``."""
    ident = getattr(obj, "identity", None)
    if callable(ident):
        value = ident()
        if isinstance(value, dict):
            return value
    cls = type(obj)
    return {kind: f"{cls.__module__}.{cls.__qualname__}"}
