"""Scoring: run a judge over a sample, then the pure engine over its verdicts."""

from .judging import judge_sample
from .metrics import (
    AnswerF1,
    AnswerPrecision,
    AnswerRecall,
    ContextPrecision,
    ContextRecall,
    ContextUtilization,
    Faithfulness,
    Hallucination,
    Metric,
    NoiseSensitivity,
    RankedContextPrecision,
    SelfKnowledge,
    ascore_sample,
    score_sample,
)
from .relevancy import AnswerRelevancy
from .results import MetricResult, SampleResult, Status, result_from_verdicts

__all__ = [
    "judge_sample", "SampleResult", "MetricResult", "Status", "result_from_verdicts",
    "Metric", "NoiseSensitivity", "Faithfulness", "Hallucination", "SelfKnowledge",
    "ContextPrecision", "ContextRecall", "ContextUtilization", "AnswerPrecision", "AnswerRecall",
    "AnswerF1", "RankedContextPrecision", "AnswerRelevancy", "ascore_sample", "score_sample",
]
