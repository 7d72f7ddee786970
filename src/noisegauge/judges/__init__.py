"""Judges: producers of claims and verdicts. Heavy providers load lazily via ``get_judge``."""

from .base import BatchChecker, Judge, SampleJudge, Usage, judge_identity, metered, record_usage
from .fake import FakeJudge
from .registry import get_judge

__all__ = ["Judge", "BatchChecker", "SampleJudge", "Usage", "metered", "record_usage",
           "judge_identity", "FakeJudge", "get_judge"]
