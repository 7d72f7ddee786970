"""noisegauge as a DeepEval metric, with the real ``deepeval`` package: test cases (input,
actual_output, expected_output, retrieval_context) measured by the offline lexical judge,
directly, through ``a_measure`` and through DeepEval's own ``evaluate``/``assert_test``;
the score equals noisegauge's own, the reason names the leaked-from chunk. DeepEval's
telemetry is off and no hosted LLM is used. Needs the deepeval extra (CI runs it in a venv
of its own: deepeval installs pytest plugins)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

# before deepeval is imported: no telemetry, no update check, nothing phoning home
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")

from batch_helpers import require_extra

require_extra("deepeval")

from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402

from noisegauge import Sample, score_sample  # noqa: E402
from noisegauge.integrations.deepeval_metric import NoiseGaugeMetric  # noqa: E402

CHUNKS = ["Refunds are accepted within 30 days of purchase.",
          "Refunds for hardware are accepted within 14 days.",
          "Shipping to Canada takes five business days."]
CASE = LLMTestCase(input="How long do refunds take?",
                   actual_output="Refunds are accepted within 14 days.",
                   expected_output="Refunds are accepted within 30 days of purchase.",
                   retrieval_context=CHUNKS)
GOOD = LLMTestCase(input="How long do refunds take?",
                   actual_output="Refunds are accepted within 30 days of purchase.",
                   expected_output="Refunds are accepted within 30 days of purchase.",
                   retrieval_context=CHUNKS)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # deepeval writes its .deepeval folder in the working dir


def _direct(case: LLMTestCase) -> Any:
    return score_sample(Sample(user_input=case.input, response=case.actual_output,
                               reference=case.expected_output,
                               retrieved_contexts=tuple(case.retrieval_context)), "lexical")


def test_measure_scores_as_noisegauge_and_names_the_chunk() -> None:
    direct = _direct(CASE)
    for name in ("noise_sensitivity_irrelevant", "noise_sensitivity_relevant",
                 "hallucination", "faithfulness"):
        metric = NoiseGaugeMetric(name, judge="lexical", threshold=0.5)
        assert metric.measure(CASE) == pytest.approx(direct.value(name))
        assert metric.score == pytest.approx(direct.value(name))
    leaked = [n for n in ("noise_sensitivity_irrelevant", "noise_sensitivity_relevant")
              if direct.value(n) == 1.0]
    assert len(leaked) == 1  # the wrong 14 days came from chunk 1, in one of the two modes
    metric = NoiseGaugeMetric(leaked[0], threshold=0.2)
    metric.measure(CASE)
    assert metric.success is False and metric.is_successful() is False
    assert "'Refunds are accepted within 14 days.' (from chunk 1)" in metric.reason
    assert "needs at most 0.2" in metric.reason
    good = NoiseGaugeMetric(leaked[0], threshold=0.2)
    assert good.measure(GOOD) == 0.0 and good.is_successful()
    faithful = NoiseGaugeMetric("faithfulness", threshold=0.9)  # higher is better
    assert faithful.measure(GOOD) == 1.0 and faithful.is_successful()


def test_a_measure_and_no_reference() -> None:
    metric = NoiseGaugeMetric("noise_sensitivity_relevant")
    assert asyncio.run(metric.a_measure(CASE)) == pytest.approx(
        _direct(CASE).value("noise_sensitivity_relevant"))
    free = LLMTestCase(input=CASE.input, actual_output=CASE.actual_output,
                       retrieval_context=CHUNKS)
    undefined = NoiseGaugeMetric("noise_sensitivity_relevant")
    assert undefined.measure(free) is None
    assert (undefined.score, undefined.success, undefined.error) == (None, False, "no reference")
    assert NoiseGaugeMetric("faithfulness").measure(free) == 1.0  # needs no reference


def test_deepevals_own_evaluate_and_assert_test() -> None:
    name = next(n for n in ("noise_sensitivity_irrelevant", "noise_sensitivity_relevant")
                if _direct(CASE).value(n) == 1.0)
    result = evaluate(test_cases=[CASE, GOOD],
                      metrics=[NoiseGaugeMetric(name, threshold=0.2),
                               NoiseGaugeMetric("faithfulness", threshold=0.5)])
    outcome = {(r.input, r.actual_output): {m.name: m for m in r.metrics_data}
               for r in result.test_results}
    bad = outcome[(CASE.input, CASE.actual_output)][f"noisegauge.{name}"]
    assert (bad.score, bad.success) == (1.0, False) and "(from chunk 1)" in bad.reason
    ok = outcome[(GOOD.input, GOOD.actual_output)][f"noisegauge.{name}"]
    assert (ok.score, ok.success) == (0.0, True)
    assert_test(GOOD, [NoiseGaugeMetric(name, threshold=0.2)])
    with pytest.raises(AssertionError, match=f"noisegauge.{name}"):
        assert_test(CASE, [NoiseGaugeMetric(name, threshold=0.2)])
