"""The figures on docs/how-to/testset.md are the bench's (bench/testset_accuracy.py), and
the bench still gives them (with ../shared/data/halueval; skipped without it)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "how-to" / "testset.md"
RESULTS = {"questions": ROOT / "bench" / "results" / "testset_accuracy_test.json",
           "log": ROOT / "bench" / "results" / "testset_accuracy_test_log.json"}
DATA = ROOT.parent / "shared" / "data"


def _row(label: str) -> list[str]:
    line = next(x for x in PAGE.read_text(encoding="utf-8").splitlines()
                if x.startswith(f"| {label}"))
    return [c.strip() for c in line.strip("|").split("|")][1:]


def test_the_page_shows_the_stored_figures() -> None:
    q, log = (json.loads(p.read_text(encoding="utf-8")) for p in RESULTS.values())
    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    assert _row("drafted reference holds")[:3] == [
        pct(q["reference_holds_answer"]), pct(log["reference_holds_answer"]),
        pct(q["baseline_holds_answer"])]
    assert _row("chunks marked relevant")[:3] == [
        f"{q['relevant_precision']:.3f}", f"{log['relevant_precision']:.3f}",
        f"{q['baseline_precision']:.3f}"]
    assert _row("rows with a trap")[:2] == [pct(q["rows_with_trap"]), pct(log["rows_with_trap"])]
    assert _row("traps that hold")[:2] == [pct(q["traps_holding_answer"]),
                                          pct(log["traps_holding_answer"])]
    assert _row("traps on the same topic")[:2] == [pct(q["traps_same_topic"]),
                                                  pct(log["traps_same_topic"])]
    assert re.search(r"\(`test`, 250 questions\)", PAGE.read_text(encoding="utf-8"))


@pytest.mark.skipif(not (DATA / "halueval").is_dir(),
                    reason="needs ../shared/data/halueval (not in a fresh clone)")
@pytest.mark.parametrize("mode", ["questions", "log"])
def test_the_bench_still_gives_them(mode: str) -> None:
    pytest.importorskip("bm25s", reason="noisegauge testset needs bm25s")
    sys.path.insert(0, str(ROOT / "bench"))
    from testset_accuracy import measure

    assert measure("test", DATA, None, mode == "log") == json.loads(
        RESULTS[mode].read_text(encoding="utf-8"))
