"""The persistent judge cache: reruns are free, identity changes never reuse an answer,
several writers can share one file, and no secret is stored."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import rows
from noisegauge import FakeJudge, Verdict, evaluate, get_judge
from noisegauge.infra.store import JudgeCache, default_cache_path, resolve_cache
from noisegauge.judges.base import metered
from noisegauge.judges.cached import CachedJudge, with_cache


class ModelJudge(FakeJudge):
    """A FakeJudge that names a model and prompt version, like a provider would."""

    def __init__(self, model: str = "m1", prompt_version: str = "v1", api_key: str = "",
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.model, self.prompt_version, self.api_key = model, prompt_version, api_key

    def identity(self) -> dict[str, Any]:
        return {"judge": "model-fake", "model": self.model, "prompt_version": self.prompt_version}


def _eval(judge: Any, cache: Any, n: int = 4) -> Any:
    return evaluate(rows(n), None, judge=judge, cache=cache, progress=False)


def test_rerun_costs_zero_calls_and_gives_the_same_results(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite3"
    first_judge = ModelJudge()
    first = _eval(first_judge, db)
    assert first.usage.calls == len(first_judge.calls) > 0 and first.usage.cached_calls == 0
    second_judge = ModelJudge()
    second = _eval(second_judge, db)
    assert second_judge.calls == [] and second.usage.calls == 0
    assert second.usage.cached_calls == first.usage.calls
    def strip(r: Any) -> dict[str, Any]:
        return {k: v for k, v in r.to_row().items() if k != "usage"}
    assert [strip(r) for r in second.results] == [strip(r) for r in first.results]


@pytest.mark.parametrize("change", [{"model": "m2"}, {"prompt_version": "v2"}])
def test_changing_the_judge_identity_never_reuses_an_answer(tmp_path: Path,
                                                             change: dict[str, str]) -> None:
    db = tmp_path / "c.sqlite3"
    _eval(ModelJudge(), db)
    # A judge that would answer differently: every cached "entailed" would be stale.
    changed = ModelJudge(**change, default=Verdict.CONTRADICTED)
    report = _eval(changed, db)
    assert report.usage.cached_calls == 0 and report.usage.calls == len(changed.calls) > 0


def test_the_default_location_and_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOISEGAUGE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("sys.platform", "linux")
    assert default_cache_path() == tmp_path / "xdg" / "noisegauge" / "judge-cache.sqlite3"
    store = resolve_cache(None)
    assert store is not None and store.path == default_cache_path()
    store.close()
    assert resolve_cache(False) is None
    monkeypatch.setenv("NOISEGAUGE_CACHE", "off")
    assert resolve_cache(None) is None
    monkeypatch.setenv("NOISEGAUGE_CACHE", str(tmp_path / "env.db"))
    store = resolve_cache(None)
    assert store is not None and store.path == tmp_path / "env.db"
    store.close()


def test_secrets_are_never_stored(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite3"
    _eval(ModelJudge(api_key="sk-SECRET-123"), db)
    assert b"sk-SECRET-123" not in db.read_bytes()
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or b"sk-SECRET-123" not in wal.read_bytes()


def test_nothing_to_cache_is_not_wrapped(tmp_path: Path) -> None:
    store = JudgeCache(tmp_path / "c.db")
    precomputed = get_judge("precomputed")
    assert with_cache(precomputed, store) is precomputed
    fake = FakeJudge()
    wrapped = with_cache(fake, store)
    assert isinstance(wrapped, CachedJudge) and wrapped.identity() == fake.identity()
    assert with_cache(wrapped, store) is wrapped
    assert with_cache(fake, None) is fake
    store.close()


class BatchFake(FakeJudge):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    async def check_many(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
        self.batches.append(len(premises))
        return [await self.check(p, claims) for p in premises]


def test_check_many_reuses_cached_premises(tmp_path: Path) -> None:
    store = JudgeCache(tmp_path / "c.db")
    inner = BatchFake()
    judge = CachedJudge(inner, store)

    async def go(premises: list[str]) -> tuple[list[list[Verdict]], Any]:
        with metered() as usage:
            return await judge.check_many(premises, ["a b"]), usage

    first, u1 = asyncio.run(go(["a b c", "x"]))
    second, u2 = asyncio.run(go(["a b c", "y", "x"]))
    assert inner.batches == [2, 1]  # only the new premise reached the judge
    assert second[0] == first[0] == [Verdict.ENTAILED] and second[2] == [Verdict.NEUTRAL]
    assert u1.cached_calls == 0 and u2.cached_calls == 0  # the batch call still happened
    _, u3 = asyncio.run(go(["y", "x"]))
    assert inner.batches == [2, 1] and u3.cached_calls == 1
    store.close()


def test_corrupt_entries_are_misses(tmp_path: Path) -> None:
    store = JudgeCache(tmp_path / "c.db")
    judge = CachedJudge(FakeJudge(), store)
    key = store.key(judge._ns, "check", "P", ["a", "b"])
    store.put(key, "ee")
    assert asyncio.run(judge.check("P", ["a", "b"])) == [Verdict.ENTAILED] * 2
    store.put(key, "e")  # wrong length: ignored, the judge answers again
    assert asyncio.run(judge.check("P", ["a", "b"])) == [Verdict.NEUTRAL] * 2
    store.close()


def _writer(path: str, worker: int, n: int) -> None:
    store = JudgeCache(path, flush_size=7)
    for i in range(n):
        store.put(JudgeCache.key("ns", "extract", f"{worker}-{i}"), [f"claim {worker} {i}"])
        if i % 50 == 0:
            store.get(JudgeCache.key("ns", "extract", f"{1 - worker}-{i}"))
    store.close()


def test_concurrent_writers_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 400)) for w in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM answers").fetchone()[0] == 800
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
