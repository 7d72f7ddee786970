"""People's per-sample metric values, from their labels, by the engine the judge's go through.

Labels become ``ClaimVerdicts`` (a label "correct" is ``entailed`` by the reference, a chunk
picked for a claim ``entailed`` it, everything else ``neutral``) and ``compute_metrics`` does
the algebra, so a person's value and the judge's differ only where their verdicts do.

Two matrices, since people say which chunks are relevant directly:

- *main* (response claims and chunks labelled): relevance is carried by one stand-in reference
  claim entailed by exactly the chunks marked relevant. It gives both noise modes,
  hallucination, self-knowledge, faithfulness, precision and context precision;
- *reference* (every reference claim labelled too): the person's reference claims, in the
  response or not, stated in which chunks. It gives recall, f1, claim recall and context
  utilization.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.catalogue import METRIC_NAMES, compute_metrics
from ..engine.evidence import Bucket, build_evidence
from ..engine.matrix import ClaimVerdicts
from ..engine.metrics import MetricValue
from ..verdicts import Verdict
from .labels import SampleLabels

__all__ = ["MAIN_METRICS", "REFERENCE_METRICS", "HumanSample", "human_sample", "is_complete"]

MAIN_METRICS: tuple[str, ...] = ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                                 "hallucination", "self_knowledge", "faithfulness", "precision",
                                 "context_precision")
REFERENCE_METRICS: tuple[str, ...] = tuple(n for n in METRIC_NAMES if n not in MAIN_METRICS)

_E, _N = Verdict.ENTAILED, Verdict.NEUTRAL
STAND_IN = "(the chunks a person marked relevant)"


@dataclass(frozen=True)
class HumanSample:
    """A labelled sample's values (only the metrics its labels determine) and the bucket
    people put each response claim in."""

    values: dict[str, MetricValue]
    buckets: tuple[Bucket, ...]
    relevant: tuple[bool, ...]


def _counts(row: Mapping[str, Any]) -> tuple[int, int, int]:
    inp = row.get("input") or {}
    n = len(inp.get("retrieved_contexts") or ()) or len(row.get("chunks") or ())
    return len(row.get("response_claims") or ()), len(row.get("reference_claims") or ()), n


def is_complete(row: Mapping[str, Any], labels: SampleLabels) -> bool:
    """Every response claim and every chunk labelled (reference claims are optional)."""
    r, _, n = _counts(row)
    return all(i in labels.claims for i in range(r)) and all(j in labels.chunks for j in range(n))


def _reference_done(row: Mapping[str, Any], labels: SampleLabels) -> bool:
    _, g, _ = _counts(row)
    return g > 0 and all(i in labels.reference for i in range(g))


def _support(chunks: tuple[int, ...], n: int) -> tuple[Verdict, ...]:
    return tuple(_E if j in chunks else _N for j in range(n))


def human_sample(row: Mapping[str, Any], labels: SampleLabels) -> HumanSample:
    """People's values for a complete sample (``is_complete``)."""
    r, g, n = _counts(row)
    claims = [c.get("text", "") for c in row.get("response_claims") or ()]
    a2r = tuple(_E if labels.claims[i][0] == "correct" else _N for i in range(r))
    r2r = tuple(_support(labels.claims[i][1], n) for i in range(r))
    relevant = tuple(labels.chunks[j] for j in range(n))
    main = ClaimVerdicts(response_claims=tuple(claims), reference_claims=(STAND_IN,),
                         answer2response=a2r, response2answer=(_N,), retrieved2response=r2r,
                         retrieved2answer=(tuple(_E if rel else _N for rel in relevant),),
                         n_chunks=n)
    got = compute_metrics(main)
    values = {name: got[name] for name in MAIN_METRICS}
    if _reference_done(row, labels):
        refs = [c.get("text", "") for c in row.get("reference_claims") or ()]
        ref = ClaimVerdicts(response_claims=tuple(claims), reference_claims=tuple(refs),
                            answer2response=a2r,
                            response2answer=tuple(_E if labels.reference[i][0] else _N
                                                  for i in range(g)),
                            retrieved2response=r2r,
                            retrieved2answer=tuple(_support(labels.reference[i][1], n)
                                                   for i in range(g)),
                            n_chunks=n)
        got = compute_metrics(ref)
        values.update((name, got[name]) for name in REFERENCE_METRICS)
    buckets = tuple(c.bucket for c in build_evidence(main).response_claims)
    return HumanSample(values, buckets, relevant)
