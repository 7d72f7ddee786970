"""Property tests over random verdict matrices (sklearn-style invariances)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from noisegauge.engine import METRIC_NAMES, ClaimVerdicts, build_evidence, compute_metrics
from noisegauge.verdicts import Verdict

verdicts = st.sampled_from(list(Verdict))


@st.composite
def claim_verdicts(draw: st.DrawFn, min_claims: int = 0) -> ClaimVerdicts:
    r = draw(st.integers(min_claims, 6))
    g = draw(st.integers(min_claims, 6))
    n = draw(st.integers(0, 5))
    return ClaimVerdicts(
        response_claims=tuple(f"r{i}" for i in range(r)),
        reference_claims=tuple(f"g{i}" for i in range(g)),
        answer2response=tuple(draw(verdicts) for _ in range(r)),
        response2answer=tuple(draw(verdicts) for _ in range(g)),
        retrieved2response=tuple(tuple(draw(verdicts) for _ in range(n)) for _ in range(r)),
        retrieved2answer=tuple(tuple(draw(verdicts) for _ in range(n)) for _ in range(g)),
        n_chunks=n,
    )


@settings(max_examples=300)
@given(claim_verdicts(min_claims=1))
def test_generator_identities(cv: ClaimVerdicts) -> None:
    m = {k: v.value for k, v in compute_metrics(cv).items()}
    assert m["precision"] is not None and m["noise_sensitivity_relevant"] is not None
    assert math.isclose(m["precision"] + m["noise_sensitivity_relevant"]
                        + m["noise_sensitivity_irrelevant"] + m["hallucination"], 1.0)
    assert math.isclose(m["faithfulness"] + m["self_knowledge"] + m["hallucination"], 1.0)


@settings(max_examples=300)
@given(claim_verdicts(), st.randoms(use_true_random=False))
def test_chunk_order_changes_no_metric(cv: ClaimVerdicts, rnd: object) -> None:
    order = list(range(cv.n_chunks))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    assert compute_metrics(cv) == compute_metrics(cv.permute_chunks(order))


@settings(max_examples=300)
@given(claim_verdicts())
def test_every_value_is_a_fraction_or_undefined_with_reason(cv: ClaimVerdicts) -> None:
    metrics = compute_metrics(cv)
    assert set(metrics) == set(METRIC_NAMES)
    for name, mv in metrics.items():
        if mv.value is None:
            assert mv.reason, name
        else:
            assert 0.0 <= mv.value <= 1.0 and not math.isnan(mv.value), name
            assert mv.reason is None


@settings(max_examples=200)
@given(claim_verdicts())
def test_evidence_buckets_agree_with_metrics(cv: ClaimVerdicts) -> None:
    metrics = compute_metrics(cv)
    ev = build_evidence(cv)
    r = len(cv.response_claims)
    if r == 0 or not cv.reference_claims:
        return
    for bucket, name in (("relevant_noise", "noise_sensitivity_relevant"),
                         ("irrelevant_noise", "noise_sensitivity_irrelevant"),
                         ("hallucination", "hallucination"), ("self_knowledge", "self_knowledge")):
        share = sum(c.bucket == bucket for c in ev.response_claims) / r
        assert math.isclose(share, metrics[name].value or 0.0), bucket
    # A noise claim always names the chunk(s) it leaked from, and they entail it.
    for c in ev.response_claims:
        if c.bucket in ("relevant_noise", "irrelevant_noise"):
            assert c.leaked_from and set(c.leaked_from) <= set(c.entailed_by)
        else:
            assert c.leaked_from == ()


@given(claim_verdicts())
def test_contradicted_never_counts_as_true(cv: ClaimVerdicts) -> None:
    """Turning every contradiction into neutral changes nothing: only 'entailed' is true."""
    def soften(row: tuple[Verdict, ...]) -> tuple[Verdict, ...]:
        return tuple(Verdict.NEUTRAL if v is Verdict.CONTRADICTED else v for v in row)
    softened = ClaimVerdicts(
        cv.response_claims, cv.reference_claims, soften(cv.answer2response),
        soften(cv.response2answer), tuple(soften(r) for r in cv.retrieved2response),
        tuple(soften(r) for r in cv.retrieved2answer), cv.n_chunks)
    assert compute_metrics(cv) == compute_metrics(softened)


def test_undefined_cases_have_reasons() -> None:
    empty_response = ClaimVerdicts((), ("g",), (), (Verdict.ENTAILED,), (), ((Verdict.ENTAILED,),), 1)
    m = compute_metrics(empty_response)
    for name in ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination",
                 "self_knowledge", "faithfulness", "precision", "f1"):
        assert m[name].value is None and m[name].reason == "no response claims", name
    assert m["recall"].value == 1.0 and m["context_precision"].value == 1.0

    no_chunks = ClaimVerdicts(("r",), ("g",), (Verdict.NEUTRAL,), (Verdict.NEUTRAL,), ((),), ((),), 0)
    m = compute_metrics(no_chunks)
    assert m["context_precision"].value is None and m["context_precision"].reason == "no retrieved chunks"
    assert m["context_utilization"].value is None
    assert m["hallucination"].value == 1.0  # wrong and supported by nothing: a real 1, not undefined
    assert m["noise_sensitivity_relevant"].value == 0.0

    no_reference = ClaimVerdicts(("r",), (), (Verdict.NEUTRAL,), (), ((Verdict.ENTAILED,),), (), 1)
    m = compute_metrics(no_reference)
    assert m["noise_sensitivity_irrelevant"].value is None
    assert "no reference claims" in (m["noise_sensitivity_irrelevant"].reason or "")
    assert m["recall"].value is None and m["claim_recall"].value is None
    assert m["precision"].value == 0.0


def test_f1_is_zero_only_when_both_are_zero() -> None:
    cv = ClaimVerdicts(("r",), ("g",), (Verdict.NEUTRAL,), (Verdict.NEUTRAL,), ((),), ((),), 0)
    assert compute_metrics(cv)["f1"].value == 0.0


@settings(max_examples=100)
@given(claim_verdicts())
def test_evidence_dict_has_every_field(cv: ClaimVerdicts) -> None:
    """The hand-written to_dict must not drift from the dataclasses it serialises."""
    from dataclasses import fields

    from noisegauge.engine.evidence import (
        ChunkEvidence,
        ReferenceClaimEvidence,
        ResponseClaimEvidence,
    )
    d = build_evidence(cv).to_dict()
    for key, cls in (("response_claims", ResponseClaimEvidence),
                     ("reference_claims", ReferenceClaimEvidence), ("chunks", ChunkEvidence)):
        for item in d[key]:
            assert set(item) == {f.name for f in fields(cls)}
