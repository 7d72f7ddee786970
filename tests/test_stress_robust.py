"""A user pipeline cannot hang, kill or corrupt a sweep: per-call timeouts for every kind,
sys.exit/KeyboardInterrupt as that sample's error, failed generations as error rows."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noisegauge import evaluate
from noisegauge.stress import astress, stress
from noisegauge.stress.pipelines import PipelineInterrupted

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "examples" / "golden_support.jsonl"
N_ITEMS = sum(1 for line in GOLDEN.read_text().splitlines() if line.strip())
HANG_ON = "return policy for the KB-2041"  # one question of the bundled golden set


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Hung pipeline calls wait on this; set at the end so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def test_a_hung_sync_pipeline_times_out_and_the_sweep_finishes(
        release: threading.Event) -> None:
    def hangs_on_one(question: str, contexts: list[str]) -> str:
        if HANG_ON in question:
            release.wait(60)
        return contexts[0]

    start = time.monotonic()
    report = stress(GOLDEN, pipeline=hangs_on_one, levels=[0], judge="fake", retries=0,
                    timeout=0.5)
    assert time.monotonic() - start < 20
    failed = [r for r in report.rows if r.result.status == "error"]
    assert [HANG_ON in r.question for r in failed] == [True]
    assert "no answer within 0.5 s" in (failed[0].result.reason or "")
    assert len(report.rows) == N_ITEMS


def test_a_hung_async_pipeline_is_cancelled(release: threading.Event) -> None:
    cancelled = []

    async def hangs(question: str, contexts: list[str]) -> str:
        if HANG_ON in question:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(question)
                raise
        return contexts[0]

    report = stress(GOLDEN, pipeline=hangs, levels=[0], judge="fake", retries=0, timeout=0.5)
    assert len(cancelled) == 1
    assert sum(r.result.status == "error" for r in report.rows) == 1


@pytest.mark.parametrize("in_thread", [True, False], ids=["sync", "async"])
def test_sys_exit_in_a_pipeline_is_that_samples_error(in_thread: bool) -> None:
    def exits(question: str, contexts: list[str]) -> str:
        if HANG_ON in question:
            sys.exit(3)
        return contexts[0]

    async def exits_async(question: str, contexts: list[str]) -> str:
        return exits(question, contexts)

    report = stress(GOLDEN, pipeline=exits if in_thread else exits_async, levels=[0, 1],
                    judge="fake", retries=0)
    failed = [r for r in report.rows if r.result.status == "error"]
    assert len(failed) == 2 and len(report.rows) == 2 * N_ITEMS
    assert all("sys.exit(3)" in (r.result.reason or "") for r in failed)


def test_keyboard_interrupt_in_a_pipeline_stops_the_sweep() -> None:
    def interrupts(question: str, contexts: list[str]) -> str:
        if HANG_ON in question:
            raise KeyboardInterrupt
        return contexts[0]

    with pytest.raises(KeyboardInterrupt, match="KeyboardInterrupt"):
        stress(GOLDEN, pipeline=interrupts, levels=[0], judge="fake", retries=0)
    with pytest.raises(PipelineInterrupted, match="return-kb2041 at level 0"):  # async API
        asyncio.run(astress(GOLDEN, pipeline=interrupts, levels=[0], judge="fake", retries=0))


def test_failed_generations_stay_error_rows_when_rescored(tmp_path: Path) -> None:
    def fails_on_one(question: str, contexts: list[str]) -> str:
        if HANG_ON in question:
            raise ValueError("backend exploded")
        return contexts[0]

    report = stress(GOLDEN, pipeline=fails_on_one, levels=[0], judge="fake", retries=0)
    report.write(tmp_path, plot=False)
    samples = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    (bad,) = [s for s in samples if s.get("status") == "error"]
    assert bad["response"] is None and "backend exploded" in bad["reason"]
    rescored = evaluate(tmp_path / "samples.jsonl", judge="fake", progress=False)
    (err,) = [r for r in rescored.results if r.status == "error"]
    assert err.id == bad["id"] and "backend exploded" in (err.reason or "")
    assert all(r.value("recall") is None for r in rescored.results if r.status == "error")
    assert rescored.stats.status["undefined"] == 0  # no failure became an empty answer


HANGING_MODULE = textwrap.dedent(f"""
    import time

    def answer(question, contexts):
        if {HANG_ON!r} in question:
            time.sleep(3600)  # never returns: only a timeout ends this call
        return contexts[0]
""")


def test_cli_timeout_for_a_module_function_pipeline_and_a_prompt_exit(tmp_path: Path) -> None:
    """--timeout is accepted for module:function, and the process exits although a pipeline
    thread is still stuck (a joined worker thread would keep it alive for an hour)."""
    (tmp_path / "hanging_rag.py").write_text(HANGING_MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "out"
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "noisegauge", "stress", str(GOLDEN), "--pipeline",
         "hanging_rag:answer", "--levels", "0", "--judge", "fake", "--timeout", "1",
         "--retries", "0", "--no-cache", "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert time.monotonic() - start < 60
    results: list[dict[str, Any]] = [json.loads(line) for line in
                                     (out / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results].count("error") == 1
    (failed,) = [r for r in results if r["status"] == "error"]
    assert "TimeoutError" in failed["reason"] and "1 s" in failed["reason"]
