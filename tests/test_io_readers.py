"""Readers: every accepted input form, and bad rows that become error rows naming row and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batch_helpers import RAGCHECKER_OUTPUTS, require_extra, row
from noisegauge import InvalidInput, Sample
from noisegauge.io import detect_format, open_source
from noisegauge.samples import MAX_CHUNK_CHARS


def _read(source: object, **kw: object) -> list:
    return list(open_source(source, **kw))  # type: ignore[arg-type]


def _write_jsonl(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_jsonl_one_bad_line_is_one_error_row(tmp_path: Path) -> None:
    good = json.dumps(row(0)).encode()
    bad_utf8 = json.dumps(row(2)).encode().replace(b"question 2?", b"question \xff?")
    path = _write_jsonl(tmp_path / "in.jsonl", [good, b"{not json", b"", bad_utf8, b"[1, 2]", good])
    src = open_source(path)
    assert src.total == 5  # the blank line is not a row
    got = list(src)
    assert [r.index for r in got] == [0, 1, 2, 3, 4]
    assert got[0].record is not None and got[0].error is None
    assert got[1].error is not None and "line 2: invalid JSON" in str(got[1].error)
    assert got[1].error.row == 1
    assert got[2].error is not None and got[2].error.field == "user_input"
    assert "not valid UTF-8" in str(got[2].error) and "line 4" in str(got[2].error)
    assert got[3].error is not None and "must be an object" in str(got[3].error)
    assert got[4].record == got[0].record
    # Same content, same fingerprint; different content, different fingerprint.
    assert got[4].fingerprint == got[0].fingerprint != got[2].fingerprint


def test_jsonl_with_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(row(0)).encode() + b"\r\n" +
                     json.dumps(row(1)).encode() + b"\r\n")
    got = _read(path)
    assert [r.record["id"] for r in got] == ["r0", "r1"]


def test_json_list_ragchecker_and_columns(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps([row(0), row(1)]))
    assert [r.record["id"] for r in _read(tmp_path / "list.json")] == ["r0", "r1"]
    src = open_source(RAGCHECKER_OUTPUTS)
    recs = list(src)
    assert src.total == 2
    sample = Sample.from_record(recs[0].record, row=0)
    assert sample.id == "0" and sample.precomputed is not None
    columns = {"question": ["q1", "q2"], "answer": ["a", "b"], "ground_truth": ["r", "s"],
               "contexts": [["c1"], []]}
    (tmp_path / "cols.json").write_text(json.dumps(columns))
    got = _read(tmp_path / "cols.json")
    assert [Sample.from_record(r.record).retrieved_contexts for r in got] == [("c1",), ()]
    assert _read(columns)[1].record["answer"] == "b"  # the same dict in memory


def test_jsonl_misnamed_json_and_unreadable_json(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(row(0)) + "\n" + json.dumps(row(1)) + "\n")
    assert len(_read(path)) == 2
    (tmp_path / "bad.json").write_text('[{"a": 1},')
    with pytest.raises(InvalidInput, match="not valid JSON"):
        open_source(tmp_path / "bad.json")
    (tmp_path / "num.json").write_text("42")
    with pytest.raises(InvalidInput, match="expected a JSON list"):
        open_source(tmp_path / "num.json")
    with pytest.raises(InvalidInput, match="not found"):
        open_source(tmp_path / "missing.jsonl")


def test_csv_contexts_as_json_and_bad_cells(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    big = "x" * (MAX_CHUNK_CHARS + 10)  # also beyond csv's default field limit
    lines = [
        "id,question,answer,ground_truth,contexts",
        'a,q1,"Alpha is one.",Alpha is one.,"[""Alpha is one."", ""Beta.""]"',
        "b,q2,Beta.,Beta.,not a list",
        "c,q3,Beta.,Beta.",
        f'd,q4,Beta.,Beta.,"[""{big}""]"',
        "e,q5,,Beta.,[]",
    ]
    path.write_bytes("\n".join(lines).encode() + b"\nf,q\xff,x,y,[]\n")
    got = _read(path)
    assert len(got) == 6
    assert Sample.from_record(got[0].record).retrieved_contexts == ("Alpha is one.", "Beta.")
    with pytest.raises(Exception, match="field 'contexts'.*has type str"):
        Sample.from_record(got[1].record, row=1)
    assert got[2].error is not None and "4 cells for 5 columns" in str(got[2].error)
    with pytest.raises(Exception, match="retrieved_contexts.*characters"):
        Sample.from_record(got[3].record, row=3)
    empty = Sample.from_record(got[4].record)
    assert empty.response == "" and empty.retrieved_contexts == ()
    assert got[5].error is not None and got[5].error.field == "question"


def test_parquet_dataframe_and_hf_dataset(tmp_path: Path) -> None:
    require_extra("tables", "hf")
    pd = pytest.importorskip("pandas")
    data = [row(0), row(1, contexts=[])]
    df = pd.DataFrame(data)
    df.to_parquet(tmp_path / "in.parquet")
    from_file = _read(tmp_path / "in.parquet")
    assert [Sample.from_record(r.record).retrieved_contexts for r in from_file] == [
        ("Alpha is one.", "Beta is two."), ()]
    # A DataFrame read from Parquet holds numpy arrays in list columns.
    back = pd.read_parquet(tmp_path / "in.parquet")
    assert type(back.loc[0, "retrieved_contexts"]).__module__.startswith("numpy")
    from_df = _read(back)
    assert [r.record for r in from_df] == [r.record for r in from_file]
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(data)
    src = open_source(ds)
    assert src.total == 2
    assert [r.record["retrieved_contexts"] for r in src] == [data[0]["retrieved_contexts"], []]


def test_samples_pass_through_with_precomputed() -> None:
    record = json.loads(RAGCHECKER_OUTPUTS.read_text())["results"][1]
    sample = Sample.from_record(record)
    got = _read([sample, row(0)])
    assert got[0].sample is sample and got[1].record is not None


def test_format_detection(tmp_path: Path) -> None:
    (tmp_path / "data").write_text('[{"a": 1}]')
    assert detect_format(tmp_path / "data") == "json"
    (tmp_path / "data2").write_text('{"a": 1}\n')
    assert detect_format(tmp_path / "data2") == "jsonl"
    (tmp_path / "data3").write_text("a,b\n1,2\n")
    assert detect_format(tmp_path / "data3") == "csv"
    assert detect_format(tmp_path / "data3", "jsonl") == "jsonl"
    with pytest.raises(InvalidInput, match="unknown input format"):
        detect_format(tmp_path / "data3", "xml")


def test_unsupported_objects() -> None:
    with pytest.raises(InvalidInput, match="cannot evaluate"):
        open_source(42)
    with pytest.raises(InvalidInput, match="same length"):
        open_source({"question": ["a", "b"], "answer": ["x"]})


@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "pretty"])
def test_json_array_saved_as_jsonl_is_named_with_the_fix(tmp_path: Path,
                                                          indent: int | None) -> None:
    from click.testing import CliRunner

    from noisegauge.cli.main import cli

    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps([row(i) for i in range(99)], indent=indent))
    with pytest.raises(InvalidInput, match=r"one JSON array .*--format json"):
        open_source(path)
    res = CliRunner().invoke(cli, ["score", str(path), "--judge", "fake", "-q"])
    assert res.exit_code == 2 and "--format json" in res.output, res.output
    assert len(_read(path, format="json")) == 99  # the fix it names works
