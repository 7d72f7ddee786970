"""The pure metric engine: claim-verdict matrices in, metrics and evidence out. No I/O."""

from .catalogue import METRIC_NAMES, MetricSpec, compute_metrics
from .evidence import (
    ChunkEvidence,
    Evidence,
    ReferenceClaimEvidence,
    ResponseClaimEvidence,
    build_evidence,
)
from .matrix import ClaimVerdicts
from .metrics import MetricValue
from .ranked import RANKED_CONTEXT_PRECISION, ranked_context_precision, ranked_precision
from .summary import MetricSummary, summarize

__all__ = [
    "ClaimVerdicts",
    "METRIC_NAMES",
    "MetricSpec",
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
