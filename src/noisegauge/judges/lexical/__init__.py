"""The offline default judge: rule-based claim splitting and lexical entailment.

``get_judge("lexical")`` builds it; ``extract_spans`` gives claims with their source spans.
"""

from __future__ import annotations

from typing import Any

from .judge import JUDGE_VERSION, Explanation, LexicalJudge
from .split import ClaimSpan, extract_spans

__all__ = [
    "JUDGE_VERSION",
    "ClaimSpan",
    "Explanation",
    "LexicalJudge",
    "extract_spans",
    "make_judge",
]


def make_judge(arg: str | None = None, **kwargs: Any) -> LexicalJudge:
    """Registry factory: ``lexical`` (shipped weights) or ``lexical:PATH`` (weights JSON)."""
    if arg:
        kwargs.setdefault("weights", arg)
    return LexicalJudge(**kwargs)
