"""Batch evaluation: stream a dataset through the judges, with a cache and resumable output."""

from ..report.totals import RunStats
from .evaluate import Report, aevaluate, evaluate
from .plan import Plan, build_plan, resolve_metrics
from .run import arun

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
