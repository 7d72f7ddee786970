"""``noisegauge score``: formats, output in input order, summary, gates and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import RAGCHECKER_OUTPUTS, require_extra, row, rows
from noisegauge.cli.main import cli
from noisegauge.cli.score import score
from noisegauge.engine import METRIC_NAMES


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["score", *args], catch_exceptions=False)


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _out(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_default_judge_is_lexical() -> None:
    judge = next(p for p in score.params if p.name == "judge_spec")
    assert judge.default == "lexical"


def test_scores_a_jsonl_file(tmp_path: Path) -> None:
    data = rows(5)
    data.insert(2, {"id": "bad", "user_input": "q", "response": "r"})  # no reference, no contexts
    src = _jsonl(tmp_path / "in.jsonl", data)
    res = _invoke(str(src), "--judge", "fake", "--out", str(tmp_path / "out.jsonl"), "-q")
    assert res.exit_code == 3, res.output  # an error row and no gate: exit 3, said loudly
    assert "1 of 6 rows could not be scored (1 input)" in res.stderr
    assert "row 2 (input): row 2, field 'reference, retrieved_contexts'" in res.stderr
    out = _out(tmp_path / "out.jsonl")
    assert [r["index"] for r in out] == list(range(6))
    assert [r["id"] for r in out] == [d["id"] for d in data]
    assert out[2]["status"] == "error" and "row 2, field 'reference, retrieved_contexts'" in out[2]["reason"]
    assert out[2]["error_kind"] == "input" and out[0]["error_kind"] is None
    assert set(out[0]["metrics"]) == set(METRIC_NAMES)
    assert out[0]["usage"]["calls"] == 10
    for name in ("noise_sensitivity_relevant", "faithfulness", "95% CI", "undefined", "errors"):
        assert name in res.stdout
    assert "rows 6: ok 5, undefined 0, error 1" in res.stdout
    assert "calls 50" in res.stdout


def test_gates_and_exit_codes(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(3))  # every row: 1 of 2 claims is irrelevant noise
    ok = _invoke(str(src), "--judge", "fake", "--fail-above", "noise_sensitivity_irrelevant=0.6",
                 "--fail-below", "faithfulness=1.0", "-q")
    assert ok.exit_code == 0, ok.output
    failed = _invoke(str(src), "--judge", "fake", "--fail-above",
                     "noise_sensitivity_irrelevant=0.3", "--fail-above", "hallucination=0.5", "-q")
    assert failed.exit_code == 1
    assert "gate failed: --fail-above noise_sensitivity_irrelevant=0.3: mean 0.5000 > 0.3" in \
        failed.stderr
    assert "hallucination" not in failed.stderr
    # RAGChecker's name for the same metric works too.
    assert _invoke(str(src), "--judge", "fake", "--fail-above",
                   "noise_sensitivity_in_irrelevant=0.3", "-q").exit_code == 1
    for bad in (["--fail-above", "faithfulness"], ["--fail-above", "faithfulness=high"],
                ["--fail-above", "nonsense=0.1"], ["--metrics", "faithfulness",
                                                   "--fail-above", "precision=0.1"],
                ["--metrics", "nonsense"], ["--concurrency", "0"], ["--format", "xml"],
                ["--cache", str(tmp_path / "c.db"), "--no-cache"]):
        res = _invoke(str(src), "--judge", "fake", "-q", *bad)
        assert res.exit_code == 2, (bad, res.output)


def test_undefined_gate_fails(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [row(0, response="")])
    res = _invoke(str(src), "--judge", "fake", "--fail-above", "hallucination=0.5", "-q")
    assert res.exit_code == 1 and "cannot pass" in res.stderr


def test_unreadable_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("[{")
    for path in (tmp_path / "missing.jsonl", tmp_path / "bad.json", tmp_path):
        res = _invoke(str(path), "--judge", "fake", "-q")
        assert res.exit_code == 2, res.output
        assert "error:" in res.stderr
    good = _jsonl(tmp_path / "in.jsonl", rows(1))
    res = _invoke(str(good), "--judge", "nosuchjudge", "-q")
    assert res.exit_code == 2 and "unknown judge" in res.stderr


def test_strict_stops_at_the_first_bad_row(tmp_path: Path) -> None:
    data = rows(3)
    data[1]["retrieved_contexts"] = "a string"
    src = _jsonl(tmp_path / "in.jsonl", data)
    res = _invoke(str(src), "--judge", "fake", "--strict", "-q")
    assert res.exit_code == 2
    assert "row 1, field 'retrieved_contexts'" in res.stderr
    assert "Nothing was saved (no --out)" in res.stderr
    assert _invoke(str(src), "--judge", "fake", "-q").exit_code == 3
    assert _invoke(str(src), "--judge", "fake", "-q", "--allow-errors").exit_code == 0


def test_precomputed_ragchecker_input_and_output(tmp_path: Path) -> None:
    out = tmp_path / "rc.json"
    res = _invoke(str(RAGCHECKER_OUTPUTS), "--judge", "precomputed", "--out", str(out), "-q")
    assert res.exit_code == 0, res.output
    assert "calls 0," in res.stdout
    exported = json.loads(out.read_text())
    assert exported["metrics"] == json.loads(RAGCHECKER_OUTPUTS.read_text())["metrics"]
    forced = tmp_path / "rows.out"
    res = _invoke(str(RAGCHECKER_OUTPUTS), "--judge", "precomputed", "--out", str(forced),
                  "--out-format", "ragchecker", "-q")
    assert json.loads(forced.read_text())["metrics"] == exported["metrics"]


def test_metrics_selection_and_table_outputs(tmp_path: Path) -> None:
    require_extra("tables")
    pd = pytest.importorskip("pandas")
    src = _jsonl(tmp_path / "in.jsonl", rows(4))
    res = _invoke(str(src), "--judge", "fake", "--metrics", "noise_sensitivity,context_precision_ranked",
                  "--out", str(tmp_path / "o.csv"), "-q")
    assert res.exit_code == 0, res.output
    assert "context_precision_ranked" in res.stdout and "faithfulness" not in res.stdout
    df = pd.read_csv(tmp_path / "o.csv")
    assert list(df.columns[:4]) == ["index", "id", "status", "reason"]
    assert list(df.columns[4:7]) == ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                                     "context_precision_ranked"]
    assert df["noise_sensitivity_irrelevant"].tolist() == [0.5] * 4
    res = _invoke(str(src), "--judge", "fake", "--out", str(tmp_path / "o.parquet"), "-q")
    assert res.exit_code == 0
    assert pd.read_parquet(tmp_path / "o.parquet")["id"].tolist() == ["r0", "r1", "r2", "r3"]


def test_csv_input_and_forced_format(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text('question,answer,ground_truth,contexts\n'
                   'q,"Alpha is one. Beta is two.",Alpha is one.,"[""Alpha is one."", ""Beta is two.""]"\n')
    res = _invoke(str(src), "--judge", "fake", "--out", str(tmp_path / "o.jsonl"), "-q")
    assert res.exit_code == 0, res.output
    assert _out(tmp_path / "o.jsonl")[0]["metrics"]["noise_sensitivity_irrelevant"] == 0.5
    renamed = tmp_path / "data.txt"
    shutil.copy(src, renamed)
    res = _invoke(str(renamed), "--judge", "fake", "--format", "csv", "-q")
    assert res.exit_code == 0 and "rows 1: ok 1" in res.stdout


def test_progress_and_notes_on_stderr_only(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(2) + [{"id": "x"}])
    loud = _invoke(str(src), "--judge", "fake")
    assert "rows/s" not in loud.stdout and "could not be scored" in loud.stderr
    assert "2/3" not in loud.stdout and "3/3" in loud.stderr
    quiet = _invoke(str(src), "--judge", "fake", "-q", "--allow-errors")
    assert quiet.stdout.startswith("noisegauge summary")
    # -q silences progress and notes, never the error rows.
    assert quiet.stderr.startswith("error: 1 of 3 rows could not be scored")
    assert "3/3" not in quiet.stderr


def test_cache_flags(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(2))
    db = tmp_path / "mine.db"
    first = _invoke(str(src), "--judge", "fake", "--cache", str(db), "-q")
    assert f"cache: {db}" in first.stdout and "calls 20," in first.stdout
    second = _invoke(str(src), "--judge", "fake", "--cache", str(db), "-q")
    assert "calls 0, cached 20" in second.stdout
    third = _invoke(str(src), "--judge", "fake", "--no-cache", "-q")
    assert "calls 20, cached 0" in third.stdout and "cache:" not in third.stdout


def test_endpoint_options_reach_the_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from batch_helpers import KwargsJudge
    from noisegauge.judges.registry import JUDGE_FACTORIES

    monkeypatch.setitem(JUDGE_FACTORIES, "kw", "batch_helpers:make_kwargs_judge")
    src = _jsonl(tmp_path / "in.jsonl", rows(1))
    res = _invoke(str(src), "--judge", "kw:my-model", "--base-url", "http://localhost:9/v1",
                  "--api-key", "sk-test", "-q")
    assert res.exit_code == 0, res.output
    assert KwargsJudge.seen == {"model": "my-model", "base_url": "http://localhost:9/v1",
                                "api_key": "sk-test"}
    res = _invoke(str(src), "--judge", "precomputed", "--base-url", "http://x", "-q",
                  "--allow-errors")
    assert res.exit_code == 0  # precomputed ignores extra settings; nothing to reach
    res = _invoke(str(src), "--judge", "fake", "--base-url", "http://x", "-q")
    assert res.exit_code == 2 and "does not take --base-url" in res.output
    res = _invoke(str(src), "--out", str(src), "--judge", "fake", "-q")
    assert res.exit_code == 2 and "overwrite" in res.output


def test_the_cli_closes_its_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from batch_helpers import ClosingJudge
    from noisegauge.judges.registry import JUDGE_FACTORIES

    monkeypatch.setitem(JUDGE_FACTORIES, "closing", "batch_helpers:make_closing_judge")
    ClosingJudge.closed.clear()
    assert _invoke(str(_jsonl(tmp_path / "in.jsonl", rows(2))), "--judge", "closing",
                   "-q").exit_code == 0
    assert len(ClosingJudge.closed) == 1


@pytest.mark.parametrize(("gate", "said"), [
    ("--fail-above=noise_sensitivity_relevant=-5", "always fail"),
    ("--fail-above=noise_sensitivity_relevant=1e999", "never fail"),
    ("--fail-below=faithfulness=1.5", "always fail"),
    ("--fail-below=faithfulness=-0.1", "never fail"),
])
def test_gate_values_outside_every_metrics_range_are_refused(tmp_path: Path, gate: str,
                                                              said: str) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(2))
    res = _invoke(str(src), "--judge", "fake", "-q", gate)
    assert res.exit_code == 2, res.output
    assert "outside the range of every metric, [0, 1]" in res.output and said in res.output
    golden = _jsonl(tmp_path / "golden.jsonl", [
        {"user_input": "q?", "reference": "Alpha is one.", "relevant_chunks": ["Alpha is one."]}])
    stress = CliRunner().invoke(cli, ["stress", str(golden), "--pipeline", "extractive",
                                      "--out", str(tmp_path / "s"), gate])
    assert stress.exit_code == 2 and "[0, 1]" in stress.output, stress.output
    assert not (tmp_path / "s").exists()  # refused before any work


def test_gate_values_at_the_ends_of_the_range_are_accepted(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(2))
    res = _invoke(str(src), "--judge", "fake", "-q", "--fail-above",
                  "noise_sensitivity_relevant=1", "--fail-below", "faithfulness=0")
    assert res.exit_code == 0, res.output
