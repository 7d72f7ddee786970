"""Every core: a local run with a CPU-bound judge spreads its blocks over worker processes,
and writes exactly what one process writes (rows, summary, cache, journal, Ctrl-C)."""

from __future__ import annotations

import json
import logging
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from noisegauge import evaluate
from noisegauge.cli.main import cli
from noisegauge.judges.lexical import LexicalJudge
from noisegauge.runner.journal import journal_path
from noisegauge.runner.pool import default_workers
from noisegauge.testing.children import spawn, stop

WORDS = ["plan", "price", "notice", "period", "river", "city", "policy", "region", "support",
         "contract", "data", "answer", "thirty", "ninety", "monthly", "annual", "refund"]


def _rows(n: int, seed: int = 0) -> list[dict[str, object]]:
    """RAG-log-like rows: four chunks; the response copies some chunk sentences, adds one."""
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 9))).capitalize() + "."

    out = []
    for i in range(n):
        chunks = [" ".join(sentence() for _ in range(2)) for _ in range(4)]
        first = chunks[0].split(". ")[0].rstrip(".") + "."
        out.append({"id": f"s{i}", "user_input": f"Question {i}?",
                    "response": f"{first} {chunks[2].split('. ')[-1]} {sentence()}",
                    "reference": f"{first} {sentence()}", "retrieved_contexts": chunks})
    return out


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_two_processes_give_one_processs_rows(caplog: pytest.LogCaptureFixture) -> None:
    rows = _rows(40)
    one = evaluate(rows, judge="lexical", cache=False, progress=False, workers=1)
    with caplog.at_level(logging.INFO, logger="noisegauge"):
        two = evaluate(rows, judge="lexical", cache=False, progress=False, workers=2)
    assert "judging in 2 worker processes" in caplog.text  # the pool did the work
    assert list(two.rows()) == list(one.rows())
    assert two.summary() == one.summary()


def test_the_pool_is_for_cpu_bound_judges_and_enough_rows(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="noisegauge"):
        evaluate(_rows(10), judge="lexical", cache=False, progress=False, workers=2)
        evaluate(_rows(40), judge="fake", cache=False, progress=False, workers=2)
    assert "worker processes" not in caplog.text  # too few rows; a judge that is not CPU-bound
    assert default_workers() >= 1


class Abort(Exception):
    pass


class AbortingLexical(LexicalJudge):
    """The lexical judge with a bug: it dies on the response that starts with ``at``."""

    def __init__(self, at: str) -> None:
        super().__init__()
        self.at = at

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        if text.startswith(self.at):
            raise Abort
        return await super().extract(text, question)


def test_a_bug_in_a_worker_raises_after_the_blocks_before_it_are_journaled(tmp_path: Path) -> None:
    rows = _rows(40, seed=3)
    kw: dict[str, object] = {"cache": False, "progress": False, "workers": 2}
    out = tmp_path / "out.jsonl"
    with pytest.raises(Abort):  # row 20 is in the third block of 8 rows
        evaluate(rows, judge=AbortingLexical(str(rows[20]["response"])), out=out, **kw)
    assert journal_path(out).exists() and not out.exists()
    resumed = evaluate(rows, judge="lexical", out=out, **kw)
    assert resumed.stats.resumed == 16  # the two blocks before the failed one, no more
    fresh = evaluate(rows, judge="lexical", out=tmp_path / "fresh.jsonl", **kw)
    assert out.read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert list(fresh.rows()) == list(resumed.rows())


def test_cli_output_is_byte_identical_and_the_cache_fills(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "in.jsonl", _rows(32, seed=1))
    runner = CliRunner()
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.jsonl"
        res = runner.invoke(cli, ["score", str(src), "--judge", "lexical", "--out", str(out),
                                  "--cache", str(tmp_path / f"c{workers}.db"), "-q",
                                  "--workers", workers])
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    # The workers' answers reached the user's cache: the same run again asks the judge nothing.
    again = tmp_path / "again.jsonl"
    res = runner.invoke(cli, ["score", str(src), "--judge", "lexical", "--out", str(again),
                              "--cache", str(tmp_path / "c2.db"), "-q", "--workers", "2"])
    assert res.exit_code == 0, res.output
    usage = [json.loads(line)["usage"] for line in again.read_text().splitlines()]
    assert sum(u["calls"] for u in usage) == 0 < sum(u["cached_calls"] for u in usage)


def test_ctrl_c_keeps_finished_rows_and_the_rerun_completes_them(
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    src = _jsonl(tmp_path / "in.jsonl", _rows(64, seed=2))
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "noisegauge", "score", str(src), "--judge", "lexical",
           "--no-cache", "--no-canaries", "-q", "--workers", "2"]
    proc = spawn([*cmd, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True)
    request.addfinalizer(lambda: stop(proc))  # with the worker processes it started
    journal = journal_path(out)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_text(encoding="utf-8").count("\n") >= 4:
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.skip("the run finished before it could be interrupted (a very fast machine)")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and journal.exists() and not out.exists()
    res = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    fresh = tmp_path / "fresh.jsonl"
    res = subprocess.run([*cmd[:-1], "1", "--out", str(fresh)], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == fresh.read_bytes()
