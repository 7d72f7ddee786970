"""Golden tests: the engine reproduces RAGChecker's stored numbers and the Ragas LIC example."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from batch_helpers import DATA, RAGAS_EXAMPLES, RAGCHECKER_OUTPUTS
from noisegauge import FakeJudge, NoiseSensitivity, Sample, score_sample
from noisegauge.engine import METRIC_NAMES, summarize

# RAGChecker names its two noise metrics with "_in_".
RC_NAME = {name: name for name in METRIC_NAMES}
RC_NAME["noise_sensitivity_relevant"] = "noise_sensitivity_in_relevant"
RC_NAME["noise_sensitivity_irrelevant"] = "noise_sensitivity_in_irrelevant"


def _ragchecker() -> dict:
    return json.loads(RAGCHECKER_OUTPUTS.read_text())


def test_precomputed_reproduces_every_stored_per_example_metric() -> None:
    data = _ragchecker()
    for row, record in enumerate(data["results"]):
        result = score_sample(Sample.from_record(record, row), "precomputed")
        assert result.status == "ok"
        assert result.usage.calls == 0
        for name in METRIC_NAMES:
            assert result.value(name) == pytest.approx(record["metrics"][RC_NAME[name]], abs=1e-4), name


def test_precomputed_reproduces_stored_aggregates() -> None:
    data = _ragchecker()
    results = [score_sample(Sample.from_record(r, i), "precomputed")
               for i, r in enumerate(data["results"])]
    stored = {k: v for group in data["metrics"].values() for k, v in group.items()}
    for name in METRIC_NAMES:
        s = summarize(name, [r.value(name) for r in results])
        assert s.mean is not None
        # RAGChecker reports round(mean * 100, 1).
        assert round(s.mean * 100, 1) == stored[RC_NAME[name]], name


LIC_RESPONSE_CLAIMS = [
    "LIC is the largest insurance company in India.",
    "LIC is known for its vast portfolio of investments.",
    "LIC contributes to the financial stability of the country.",
]
LIC_REFERENCE_CLAIMS = [
    "LIC is the largest insurance company in India.",
    "LIC was established in 1956 through the nationalization of the insurance industry.",
    "LIC is known for managing a large portfolio of investments.",
]


def _lic_judge(example: dict) -> FakeJudge:
    """The worked example's verdicts (anchors §5): C1-C3 relevant, C4 not; A3 is incorrect."""
    c1, c2, c3, _c4 = example["retrieved_contexts"]  # C4 entails nothing
    a1, a2, a3 = LIC_RESPONSE_CLAIMS
    g1, g2, g3 = LIC_REFERENCE_CLAIMS
    entailed = {
        (example["reference"], a1), (example["reference"], a2),
        (example["response"], g1), (example["response"], g3),
        (c1, g2), (c2, g1), (c2, g3), (c3, g3),
        (c2, a1), (c2, a2), (c3, a2), (c3, a3),
    }
    return FakeJudge(
        claims={example["response"]: LIC_RESPONSE_CLAIMS, example["reference"]: LIC_REFERENCE_CLAIMS},
        verdicts=lambda premise, claim: "entailed" if (premise, claim) in entailed else "neutral",
        strict=True,
    )


def test_ragas_lic_example_gives_documented_scores() -> None:
    examples = json.loads(RAGAS_EXAMPLES.read_text())
    lic = examples["examples"][0]
    judge = _lic_judge(lic)
    fields = {k: lic[k] for k in ("user_input", "response", "reference", "retrieved_contexts")}
    rel = NoiseSensitivity(judge=judge, mode="relevant").score(**fields)
    irr = NoiseSensitivity(judge=judge, mode="irrelevant").score(**fields)
    assert rel.value == pytest.approx(lic["expected"]["mode_relevant"])
    assert irr.value == pytest.approx(lic["expected"]["mode_irrelevant"])
    assert rel.status == irr.status == "ok"
    # The evidence names the incorrect claim and the relevant chunk it came from.
    ev = rel.sample.evidence
    assert ev is not None
    noisy = [c for c in ev.response_claims if c.bucket == "relevant_noise"]
    assert [c.text for c in noisy] == [LIC_RESPONSE_CLAIMS[2]]
    assert noisy[0].leaked_from == (2,)
    assert [c.relevant for c in ev.chunks] == [True, True, True, False]


def test_lic_both_modes_from_one_judged_pass() -> None:
    examples = json.loads(RAGAS_EXAMPLES.read_text())
    lic = examples["examples"][0]
    judge = _lic_judge(lic)
    sample = Sample.from_record(lic)
    result = score_sample(sample, judge)
    # 2 extractions + (1 reference + 4 chunks) + (1 response + 4 chunks) checks, once for all metrics.
    assert len(judge.calls) == 2 + 5 + 5
    assert result.value("noise_sensitivity_relevant") == pytest.approx(1 / 3)
    assert result.value("noise_sensitivity_irrelevant") == 0.0
    assert result.value("context_precision") == pytest.approx(3 / 4)


@pytest.mark.parametrize("relpath", ["ragchecker/checking_inputs.json",
                                     "ragchecker/checking_outputs.json",
                                     "ragas/noise_sensitivity_docs_examples.json"])
def test_fixture_copies_match_their_source(relpath: str,
                                           optional_data: Callable[[str], Path]) -> None:
    """tests/data holds byte-for-byte copies; where the original is at hand, they agree."""
    assert (DATA / relpath).read_bytes() == optional_data(relpath).read_bytes()
