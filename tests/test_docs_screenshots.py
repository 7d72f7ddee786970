"""The report screenshots in docs/img show what the tool draws today: each carries the judge
and figures it was taken with (``docs/scripts/screenshots.py`` stamps them), and they must be
what scoring the bundled example gives now. Retake with ``python docs/scripts/screenshots.py``."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from noisegauge import evaluate

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ("report-overview.png", "report-sample.png")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_screenshots",
                                                  ROOT / "docs" / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_stamp_reads_back(tmp_path: Path) -> None:
    shots = _script()
    png = tmp_path / "x.png"
    png.write_bytes((ROOT / "docs" / "img" / SHOTS[0]).read_bytes())
    png.write_bytes(png.read_bytes().replace(b"noisegauge-figures", b"noisegauge-figureX"))
    assert shots.stamped(png) is None
    shots.stamp(png, '{"a": 1}')
    assert shots.stamped(png) == '{"a": 1}'
    assert png.read_bytes().endswith(b"IEND\xaeB`\x82")


@pytest.mark.parametrize("name", SHOTS)
def test_the_report_screenshots_show_todays_figures(name: str) -> None:
    pytest.importorskip("scipy", reason="the screenshots show BCa intervals (pip install '.[stats]')")
    shots = _script()
    text = shots.stamped(ROOT / "docs" / "img" / name)
    assert text is not None, f"docs/img/{name} carries no figures: retake it"
    rows = list(evaluate(str(ROOT / "examples" / "support_bot.jsonl"), cache=False,
                         progress=False).rows())
    assert json.loads(text) == json.loads(json.dumps(shots.figures(rows))), (
        f"docs/img/{name} is stale: python docs/scripts/screenshots.py")
