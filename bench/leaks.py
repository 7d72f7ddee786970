"""Time and peak memory of ``noisegauge leaks`` on large results files.

    python bench/leaks.py --n 10000 --n 100000

Scores the bundled support-bot example once with the default judge, then writes a results
file of N rows from those rows (unique ids; the sources renamed so the file holds about N/10
distinct documents, each retrieved by several rows, as in a real corpus). Each file is read by
``noisegauge leaks FILE --topk --json OUT`` in a fresh process, whose wall time and peak
resident memory (``getrusage``) are printed beside the file size and the peak of a process
that only imports the command. The leak table is streamed: the peak should stay flat as N
grows tenfold, far below the file size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from noisegauge import evaluate

ROOT = Path(__file__).resolve().parents[1]
IMPORT_ONLY = "import noisegauge.cli.leaks, noisegauge.leaks.aggregate, noisegauge.report.data"


def base_rows() -> list[dict[str, Any]]:
    report = evaluate(str(ROOT / "examples" / "support_bot.jsonl"), cache=False, progress=False)
    return [dict(r) for r in report.rows()]


def write_results(path: Path, base: list[dict[str, Any]], n: int) -> int:
    """N rows cycling through ``base``; each pass renames the sources into another copy of
    the example's corpus, so the file holds about N/10 distinct sources. Returns how many."""
    distinct = {c["source"] for r in base for c in r["chunks"]}
    copies = max(1, round(n / 10 / max(1, len(distinct))))
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            row = json.loads(json.dumps(base[i % len(base)]))
            row["id"], row["index"] = f"{row['id']}-{i}", i
            for c in row["chunks"]:
                c["source"] = f"{c['source']}#{(i // len(base)) % copies}"
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(distinct) * min(copies, -(-n // len(base)))


def measure(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``python args`` in a fresh process (``wait4``
    gives that one child's own ``ru_maxrss``)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{args} exited {proc.returncode}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, action="append", help="rows (repeatable; default 10000, 100000)")
    opts = ap.parse_args()
    sizes = opts.n or [10_000, 100_000]
    base = base_rows()
    _, idle = measure(["-c", IMPORT_ONLY])
    print(f"python importing the command: peak {idle:,.0f} MiB")
    print(f"{'rows':>8} {'file MiB':>9} {'seconds':>8} {'rows/s':>8} {'peak MiB':>9} {'sources':>8}")
    with tempfile.TemporaryDirectory(prefix="ng-leaks-") as tmp:
        for n in sizes:
            results, out = Path(tmp) / f"r{n}.jsonl", Path(tmp) / f"l{n}.json"
            write_results(results, base, n)
            seconds, peak = measure(["-m", "noisegauge", "leaks", str(results), "--topk",
                                     "--json", str(out)])
            sources = len(json.loads(out.read_text(encoding="utf-8"))["sources"])
            size = results.stat().st_size / 2**20
            print(f"{n:>8,} {size:>9,.0f} {seconds:>8.1f} {n / seconds:>8,.0f} {peak:>9,.0f} "
                  f"{sources:>8,}")
            results.unlink()


if __name__ == "__main__":
    main()
