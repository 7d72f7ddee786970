"""Batch throughput and memory: ``noisegauge score`` on 1k, 10k and 100k generated samples.

Prints, per size: samples per second, peak RSS of the scoring process, judge calls per sample,
and the same for a rerun of the same command (which must make 0 judge calls: the cache).

    python bench/batch.py                      # 1k, 10k, 100k with lexical (fake if absent)
    python bench/batch.py --sizes 1000 --judge fake --no-cache
    python bench/batch.py --sizes 2000 --workers 1,2 --no-cache   # the process pool's speedup
    python bench/batch.py --long-sample [N]    # diagnostics vs judging, N samples a size

``--workers 1,2``: the same command with each number of worker processes (``score
--workers``), samples/s and the speedup over the first, and whether the results files are
byte-identical (they must be). Prints the machine's load average beside it: the figure
means something on a quiet machine only.

``--long-sample``: generated samples from 3 chunks of six sentences with a 6-claim response
up to the issue's 50 chunks, 100-claim response and 30-claim reference, and the bundled
example, scored in this process with the lexical judge; prints the CPU seconds spent judging
and in the diagnostics (misattribution, word-overlap hints), and their ratio.

``fake`` here is FakeJudge without its per-call log, so memory figures are the runner's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from noisegauge import FakeJudge
from noisegauge.cli.main import main as cli_main
from noisegauge.judges.registry import JUDGE_FACTORIES

WORDS = ["alpha", "beta", "gamma", "delta", "river", "mountain", "city", "policy", "plan", "price", "region", "support", "notice", "period", "contract", "data", "model", "answer", "retrieval", "chunk", "noise", "signal", "value"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."


def generate(path: Path, n: int, seed: int = 0) -> None:
    """Rows like a RAG log: 4 chunks; the response copies some chunk sentences, adds its own."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            chunks = [" ".join(_sentence(rng) for _ in range(3)) for _ in range(4)]
            reference = " ".join([chunks[0].split(". ")[0] + ".", _sentence(rng)])
            response = " ".join([chunks[0].split(". ")[0] + ".", chunks[2].split(". ")[1] + ".",
                                 _sentence(rng)])
            fh.write(json.dumps({"id": f"s{i}", "user_input": f"Question {i} about "
                                 f"{rng.choice(WORDS)}?", "response": response,
                                 "reference": reference, "retrieved_contexts": chunks}) + "\n")


class QuietFakeJudge(FakeJudge):
    """FakeJudge without its call log (the log keeps every premise: a test aid, not a leak)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls = _Discard()


class _Discard(list):  # type: ignore[type-arg]
    def append(self, item: Any) -> None:
        pass


def make_quiet_fake(arg: str | None, **kwargs: Any) -> QuietFakeJudge:
    return QuietFakeJudge(**kwargs)


def run(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one ``noisegauge score`` process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--cli", "score", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"noisegauge score failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    rss_kib = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024
    return wall, rss_kib / 1024


def calls_per_sample(out: Path) -> tuple[float, float]:
    calls = cached = n = 0
    with out.open() as fh:
        for line in fh:
            usage = json.loads(line)["usage"]
            calls += usage["calls"]
            cached += usage["cached_calls"]
            n += 1
    return calls / n, cached / n


PLANS = ["Basic", "Starter", "Plus", "Pro", "Team", "Business", "Enterprise", "Premier", "Elite",
         "Lite"]
PRODUCTS = ["router", "camera", "speaker", "tablet", "scanner"]


def _fact(rng: random.Random, plan: str, product: str) -> str:
    """One sentence of a product sheet: a number with a unit, a name and a few content words."""
    n = rng.randint(2, 400)
    return rng.choice([
        f"The {plan} {product} costs ${n} per month with a {rng.randint(1, 36)}-month contract.",
        f"{plan} {product} owners get {n} GB of cloud storage and {rng.randint(1, 9)} user seats.",
        f"Support for the {plan} {product} answers within {rng.randint(1, 72)} hours on weekdays.",
        f"The {plan} {product} weighs {rng.randint(1, 30)} kg and ships in {n % 14 + 1} days.",
        f"Refunds on the {plan} {product} are accepted within {n % 90 + 1} days of purchase.",
        f"The {plan} {product} battery lasts {n % 48 + 1} hours on a single charge.",
    ])


def long_sample(seed: int = 0, chunks: int = 50, sentences: int = 6, claims: int = 100,
                reference_claims: int = 30) -> dict[str, Any]:
    """The issue's worst case: many long chunks, a long response and reference, and many wrong
    claims whose details stand in chunks about other entities."""
    rng = random.Random(seed)
    entities = [(p, q) for p in PLANS for q in PRODUCTS]
    rng.shuffle(entities)
    texts = [" ".join(_fact(rng, *entities[k % len(entities)]) for _ in range(sentences))
             for k in range(chunks)]
    asked = entities[0]
    ref = [_fact(rng, *asked) for _ in range(reference_claims)]
    resp = []
    for k in range(claims):  # half the reference's facts, half carried from another chunk
        j = rng.randrange(1, chunks)
        carried = rng.choice([s for s in texts[j].split(". ") if s]).rstrip(".") + "."
        resp.append(carried.replace(" ".join(entities[j % len(entities)]), " ".join(asked))
                    if k % 2 else rng.choice(ref))
    return {"user_input": f"What does the {' '.join(asked)} offer?", "response": " ".join(resp),
            "reference": " ".join(ref), "retrieved_contexts": texts}


#: (chunks, response claims, reference claims) of the size sweep; the last is the issue's case.
LONG_SIZES = ((3, 6, 2), (5, 10, 3), (10, 20, 6), (20, 40, 12), (50, 100, 30))


def long_sample_profile(repeat: int = 1) -> None:
    """CPU seconds spent judging and in the diagnostics (this process): on generated samples
    from 3 chunks to the issue's 50 chunks x 100 claims, and summed over the bundled example."""
    from noisegauge import Sample, score_sample
    from noisegauge.judges.registry import get_judge
    from noisegauge.scoring import results

    timed = {"hints": 0.0}
    real = results._with_hints

    def hints(*a: Any, **k: Any) -> Any:
        t0 = time.process_time()
        try:
            return real(*a, **k)
        finally:
            timed["hints"] += time.process_time() - t0

    def run(records: list[dict[str, Any]]) -> tuple[float, float, int, int]:
        timed["hints"] = 0.0
        t0 = time.process_time()
        n_claims = n_mis = 0
        for i, rec in enumerate(records):
            ev = score_sample(Sample.from_record(rec, i), judge).evidence
            n_claims += len(ev.response_claims) if ev else 0
            n_mis += sum(1 for c in ev.response_claims if c.misattributed_from) if ev else 0
        total = time.process_time() - t0
        return total - timed["hints"], timed["hints"], n_claims, n_mis

    judge = get_judge("lexical")
    results._with_hints = hints  # type: ignore[assignment]
    try:
        print(f"{'sample':<34}{'claims':>7}{'misattr':>8}{'judging s':>11}{'diagnostics s':>15}"
              f"{'ratio':>7}")
        worst = 0.0
        run([long_sample(10_000, chunks=3, claims=6, reference_claims=2)])  # imports, first calls
        for chunks, claims, ref in LONG_SIZES:
            # ``repeat`` samples of each size (new texts each: nothing cached from the last)
            recs = [long_sample(seed, chunks=chunks, claims=claims, reference_claims=ref)
                    for seed in range(repeat)]
            judging, diag, n_claims, n_mis = run(recs)
            worst = max(worst, diag / judging)
            print(f"{f'{chunks} chunks x 6 sentences (x{repeat})':<34}{n_claims:>7}"
                  f"{n_mis:>8}{judging:>11.2f}{diag:>15.2f}{diag / judging:>6.2f}x", flush=True)
        example = Path(__file__).resolve().parents[1] / "examples" / "support_bot.jsonl"
        records = [json.loads(line) for line in example.read_text(encoding="utf-8").splitlines()
                   if line.strip()]
        judging, diag, n_claims, n_mis = run(records)
        worst = max(worst, diag / judging)
        print(f"{f'examples/support_bot.jsonl ({len(records)})':<34}{n_claims:>7}{n_mis:>8}"
              f"{judging:>11.2f}{diag:>15.2f}{diag / judging:>6.2f}x")
        print(f"worst ratio: {worst:.2f}x the judging (target: 0.20x or less)")
    finally:
        results._with_hints = real  # type: ignore[assignment]


def main() -> None:
    if sys.argv[1:2] == ["--long-sample"]:
        long_sample_profile(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
        return
    if sys.argv[1:2] == ["--cli"]:  # child: the real CLI, plus the bench's quiet fake judge
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        JUDGE_FACTORIES["fake"] = "batch:make_quiet_fake"
        cli_main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    default_judge = "lexical" if importlib.util.find_spec("noisegauge.judges.lexical") else "fake"
    parser.add_argument("--judge", default=default_judge)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--no-cache", action="store_true", help="measure without the cache")
    parser.add_argument("--workers", help="compare worker processes, e.g. 1,2")
    opts = parser.parse_args()
    if opts.workers:
        compare_workers(opts)
        return
    print(f"judge={opts.judge} concurrency={opts.concurrency} cache={'off' if opts.no_cache else 'on'}"
          f" python={sys.version.split()[0]}")
    print(f"{'samples':>8} {'samples/s':>10} {'peak RSS MiB':>13} {'calls/sample':>13} "
          f"{'rerun samples/s':>16} {'rerun RSS MiB':>14} {'rerun calls/sample':>19}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in opts.sizes.split(",")):
            data, out, cache = Path(tmp, f"in{n}.jsonl"), Path(tmp, f"out{n}.jsonl"), Path(tmp, f"c{n}.db")
            generate(data, n)
            cmd = [str(data), "--judge", opts.judge, "--out", str(out), "-q",
                   "--concurrency", str(opts.concurrency)]
            cmd += ["--no-cache"] if opts.no_cache else ["--cache", str(cache)]
            wall, rss = run(cmd)
            cps, _ = calls_per_sample(out)
            wall2, rss2 = run(cmd)  # the same command again
            cps2, _ = calls_per_sample(out)
            print(f"{n:>8} {n / wall:>10.0f} {rss:>13.0f} {cps:>13.2f} {n / wall2:>16.0f} "
                  f"{rss2:>14.0f} {cps2:>19.2f}", flush=True)


def compare_workers(opts: argparse.Namespace) -> None:
    """samples/s per number of worker processes, on the same input, outputs compared."""
    counts = [int(w) for w in opts.workers.split(",")]
    print(f"judge={opts.judge} cores={os.cpu_count()} python={sys.version.split()[0]} "
          f"load average before={os.getloadavg()[0]:.2f}")
    print(f"{'samples':>8} {'workers':>8} {'samples/s':>10} {'speedup':>8} {'identical':>10} "
          f"{'load':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in opts.sizes.split(",")):
            data = Path(tmp, f"in{n}.jsonl")
            generate(data, n)
            first: tuple[float, bytes] | None = None
            for w in counts:
                out = Path(tmp, f"out{n}-{w}.jsonl")
                wall, _ = run([str(data), "--judge", opts.judge, "--out", str(out), "-q",
                               "--no-cache", "--no-canaries", "--workers", str(w),
                               "--concurrency", str(opts.concurrency)])
                rate, body = n / wall, out.read_bytes()
                first = first or (rate, body)
                print(f"{n:>8} {w:>8} {rate:>10.0f} {rate / first[0]:>7.2f}x "
                      f"{'yes' if body == first[1] else 'NO':>10} {os.getloadavg()[0]:>6.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
