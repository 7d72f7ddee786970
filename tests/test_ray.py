"""``engine="ray"``: the same run on a real local Ray cluster, with identical output.

Every Ray test is in this one module, so ``--dist loadscope`` keeps them on one xdist
worker, sharing one ``ray.init(num_cpus=2)`` (the machine has two cores); one test starts
its own ``ray start --head`` cluster and joins it through the CLI. Without Ray installed
they skip, except the two that check what happens then.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noisegauge import evaluate, get_judge
from noisegauge.errors import JudgeUnavailable, MissingDependency
from noisegauge.infra.store import JudgeCache
from noisegauge.runner.ray_limits import PermitDesk
from noisegauge.testing import FakeOpenAIServer, FaultyJudge
from noisegauge.testing.children import spawn, stop

RAY_ENV = {"RAY_AUTH_MODE": "disabled",  # no token file shared with other Ray users here
           "RAY_USAGE_STATS_ENABLED": "0"}


def _rows(n: int) -> list[dict[str, Any]]:
    """Distinct rows (no judge request repeats across rows), plus bad ones: a row with no
    fields and a duplicate id."""
    rows: list[dict[str, Any]] = [
        {"id": f"r{i}", "user_input": f"What is item {i}?",
         "response": f"Item {i} is a tool. It costs {i} dollars. The sky over {i} is green.",
         "reference": f"Item {i} is a tool. It costs {i} dollars.",
         "retrieved_contexts": [f"Item {i} is a tool.", f"It costs {i} dollars.",
                                f"Unrelated text number {i}."]}
        for i in range(n)]
    rows[3] = {"id": "empty"}
    rows[9] = {**rows[10], "id": "r2"}  # id used by row 2
    return rows


@pytest.fixture(scope="session")
def ray_local() -> Iterator[Any]:
    """One small local Ray for the session (2 CPUs, no dashboard, a small object store)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]'")
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update(RAY_ENV)
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024 * 1024,
             log_to_driver=False)
    yield ray
    ray.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def test_import_noisegauge_loads_no_ray() -> None:
    code = ("import sys, noisegauge, noisegauge.runner.evaluate, noisegauge.cli.main; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_engine_ray_without_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(MissingDependency, match=r"pip install '\.\[ray\]'"):
        evaluate(_rows(12), engine="ray", cache=False, progress=False)


def test_ray_output_is_the_local_output_byte_for_byte_when_a_worker_dies(
        ray_local: Any, tmp_path: Path) -> None:
    rows = _rows(40)
    evaluate(rows, out=tmp_path / "local.jsonl", cache=False, progress=False)
    marker = tmp_path / "crashed"
    # Row 21 is in block 2 (rows 16-23): its worker dies on the first attempt.
    judge = FaultyJudge(get_judge("lexical"), "over 21 is", marker=marker)
    report = evaluate(rows, judge=judge, out=tmp_path / "ray.jsonl", cache=False,
                      progress=False, engine="ray", block_size=8)
    assert marker.exists(), "the worker was meant to die once"
    local, remote = (tmp_path / "local.jsonl").read_bytes(), (tmp_path / "ray.jsonl").read_bytes()
    assert remote == local
    lines = [json.loads(line) for line in remote.splitlines()]
    assert [r["index"] for r in lines] == list(range(40))
    assert [lines[3]["status"], lines[9]["status"]] == ["error", "error"]
    assert "duplicate id" in lines[9]["reason"]
    assert report.stats.status["error"] == 2 and len(report) == 40
    # RAGChecker's JSON keeps the samples in the journal: the same there too.
    evaluate(rows, out=tmp_path / "local.json", cache=False, progress=False)
    evaluate(rows, out=tmp_path / "ray.json", cache=False, progress=False, engine="ray")
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def test_cache_answers_come_back_and_a_rerun_spends_no_call(ray_local: Any,
                                                            tmp_path: Path) -> None:
    rows = _rows(24)
    evaluate(rows, out=tmp_path / "local.jsonl", cache=tmp_path / "local.sqlite3", progress=False)
    first = evaluate(rows, out=tmp_path / "ray.jsonl", cache=tmp_path / "ray.sqlite3",
                     progress=False, engine="ray", block_size=5)
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert first.usage.calls > 0
    local_cache, ray_cache = JudgeCache(tmp_path / "local.sqlite3"), JudgeCache(tmp_path / "ray.sqlite3")
    assert len(ray_cache) == len(local_cache) > 0
    assert ({e.key for e in ray_cache.recent(10_000)} == {e.key for e in local_cache.recent(10_000)})
    again = evaluate(rows, out=tmp_path / "again.jsonl", cache=tmp_path / "ray.sqlite3",
                     progress=False, engine="ray", block_size=5)
    assert again.usage.calls == 0 and again.usage.cached_calls > 0
    rerun_local = evaluate(rows, out=tmp_path / "again_local.jsonl",
                           cache=tmp_path / "local.sqlite3", progress=False)
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "again_local.jsonl").read_bytes()
    assert rerun_local.usage.calls == 0


def test_a_stopped_run_resumes_without_judging_finished_blocks_again(
        ray_local: Any, tmp_path: Path) -> None:
    rows = _rows(40)
    for row in rows[32:]:
        row["response"] += " Zeta."
    out = tmp_path / "ray.jsonl"
    # The last block (rows 32-39) cannot reach its judge: the driver stops after 3 rows.
    broken = FaultyJudge(get_judge("lexical"), "Zeta", mode="fail")
    with pytest.raises(JudgeUnavailable):
        evaluate(rows, judge=broken, out=out, cache=False, progress=False, engine="ray",
                 block_size=8, workers=1, max_consecutive_failures=3)
    partial = out.with_name(out.name + ".partial")
    kept = {e["i"] for e in map(json.loads, partial.read_text().splitlines()[1:])
            if e["row"]["status"] in ("ok", "undefined")}
    assert kept == set(range(32)) - {3, 9}  # one block at a time (workers=1): 0-3 finished
    # The rerun (the judge as meant, same identity) judges only the rows not finished.
    report = evaluate(rows, out=out, cache=False, progress=False, engine="ray", block_size=8)
    assert report.stats.resumed == len(kept)
    redo = evaluate(rows[32:], cache=False, progress=False)
    assert report.stats.run_usage.calls == redo.usage.calls > 0
    assert not partial.exists()
    evaluate(rows, out=tmp_path / "local.jsonl", cache=False, progress=False)
    assert out.read_bytes() == (tmp_path / "local.jsonl").read_bytes()


def test_leak_tables_from_ray_are_the_local_ones(ray_local: Any, tmp_path: Path) -> None:
    """`noisegauge leaks` on a Ray run's results: the same bytes as on a local run's."""
    from click.testing import CliRunner

    from leak_corpus import corpus
    from noisegauge.cli.main import cli

    rows = corpus("ko", ids=False)
    tables = []
    for name, engine in (("local", {}), ("ray", {"engine": "ray", "block_size": 5})):
        out = tmp_path / f"{name}.jsonl"
        evaluate(rows, out=out, cache=False, progress=False, **engine)  # type: ignore[arg-type]
        res = CliRunner().invoke(cli, ["leaks", str(out), "--topk", "--json",
                                       str(tmp_path / f"{name}.json")], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        tables.append(((tmp_path / f"{name}.json").read_bytes(), res.output.splitlines()[1:-1]))
    assert tables[0] == tables[1]
    assert json.loads(tables[0][0])["sources"][0]["leaked_claims"] == 8


def test_llm_judge_limits_hold_for_the_whole_cluster(ray_local: Any, tmp_path: Path,
                                                     fake_openai_server: FakeOpenAIServer) -> None:
    server = fake_openai_server
    server.latency = 0.1
    judge = get_judge("openai:fake-judge", base_url=server.url, api_key="sk-test",
                      max_concurrency=2, max_retries=0)
    rows = _rows(16)
    evaluate(rows, judge=judge, out=tmp_path / "local.jsonl", cache=False, progress=False)
    server.max_in_flight = 0
    report = evaluate(rows, judge=judge, out=tmp_path / "ray.jsonl", cache=False,
                      progress=False, engine="ray", workers=2, block_size=4, concurrency=8)
    assert server.max_in_flight == 2  # each of the 2 workers alone may send 2
    assert report.usage.calls > 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()


def test_stress_judges_on_ray_with_the_local_curve(ray_local: Any) -> None:
    from noisegauge.stress import stress

    golden = Path(__file__).resolve().parents[1] / "examples" / "golden_support.jsonl"
    args: dict[str, Any] = {"pipeline": "extractive", "levels": [0, 2], "judge": "lexical",
                            "judge_cache": False}
    local = stress(golden, **args)
    remote = stress(golden, engine="ray", workers=2, **args)
    assert remote.curve() == local.curve()


def test_permit_desk_holds_the_ceiling_and_takes_back_lapsed_permits() -> None:
    async def go() -> tuple[int, float]:
        desk = PermitDesk()
        limits = (2, None, None)
        held = [await desk.acquire("e", limits, 1, hold=0.2) for _ in range(2)]
        start = time.monotonic()
        third = await desk.acquire("e", limits, 1, hold=5.0)  # waits for a lapse
        waited = time.monotonic() - start
        await desk.release(third)
        for p in held:
            await desk.release(p)  # lapsed already: nothing happens
        return desk.report()["e"]["peak"], waited

    peak, waited = asyncio.run(go())
    assert peak == 2 and 0.15 <= waited < 2.0


# -- a `ray start --head` cluster, joined by address --------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def head_cluster(ray_local: Any) -> Iterator[str]:
    """``ray start --head`` on this machine (its own process group, killed afterwards)."""
    port = _free_port()
    # A short folder: Ray's socket paths under it must fit in 107 bytes.
    temp = Path(tempfile.mkdtemp(prefix="ngray-"))
    env = {**os.environ, **RAY_ENV}
    ray_bin = Path(sys.executable).with_name("ray")
    log = temp / "start.log"
    with log.open("wb") as sink:
        proc = spawn(
            [str(ray_bin), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
             "--include-dashboard=false", "--object-store-memory=200000000",
             f"--temp-dir={temp}", "--disable-usage-stats"],
            env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                pytest.fail(f"ray start --head exited: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        stop(proc)  # the head and all it started
        shutil.rmtree(temp, ignore_errors=True)


def _score(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noisegauge", "score", *args, "-q"],
                          capture_output=True, text=True, env=env, timeout=300)


def test_cli_on_a_started_cluster_matches_the_local_run(
        head_cluster: str, tmp_path: Path, fake_openai_server: FakeOpenAIServer) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows(20)), encoding="utf-8")
    env = {**os.environ, **RAY_ENV}
    llm = ["--judge", "openai:fake-judge", "--base-url", fake_openai_server.url,
           "--api-key", "sk-test", "--max-concurrency", "2", "--no-canaries"]
    for name, judge in (("lexical", []), ("llm", llm)):
        local = _score([str(data), *judge, "--out", str(tmp_path / f"{name}-local.jsonl"),
                        "--no-cache", "--allow-errors"], env)
        assert local.returncode == 0, local.stderr
        remote = _score([str(data), *judge, "--out", str(tmp_path / f"{name}-ray.jsonl"),
                         "--no-cache", "--allow-errors", "--engine", "ray",
                         "--ray-address", head_cluster, "--workers", "2"], env)
        assert remote.returncode == 0, remote.stderr
        assert ((tmp_path / f"{name}-ray.jsonl").read_bytes()
                == (tmp_path / f"{name}-local.jsonl").read_bytes())
    assert fake_openai_server.max_in_flight <= 2
    bad = _score([str(data), "--ray-address", head_cluster], env)
    assert bad.returncode == 2 and "--engine ray" in bad.stderr


def test_a_block_cache_reads_the_users_cache_and_its_answers_merge_back(tmp_path: Path) -> None:
    from noisegauge.runner.block_cache import BlockCache

    user = JudgeCache(tmp_path / "user.sqlite3")
    old, new = JudgeCache.key("ns", "check", "a"), JudgeCache.key("ns", "check", "b")
    user.put(old, "e", namespace="ns", method="check")
    user.flush()
    block = BlockCache(tmp_path / "block.sqlite3", str(user.path))
    assert block.get(old) == "e" and block.get(new) is None
    block.put(new, "n", raw=["raw answer"], namespace="ns", method="check")
    dump = block.dump()
    block.close()
    assert [k for k, *_ in dump[0]] == [new]  # only what the block learned goes back
    assert user.merge(dump) == 1 and user.merge(dump) == 0
    entry = user.entry(new)
    assert entry is not None and entry.value == "n" and entry.raw == ["raw answer"]
    assert entry.method == "check"


def test_ray_options_need_the_ray_engine() -> None:
    from noisegauge.errors import InvalidInput

    with pytest.raises(InvalidInput, match="needs engine='ray'"):
        evaluate(_rows(12), ray_address="auto", cache=False, progress=False)
    with pytest.raises(InvalidInput, match="workers must be at least 1"):
        evaluate(_rows(12), workers=0, cache=False, progress=False)
    with pytest.raises(InvalidInput, match="unknown engine"):
        evaluate(_rows(12), engine="dask", cache=False, progress=False)
