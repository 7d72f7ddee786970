"""evaluate()/aevaluate(): one judged pass per sample, input order, bounded concurrency,
defined behaviour for edge cases, the Report API, and the seed's batch example."""

from __future__ import annotations

import asyncio
import json
import re
import runpy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batch_helpers import ROOT, SlowJudge, require_extra, row, rows
from noisegauge import (
    AnswerF1,
    ContextPrecision,
    ContextRecall,
    Faithfulness,
    FakeJudge,
    Hallucination,
    InvalidSample,
    NoiseSensitivity,
    RankedContextPrecision,
    Sample,
    SyncInAsyncError,
    aevaluate,
    evaluate,
    get_judge,
)
from noisegauge.engine import METRIC_NAMES, ranked_precision
from noisegauge.engine.summary import mean_ci


def _run(data: Any, metrics: Any = None, **kw: Any) -> Any:
    kw.setdefault("cache", False)
    kw.setdefault("progress", False)
    return evaluate(data, metrics, **kw)


def test_all_metrics_cost_the_calls_of_one() -> None:
    data = rows(5)
    one = FakeJudge()
    _run(data, [NoiseSensitivity(judge=one)])
    every = FakeJudge()
    report = _run(data, None, judge=every)
    assert report.metrics == METRIC_NAMES
    assert len(every.calls) == len(one.calls) > 0
    # Metric objects built from the same spec string are one judge (same identity).
    objs = [NoiseSensitivity(judge="fake"), Faithfulness(judge="fake"), AnswerF1(judge="fake")]
    assert len({id(m.judge) for m in objs}) == 3
    report = _run(data, objs)
    assert report.usage.calls == len(one.calls)


class _OtherJudge(FakeJudge):
    def identity(self) -> dict[str, Any]:
        return {"judge": "other"}


def test_metrics_with_different_judges_are_grouped_by_judge() -> None:
    a, b = FakeJudge(), _OtherJudge(default="contradicted")
    data = rows(3)
    report = _run(data, [NoiseSensitivity(judge=a), Faithfulness(judge=a), Hallucination(judge=b)])
    single = FakeJudge()
    _run(data, [Faithfulness(judge=single)])
    assert len(a.calls) == len(b.calls) == len(single.calls)
    assert report.usage.calls == 2 * len(single.calls)
    assert report.judges == [a.identity(), b.identity()]
    with pytest.raises(ValueError, match="different judges"):
        _run(data, [Faithfulness(judge=a), Faithfulness(judge=b)])


def test_input_order_with_out_of_order_completion() -> None:
    judge = SlowJudge(delay=0.0)
    delays = [0.03, 0.0, 0.02, 0.0, 0.01, 0.0, 0.02, 0.0]

    class Jittery(SlowJudge):
        async def extract(self, text: str, question: str | None = None) -> list[str]:
            await asyncio.sleep(delays[int(re.findall(r"\d+", question or "0")[0])])
            return await super().extract(text, question)

    judge = Jittery()
    report = _run(rows(8), ["faithfulness"], judge=judge, concurrency=4)
    assert [r.id for r in report.results] == [f"r{i}" for i in range(8)]
    assert [r.index for r in report.results] == list(range(8))
    assert [r.id for r in report.results] == [f"r{i}" for i in range(8)]


def test_concurrency_is_bounded() -> None:
    judge = SlowJudge(delay=0.005)
    _run(rows(40), ["faithfulness"], judge=judge, concurrency=3)
    # Two extractions per sample run together, so at most 2 x 3 at once.
    assert 2 <= judge.max_in_flight <= 6


def test_edge_cases_have_defined_behaviour() -> None:
    judge = FakeJudge(claims=lambda text, q: [] if "don't know" in text else
                      [s.strip() for s in text.split(".") if s.strip()])
    data = [
        row(0, response=""),                                   # empty response
        row(1, contexts=[]),                                   # nothing retrieved
        row(2, response="I don't know."),                      # refusal
        {"id": "r3", "user_input": "q", "response": "x", "retrieved_contexts": []},  # no reference
        {**row(4), "retrieved_contexts": "Alpha is one."},     # contexts of the wrong type
        row(5),
    ]
    report = _run(data, None, judge=judge)
    st = [(r.status, r.reason) for r in report.results]
    assert st[0] == ("undefined", "no response claims (empty or refusal answer)")
    assert st[2] == st[0]
    assert st[1] == ("ok", None)
    assert report.results[1].value("context_precision") is None
    assert report.results[1].metrics["context_precision"].reason == "no retrieved chunks"
    assert report.results[1].value("precision") == 0.5  # "Beta is two." is not in the reference
    assert st[3][0] == "error" and "row 3, field 'reference': is missing" in st[3][1]
    assert st[4][0] == "error" and "field 'retrieved_contexts'" in st[4][1]
    assert st[5] == ("ok", None)
    summary = report.summary()["precision"]
    assert (summary.n, summary.undefined, summary.errors) == (2, 2, 2)
    assert all(report.results[3].value(m) is None for m in METRIC_NAMES)


def test_strict_stops_at_the_first_bad_row() -> None:
    data = [row(0), row(1, reference=""), row(2)]
    with pytest.raises(InvalidSample) as info:
        _run(data, ["faithfulness"], judge=FakeJudge(), strict=True)
    assert (info.value.row, info.value.field) == (1, "reference")


def test_duplicate_ids_are_error_rows() -> None:
    report = _run([row(0), row(1), {**row(2), "id": "r0"}], ["faithfulness"], judge=FakeJudge())
    assert [r.status for r in report.results] == ["ok", "ok", "error"]
    assert "duplicate id 'r0' (first used by row 0)" in str(report.results[2].reason)


def test_judge_failures_are_error_rows_and_the_run_goes_on() -> None:
    judge = FakeJudge(claims={"Alpha is one.": ["Alpha is one"]}, strict=True)
    data = [row(0, response="Alpha is one."), row(1, response="Unscripted.")]
    report = _run(data, ["faithfulness"], judge=judge)
    assert report.results[0].status == "ok"
    assert report.results[1].status == "error"
    assert "JudgeOutputError" in str(report.results[1].reason)


def test_dataset_forms_agree(tmp_path: Path) -> None:
    require_extra("tables", "hf")
    pd = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    data = rows(4)
    expected = [r.to_row() for r in _run(data, judge=FakeJudge()).results]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    forms = [pd.DataFrame(data), datasets.Dataset.from_list(data), path, str(path),
             [Sample.from_record(r) for r in data],
             {k: [r[k] for r in data] for k in data[0]}]
    for form in forms:
        got = [r.to_row() for r in _run(form, judge=FakeJudge()).results]
        assert got == expected, type(form)


def test_report_summary_exports(tmp_path: Path) -> None:
    require_extra("tables")
    pd = pytest.importorskip("pandas")
    data = rows(6) + [row(6, response="")]
    report = _run(data, ["noise_sensitivity", "faithfulness", "context_precision_ranked"],
                  judge=FakeJudge())
    df = report.to_pandas()
    assert list(df.columns[:3]) == ["id", "status", "reason"]
    assert list(df.columns[-4:]) == ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                                     "faithfulness", "context_precision_ranked"]
    s = report.summary()["noise_sensitivity_irrelevant"]
    values = [r.value("noise_sensitivity_irrelevant") for r in report.results]
    assert (s.mean, s.ci) == mean_ci([v for v in values if v is not None])
    assert (s.n, s.undefined, s.errors) == (6, 1, 0)
    report.to_jsonl(tmp_path / "r.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [x["index"] for x in lines] == list(range(7))
    assert lines[0]["metrics"]["context_precision_ranked"] == report.results[0].value(
        "context_precision_ranked")
    assert set(lines[0]) >= {"id", "status", "reason", "metrics", "response_claims",
                             "reference_claims", "chunks", "usage"}
    report.to_csv(tmp_path / "r.csv")
    csv_df = pd.read_csv(tmp_path / "r.csv")
    assert csv_df["faithfulness"].round(6).fillna(-1).tolist() == df["faithfulness"].round(
        6).fillna(-1).tolist()
    report.to_parquet(tmp_path / "r.parquet")
    pq_df = pd.read_parquet(tmp_path / "r.parquet")
    assert pq_df["status"].tolist() == df["status"].tolist()
    assert pq_df["noise_sensitivity_irrelevant"].isna().tolist() == [False] * 6 + [True]


def test_ranked_context_precision() -> None:
    assert ranked_precision([False, True, True]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert ranked_precision([True, True]) == 1.0
    assert ranked_precision([False, False]) == 0.0
    # Chunks [noise, relevant] vs [relevant, noise]: same unranked precision, different rank.
    judge = FakeJudge()
    late = row(0, contexts=["Gamma is three.", "Alpha is one."])
    early = row(1, contexts=["Alpha is one.", "Gamma is three."])
    report = _run([late, early, row(2, contexts=[])], [ContextPrecision(judge=judge),
                                                       RankedContextPrecision(judge=judge)])
    assert [r.value("context_precision") for r in report.results] == [0.5, 0.5, None]
    assert [r.value("context_precision_ranked") for r in report.results] == [0.5, 1.0, None]


def test_sync_inside_a_running_loop_raises_and_async_works() -> None:
    async def main() -> Any:
        with pytest.raises(SyncInAsyncError, match="aevaluate"):
            evaluate(rows(1), ["faithfulness"], judge=FakeJudge(), cache=False, progress=False)
        return await aevaluate(rows(2), [ContextRecall(judge=FakeJudge())], cache=False,
                               progress=False)
    report = asyncio.run(main())
    assert [r.value("claim_recall") for r in report.results] == [1.0, 1.0]


def test_seed_batch_example() -> None:
    """The seed article's batch example, rewritten for noisegauge (examples/batch_evaluation.py)."""
    require_extra("tables")  # the example ends in a DataFrame
    example = runpy.run_path(str(ROOT / "examples" / "batch_evaluation.py"))
    df = example["main"](FakeJudge())
    assert list(df.columns[-4:]) == ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                                     "faithfulness", "context_precision"]
    pool = example["DISTRACTOR_POOL"]
    for _, r in df.iterrows():
        # The naive chain copies chunks: a copied distractor sentence is wrong (not in the
        # reference) and supported only by an irrelevant chunk.
        sentences = re.findall(r"[^.]+\.", r["response"])
        leaked = sum(s.strip() in pool for s in sentences)
        assert r["noise_sensitivity_irrelevant"] == pytest.approx(leaked / len(sentences))
        assert r["noise_sensitivity_relevant"] == 0.0
        assert r["faithfulness"] == 1.0
        assert r["context_precision"] == pytest.approx(1 / 3)
    assert df["noise_sensitivity_irrelevant"].mean() > 0


@pytest.mark.parametrize("judge", ["lexical", "openai"])
def test_seed_batch_example_with_real_judges(judge: str, request: pytest.FixtureRequest) -> None:
    """The same example with the offline default judge and with an LLM judge over real HTTP."""
    require_extra("tables")
    example = runpy.run_path(str(ROOT / "examples" / "batch_evaluation.py"))
    if judge == "openai":
        require_extra("openai")
        server = request.getfixturevalue("fake_openai_server")
        spec: Any = get_judge("openai:test-model", base_url=server.url, api_key="sk-test")
    else:
        spec = judge
    df = example["main"](spec)
    assert {"noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "faithfulness",
            "context_precision"} <= set(df.columns)
    assert len(df) == len(example["TEST_CASES"])
    # The naive chain copies distractors into its answers, and both judges see the leak.
    assert df["noise_sensitivity_irrelevant"].mean() > 0
    assert df["faithfulness"].between(0, 1).all()


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) |
                     st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) |
                     st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
_fields = ["user_input", "question", "query", "response", "answer", "reference", "ground_truth",
           "gt_answer", "retrieved_contexts", "contexts", "retrieved_context", "id", "metadata",
           "response_claims", "answer2response"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_json, st.dictionaries(st.sampled_from(_fields), _json, max_size=6),
                          st.builds(row, st.integers(0, 3))), max_size=6))
def test_any_records_give_one_result_per_row_and_never_stop_the_run(records: list[Any]) -> None:
    report = _run(records, ["faithfulness"], judge=FakeJudge())
    assert len(report.results) == len(records)
    assert [r.index for r in report.results] == list(range(len(records)))
    for r in report.results:
        assert r.status in ("ok", "undefined", "error")
        if r.status == "error":
            assert r.reason and r.reason.startswith(f"row {r.index}")


def test_judges_built_from_a_spec_are_closed_and_given_ones_are_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from batch_helpers import ClosingJudge
    from noisegauge.judges.registry import JUDGE_FACTORIES

    monkeypatch.setitem(JUDGE_FACTORIES, "closing", "batch_helpers:make_closing_judge")
    ClosingJudge.closed.clear()
    _run(rows(2), ["faithfulness"], judge="closing")
    assert len(ClosingJudge.closed) == 1
    mine = ClosingJudge()
    _run(rows(2), ["faithfulness"], judge=mine)
    _run(rows(2), [Faithfulness(judge=mine)])
    assert len(ClosingJudge.closed) == 1  # the caller owns it


def test_to_pandas_shows_undefined_as_missing_not_nan() -> None:
    require_extra("tables")
    report = evaluate([row(0), row(1, response="")], metrics=["noise_sensitivity_relevant"],
                      judge=FakeJudge(), cache=False, progress=False)
    df = report.to_pandas()
    assert str(df["noise_sensitivity_relevant"].dtype) == "Float64"
    assert df["noise_sensitivity_relevant"].isna().tolist() == [False, True]
    assert df["reason"].tolist()[0] is None and df["status"].tolist() == ["ok", "undefined"]
