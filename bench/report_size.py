"""Size and speed of the HTML report for large runs.

    python bench/report_size.py --n 1000 --n 10000 [--unique-chunks] [--no-browser]

Builds N support-bot samples from the bundled examples (each a support_bot.jsonl question with
its chunks plus two chunks drawn from examples/distractor_pool.jsonl, seeded), scores them with
the default judge, writes the report and prints its size. ``--unique-chunks`` makes every chunk
text unique (no chunk is stored once for many samples: the worst case for size). With
Playwright and Debian's chromium it also times, in a headless browser at 1280x800: opening the
file until the overview is drawn, showing the first page of the samples table, filtering it, and
opening one sample.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from noisegauge import evaluate
from noisegauge.report import write_report

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _read(name: str) -> list[dict[str, Any]]:
    path = ROOT / "examples" / name
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def samples(n: int, unique: bool, seed: int = 0) -> list[dict[str, Any]]:
    base = _read("support_bot.jsonl")
    pool = [p.get("text") or p.get("chunk") or "" for p in _read("distractor_pool.jsonl")]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        s = dict(base[i % len(base)])
        chunks = list(s["retrieved_contexts"]) + rng.sample([p for p in pool if p], 2)
        if unique:
            chunks = [f"{c} (doc {i}-{j})" for j, c in enumerate(chunks)]
        s.update(id=f"{s['id']}-{i}", retrieved_contexts=chunks)
        out.append(s)
    return out


def browser_times(path: Path) -> dict[str, float] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=FLAGS)
        page = b.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri(), wait_until="load")
        # Timed inside the page (performance.now), so the driver's round trips do not count.
        opened = page.evaluate("performance.getEntriesByName('noisegauge-ready')[0].startTime")
        after = ("() => new Promise(done => requestAnimationFrame(() => setTimeout(done)))")
        table = page.evaluate(f"""async () => {{ const t = performance.now();
            location.hash = 'samples'; await ({after})(); return performance.now() - t; }}""")
        filtered = page.evaluate("""() => { const t = performance.now();
            const box = document.querySelector('#f-q'); box.value = 'enterprise';
            box.dispatchEvent(new Event('input')); return performance.now() - t; }""")
        sample = page.evaluate(f"""async () => {{ const t = performance.now();
            location.hash = 's=' + document.querySelector('#table tbody tr').dataset.pos;
            await ({after})(); return performance.now() - t; }}""")
        assert page.locator("#p-sample.active .response").count() == 1
        b.close()
    if errors:
        raise RuntimeError(f"page errors: {errors}")
    return {"open": opened / 1000, "table": table / 1000, "filter": filtered / 1000,
            "sample": sample / 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="samples (repeatable)")
    parser.add_argument("--unique-chunks", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n or [1000]:
            t0 = time.perf_counter()
            rows = list(evaluate(samples(n, args.unique_chunks), cache=False, progress=False).rows())
            t1 = time.perf_counter()
            path = write_report(Path(tmp) / f"report-{n}.html", rows, title=f"{n} samples")
            t2 = time.perf_counter()
            size = path.stat().st_size
            line = (f"{n:>6} samples{' (unique chunks)' if args.unique_chunks else ''}: "
                    f"{size / 1e6:.2f} MB ({size / n / 1e3:.1f} kB/sample); scored in {t1 - t0:.1f} s, "
                    f"report written in {t2 - t1:.2f} s")
            times = None if args.no_browser else browser_times(path)
            if times is not None:
                line += ("; chromium: ready {open:.2f} s after navigation start, samples table "
                         "{table:.3f} s, text filter {filter:.3f} s, one sample {sample:.3f} s"
                         ).format(**times)
            print(line, flush=True)


if __name__ == "__main__":
    main()
