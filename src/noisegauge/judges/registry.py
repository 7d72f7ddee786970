"""Judges by name. Providers are imported only when asked for.

``get_judge("lexical")``, ``"fake"``, ``"precomputed"``, ``"openai:MODEL"``, ``"nli:PATH"``.
Third-party judges register a factory under the entry-point group ``noisegauge.judges``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from ..errors import InvalidInput
from .base import Judge

__all__ = ["get_judge", "check_judge", "JUDGE_FACTORIES"]

#: kind -> "module:callable"; the callable takes (arg: str | None, **kwargs) -> Judge.
#: Named, not imported, so the registry (which a judge may use, as NLI does for its
#: extractor) depends on no judge and each judge's dependencies load only when it is used.
JUDGE_FACTORIES: dict[str, str] = {
    "lexical": "noisegauge.judges.lexical:make_judge",
    "fake": "noisegauge.judges.fake:make_judge",
    "precomputed": "noisegauge.judges.precomputed:make_judge",
    "openai": "noisegauge.judges.llm.judge:make_judge",
    "nli": "noisegauge.judges.nli.judge:make_judge",
    "litellm": "noisegauge.judges.llm.adapters:make_litellm_judge",
}


def _load(target: str) -> Callable[..., Judge]:
    module, _, attr = target.partition(":")
    factory: Callable[..., Judge] = getattr(importlib.import_module(module), attr)
    return factory


def check_judge(judge: Any) -> Judge:
    """``judge`` itself if it is one (async ``extract`` and ``check``, or ``judge_sample``),
    else InvalidInput saying what a judge is: caught once, up front, not once per row."""
    methods = {name: getattr(judge, name, None) for name in ("extract", "check", "judge_sample")}
    if not ((callable(methods["extract"]) and callable(methods["check"]))
            or callable(methods["judge_sample"])):
        raise InvalidInput(f"judge={judge!r:.60}: not a judge; expected a spec string such as "
                           "'lexical' or 'openai:gpt-4o-mini', or an object with async "
                           "extract(text, question) and check(premise, claims)")
    for name, method in methods.items():
        if callable(method) and not inspect.iscoroutinefunction(method):
            raise InvalidInput(f"{type(judge).__name__}.{name} must be an `async def` method")
    return judge  # type: ignore[no-any-return]


def get_judge(spec: str | Judge, **kwargs: Any) -> Judge:
    """Build a judge from a spec string such as ``"lexical"`` or ``"openai:gpt-4o-mini"``.

    A judge object passes through unchanged, so APIs can accept either.

    >>> type(get_judge("fake")).__name__
    'FakeJudge'
    """
    if not isinstance(spec, str):
        return check_judge(spec)
    kind, sep, arg = spec.partition(":")
    kind = kind.strip().lower()
    target = JUDGE_FACTORIES.get(kind)
    if target is None:
        for ep in entry_points(group="noisegauge.judges"):
            if ep.name == kind:
                target = ep.value
                break
    if target is None:
        known = ", ".join(sorted(JUDGE_FACTORIES))
        raise InvalidInput(f"unknown judge {spec!r}: expected one of {known} "
                           "(openai and nli take an argument, e.g. openai:gpt-4o-mini)")
    return _load(target)(arg if sep else None, **kwargs)
