"""Take the docs' report screenshots from the real report of the bundled example.

Scores ``examples/support_bot.jsonl`` with the offline judge (no cache), writes the HTML
report, opens it in headless Chromium (Debian's, driven by Playwright, the flags of
``tests/test_report_browser.py``) and saves ``docs/img/report-overview.png`` and
``docs/img/report-sample.png`` (sample sb27: the Enterprise "90-day" misattributed to Pro).

    python docs/scripts/screenshots.py              # needs: pip install '.[report-test]'
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

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


def write_report(folder: Path) -> Path:
    """The report of the bundled example, as ``noisegauge score --report`` writes it."""
    sys.path.insert(0, str(ROOT / "src"))
    from noisegauge import evaluate
    from noisegauge.report import RunInfo, now_text
    from noisegauge.report import write_report as write

    rows = list(evaluate(str(EXAMPLE), cache=False, progress=False).rows())
    stamp = now_text()
    info = RunInfo(title=EXAMPLE.name, source=f"examples/{EXAMPLE.name}",
                   judges=tuple(rows[0]["judges"]), scored_at=stamp, generated_at=stamp)
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
    for name in ("report-overview.png", "report-sample.png"):
        print(IMG / name)


if __name__ == "__main__":
    main()
