"""Chaos run: ``noisegauge score`` with the OpenAI judge against a server that fails 30% of
requests (429, 500, dropped connections, hangs past the timeout, a proxy's HTML error page,
answers cut at half), while the scoring process is killed with SIGKILL again and again and
restarted with the same command. Prints rows ok / undefined / error / lost (lost must be 0)
and how many ok rows differ from a fault-free run (must be 0: a fault never becomes a verdict).

    python bench/chaos.py                          # 200 rows, 30% faults, 10 kills
    python bench/chaos.py --rows 500 --fault-rate 0.5 --kills 20 --seed 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from batch import generate

from noisegauge.testing import FakeOpenAIServer, Fault


class HtmlErrors(FakeOpenAIServer):
    """The chaos faults, with a proxy's HTML page as the unreadable answer."""

    def _chaos_fault(self) -> Fault | None:
        fault = super()._chaos_fault()
        if fault is not None and fault.content is not None:
            fault.content = "<html><body><h1>502 Bad Gateway</h1></body></html>"
        return fault


def score_cmd(data: Path, out: Path, cache: Path, url: str, timeout: float) -> list[str]:
    return [sys.executable, "-m", "noisegauge", "score", str(data), "--judge", "openai:fake",
            "--base-url", url, "--api-key", "sk-chaos-bench", "--out", str(out), "--cache",
            str(cache), "--timeout", str(timeout), "--max-retries", "3",
            "--max-consecutive-failures", "0", "--allow-errors", "-q"]


def journaled(partial: Path) -> int:
    """Complete rows in the journal (its first line is the header)."""
    try:
        return max(0, partial.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1.0, help="judge request timeout (s)")
    opts = parser.parse_args()
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    rng = random.Random(opts.seed)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency=0.01) as clean, \
            HtmlErrors(latency=0.01) as chaotic:
        d = Path(tmp)
        data = d / "in.jsonl"
        generate(data, opts.rows, seed=opts.seed)
        # The fault-free reference: what every ok row must equal.
        ref = d / "ref.jsonl"
        subprocess.run(score_cmd(data, ref, d / "ref.sqlite3", clean.url, opts.timeout),
                       check=True, stdout=subprocess.DEVNULL)
        chaotic.chaos(opts.fault_rate, seed=opts.seed, hang=opts.timeout * 2)
        out, partial = d / "out.jsonl", d / "out.jsonl.partial"
        cmd = score_cmd(data, out, d / "cache.sqlite3", chaotic.url, opts.timeout)
        started = time.monotonic()
        kills = exits = 0
        journal_sizes = []
        step = max(1, opts.rows // (opts.kills + 2))
        for _ in range(opts.kills):
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            # Killed a random while after a random number of new rows is journaled, so the
            # kills land mid-run (a fixed delay would mostly hit the interpreter's start-up).
            target = journaled(partial) + rng.randint(1, step)
            deadline = time.monotonic() + 120
            while (proc.poll() is None and journaled(partial) < target
                   and time.monotonic() < deadline):
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.3))
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
            if proc.returncode >= 0:
                exits += 1
                break
            journal_sizes.append(journaled(partial))
        final = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - started
        got = read_rows(out)
        reference = {r["index"]: r for r in read_rows(ref)}
        status = Counter(r["status"] for r in got)
        kinds = Counter(r["error_kind"] for r in got if r["status"] == "error")
        lost = opts.rows - len({r["index"] for r in got})
        wrong = sum(r["status"] == "ok" and (r["metrics"] != reference[r["index"]]["metrics"] or
                                             r["response_claims"] !=
                                             reference[r["index"]]["response_claims"])
                    for r in got)
        faults = Counter(type(f).__name__ if f is None else
                         ("drop" if f.drop else f"http {f.status}" if f.status else
                          "hang" if f.delay else "cut" if f.finish_reason else "html page")
                         for f in (r.fault for r in chaotic.chat_requests()) if f is not None)
    print(f"rows={opts.rows} fault_rate={opts.fault_rate} seed={opts.seed} "
          f"timeout={opts.timeout}s max_retries=3 python={sys.version.split()[0]}")
    print(f"requests {len(chaotic.requests):,}, faults injected {sum(faults.values()):,}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    print(f"kill -9: {kills} (journal rows at each kill: {journal_sizes}); "
          f"final run exit {final.returncode}; wall {wall:.1f} s")
    print(f"rows ok {status['ok']}, undefined {status['undefined']}, error {status['error']} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items())) or 'none'}), "
          f"lost {lost}; ok rows differing from the fault-free run: {wrong}")
    if lost or wrong or final.returncode != 0:
        sys.exit(f"FAILED: lost={lost} wrong={wrong} exit={final.returncode}\n{final.stderr}")


if __name__ == "__main__":
    main()
