"""Hostile inputs are contained at the boundary: deep nesting and huge texts are error rows
(never a RecursionError or minutes of judging), judge objects are checked once, ids are kept
as given or refused, alias columns that disagree are refused, and CSV output cannot carry a
spreadsheet formula. Each refusal says what is wrong in the user's terms: a null field is null,
not missing; a lone surrogate escape is not a bad byte; ids compare as text (#30)."""

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


def _reasons(report: object) -> list[str | None]:
    return [r.reason for r in report.results]  # type: ignore[attr-defined]


def test_a_null_field_is_called_null_with_what_to_put(tmp_path: Path) -> None:
    """#30: ``"response": null`` was "is missing (accepted: response, answer)"."""
    path = tmp_path / "in.jsonl"
    lines = [{**row(0), "response": None}, {**row(1), "retrieved_contexts": None},
             {k: v for k, v in row(2).items() if k != "reference"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    reasons = _reasons(_run(path))
    assert reasons[0] == ("row 0, field 'response': is null (expected the answer as a string "
                          '("" when the pipeline gave none))')
    assert "field 'retrieved_contexts': is null" in str(reasons[1])
    assert "[] when nothing was retrieved" in str(reasons[1])
    assert "field 'reference': is missing" in str(reasons[2])  # absent is still missing


def test_a_lone_surrogate_escape_is_not_called_bad_bytes(tmp_path: Path) -> None:
    """#30: the valid JSON ``"\\ud800"`` was reported as bytes that are not UTF-8."""
    good = json.dumps(row(0))
    lone = json.dumps(row(1)).replace("Beta is two.\", \"ref", "Beta \\ud800 is two.\", \"ref")
    assert "\\ud800" in lone
    path = tmp_path / "in.jsonl"
    path.write_bytes((good + "\n" + lone + "\n").encode() + json.dumps(row(2)).encode()
                     .replace(b"question 2?", b"question \xff?") + b"\n")
    reasons = _reasons(_run(path))
    assert reasons[0] is None
    assert "row 1, field 'response': line 2: holds a lone surrogate (\\ud800 at character" \
        in str(reasons[1]) and "not encodable text" in str(reasons[1])
    assert "UTF-8" not in str(reasons[1])
    assert "line 3: contains bytes that are not valid UTF-8" in str(reasons[2])  # real bad bytes
    (tmp_path / "in.json").write_text("[" + lone + "]")  # a JSON document, and in memory
    assert "lone surrogate" in str(_reasons(_run(tmp_path / "in.json"))[0])
    assert "lone surrogate" in str(_reasons(_run([json.loads(lone)]))[0])


def test_ids_compare_as_text_and_a_duplicate_says_how_each_row_wrote_it() -> None:
    """#30: ids ``1`` and ``"1"`` are one id (ids are kept as text); the duplicate names both
    rows and both spellings, not a bare "duplicate id '1'" that reads as the same string."""
    data = [{**row(0), "id": 1}, {**row(1), "id": "1"}, {**row(2), "id": 2.0},
            {**row(3), "id": 2}, {**row(4), "id": "x"}, {**row(5), "id": "x"}]
    report = _run(data)
    results = report.results  # type: ignore[attr-defined]
    assert [r.status for r in results] == ["ok", "error", "ok", "error", "ok", "error"]
    assert results[0].id == "1" and results[2].id == "2"
    assert results[1].reason == (
        "row 1, field 'id': duplicate id '1' (first used by row 0, as the number 1; row 1 has "
        'the string "1": ids are compared as text, 1, 1.0 and "1" are one id) '
        "(expected a unique id per row)")
    assert "as the number 2.0; row 3 has the number 2" in results[3].reason
    assert "duplicate id 'x' (first used by row 4) (expected" in results[5].reason


def test_a_nan_or_empty_id_is_refused_with_the_row(tmp_path: Path) -> None:
    """#30: a NaN id (JSON ``NaN``, a pandas gap) or an empty CSV id cell was accepted."""
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({**row(0), "id": "a"}) + "\n"
                    + json.dumps({**row(1), "id": float("nan")}) + "\n")
    assert "NaN" in path.read_text()
    reasons = _reasons(_run(path))
    assert reasons[0] is None
    assert str(reasons[1]).startswith("row 1, field 'id': is NaN, not an id (expected a "
                                      "string or a number, unique per row; leave the field out")
    csv_path = tmp_path / "in.csv"
    with csv_path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "user_input", "response", "reference", "retrieved_contexts"])
        for i, ident in enumerate(["a", "", "c"]):
            r = row(i)
            writer.writerow([ident, r["user_input"], r["response"], r["reference"],
                             json.dumps(r["retrieved_contexts"])])
    reasons = _reasons(_run(csv_path))
    assert reasons[0] is None and reasons[2] is None
    assert str(reasons[1]).startswith("row 1, field 'id': is empty (expected an id on every row")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([{**row(0), "id": 1}, {**row(1), "id": None}])  # ids 1.0 and NaN
    results = _run(frame).results  # type: ignore[attr-defined]
    assert results[0].id == "1" and "field 'id': is NaN" in str(results[1].reason)


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
