"""Throughput of ``engine="ray"`` with 1 and 2 workers, and the driver's memory on big inputs.

    python bench/scale.py [lexical|llm|memory|all] [--rows N] [--memory-rows 100000]

- lexical: samples/s of the offline lexical judge (CPU-bound): the local engine, then Ray
  with 1 and 2 workers on a local Ray of 2 CPUs (workers started and warm before the clock
  starts; Ray's start-up is printed apart). Rows: examples/support_bot.jsonl cycled, no
  cache (every row is judged).
- llm: samples/s of the OpenAI judge against the fake server (``noisegauge.testing``) at
  ``--latency`` seconds per call, with an endpoint limit of ``--limit`` requests in flight
  for the whole cluster and ``--per-worker`` samples at once per worker, for 1, 2, 4 and 6
  workers (a local Ray with 6 logical CPUs: the workers wait on HTTP, not on a core).
  Also the most requests the server ever saw at once.
- memory: the driver's peak RSS (``ru_maxrss``) for 10,000 and ``--memory-rows`` rows
  streamed from a JSONL file to ``--out`` (``keep_results=False``) with the ``fake`` judge,
  each in a fresh process; the workers are other processes and not counted.

Everything runs on this machine; other load on it slows every figure (the load average
is printed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def _rows(n: int) -> list[dict[str, Any]]:
    base = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    return [{**row, "id": f"{row['id']}#{i}"} for i, row in zip(range(n), itertools.cycle(base))]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _rate(fn: Any, n: int) -> float:
    started = time.perf_counter()
    fn()
    return n / (time.perf_counter() - started)


def bench_lexical(n: int) -> None:
    import ray

    from noisegauge import evaluate

    rows = _rows(n)
    print(f"== lexical judge, {n} rows (load average before: {_load()})")
    local = _rate(lambda: evaluate(rows, cache=False, progress=False, keep_results=False), n)
    print(f"local engine              {local:8.1f} samples/s")
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    evaluate(rows[:64], cache=False, progress=False, engine="ray", workers=2, block_size=32)
    print(f"ray start + warm-up       {time.perf_counter() - started:8.1f} s")
    rates = {}
    for workers in (1, 2):
        cpu = time.process_time()
        rates[workers] = _rate(lambda w=workers: evaluate(
            rows, cache=False, progress=False, keep_results=False, engine="ray", workers=w),
            n)
        driver = (time.process_time() - cpu) / n * 1000
        print(f"ray, {workers} worker(s)          {rates[workers]:8.1f} samples/s  (driver CPU "
              f"{driver:.2f} ms per sample)")
    print(f"speed-up 2 vs 1 workers   {rates[2] / rates[1]:8.2f}x  (vs local: "
          f"{rates[2] / local:.2f}x; load average after: {_load()})")
    ray.shutdown()


def bench_llm(n: int, latency: float, limit: int, per_worker: int) -> None:
    import ray

    from noisegauge import evaluate, get_judge
    from noisegauge.testing import FakeOpenAIServer

    rows = _rows(n)
    print(f"== LLM judge (fake server, {latency * 1000:.0f} ms per call, endpoint limit "
          f"{limit} in flight, {per_worker} samples at once per worker), {n} rows")
    ray.init(num_cpus=6, include_dashboard=False, log_to_driver=False)
    with FakeOpenAIServer(latency=latency) as server:
        judge = get_judge("openai:fake-judge", base_url=server.url, api_key="sk-bench",
                          max_concurrency=limit)
        evaluate(rows[:12], judge=judge, cache=False, progress=False, engine="ray", workers=6,
                 block_size=2)  # every worker started
        for workers in (1, 2, 4, 6):
            server.max_in_flight = 0
            started = time.perf_counter()
            report = evaluate(rows, judge=judge, cache=False, progress=False,
                              keep_results=False, engine="ray", workers=workers,
                              concurrency=per_worker, block_size=max(4, n // (2 * workers)))
            seconds = time.perf_counter() - started
            u = report.usage
            print(f"ray, {workers} worker(s)   {n / seconds:7.1f} samples/s  {u.calls / seconds:6.1f} "
                  f"calls/s  most in flight at the server: {server.max_in_flight}")
        print(f"per sample: {u.calls / n:.1f} calls, {u.prompt_tokens / n:,.0f} prompt + "
              f"{u.completion_tokens / n:,.0f} completion tokens (server count: chars/4)")
    ray.shutdown()


def _memory_child(path: str, out: str) -> None:
    import ray

    from noisegauge import evaluate

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter()
    report = evaluate(path, judge="fake", cache=False, progress=False, keep_results=False,
                      out=out, engine="ray", workers=2, block_size=1000)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"rows": len(report), "seconds": seconds, "peak_mib": peak}))
    ray.shutdown()


def bench_memory(sizes: list[int]) -> None:
    print(f"== driver memory, fake judge, streamed from JSONL to --out (load: {_load()})")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"in{n}.jsonl"
            with path.open("w", encoding="utf-8") as fh:
                for row in _rows(n):
                    fh.write(json.dumps(row) + "\n")
            out = subprocess.run(
                [sys.executable, __file__, "_memory", str(path), str(Path(tmp) / f"out{n}.jsonl")],
                capture_output=True, text=True, check=True, env={**os.environ, **RAY_ENV})
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{figures['rows']:>8,} rows  {figures['seconds']:7.1f} s  driver peak RSS "
                  f"{figures['peak_mib']:6.0f} MiB  (input {path.stat().st_size / 2**20:.0f} MiB)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_memory":
        _memory_child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="all", choices=["lexical", "llm", "memory", "all"])
    parser.add_argument("--rows", type=int, default=2000, help="rows for the lexical figures")
    parser.add_argument("--llm-rows", type=int, default=120)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--limit", type=int, default=8, help="endpoint limit (requests in flight)")
    parser.add_argument("--per-worker", type=int, default=2, help="samples at once per worker")
    parser.add_argument("--memory-rows", type=int, default=100_000)
    args = parser.parse_args()
    os.environ.update(RAY_ENV)
    if args.what in ("lexical", "all"):
        bench_lexical(args.rows)
    if args.what in ("llm", "all"):
        bench_llm(args.llm_rows, args.latency, args.limit, args.per_worker)
    if args.what in ("memory", "all"):
        bench_memory([10_000, args.memory_rows])


if __name__ == "__main__":
    main()
