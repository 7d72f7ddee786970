"""Calls, tokens and wall time of the LLM judge per batching strategy, next to a simulated Ragas.

    python bench/llm_cost.py [DATA.jsonl ...] [--latency 0.1] [--batch 20] [--workers 16]

Everything runs against the local fake OpenAI-compatible server (``noisegauge.testing``)
through the real ``openai`` SDK over HTTP, with a fixed latency per call. Tokens are counted
by the server as ceil(chars / 4) for both us and Ragas (no tokenizer can be downloaded here).

Rows: for the Ragas LIC example (``../shared/data/ragas``, else the same file bundled in
``tests/data/ragas``, 4 chunks) and each JSONL file given (none: the bundled
``examples/support_bot.jsonl`` when ``../shared`` is absent),
per strategy: calls, prompt/completion tokens and wall time per sample (one sample alone),
then the wall time of a batch of ``--batch`` samples (the file's rows, cycled), all metrics
and both noise modes. noisegauge runs as the library does (``ascore_sample``: the two
extractions of a sample share a call, and so do its two verdict matrices, each chunk sent
once; the strategy decides how the verdicts are split into calls). Every client, ours and
Ragas', has at most ``--workers`` calls in flight.

The Ragas baseline replays its documented schedule (anchors.md §1.6, §1.8): per sample and
per mode, 2 statement extractions then one NLI call per (chunk, side) and one against the
reference, all serial (2n+3 calls), each mode a separate job, 16 concurrent jobs
(``RunConfig.max_workers``). Its prompts are simulated by size: the fixed text of Ragas'
v2 prompts (``src/ragas/prompt/metrics/common.py`` at 5f3aaa6f: 1,637 characters for the
statement prompt, 2,900 for the NLI prompt, one few-shot example each, inputs excluded) plus
the inputs as Ragas formats them (JSON, indent 4); its NLI answers carry a reason per
statement (mean 100 characters, as in its few-shot example). Both sides get the same claims.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from noisegauge import Sample
from noisegauge.judges.llm.batching import STRATEGIES
from noisegauge.judges.llm.judge import OpenAIJudge
from noisegauge.scoring import ascore_sample
from noisegauge.testing import FakeOpenAIServer, FakeRequest, judge_responder
from noisegauge.testing.fake_openai import overlap_verdict
from noisegauge.textkit.sentences import sentences

ROOT = Path(__file__).resolve().parents[1]
#: The larger optional data beside the checkout; a fresh clone has none.
SHARED = ROOT.parent / "shared"
_LIC_NAME = Path("ragas") / "noise_sensitivity_docs_examples.json"
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"


def lic_path() -> Path:
    """The optional data's copy of the LIC file, else the one bundled in tests/data (the
    same file)."""
    shared = SHARED / "data" / _LIC_NAME
    return shared if shared.exists() else ROOT / "tests" / "data" / _LIC_NAME

# The LIC statements as the Ragas docs' worked example has them (anchors.md §5).
LIC_CLAIMS = {
    "response": [
        "The Life Insurance Corporation of India (LIC) is the largest insurance company in India.",
        "LIC is known for its vast portfolio of investments.",
        "LIC contributes to the financial stability of the country.",
    ],
    "reference": [
        "The Life Insurance Corporation of India (LIC) is the largest insurance company in India.",
        "LIC was established in 1956 through the nationalization of the insurance industry.",
        "LIC is known for managing a large portfolio of investments.",
    ],
}

RAGAS_STATEMENT_CHARS = 1637
RAGAS_NLI_CHARS = 2900
RAGAS_REASON_CHARS = 100


@contextlib.contextmanager
def server_process(responder: Callable[[FakeRequest, int], str], latency: float) -> Iterator[str]:
    """A fake server in a forked process, so its CPU time does not compete with the client's
    event loop for the GIL (as a real remote server would not). Yields the base URL."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()

    def serve() -> None:
        parent.close()  # so the parent's death is an EOF here: no server outlives it
        with FakeOpenAIServer(responder, latency=latency) as server, \
                contextlib.suppress(EOFError):
            child.send(server.url)
            child.recv()  # block until the parent says stop

    proc = ctx.Process(target=serve, daemon=True)
    proc.start()
    child.close()  # the server's end: a server that dies is an EOF here, not a hang
    try:
        yield parent.recv()
    finally:
        parent.send("stop")
        proc.join(5)


def load_lic() -> tuple[list[Sample], Callable[[str], list[str]]]:
    record = json.loads(lic_path().read_text())["examples"][0]
    scripted = {record["response"].strip(): LIC_CLAIMS["response"],
                record["reference"].strip(): LIC_CLAIMS["reference"]}

    def claims(text: str) -> list[str]:
        return scripted.get(text.strip(), sentences(text))
    return [Sample.from_record(record)], claims


def load_jsonl(path: Path) -> list[Sample]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Sample.from_record(json.loads(line), row=i) for i, line in enumerate(lines)]


# -- the Ragas simulation ------------------------------------------------------------------

def _ragas_prompt(kind: str, fixed: int, inputs: dict[str, Any]) -> str:
    head = f"RAGAS-SIM-{kind}\n"
    body = json.dumps(inputs, indent=4)
    return head + "." * (fixed - len(head)) + f"\ninput: {body}\nOutput: "


def ragas_responder(claims: Callable[[str], list[str]]) -> Callable[[FakeRequest, int], str]:
    def respond(request: FakeRequest, choice: int) -> str:
        prompt = request.last_user
        inputs = json.loads(re.search(r"\ninput: (.*)\nOutput: $", prompt, re.DOTALL).group(1))
        if prompt.startswith("RAGAS-SIM-STATEMENTS"):
            return json.dumps({"statements": claims(inputs["answer"])}, indent=4)
        return json.dumps({"statements": [
            {"statement": s, "reason": "r" * RAGAS_REASON_CHARS,
             "verdict": int(overlap_verdict(inputs["context"], s) == "entailed")}
            for s in inputs["statements"]]}, indent=4)
    return respond


async def ragas_job(client: Any, sample: Sample) -> tuple[int, int, int]:
    """One Ragas NoiseSensitivity job (one mode of one sample): 2n+3 serial calls."""
    calls = tokens_in = tokens_out = 0

    async def call(prompt: str) -> dict[str, Any]:
        nonlocal calls, tokens_in, tokens_out
        r = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}], temperature=0.01)
        calls += 1
        tokens_in += r.usage.prompt_tokens
        tokens_out += r.usage.completion_tokens
        return json.loads(r.choices[0].message.content)

    statements = {}
    for side, text in (("gt", sample.reference), ("ans", sample.response)):
        out = await call(_ragas_prompt("STATEMENTS", RAGAS_STATEMENT_CHARS,
                                       {"question": sample.user_input, "answer": text}))
        statements[side] = out["statements"]
    for ctx in sample.retrieved_contexts:
        for side in ("gt", "ans"):
            await call(_ragas_prompt("NLI", RAGAS_NLI_CHARS,
                                     {"context": ctx, "statements": statements[side]}))
    await call(_ragas_prompt("NLI", RAGAS_NLI_CHARS,
                             {"context": sample.reference, "statements": statements["ans"]}))
    return calls, tokens_in, tokens_out


async def ragas_run(url: str, samples: Sequence[Sample], workers: int) -> tuple[list[tuple[int, int, int]], float]:
    from openai import AsyncOpenAI
    client = AsyncOpenAI(base_url=url, api_key="sk-bench")
    gate = asyncio.Semaphore(workers)

    async def job(sample: Sample) -> tuple[int, int, int]:
        async with gate:
            return await ragas_job(client, sample)
    start = time.perf_counter()
    # Two metric instances (relevant, irrelevant) = two jobs per sample, nothing shared.
    results = await asyncio.gather(*(job(s) for s in samples for _mode in ("relevant", "irrelevant")))
    wall = time.perf_counter() - start
    await client.close()
    per_sample = [tuple(map(sum, zip(results[2 * i], results[2 * i + 1], strict=True))) for i in range(len(samples))]
    return per_sample, wall  # type: ignore[return-value]


# -- noisegauge ----------------------------------------------------------------------------

async def ours_run(judge: OpenAIJudge, samples: Sequence[Sample]) -> tuple[list[Any], float]:
    start = time.perf_counter()
    results = await asyncio.gather(*(ascore_sample(s, judge, index=i) for i, s in enumerate(samples)))
    return list(results), time.perf_counter() - start


def batch_of(samples: Sequence[Sample], n: int) -> list[Sample]:
    return [samples[i % len(samples)] for i in range(n)]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def bench_dataset(name: str, samples: list[Sample], claims: Callable[[str], list[str]],
                  args: argparse.Namespace) -> None:
    chunks = mean([len(s.retrieved_contexts) for s in samples])
    print(f"\n== {name}: {len(samples)} sample(s), {chunks:.1f} chunks on average; "
          f"{args.latency * 1000:.0f} ms per call; batch of {args.batch}, "
          f"{args.workers} concurrent calls at most")
    print(f"{'judge':<22}{'calls':>7}{'prompt':>9}{'compl.':>8}{'tokens':>8}{'% Ragas':>9}"
          f"{'wall 1':>8}{'batch wall':>12}{'speed-up':>10}")
    batch = batch_of(samples, args.batch)
    with server_process(ragas_responder(claims), args.latency) as url:
        alone = [asyncio.run(ragas_run(url, [s], args.workers)) for s in samples]
        ragas = [r[0][0] for r in alone]
        ragas_tokens = mean([r[1] + r[2] for r in ragas])
        _, ragas_wall = asyncio.run(ragas_run(url, batch, args.workers))
    print(f"{'Ragas (simulated)':<22}{mean([r[0] for r in ragas]):>7.1f}"
          f"{mean([r[1] for r in ragas]):>9.0f}{mean([r[2] for r in ragas]):>8.0f}"
          f"{ragas_tokens:>8.0f}{100:>8.0f}%{mean([r[1] for r in alone]):>7.2f}s"
          f"{ragas_wall:>11.2f}s{1:>9.1f}x")
    for strategy in STRATEGIES:
        with server_process(judge_responder(claims=claims), args.latency) as url:
            judge = OpenAIJudge("gpt-4o-mini", base_url=url, api_key="sk-bench",
                                strategy=strategy, max_concurrency=args.workers)
            singles = [asyncio.run(ours_run(judge, [s])) for s in samples]
            results = [r[0][0] for r in singles]
            errors = [r for r in results if r.status == "error"]
            if errors:
                print(f"  {strategy}: {len(errors)} sample(s) failed: {errors[0].reason}")
            _, wall = asyncio.run(ours_run(judge, batch))
        calls = mean([r.usage.calls for r in results])
        pt = mean([r.usage.prompt_tokens for r in results])
        ct = mean([r.usage.completion_tokens for r in results])
        print(f"{strategy:<22}{calls:>7.1f}{pt:>9.0f}{ct:>8.0f}{pt + ct:>8.0f}"
              f"{100 * (pt + ct) / ragas_tokens:>8.1f}%{mean([r[1] for r in singles]):>7.2f}s"
              f"{wall:>11.2f}s{ragas_wall / wall:>9.1f}x")
        if name == "LIC" and strategy == "joint":
            lic = results[0]
            shown = {k: (None if v is None else round(v, 3)) for k, v in
                     ((m, lic.value(m)) for m in ("noise_sensitivity_relevant",
                                                  "noise_sensitivity_irrelevant"))}
            print(f"  (LIC with the fake judge: {shown})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="*", type=Path, help="JSONL files of samples")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per call")
    parser.add_argument("--batch", type=int, default=20, help="samples in the batch run")
    parser.add_argument("--workers", type=int, default=16, help="concurrent calls / Ragas jobs")
    args = parser.parse_args(argv)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"  # local server
    if not SHARED.exists():
        print(f"{SHARED} not found: the LIC example from {lic_path().relative_to(ROOT)}"
              + ("" if args.data else f", and {EXAMPLE.relative_to(ROOT)} as the data") + ".")
        args.data = args.data or [EXAMPLE]
    lic, lic_claims = load_lic()
    bench_dataset("LIC", lic, lic_claims, args)
    for path in args.data:
        bench_dataset(path.name, load_jsonl(path), sentences, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
