"""The golden-set tutorial (docs/tutorials/golden-set.md, docs/ko/golden-set.md): its stand-in
reviewer does what the page says a person does, its two pages show the same commands, and its
figures come from the real commands (the screenshot script, run in Chromium where it is
installed). The page's own blocks run in tests/test_docs_blocks.py."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from batch_helpers import ROOT
from markdown_blocks import blocks
from noisegauge.cli.main import cli

EN = ROOT / "docs" / "tutorials" / "golden-set.md"
KO = ROOT / "docs" / "ko" / "golden-set.md"
SCRIPTS = ROOT / "docs" / "scripts"

pytest.importorskip("bm25s", reason="the tutorial's testset needs pip install '.[testset]'")


def _script(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(f"docs_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("tutorial")
    res = CliRunner().invoke(cli, ["testset", str(ROOT / "examples" / "lumora-kb"), "--questions",
                                   str(ROOT / "examples" / "lumora_questions.txt"), "--out",
                                   str(work / "golden.jsonl"), "-q", "--no-cache"])
    assert res.exit_code == 0, res.output
    return work / "golden.jsonl"


def _rows(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_the_stand_in_reviewer_keeps_right_answers_and_rejects_unanswered(drafted: Path,
                                                                          tmp_path: Path) -> None:
    events = _script("golden_review_events")
    known = events.answers(ROOT / "examples" / "golden_support.jsonl")
    counts = events.review(drafted, known, tmp_path / "review.jsonl")
    out = tmp_path / "final.jsonl"
    res = CliRunner().invoke(cli, ["testset", "export", str(drafted), "--labels",
                                   str(tmp_path / "review.jsonl"), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    final = _rows(out)
    assert len(final) == counts["accepted"] and counts["rejected"] >= 1
    asked = {r["user_input"] for r in final}
    assert "Can I pay for the Pro plan in bitcoin?" not in asked  # nothing answers it
    for row in final:
        right = known[events._norm(row["user_input"])]
        assert row["reference"] == right and row["draft"]["reviewed"] is True
        assert any(right in chunk for chunk in row["retrieved_contexts"])
        assert not any(right in d["text"] for d in row["distractors"])  # no trap holds it


def test_the_korean_page_runs_the_same_commands_and_shows_the_same_figures() -> None:
    def shell(page: Path) -> list[str]:
        return [b.code for b in blocks(page) if b.lang == "bash"]

    assert shell(EN) and shell(EN) == shell(KO)
    images = re.compile(r"\]\(\.\./img/([\w-]+\.png)\)")
    shown = images.findall(EN.read_text(encoding="utf-8"))
    assert shown and shown == images.findall(KO.read_text(encoding="utf-8"))
    for name in shown:
        assert (ROOT / "docs" / "img" / name).is_file(), name


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_the_figures_come_from_the_commands_and_the_page_by_keyboard(tmp_path: Path) -> None:
    pytest.importorskip("playwright", reason="pip install '.[report-test]'")
    pytest.importorskip("uvicorn", reason="pip install '.[review]'")
    pytest.importorskip("matplotlib", reason="pip install '.[plot]'")
    shots = _script("tutorial_screenshots")
    sys.argv = ["tutorial_screenshots.py", "--out", str(tmp_path)]
    shots.main()
    for name in ("tutorial-review", "tutorial-review-fixed", "tutorial-curve"):
        data = (tmp_path / f"{name}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name
