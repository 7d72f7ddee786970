"""The cache keeps raw answers beside parsed ones, and ``noisegauge cache`` manages it."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from batch_helpers import rows
from noisegauge import FakeJudge, Verdict, evaluate
from noisegauge.cli.cache import parse_duration, parse_size
from noisegauge.cli.main import cli
from noisegauge.infra.store import JudgeCache
from noisegauge.judges.base import record_raw


class RawJudge(FakeJudge):
    """A FakeJudge that reports a raw model answer for every call, as an LLM provider does."""

    def identity(self) -> dict[str, Any]:
        return {"judge": "raw-fake", "model": "m1"}

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        claims = await super().extract(text, question)
        record_raw(json.dumps({"t1": claims}))
        return claims

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        verdicts = await super().check(premise, claims)
        record_raw("RAW " + json.dumps({f"c{i + 1}": v.value for i, v in enumerate(verdicts)}))
        return verdicts


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, ["cache", *args])


def test_raw_answers_are_kept_and_shown(isolated_cache: Path) -> None:
    evaluate(rows(2), judge=RawJudge(), progress=False)
    listed = _cli("list", "--grep", "RAW", "--limit", "50")
    assert listed.exit_code == 0, listed.output
    keys = [line.split()[0] for line in listed.output.splitlines()]
    assert keys
    shown = _cli("show", keys[0])
    assert shown.exit_code == 0, shown.output
    assert '"judge": "raw-fake"' in shown.output and "method:   check" in shown.output
    assert "raw answer 1:\nRAW {" in shown.output
    assert "(neutral" in shown.output or "(entailed" in shown.output  # verdicts spelled out
    store = JudgeCache(isolated_cache)
    try:
        info = store.info()
        assert info["answers"] == info["with_raw"] > 0
        assert [p["identity"] for p in info["producers"]] == [{"judge": "raw-fake", "model": "m1"}]
    finally:
        store.close()


def test_info_prune_and_clear(isolated_cache: Path) -> None:
    store = JudgeCache(isolated_cache)
    for i in range(400):
        store.put(JudgeCache.key("ns", "m", i), "x" * 500, namespace='{"judge": "j"}',
                  method="check")
    store.close()
    db = sqlite3.connect(isolated_cache)
    with db:  # the first 100 answers are two months old
        db.execute("UPDATE answers SET created = ? WHERE key IN (SELECT key FROM answers "
                   "ORDER BY key LIMIT 100)", (time.time() - 60 * 86400,))
    db.close()
    info = _cli("info")
    assert info.exit_code == 0 and "answers: 400" in info.output and "j" in info.output

    pruned = _cli("prune", "--older-than", "30d")
    assert pruned.exit_code == 0 and "removed 100 answers; 300 left" in pruned.output
    pruned = _cli("prune", "--max-size", "100kB")
    assert pruned.exit_code == 0, pruned.output
    store = JudgeCache(isolated_cache)
    try:
        assert store.size_bytes() <= 100_000 and 0 < len(store) < 300
    finally:
        store.close()

    declined = CliRunner().invoke(cli, ["cache", "clear"], input="n\n")
    assert declined.exit_code == 0 and "nothing deleted" in declined.output
    cleared = _cli("clear", "--yes")
    assert cleared.exit_code == 0 and "removed" in cleared.output
    assert "answers: 0" in _cli("info").output


def test_a_cache_from_before_raw_answers_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE answers (key BLOB PRIMARY KEY, value TEXT NOT NULL, "
               "created REAL NOT NULL) WITHOUT ROWID")
    old_key = JudgeCache.key("ns", "extract", "text")
    db.execute("INSERT INTO answers VALUES (?, ?, ?)", (old_key, '["a claim"]', time.time()))
    db.commit()
    db.close()
    store = JudgeCache(path)
    try:
        assert store.get(old_key) == ["a claim"]
        store.put(JudgeCache.key("ns", "extract", "new"), ["b"], raw=["{...}"], namespace="ns")
        assert store.entry(old_key).raw is None  # type: ignore[union-attr]
        assert store.info()["with_raw"] == 1
    finally:
        store.close()
    shown = _cli("show", old_key.hex()[:8], "--cache", str(path))
    assert shown.exit_code == 0 and "raw:      (not recorded)" in shown.output


def test_bad_arguments_are_usage_errors(tmp_path: Path, isolated_cache: Path) -> None:
    JudgeCache(isolated_cache).close()
    for args in (["prune"], ["prune", "--older-than", "30 days"], ["prune", "--max-size", "2XB"],
                 ["show", "zz"], ["show", "abcdef0123"]):
        res = _cli(*args)
        assert res.exit_code == 2, (args, res.output)
    assert "no cache at" in _cli("info", "--cache", str(tmp_path / "none.db")).output
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * 86400), ("12h", 43200),
                                               ("90m", 5400), ("1.5w", 1.5 * 604800)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(("text", "size"), [("2GB", 2 * 10**9), ("500MB", 5 * 10**8),
                                            ("1GiB", 2**30), ("100k", 10**5), ("4096", 4096)])
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_clear_without_a_terminal_says_to_pass_yes(isolated_cache: Path) -> None:
    import os
    import subprocess
    import sys

    store = JudgeCache(isolated_cache)
    store.put(JudgeCache.key("ns", "m", 1), "x", namespace='{"judge": "j"}', method="check")
    store.close()
    proc = subprocess.run([sys.executable, "-m", "noisegauge", "cache", "clear"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NOISEGAUGE_CACHE": str(isolated_cache)})
    assert proc.returncode == 2, proc.stdout + proc.stderr  # a usage error, not "interrupted"
    assert "pass --yes" in proc.stderr
    store = JudgeCache(isolated_cache)
    try:
        assert len(store) == 1  # nothing deleted
    finally:
        store.close()
