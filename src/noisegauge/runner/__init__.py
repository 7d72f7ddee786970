"""Batch evaluation: stream a dataset through the judges, with a cache and resumable output."""

from .evaluate import Report, aevaluate, evaluate
from .plan import Plan, build_plan, resolve_metrics
from .run import arun
from .stats import RunStats

__all__ = [
           "Plan",
           "Report",
           "RunStats",
           "aevaluate",
           "arun",
           "build_plan",
           "evaluate",
           "resolve_metrics",
]
