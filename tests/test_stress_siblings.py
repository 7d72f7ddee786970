"""``--strategy siblings``: each golden row's own traps, look-alike first, then conflicting,
then topical; a row without traps is undefined at its noisy levels (said, counted), never its
clean answer again; GOLDEN rows (``noisegauge testset``'s shape) read from JSONL and CSV."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import ROOT
from noisegauge.cli.main import cli
from noisegauge.errors import InvalidInput, InvalidSample
from noisegauge.stress import GoldenItem, load_golden, plan_cases, stress
from noisegauge.stress.distractors import Siblings

FIXTURE = ROOT / "tests" / "data" / "golden" / "golden_siblings.jsonl"


def _row(i: int, distractors: list[dict[str, Any]] | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"q{i}", "user_input": f"What is the refund window of plan {i}?",
        "reference": f"Plan {i} charges can be refunded within {i + 10} days.",
        "retrieved_contexts": [f"Plan {i} charges can be refunded within {i + 10} days."],
        "retrieved_context_ids": [f"kb/refunds#{i}"],
        "draft": {"method": "extractive", "confidence": 0.9, "reviewed": False}}
    if distractors is not None:
        row["distractors"] = distractors
    return row


MIXED = [  # file order is not injection order
    {"id": "t", "text": "Gift cards are non-refundable.", "kind": "topical", "differs": "topic"},
    {"id": "c", "text": "Until 2023 plan 0 charges could be refunded within 30 days.",
     "kind": "conflicting", "differs": "30 days vs 10 days"},
    {"id": "l1", "text": "Plan 7 charges can be refunded within 7 days.", "kind": "look-alike",
     "differs": "plan 7 vs plan 0"},
    {"id": "l2", "text": "Plan 9 charges can be refunded within 9 days.", "kind": "look-alike",
     "differs": "plan 9 vs plan 0"},
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_siblings_inject_look_alikes_first_then_conflicting_then_topical() -> None:
    item = GoldenItem.from_record(_row(0, MIXED), 0)
    drawn = Siblings().draw(item, 4, random.Random(0))
    assert [c.id for c in drawn] == ["l1", "l2", "c", "t"]
    assert [c.meta["trap"] for c in drawn] == ["look-alike", "look-alike", "conflicting", "topical"]
    assert drawn[0].meta["differs"] == "plan 7 vs plan 0" and drawn[0].source == "siblings"
    # levels are nested: level k shows the first k traps, whatever the seed
    cases = plan_cases([item, GoldenItem.from_record(_row(1, MIXED[:1]), 1)], levels=[0, 1, 2, 4],
                       strategies=["siblings"], position="first", seed=5)
    own = {c.level: [ch.id for ch in c.chunks if ch.kind != "relevant"]
           for c in cases if c.item.id == "q0"}
    assert own == {0: [], 1: ["l1"], 2: ["l1", "l2"], 4: ["l1", "l2", "c", "t"]}
    assert all(c.undefined is None for c in cases)


def test_a_trap_that_repeats_a_relevant_chunk_is_never_injected() -> None:
    row = _row(0, [{"text": "Plan 0 charges can be refunded within 10 days.", "kind": "look-alike"},
                   *MIXED[2:]])
    drawn = Siblings().draw(GoldenItem.from_record(row, 0), 4, random.Random(0))
    assert [c.id for c in drawn] == ["l1", "l2"]


def test_a_row_without_traps_is_undefined_at_noisy_levels_and_the_run_says_so(
        tmp_path: Path) -> None:
    golden = _write(tmp_path / "golden.jsonl",
                    [_row(0, MIXED), _row(1, None), _row(2, []), _row(3, MIXED[2:])])
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["stress", str(golden), "--pipeline", "extractive",
                                   "--strategy", "siblings", "--levels", "0,1,2", "--out",
                                   str(out), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "warning: 2 golden row(s) have no distractors of their own (q1, q2)" in res.output
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    for r in results:
        missing = r["item_id"] in ("q1", "q2") and r["level"] > 0
        assert (r["status"] == "undefined") == missing, r
        if missing:
            assert "no distractors of its own" in r["reason"] and r["item_id"] in r["reason"]
            assert all(v is None for v in r["metrics"].values())
    curve = json.loads((out / "curve.json").read_text())
    points = curve["metrics"]["noise_sensitivity_irrelevant"]
    assert [(p["n"], p["undefined"]) for p in points] == [(4, 0), (2, 2), (2, 2)]
    samples = [json.loads(x)["id"] for x in (out / "samples.jsonl").read_text().splitlines()]
    assert "q1@L1r0" not in samples and "q1@L0r0" in samples  # no answer was made up for it
    assert json.loads((out / "run.json").read_text())["no_distractors"] == ["q1", "q2"]


def test_no_row_with_traps_is_one_line_and_exit_2(tmp_path: Path) -> None:
    golden = ROOT / "examples" / "golden_support.jsonl"  # plain golden rows, no traps
    res = CliRunner().invoke(cli, ["stress", str(golden), "--pipeline", "extractive",
                                   "--strategy", "siblings", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "strategy 'siblings' needs golden rows with their own 'distractors'" in res.output
    assert "Traceback" not in res.output
    with pytest.raises(InvalidInput, match="none of the rows has any"):
        plan_cases(load_golden(golden), levels=[1], strategies=["siblings"])


@pytest.mark.parametrize(("distractors", "field"), [
    ("Plan 7 ...", "'distractors'"), ([{"kind": "look-alike"}], "'distractors[0].text'"),
    ([{"text": "x", "kind": "sibling"}], "'distractors[0].kind'"), (["x"], "'distractors[0]'"),
    ([{"text": "x", "kind": "topical", "differs": 3}], "'distractors[0].differs'")])
def test_malformed_traps_name_the_row_and_field(tmp_path: Path, distractors: Any,
                                                field: str) -> None:
    golden = _write(tmp_path / "g.jsonl", [_row(0, MIXED), _row(1, distractors)])
    with pytest.raises(InvalidSample, match=re.escape(f"row 1, field {field}")):
        load_golden(golden)
    res = CliRunner().invoke(cli, ["stress", str(golden), "--pipeline", "extractive",
                                   "--strategy", "siblings", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and f"field {field}" in res.output and "Traceback" not in res.output


def test_golden_rows_keep_draft_as_metadata_and_read_from_csv(tmp_path: Path) -> None:
    rows = [_row(0, MIXED), _row(1, MIXED[:2])]
    from_jsonl = load_golden(_write(tmp_path / "g.jsonl", rows))
    assert from_jsonl[0].metadata["draft"]["reviewed"] is False
    assert "distractors" not in from_jsonl[0].metadata  # read once, as traps
    path = tmp_path / "g.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for r in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v
                             for k, v in r.items()})
    from_csv = load_golden(path)
    assert [it.distractors for it in from_csv] == [it.distractors for it in from_jsonl]
    assert from_csv[1].metadata["draft"] == rows[1]["draft"]


def test_other_strategies_ignore_the_rows_own_traps() -> None:
    items = load_golden(FIXTURE)
    own = {t.text for it in items for t in it.distractors}
    relevant = {t for it in items for t in it.relevant}
    for case in plan_cases(items, levels=[4], strategies=["others"], seed=2):
        injected = {c.text for c in case.chunks if c.kind != "relevant"}
        assert injected <= relevant and not injected & (own - relevant)


def test_the_fixture_is_a_golden_set_with_a_trap_on_every_row() -> None:
    items = load_golden(FIXTURE)
    assert len(items) >= 20 and all(it.distractors for it in items)
    kinds = {t.kind for it in items for t in it.distractors}
    assert kinds == {"look-alike", "conflicting", "topical"}
    for it in items:  # no trap holds the answer
        assert not {t.text for t in it.distractors} & set(it.relevant)
        assert not any(it.reference in t.text for t in it.distractors)


def test_the_rows_own_traps_hurt_the_extractive_pipeline_more_than_random_chunks() -> None:
    """The stress curve over the fixture: siblings against others (random) on the same rows."""
    runs = {s: stress(FIXTURE, pipeline="extractive", levels=[0, 1, 2, 4], strategy=s, seed=0,
                      repeats=3 if s == "others" else 1, judge_cache=False).curve()["metrics"]
            for s in ("siblings", "others")}
    ns = {s: [p["mean"] for p in m["noise_sensitivity_irrelevant"]] for s, m in runs.items()}
    assert ns["siblings"][0] == ns["others"][0] == 0.0  # same clean answers
    assert ns["siblings"] == sorted(ns["siblings"])
    assert all(s > o for s, o in zip(ns["siblings"][1:], ns["others"][1:], strict=True))
    assert sum(ns["siblings"][1:]) >= 1.5 * sum(ns["others"][1:])
    precision = [p["mean"] for p in runs["siblings"]["precision"]]
    assert precision[0] == 1.0 and precision[-1] < 1.0


def test_rows_testset_found_no_answer_for_are_left_out_and_named(tmp_path: Path) -> None:
    no_answer = {**_row(1, []), "reference": None, "retrieved_contexts": [],
                 "retrieved_context_ids": [], "status": "no_answer",
                 "reason": "no answer found in the corpus"}
    conflict = {**_row(2, MIXED), "status": "conflict", "conflicts": ["c"]}
    golden = _write(tmp_path / "g.jsonl", [_row(0, MIXED), no_answer, conflict])
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["stress", str(golden), "--pipeline", "extractive",
                                   "--strategy", "siblings", "--levels", "0,1", "--out",
                                   str(out), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "warning: 1 golden row(s) have no answer yet (status no_answer: q1): left out" in res.output
    items = {json.loads(x)["item_id"] for x in (out / "results.jsonl").read_text().splitlines()}
    assert items == {"q0", "q2"}  # a conflict row is usable: its reference was drafted
    only = _write(tmp_path / "only.jsonl", [no_answer])
    res = CliRunner().invoke(cli, ["stress", str(only), "--pipeline", "extractive",
                                   "--out", str(tmp_path / "o2")])
    assert res.exit_code == 2 and "every row of the golden set has status 'no_answer'" in res.output


def test_compare_pairs_only_the_rows_that_have_traps(tmp_path: Path) -> None:
    from noisegauge.stress import compare

    golden = _write(tmp_path / "g.jsonl", [_row(0, MIXED), _row(1, None), _row(2, MIXED[2:])])
    result = compare(golden, pipelines=["extractive", "extractive:strict"], levels=[0, 1, 2],
                     strategy="siblings", judge_cache=False)
    pooled = {t.metric: t for t in result.tests if t.level is None}
    assert pooled["noise_sensitivity_irrelevant"].n == 2  # q1 is undefined on both sides
