"""Stress testing: inject distractor chunks on purpose, run your pipeline, measure the damage.

    from noisegauge.stress import stress
    report = stress("golden.jsonl", pipeline="extractive", levels=[0, 1, 2, 4], judge="lexical")
    report.write("out/")            # samples, results, curve.json, curve.png, flips.jsonl
    report.curve()["metrics"]["noise_sensitivity_irrelevant"]

``compare(golden, pipelines=("extractive", "extractive:strict"))`` runs two pipelines on the
same noisy contexts and tests each metric's paired difference.
"""

from __future__ import annotations

from ..engine.paired import paired_bootstrap_ci, paired_permutation_test
from .compare import CompareReport, acompare, compare, compare_dirs, compare_reports
from .distractors import POSITIONS, STRATEGIES, Chunk, build_sources, place
from .generation import GenerationCache, Generator
from .golden import GoldenItem, PoolChunk, load_golden, load_pool
from .pipelines import CallablePipeline, Pipeline, get_pipeline
from .stress_report import StressReport, StressRow, curve_from_rows
from .sweep import NoisyCase, astress, plan_cases, stress

__all__ = [
    "stress", "astress", "compare", "acompare", "compare_reports", "compare_dirs",
    "StressReport", "StressRow", "CompareReport", "curve_from_rows",
    "GoldenItem", "PoolChunk", "load_golden", "load_pool",
    "Chunk", "STRATEGIES", "POSITIONS", "build_sources", "place", "NoisyCase", "plan_cases",
    "Pipeline", "CallablePipeline", "get_pipeline", "Generator", "GenerationCache",
    "paired_bootstrap_ci", "paired_permutation_test",
]
