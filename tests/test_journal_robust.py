"""A journal that survives anything: killed at random points (>= 50 SIGKILLs across one
run), a torn or NUL-filled tail (what a power loss leaves), and a second run on the same
``--out`` (which must fail cleanly and must not damage the first)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import SlowJudge, rows
from noisegauge import InvalidInput, evaluate
from noisegauge.judges.registry import JUDGE_FACTORIES
from noisegauge.runner.journal import Journal, journal_path


def _write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data))
    return path


def _reference(data: list[dict[str, Any]], tmp_path: Path) -> bytes:
    ref = tmp_path / "reference.jsonl"
    evaluate(data, None, judge=SlowJudge(), cache=False, progress=False, out=ref)
    return ref.read_bytes()


# -- killed at random moments ------------------------------------------------------------

def _score_child(args: list[str]) -> None:
    """A forked child: the real CLI, already imported (a fork starts in microseconds)."""
    from noisegauge.cli.main import cli

    code = 1
    try:
        cli.main(args=["score", *args], prog_name="noisegauge", standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os._exit(code)


def _fork(args: list[str]) -> Any:
    proc = multiprocessing.get_context("fork").Process(target=_score_child, args=(args,))
    proc.start()
    return proc


class _Lines:
    """Complete lines in a growing file, counted incrementally (cheap to poll)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = self.count = 0

    def __call__(self) -> int:
        try:
            with self.path.open("rb") as fh:
                if fh.seek(0, os.SEEK_END) < self.offset:  # truncated or replaced: recount
                    self.offset = self.count = 0
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            self.offset = self.count = 0
            return 0
        self.count += data.count(b"\n")
        self.offset += data.rfind(b"\n") + 1
        return self.count


def kill_at_random(args: list[str], journal: Path, *, kills: int, late_kills: int = 3,
                   seed: int = 0) -> dict[str, Any]:
    """Run the command again and again, each time SIGKILLed at a random moment, then once to
    the end. A first whole run gives the reference output and the start-up time. Of the
    ``kills``, some land at a random moment of the start-up (lock, load, truncate), the
    others right after 1 or 2 more rows are journaled (a random 0-3 ms later: mid-append,
    mid-row), so each attempt moves the run on by a row or two whatever the machine's
    speed, and it cannot finish early; then ``late_kills`` land anywhere in a whole run (the
    final write and rename included)."""
    rng = random.Random(seed)
    out = journal.with_name(journal.name.removesuffix(".partial"))
    lines = _Lines(journal)
    start = time.monotonic()
    proc = _fork(args)
    first_row = None
    while proc.is_alive():
        if first_row is None and lines() > 1:
            first_row = time.monotonic() - start
        time.sleep(0.002)
    total = time.monotonic() - start
    assert proc.exitcode == 0 and first_row is not None
    reference = out.read_bytes()
    out.unlink()  # start over from nothing
    stats: dict[str, Any] = {"killed": 0, "finished_early": 0, "reference": reference,
                             "journal_sizes": []}
    for k in range(kills + late_kills):
        before = lines()
        proc = _fork(args)
        if k >= kills:
            time.sleep(rng.uniform(0, total))
        else:
            # Start-up kills at a random moment, row kills after 1 or 2 new rows; either
            # way never later than 2 new rows, however fast the machine is right now.
            in_startup = rng.random() < 0.4
            target = before + (2 if in_startup else rng.randint(1, 2))
            deadline = time.monotonic() + (rng.uniform(0, first_row) if in_startup else 30)
            while proc.is_alive() and lines() < target and time.monotonic() < deadline:
                time.sleep(0.001)
            if not in_startup:
                time.sleep(rng.uniform(0, 0.003))  # shorter than a row on a fast machine
        if proc.is_alive():
            os.kill(proc.pid, signal.SIGKILL)
            stats["killed"] += 1
        proc.join()
        if proc.exitcode == 0:
            stats["finished_early"] += k < kills
            break
        stats["journal_sizes"].append(journal.stat().st_size if journal.exists() else 0)
    proc = _fork(args)
    proc.join(120)
    stats["final_exit"] = proc.exitcode
    return stats


@pytest.mark.skipif(sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs fork and SIGKILL")
def test_fifty_random_kills_lose_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import noisegauge.cli.score  # noqa: F401  (imported once, before the forks)

    monkeypatch.setitem(JUDGE_FACTORIES, "slow", "batch_helpers:make_slow_judge")
    data = rows(200)  # rows finish in pairs: 50 attempts of at most ~3 rows stay short of 200
    src = _write(tmp_path / "in.jsonl", data)
    out = tmp_path / "out.jsonl"
    args = [str(src), "--judge", "slow:0.001", "--out", str(out), "--no-cache", "-q",
            "--concurrency", "2", "--no-canaries"]
    stats = kill_at_random(args, journal_path(out), kills=50, late_kills=2)
    assert stats["killed"] >= 50 and stats["finished_early"] == 0, stats
    assert stats["final_exit"] == 0, stats
    assert len(set(stats["journal_sizes"])) >= 8  # kills landed all along the run
    assert out.read_bytes() == stats["reference"] == _reference(data, tmp_path)
    assert not journal_path(out).exists()
    assert not list(tmp_path.glob(".out.jsonl*"))  # no stray temporary file


# -- torn and NUL-filled tails -----------------------------------------------------------

class Abort(BaseException):
    pass


class _Dying(SlowJudge):
    async def extract(self, text: str, question: str | None = None) -> list[str]:
        if "Alpha 4 " in text:
            raise Abort
        return await super().extract(text, question)


@pytest.mark.parametrize("tail", [b"\x00" * 4096, b'{"i": 4, "fp": "ab\x00\x00\x00',
                                  b'{"i": 4, "fp": "torn', b"\xff\xfe\x00garbage\n",
                                  b'{"i": 4, "fp": "x", "row": {"status": "ok"}\n\x00\x00'])
def test_a_torn_or_nul_filled_tail_is_cut_with_a_warning(
        tmp_path: Path, tail: bytes, caplog: pytest.LogCaptureFixture) -> None:
    data = rows(8)
    out = tmp_path / "out.jsonl"
    with pytest.raises(Abort):
        evaluate(data, None, judge=_Dying(), cache=False, progress=False, out=out, concurrency=1)
    with journal_path(out).open("ab") as fh:
        fh.write(tail)  # what a power loss or a kill mid-write leaves
    with caplog.at_level(logging.WARNING, logger="noisegauge"):
        report = evaluate(data, None, judge=SlowJudge(), cache=False, progress=False, out=out)
    assert report.stats.resumed == 4
    assert any("incomplete last record" in r.getMessage() for r in caplog.records)
    assert out.read_bytes() == _reference(data, tmp_path)


def test_a_journal_of_other_settings_is_replaced_not_mixed(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    evaluate(rows(3), "faithfulness", judge=SlowJudge(), cache=False, progress=False,
             out=out)
    j = Journal(out, {"metrics": ["precision"]})
    j.open()
    j.append(0, "fp", {"status": "ok", "metrics": {}}, None)
    j.close(remove=False)
    report = evaluate(rows(3), None, judge=SlowJudge(), cache=False, progress=False, out=out)
    assert report.stats.resumed == 0 and len(out.read_text().splitlines()) == 3


# -- one run per output ------------------------------------------------------------------

def test_a_second_journal_never_truncates_the_first(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    first = Journal(out, {"metrics": ["a"]})
    first.open()
    first.append(0, "fp0", {"status": "ok", "metrics": {}}, None)
    before = journal_path(out).read_bytes()
    for other in (Journal(out, {"metrics": ["a"]}), Journal(out, {"metrics": ["b"]}),
                  Journal(out, {"metrics": ["a"]}, resume=False)):
        with pytest.raises(InvalidInput, match="another noisegauge run is writing"):
            other.open()
        assert journal_path(out).read_bytes() == before
    first.append(1, "fp1", {"status": "ok", "metrics": {}}, None)
    first.close(remove=False)
    again = Journal(out, {"metrics": ["a"]})
    assert again.open() == 2
    again.close(remove=True)


def _child_code(args: list[str], err: Path) -> int:
    """Run the CLI in a forked child with stderr to ``err``; its exit code."""
    ctx = multiprocessing.get_context("fork")

    def target() -> None:
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        _score_child(args)

    proc = ctx.Process(target=target)
    proc.start()
    proc.join(60)
    return proc.exitcode if proc.exitcode is not None else -1


@pytest.mark.skipif(sys.platform == "win32", reason="needs fork")
def test_two_concurrent_runs_on_one_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import noisegauge.cli.score  # noqa: F401  (imported once, before the forks)

    monkeypatch.setitem(JUDGE_FACTORIES, "gated", "chaos_helpers:make_gated")
    monkeypatch.setitem(JUDGE_FACTORIES, "slow", "batch_helpers:make_slow_judge")
    gate = tmp_path / "go"
    monkeypatch.setenv("NG_GATE", str(gate))
    data = rows(20)
    src = _write(tmp_path / "in.jsonl", data)
    out = tmp_path / "out.jsonl"
    # No canaries: their calls would spend the gated judge's budget before any row.
    base = [str(src), "--out", str(out), "--no-cache", "-q", "--concurrency", "1",
            "--no-canaries"]
    # The first run judges 3 rows, then holds still until the gate opens.
    first = _fork([*base, "--judge", "gated:6"])
    partial = journal_path(out)
    deadline = time.monotonic() + 60
    while (not partial.exists() or partial.read_bytes().count(b"\n") < 4) \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    held = partial.read_bytes()
    for extra in (["--judge", "gated:6"], ["--judge", "gated:6", "--restart"],
                  ["--judge", "slow:0", "--metrics", "faithfulness"]):
        err = tmp_path / "second.err"
        assert _child_code([*base, *extra], err) == 2
        message = err.read_text()
        assert "another noisegauge run is writing" in message and "Traceback" not in message
        assert partial.read_bytes() == held  # not truncated, not mixed into
    gate.touch()
    first.join(60)
    assert first.exitcode == 0
    assert out.read_bytes() == _reference(data, tmp_path)
    assert not partial.exists()
