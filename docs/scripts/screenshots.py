"""Take the docs' report screenshots from the real report of the bundled example.

Scores ``examples/support_bot.jsonl`` with the offline judge (no cache), writes the HTML
report, opens it in headless Chromium (Debian's, driven by Playwright, the flags of
``tests/test_report_browser.py``) and saves ``docs/img/report-overview.png`` and
``docs/img/report-sample.png`` (sample sb27: the Enterprise "90-day" misattributed to Pro).
Each PNG carries, in a ``tEXt`` chunk, the judge and the figures the report showed
(``figures``); ``tests/test_docs_screenshots.py`` recomputes them, so a screenshot whose
numbers or judge are no longer what the tool draws fails until it is taken again.

    python docs/scripts/screenshots.py              # needs: pip install '.[report-test]'
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
SAMPLE_ID = "sb27-mix-pro-notice-enterprise"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    for name in (os.environ.get("NOISEGAUGE_CHROMIUM"), "/usr/bin/chromium", "chromium",
                 "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    sys.exit("no chromium found: apt-get install -y chromium (or set NOISEGAUGE_CHROMIUM)")


#: The PNG text key the figures are stamped under.
KEY = "noisegauge-figures"


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the screenshots show that can go stale: the judge, and each metric's mean and
    95% interval (rounded as the report prints them)."""
    from noisegauge.engine.summary import summarize

    names = sorted({n for r in rows for n in (r.get("metrics") or {})})
    out: dict[str, Any] = {"judges": rows[0]["judges"], "metrics": {}}
    for n in names:
        s = summarize(n, [(r.get("metrics") or {}).get(n) for r in rows
                          if r.get("status") != "error"])
        out["metrics"][n] = [None if s.mean is None else round(s.mean, 3),
                             *([round(s.ci[0], 3), round(s.ci[1], 3)] if s.ci else [None, None])]
    return out


def stamp(path: Path, text: str) -> None:
    """Add a ``tEXt`` chunk (KEY, ``text``) right before the PNG's IEND."""
    data = path.read_bytes()
    end = data.rindex(b"IEND") - 4
    body = KEY.encode("latin-1") + b"\0" + text.encode("latin-1")
    chunk = (struct.pack(">I", len(body)) + b"tEXt" + body
             + struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF))
    path.write_bytes(data[:end] + chunk + data[end:])


def stamped(path: Path) -> str | None:
    """The text stamped under KEY in a PNG, or None."""
    data, pos = path.read_bytes(), 8
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"tEXt" and body.startswith(KEY.encode("latin-1") + b"\0"):
            return body.split(b"\0", 1)[1].decode("latin-1")
        pos += 12 + length
    return None


def write_report(folder: Path) -> Path:
    """The report of the bundled example, as ``noisegauge score --report`` writes it."""
    sys.path.insert(0, str(ROOT / "src"))
    from noisegauge import evaluate
    from noisegauge.report import RunInfo, now_text
    from noisegauge.report import write_report as write

    rows = list(evaluate(str(EXAMPLE), cache=False, progress=False).rows())
    when = now_text()
    info = RunInfo(title=EXAMPLE.name, source=f"examples/{EXAMPLE.name}",
                   judges=tuple(rows[0]["judges"]), scored_at=when, generated_at=when)
    (folder / "figures.json").write_text(json.dumps(figures(rows), sort_keys=True,
                                                    ensure_ascii=True), encoding="ascii")
    return write(folder / "report.html", rows, info=info)


def main() -> None:
    try:
        from playwright import sync_api
    except ImportError:
        sys.exit("needs playwright: pip install '.[report-test]'")
    IMG.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        report = write_report(Path(tmp))
        ids = [json.loads(x)["id"] for x in EXAMPLE.read_text(encoding="utf-8").splitlines()]
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(report.as_uri())
            page.wait_for_selector("#verdict")
            page.screenshot(path=str(IMG / "report-overview.png"))
            page.evaluate(f"location.hash = 's={ids.index(SAMPLE_ID)}'")
            page.wait_for_selector("#p-sample .response .hl")
            page.screenshot(path=str(IMG / "report-sample.png"))
            browser.close()
        shown = (Path(tmp) / "figures.json").read_text(encoding="ascii")
    for name in ("report-overview.png", "report-sample.png"):
        stamp(IMG / name, shown)
        print(IMG / name)


if __name__ == "__main__":
    main()
