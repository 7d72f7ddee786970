"""The pure metric engine: claim-verdict matrices in, metrics and evidence out. No I/O."""

from .evidence import (
    ChunkEvidence,
    Evidence,
    ReferenceClaimEvidence,
    ResponseClaimEvidence,
    build_evidence,
)
from .matrix import ClaimVerdicts
from .metrics import METRIC_NAMES, MetricValue, compute_metrics
from .ranked import RANKED_CONTEXT_PRECISION, ranked_context_precision, ranked_precision
from .summary import MetricSummary, summarize

__all__ = [
    "ClaimVerdicts",
    "METRIC_NAMES",
    "MetricValue",
    "compute_metrics",
    "Evidence",
    "ResponseClaimEvidence",
    "ReferenceClaimEvidence",
    "ChunkEvidence",
    "build_evidence",
    "MetricSummary",
    "summarize",
    "RANKED_CONTEXT_PRECISION",
    "ranked_context_precision",
    "ranked_precision",
]
