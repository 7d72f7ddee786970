"""Hostile inputs are contained at the boundary: deep nesting and huge texts are error rows
(never a RecursionError or minutes of judging), judge objects are checked once, ids are kept
as given or refused, alias columns that disagree are refused, and CSV output cannot carry a
spreadsheet formula."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest

from batch_helpers import row, rows
from noisegauge import FakeJudge, InvalidInput, InvalidSample, NoiseSensitivity, Sample, evaluate
from noisegauge.io import open_source


def _run(data: object, **kw: object) -> object:
    return evaluate(data, None, judge=FakeJudge(), cache=False, progress=False, **kw)  # type: ignore[arg-type]


def _deep(depth: int) -> dict[str, object]:
    value: object = "leaf"
    for _ in range(depth):
        value = {"x": value}
    return {**row(0), "metadata": value}


def test_deep_nesting_is_an_error_row_not_a_crash(tmp_path: Path) -> None:
    deep_line = '{"metadata": ' + '{"x": ' * 1000 + '1' + '}' * 1000 + ', "id": "deep"}'
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(row(0)) + "\n" + deep_line + "\n" + json.dumps(row(2)) + "\n")
    report = _run(path)
    assert [r.status for r in report.results] == ["ok", "error", "ok"]  # type: ignore[attr-defined]
    assert "nested more than 64 levels" in report.results[1].reason  # type: ignore[attr-defined]
    # In memory too (such an object would overflow any recursive walk).
    report = _run([row(0), _deep(5000)])
    assert [r.status for r in report.results] == ["ok", "error"]  # type: ignore[attr-defined]
    assert report.results[1].error_kind == "input"  # type: ignore[attr-defined]
    # A JSON document that deep cannot be parsed at all: a clear refusal.
    (tmp_path / "deep.json").write_text("[" + deep_line + "]")
    with pytest.raises(InvalidInput, match="nested too deeply"):
        list(open_source(tmp_path / "deep.json"))


def test_huge_texts_are_error_rows_fast() -> None:
    huge = "All work and no play. " * 250_000  # 5.5 MB
    start = time.monotonic()
    report = _run([row(0), {**row(1), "response": huge}, {**row(2), "reference": huge}])
    assert time.monotonic() - start < 10
    statuses = [(r.status, r.reason) for r in report.results]  # type: ignore[attr-defined]
    assert statuses[0] == ("ok", None)
    assert "field 'response': has 5,500,000 characters" in statuses[1][1]
    assert "field 'reference'" in statuses[2][1] and "--max-chars" in statuses[2][1]
    # The cap is configurable, and applies to Samples given directly as well.
    small = [Sample(user_input="q", response="Alpha is one.", reference="Alpha is one.",
                    retrieved_contexts=("Alpha is one.",))]
    assert _run(small, max_chars=5).results[0].status == "error"  # type: ignore[attr-defined]
    assert _run(small, max_chars=50).results[0].status == "ok"  # type: ignore[attr-defined]


def test_a_non_judge_is_refused_once_up_front() -> None:
    for bad in (42, b"lexical", object()):
        with pytest.raises(InvalidInput, match="not a judge"):
            evaluate(rows(3), None, judge=bad, cache=False, progress=False)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="not a judge"):
        NoiseSensitivity(judge=42)  # type: ignore[arg-type]

    class SyncJudge:
        def extract(self, text: str, question: str | None = None) -> list[str]:
            return [text]

        async def check(self, premise: str, claims: list[str]) -> list[str]:
            return []

    with pytest.raises(InvalidInput, match="SyncJudge.extract must be an `async def`"):
        evaluate(rows(1), None, judge=SyncJudge(), cache=False, progress=False)  # type: ignore[arg-type]


def test_ids_are_kept_as_given_or_refused() -> None:
    data = [{**row(0), "id": 7}, {**row(1), "id": ["a", "b"]}, {**row(2), "id": True},
            {**row(3), "id": "keep me"}]
    report = _run(data)
    results = report.results  # type: ignore[attr-defined]
    assert results[0].id == "7" and results[3].id == "keep me"
    assert results[1].status == "error" and results[1].id is None
    assert "row 1, field 'id': has type list" in results[1].reason
    assert "row 2, field 'id': has type bool" in results[2].reason
    assert "['a', 'b']" not in json.dumps([r.to_row() for r in results])


def test_conflicting_alias_columns_are_refused() -> None:
    same = {**row(0), "answer": row(0)["response"]}
    conflict = {**row(1), "answer": "Something else entirely."}
    also = {**row(2), "ground_truth": "Another reference.", "question": "question 2?"}
    report = _run([same, conflict, also])
    results = report.results  # type: ignore[attr-defined]
    assert results[0].status == "ok"
    assert results[1].status == "error"
    assert ("row 1, field 'response': 'response' and 'answer' are both given, with different "
            "values") in results[1].reason
    assert "'reference' and 'ground_truth'" in results[2].reason
    with pytest.raises(InvalidSample, match="'user_input' and 'question'"):
        Sample.from_record({**row(0), "question": "another?"}, row=0)


def test_csv_output_cannot_run_formulas(tmp_path: Path) -> None:
    evil = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]
    data = [{**row(i), "id": e} for i, e in enumerate(evil)] + [{**row(9), "id": "-plain"}]
    for d in data[:-1]:
        del d["reference"]  # error rows: the reason repeats nothing, the id is the payload
    out = tmp_path / "o.csv"
    _run(data, out=out)
    with out.open(newline="") as fh:
        cells = [r["id"] for r in csv.DictReader(fh)]
    assert cells == ["'" + e for e in evil] + ["'-plain"]
    text = out.read_text()
    assert "\n=cmd" not in text and ",=cmd" not in text
