"""The offline default judge: rule-based claim splitting and lexical entailment.

``get_judge("lexical")`` builds it; ``extract_spans`` gives claims with their source spans.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from .judge import JUDGE_VERSION, Explanation, LexicalJudge
from .split import ClaimSpan, extract_spans

__all__ = [
    "JUDGE_VERSION",
    "ClaimSpan",
    "Explanation",
    "LexicalJudge",
    "extract_spans",
    "make_judge",
    "PROFILE_KIND",
]

#: The ``kind`` of a calibration profile file (``noisegauge calibrate --save``).
PROFILE_KIND = "noisegauge-lexical-profile"


def make_judge(arg: str | None = None, **kwargs: Any) -> LexicalJudge:
    """Registry factory: ``lexical`` (shipped weights), ``lexical:PROFILE.json`` (a threshold
    tuned by ``noisegauge calibrate --save``) or ``lexical:WEIGHTS.json`` (retrained weights)."""
    if arg:
        data = json.loads(Path(arg).read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("kind") == PROFILE_KIND:
            kwargs.setdefault("threshold", float(data["threshold"]))
            if data.get("weights"):
                kwargs.setdefault("weights", Path(arg).parent / str(data["weights"]))
            judge = LexicalJudge(**kwargs)
            tuned_for = (data.get("judge") or {}).get("model")
            if tuned_for and tuned_for != judge.identity()["model"]:
                raise InvalidInput(f"{arg}: this profile was tuned for the lexical weights "
                                   f"{tuned_for}, these are {judge.identity()['model']}; "
                                   f"rerun noisegauge calibrate --save {arg}")
            return judge
        else:
            kwargs.setdefault("weights", arg)
    return LexicalJudge(**kwargs)
