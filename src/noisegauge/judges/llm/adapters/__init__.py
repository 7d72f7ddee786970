"""Adapters from LLM client objects to the LLM judge (filled in by issue 14, part 5)."""

from __future__ import annotations

from typing import Any

from ...base import Judge

__all__ = ["adapt"]


def adapt(obj: Any, **kwargs: Any) -> Judge:
    raise TypeError(f"cannot use a {type(obj).__module__}.{type(obj).__name__} as a judge: "
                    "expected a Judge or a spec string such as 'lexical' or 'openai:gpt-4o-mini'")
