"""Resume: a run killed with SIGKILL and started again with the same command finishes without
repeating judge calls for finished rows, and writes the same output as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import ROOT, SlowJudge, require_extra, rows
from noisegauge import FakeJudge, evaluate
from noisegauge.runner.journal import Journal, journal_path
from noisegauge.testing import FakeOpenAIServer
from noisegauge.testing.children import spawn, stop

SLOW_CLI = ROOT / "tests" / "slow_cli.py"
N_ROWS = 24
CALLS_PER_ROW = 10  # 2 extractions + 2 claim sets x (reference or response + 3 chunks)


_started: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _reaped() -> Iterator[None]:
    """The CLI runs a test started are gone, with anything they started, when it ends."""
    yield
    while _started:
        stop(_started.pop())


def _cli(args: list[str], calls_log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NG_CALL_LOG": str(calls_log)}
    # The dataset has a bad row on purpose: --allow-errors keeps the exit code 0.
    proc = spawn([sys.executable, str(SLOW_CLI), "score", *args, "--allow-errors"], env=env,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _started.append(proc)
    return proc


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "in.jsonl"
    data = rows(N_ROWS)
    data[5]["retrieved_contexts"] = "not a list"  # a bad row is part of the output too
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


@pytest.fixture(scope="module")
def uninterrupted(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("ref")
    proc = _cli([str(dataset), "--judge", "slow:0", "--out", str(tmp / "ref.jsonl"), "--no-cache",
                 "--no-canaries", "-q"], tmp / "calls.log")
    assert proc.wait(60) == 0, proc.stderr.read() if proc.stderr else ""
    assert _lines(tmp / "calls.log") == (N_ROWS - 1) * CALLS_PER_ROW
    return _rows(tmp / "ref.jsonl")


def _stored(partial: Path) -> set[int]:
    """Indices of complete journal lines (a line torn by the kill does not count)."""
    done = set()
    for line in partial.read_bytes().split(b"\n")[1:-1]:
        try:
            done.add(json.loads(line)["i"])
        except json.JSONDecodeError:
            pass
    return done


@pytest.mark.parametrize("kill_after_rows", [1, 10])
def test_sigkill_then_rerun_matches_an_uninterrupted_run(
        dataset: Path, uninterrupted: list[dict[str, Any]], tmp_path: Path,
        kill_after_rows: int) -> None:
    out = tmp_path / "out.jsonl"
    partial = journal_path(out)
    args = [str(dataset), "--judge", "slow:0.02", "--out", str(out), "--no-cache",
            "--concurrency", "2", "--no-canaries", "-q"]
    proc = _cli(args, tmp_path / "killed.log")
    deadline = time.monotonic() + 30
    while _lines(partial) < 1 + kill_after_rows and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    stored = _stored(partial)
    assert kill_after_rows <= len(stored) < N_ROWS

    rerun = _cli(args, tmp_path / "rerun.log")
    assert rerun.wait(60) == 0, rerun.stderr.read() if rerun.stderr else ""
    assert _rows(out) == uninterrupted
    assert not partial.exists()
    # Exactly the rows missing from the journal were judged again (the bad row 5 costs nothing).
    good_stored = len(stored - {5})
    assert _lines(tmp_path / "rerun.log") == (N_ROWS - 1 - good_stored) * CALLS_PER_ROW


def test_rerun_after_a_finished_run_with_the_cache_costs_nothing(dataset: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    args = [str(dataset), "--judge", "slow:0", "--out", str(out), "-q"]
    assert _cli(args, tmp_path / "first.log").wait(60) == 0
    first = _rows(out)
    assert _cli(args, tmp_path / "second.log").wait(60) == 0
    assert _lines(tmp_path / "second.log") == 0
    second = _rows(out)
    assert [r["metrics"] for r in second] == [r["metrics"] for r in first]
    assert sum(r["usage"]["cached_calls"] for r in second) == sum(r["usage"]["calls"] for r in first)


class Abort(BaseException):
    """Stands in for a kill: not an Exception, so nothing turns it into an error row."""


class AbortingJudge(FakeJudge):
    def __init__(self, at: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.at = at

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        if self.at in text:
            raise Abort
        return await super().extract(text, question)


def _judged(judge: FakeJudge) -> set[str]:
    return {call[1] for call in judge.calls if call[0] == "extract"}


def test_torn_last_line_and_changed_rows(tmp_path: Path) -> None:
    data = rows(6)
    out = tmp_path / "out.jsonl"
    with pytest.raises(Abort):  # rows 0-3 finish, row 4 dies
        evaluate(data, None, judge=AbortingJudge("Alpha 4"), cache=False, progress=False,
                 out=out, concurrency=1)
    path = journal_path(out)
    assert sorted(_stored(path)) == [0, 1, 2, 3] and not out.exists()
    with path.open("ab") as fh:
        fh.write(b'{"i": 4, "fp": "torn')  # a kill hit mid-line
    data[1] = {**data[1], "response": "Alpha 1 is one."}  # this row changed since
    again = FakeJudge()
    report = evaluate(data, None, judge=again, cache=False, progress=False, out=out)
    assert "Alpha 1 is one." in _judged(again)
    assert not {"Alpha 0 is one. Beta 0 is two.", "Alpha 2 is one. Beta 2 is two."} & _judged(again)
    assert report.stats.resumed == 3
    expected = [r.to_row() for r in evaluate(data, None, judge=FakeJudge(), cache=False,
                                              progress=False).results]
    # The file rows add the position, the judges and the input texts to the result row.
    extra = ("index", "judges", "input")
    assert [{k: v for k, v in r.items() if k not in extra} for r in _rows(out)] == expected
    assert [r["input"]["response"] for r in _rows(out)] == [d["response"] for d in data]
    assert [r.to_row() for r in report.results] == expected  # Report rebuilt from the journal
    assert not path.exists()


def test_error_rows_are_retried_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    # Row 0 fails in the judge (an error row), then the run dies at row 1.
    failing = AbortingJudge("Alpha 1", claims={"Alpha 9": ["x"]}, strict=True)
    with pytest.raises(Abort):
        evaluate(rows(2), None, judge=failing, cache=False, progress=False, out=out,
                 concurrency=1)
    assert _stored(journal_path(out)) == {0}
    fixed = FakeJudge()
    report = evaluate(rows(2), None, judge=fixed, cache=False, progress=False, out=out)
    assert [r.status for r in report.results] == ["ok", "ok"]
    assert "Alpha 0 is one. Beta 0 is two." in _judged(fixed)


def test_other_settings_discard_the_journal(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    j = Journal(out, {"metrics": ["faithfulness"]})
    j.open()
    j.append(0, "fp", {"status": "ok", "metrics": {}}, None)
    j.close(remove=False)
    assert Journal(out, {"metrics": ["faithfulness"]}).open() == 1
    assert Journal(out, {"metrics": ["precision"]}).open() == 0  # settings changed
    assert not Journal(out, {"metrics": ["precision"]}).reusable(0, "fp")


def test_two_runs_cannot_write_the_same_output(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = Journal(out, {})
    first.open()
    with pytest.raises(Exception, match="another noisegauge run"):
        Journal(out, {}).open()
    first.close(remove=True)
    evaluate(rows(1), None, judge=SlowJudge(), cache=False, progress=False, out=out)
    assert out.exists()


def test_third_run_after_kill_and_resume_costs_nothing(fake_openai_server: FakeOpenAIServer,
                                                       tmp_path: Path) -> None:
    """#30: kill -9 mid-run, resume, run again: the third run must make no judge call. The
    killed run's answers for the rows it journaled were still in the cache's write buffer, so
    the resume reused those rows from the journal and the third run (no journal) paid again."""
    require_extra("openai")
    data = tmp_path / "in.jsonl"
    data.write_text("".join((ROOT / "examples" / "support_bot.jsonl").read_text()
                            .splitlines(keepends=True)[:8]))
    out = tmp_path / "out.jsonl"
    fake_openai_server.latency = 0.05  # a run long enough to be killed in the middle
    cmd = [sys.executable, "-m", "noisegauge", "score", str(data), "--judge",
           "openai:test-model", "--base-url", fake_openai_server.url, "--out", str(out),
           "--concurrency", "2", "-q", "--allow-errors"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}  # NOISEGAUGE_CACHE: isolated_cache's
    killed = spawn(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _started.append(killed)
    partial = journal_path(out)
    deadline = time.monotonic() + 60
    while _lines(partial) < 3 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    killed.send_signal(signal.SIGKILL)
    assert killed.wait(10) == -signal.SIGKILL
    assert 2 <= len(_stored(partial)) < 8  # killed in the middle, rows journaled

    calls = []
    for _ in ("resume", "third"):
        before = len(fake_openai_server.chat_requests())
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        calls.append(len(fake_openai_server.chat_requests()) - before)
    assert calls[0] > 0 and calls[1] == 0, calls
