"""Exit codes that mean something, failing fast, and messages that tell the truth:
0 all good, 1 a gate (or the error-rate gate) failed, 2 bad invocation/input or an unusable
judge, 3 error rows without a gate, 4 a crash, 130 interrupted."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import ROOT, rows
from noisegauge.cli.main import cli
from noisegauge.judges.registry import JUDGE_FACTORIES
from noisegauge.runner.journal import journal_path
from noisegauge.testing.children import spawned

SLOW_CLI = ROOT / "tests" / "slow_cli.py"


@pytest.fixture(autouse=True)
def chaos_judges(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("unreachable", "bad_output", "buggy", "interrupted", "dead_probe",
                 "timeout_probe"):
        monkeypatch.setitem(JUDGE_FACTORIES, name, f"chaos_helpers:make_{name}")


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["score", *args], catch_exceptions=False)


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _mixed(tmp_path: Path, n: int = 10, bad: int = 3) -> Path:
    """n rows, the first ``bad`` of them unscorable (no reference)."""
    data = rows(n)
    for i in range(bad):
        del data[i]["reference"]
    return _jsonl(tmp_path / "in.jsonl", data)


def test_error_rows_fail_gates_and_are_named(tmp_path: Path) -> None:
    src = _mixed(tmp_path)
    # The gate itself passes on the ok rows, but 3 of 10 rows are errors: exit 1.
    res = _invoke(str(src), "--judge", "fake", "--fail-below", "faithfulness=0.5", "-q")
    assert res.exit_code == 1, res.output
    assert "gate failed: --max-error-rate 0: 3 of 10 rows are errors (30.0%)" in res.stderr
    assert "1 gate(s) failed; 3 error row(s) of 10" in res.stderr
    assert _invoke(str(src), "--judge", "fake", "--fail-below", "faithfulness=0.5",
                   "--max-error-rate", "0.3", "-q").exit_code == 0
    assert _invoke(str(src), "--judge", "fake", "--fail-below", "faithfulness=0.5",
                   "--allow-errors", "-q").exit_code == 0
    both = _invoke(str(src), "--judge", "fake", "--fail-above",
                   "noise_sensitivity_irrelevant=0.3", "-q")
    assert both.exit_code == 1
    assert ("gate failed: --fail-above noise_sensitivity_irrelevant=0.3: mean 0.5000 > 0.3"
            in both.stderr)
    assert "2 gate(s) failed" in both.stderr
    # --max-error-rate alone is a gate too.
    assert _invoke(str(src), "--judge", "fake", "--max-error-rate", "0.1",
                   "-q").exit_code == 1


def test_error_rows_without_a_gate_exit_3_loudly(tmp_path: Path) -> None:
    src = _mixed(tmp_path)
    res = _invoke(str(src), "--judge", "fake", "-q")
    assert res.exit_code == 3
    assert "3 of 10 rows could not be scored (3 input)" in res.stderr
    assert "--allow-errors accepts them" in res.stderr
    assert "errors" in res.stdout and "rows 10: ok 7, undefined 0, error 3" in res.stdout
    assert _invoke(str(src), "--judge", "fake", "-q", "--allow-errors").exit_code == 0
    clean = _jsonl(tmp_path / "clean.jsonl", rows(3))
    ok = _invoke(str(clean), "--judge", "fake", "-q")
    assert ok.exit_code == 0 and ok.stderr == ""


def test_no_interval_for_a_single_value(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(1))
    res = _invoke(str(src), "--judge", "fake", "-q")
    line = next(x for x in res.stdout.splitlines() if x.strip().startswith("faithfulness"))
    assert line.split() == ["faithfulness", "1.000", "-", "1", "0", "0"]


def test_unreadable_inputs_exit_2_with_the_fix(tmp_path: Path) -> None:
    cases = {
        "empty.jsonl": (b"", "no rows to score"),
        "blank.jsonl": (b"\n\n  \n", "no rows to score"),
        "binary.jsonl": (bytes(range(256)) * 8, "contains NUL bytes"),
        "nobom16.jsonl": (json.dumps(rows(1)[0]).encode("utf-16-le"), "without a byte-order mark"),
        "latin1.jsonl": (b"".join(json.dumps(r).replace("Alpha", "\\u00c4lpha").encode()
                                  .replace(b"\\u00c4", b"\xc4") + b"\n" for r in rows(4)),
                         "not UTF-8 text"),
        "garbage.jsonl": (b"hello world\nthis is, not json\nat all\n", "not a JSON Lines file"),
        "noheader.csv": (b'q,"Alpha is one.",Alpha is one.,"[""Alpha is one.""]"\n',
                         "Add a header row"),
        "dupes.csv": (b"question,answer,answer,ground_truth,contexts\n", "more than once"),
        "bad.parquet": (b"PAR1 not really", "not a readable Parquet file"
                        if importlib.util.find_spec("pyarrow") else "pip install '.[tables]'"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        res = _invoke(str(path), "--judge", "fake", "-q")
        assert res.exit_code == 2, (name, res.output)
        assert message in res.stderr, (name, res.stderr)
        assert "Traceback" not in res.stderr


def test_utf16_and_utf32_with_a_bom_are_read(tmp_path: Path) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows(3))
    for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                          ("utf-32-le", b"\xff\xfe\x00\x00")):
        path = tmp_path / f"{encoding}.jsonl"  # what PowerShell's `>` writes (UTF-16 LE)
        path.write_bytes(bom + text.encode(encoding))
        res = _invoke(str(path), "--judge", "fake", "-q")
        assert res.exit_code == 0, (encoding, res.output)
        assert "rows 3: ok 3" in res.stdout
    csv16 = tmp_path / "in16.csv"
    csv16.write_bytes(b"\xff\xfe" + ('question,answer,ground_truth,contexts\r\n'
                                     'q,"Alpha is one. Beta is two.",Alpha is one.,'
                                     '"[""Alpha is one.""]"\r\n').encode("utf-16-le"))
    assert "rows 1: ok 1" in _invoke(str(csv16), "--judge", "fake", "-q").stdout


def test_a_bug_stops_the_run_with_its_traceback(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(3))
    with pytest.raises(TypeError, match="unsupported operand"):
        _invoke(str(src), "--judge", "buggy", "-q", "--out", str(tmp_path / "o.jsonl"))
    # Through the real entry point: a traceback, the bug notice and exit 4 (never 1).
    proc = subprocess.run([sys.executable, str(SLOW_CLI), "score", str(src), "--judge",
                           "buggy", "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4
    assert "Traceback" in proc.stderr and "TypeError: unsupported operand" in proc.stderr
    assert "unexpected error" in proc.stderr


def test_judge_failures_are_error_rows_with_a_kind(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(3))
    out = tmp_path / "o.jsonl"
    res = _invoke(str(src), "--judge", "bad_output:Alpha 1", "-q", "--out", str(out))
    assert res.exit_code == 3
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["error_kind"] for r in got] == [None, "output", None]
    assert got[1]["reason"] == "JudgeOutputError: no verdict for c1 after 3 attempts"
    assert "row 1 (output): JudgeOutputError" in res.stderr


def test_strict_stops_at_the_first_judge_error(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(6))
    out = tmp_path / "o.jsonl"
    res = _invoke(str(src), "--judge", "bad_output:Alpha 2", "--strict", "--concurrency", "1",
                  "--out", str(out))
    assert res.exit_code == 2
    assert "row 2: JudgeOutputError" in res.stderr
    assert f"Finished rows are kept in {journal_path(out)}" in res.stderr
    assert not out.exists() and journal_path(out).exists()


def test_consecutive_transport_failures_stop_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from chaos_helpers import FailingJudge

    src = _jsonl(tmp_path / "in.jsonl", rows(30))
    out = tmp_path / "o.jsonl"
    args = [str(src), "--judge", "unreachable:after=8", "--out", str(out), "--concurrency",
            "1", "--max-consecutive-failures", "5", "-q", "--no-canaries"]
    start = time.monotonic()
    res = _invoke(*args)
    assert res.exit_code == 2
    assert time.monotonic() - start < 10
    assert "stopped after 5 rows in a row got no answer from the judge" in res.stderr
    assert "connection refused" in res.stderr
    assert f"Finished rows are kept in {journal_path(out)}" in res.stderr
    # What was done is kept; with the endpoint back, the same command finishes the run.
    assert journal_path(out).exists() and not out.exists()
    monkeypatch.setattr(FailingJudge, "up", True)
    res = _invoke(*args)
    assert res.exit_code == 0, res.output
    assert "resumed 4 rows" in res.stdout  # 8 extractions = the first 4 rows
    assert len(out.read_text().splitlines()) == 30


def test_one_success_resets_the_failure_count(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(8))
    args = ["--concurrency", "1", "-q", "--max-consecutive-failures", "2"]
    alternating = _invoke(str(src), "--judge", "unreachable:Alpha 1 |Alpha 3 |Alpha 5 ", *args)
    assert alternating.exit_code == 3, alternating.output  # never 2 in a row: the run goes on
    assert "3 of 8 rows could not be scored (3 transport)" in alternating.stderr
    in_a_row = _invoke(str(src), "--judge", "unreachable:Alpha 2 |Alpha 3 ", *args)
    assert in_a_row.exit_code == 2
    assert "stopped after 2 rows in a row" in in_a_row.stderr


def test_a_failed_probe_stops_before_any_row(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(50))
    out = tmp_path / "o.jsonl"
    res = _invoke(str(src), "--judge", "dead_probe", "--out", str(out), "-q")
    assert res.exit_code == 2
    assert "HTTP 401" in res.stderr and "invalid key" in res.stderr
    assert not journal_path(out).exists() and not out.exists()
    res = _invoke(str(src), "--judge", "timeout_probe", "-q")
    assert res.exit_code == 2 and "TimeoutError: no answer in time" in res.stderr


def test_timeout_and_retries_reach_the_judge_or_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from batch_helpers import KwargsJudge

    monkeypatch.setitem(JUDGE_FACTORIES, "kw", "batch_helpers:make_kwargs_judge")
    src = _jsonl(tmp_path / "in.jsonl", rows(1))
    res = _invoke(str(src), "--judge", "kw:m", "--timeout", "2.5", "--max-retries", "1", "-q")
    assert res.exit_code == 0, res.output
    assert KwargsJudge.seen == {"model": "m", "timeout": 2.5, "max_retries": 1}
    res = _invoke(str(src), "--judge", "fake", "--timeout", "3", "-q")
    assert res.exit_code == 2 and "does not take --timeout" in res.output
    res = _invoke(str(src), "--judge", "fake", "--timeout", "0", "-q")
    assert res.exit_code == 2


def test_interrupt_says_what_was_saved(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(8))
    res = _invoke(str(src), "--judge", "interrupted:Alpha 5", "--concurrency", "1")
    assert res.exit_code == 130
    assert "interrupted. Nothing was saved (no --out)" in res.stderr
    assert "saved in" not in res.stderr
    out = tmp_path / "o.jsonl"
    res = _invoke(str(src), "--judge", "interrupted:Alpha 5", "--concurrency", "1", "--out",
                  str(out))
    assert res.exit_code == 130
    assert f"Finished rows are kept in {journal_path(out)}" in res.stderr
    res = _invoke(str(src), "--judge", "interrupted:Alpha 0", "--out", str(tmp_path / "p.jsonl"))
    assert res.exit_code == 130 and "nothing was saved" in res.stderr


def test_sigint_in_a_real_process_exits_130(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(3))
    with spawned([sys.executable, str(SLOW_CLI), "score", str(src), "--judge", "never",
                  "--out", str(tmp_path / "o.jsonl"), "--no-canaries"],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        deadline = time.monotonic() + 30
        while not journal_path(tmp_path / "o.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted." in err and "Traceback" not in err


def test_unwritable_out_is_a_clean_error(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(2))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    res = _invoke(str(src), "--judge", "fake", "--out", str(blocker / "sub" / "o.jsonl"))
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ") and "Traceback" not in res.stderr
    if os.geteuid() != 0:  # root ignores permissions
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        res = _invoke(str(src), "--judge", "fake", "--out", str(ro / "o.jsonl"))
        assert res.exit_code == 2 and "Permission denied" in res.stderr


def test_closed_stdout_pipe_keeps_the_exit_code(tmp_path: Path) -> None:
    src = _mixed(tmp_path, n=4, bad=1)
    for extra, code in (([], 3), (["--allow-errors"], 0)):
        with spawned([sys.executable, str(SLOW_CLI), "score", str(src), "--judge", "fake",
                      "-q", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()  # the reader is gone before anything is printed (`| head -0`)
            err = proc.stderr.read().decode()
            assert proc.wait(60) == code, err
        assert "Traceback" not in err and "BrokenPipe" not in err


def test_file_names_and_reasons_print_literally(tmp_path: Path) -> None:
    res = _invoke(str(tmp_path / "data [prod].jsonl"), "--judge", "fake", "-q")
    assert res.exit_code == 2 and "data [prod].jsonl" in res.stderr
    src = _jsonl(tmp_path / "in [v2].jsonl", [{**rows(1)[0], "id": "[bold]x[/bold]",
                                                "reference": ""}])
    out = tmp_path / "out [v2].jsonl"
    res = _invoke(str(src), "--judge", "fake", "--out", str(out), "-q")
    assert f"results: {out}" in res.stdout
    assert "field 'reference'" in res.stderr


def test_piped_tables_are_whole(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", rows(3))
    res = _invoke(str(src), "--judge", "fake", "--metrics",
                  "noise_sensitivity_irrelevant,context_precision_ranked", "-q")
    header = next(x for x in res.stdout.splitlines() if "95% CI" in x)
    assert header.split() == ["metric", "mean", "95%", "CI", "n", "undefined", "errors"]
    assert "context_precision_ranked" in res.stdout and "…" not in res.stdout
