"""noisegauge: claim-level Noise Sensitivity for RAG, with the evidence behind every score.

Importing the package is light: no numpy, torch, openai or pandas. Heavy parts load when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine import ClaimVerdicts, MetricValue, compute_metrics
from .errors import (
    InvalidInput,
    InvalidSample,
    JudgeError,
    JudgeOutputError,
    JudgeUnavailable,
    MissingDependency,
    NoiseGaugeError,
    SyncInAsyncError,
)
from .infra import secrets as _secrets  # noqa: F401  (installs the log redaction filter)
from .judges import FakeJudge, Judge, Usage, get_judge
from .samples import Sample
from .scoring import (
    AnswerF1,
    AnswerPrecision,
    AnswerRecall,
    AnswerRelevancy,
    ContextPrecision,
    ContextRecall,
    ContextUtilization,
    Faithfulness,
    Hallucination,
    Metric,
    MetricResult,
    NoiseSensitivity,
    RankedContextPrecision,
    SampleResult,
    SelfKnowledge,
    ascore_sample,
    score_sample,
)
from .verdicts import Verdict

__version__ = "0.2.0"

if TYPE_CHECKING:
    from .runner.evaluate import Report, aevaluate, evaluate

_LAZY = {
    "evaluate": "noisegauge.runner.evaluate",
    "aevaluate": "noisegauge.runner.evaluate",
    "Report": "noisegauge.runner.evaluate",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'noisegauge' has no attribute {name!r}")


__all__ = [
    "Sample", "Verdict", "ClaimVerdicts", "MetricValue", "compute_metrics",
    "Judge", "FakeJudge", "Usage", "get_judge",
    "Metric", "MetricResult", "SampleResult", "NoiseSensitivity", "Faithfulness",
    "Hallucination", "SelfKnowledge", "ContextPrecision", "ContextRecall", "ContextUtilization",
    "AnswerPrecision", "AnswerRecall", "AnswerF1", "RankedContextPrecision", "AnswerRelevancy",
    "ascore_sample",
    "score_sample",
    "evaluate", "aevaluate", "Report",
    "NoiseGaugeError", "InvalidSample", "InvalidInput", "JudgeError", "JudgeUnavailable",
    "JudgeOutputError", "MissingDependency", "SyncInAsyncError",
    "__version__",
]
