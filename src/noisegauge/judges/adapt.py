"""``llm=`` / ``judge=``: turn what a user already holds into a ``Judge``.

A spec string goes to ``get_judge``; a ``Judge`` passes through; client objects (OpenAI,
LangChain, LiteLLM, Ragas wrappers) are recognised by their type's module and adapted by
``judges.llm.adapters``, which imports their library only then.
"""

from __future__ import annotations

from typing import Any

from .base import Judge
from .registry import get_judge

__all__ = ["as_judge"]


def as_judge(obj: Any, **kwargs: Any) -> Judge:
    """A judge from a spec string, a judge, or an LLM client object (see module doc)."""
    if isinstance(obj, str):
        return get_judge(obj, **kwargs)
    if isinstance(obj, Judge) and not kwargs:
        return obj
    from .llm.adapters import adapt
    return adapt(obj, **kwargs)
