"""LABELS and people's values: labels equal to the judge's verdicts give the judge's values
exactly (the same engine); stale, skipped, torn and concurrent writes; rows of values;
agreement; the ``estimate`` command and its promised --json shape."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge.engine.catalogue import METRIC_NAMES
from noisegauge.errors import InvalidInput
from noisegauge.people.estimate import estimate
from noisegauge.people.human import MAIN_METRICS, human_sample
from noisegauge.people.labels import LabelFile, digest_of, read_labels, sample_key
from people_helpers import example_rows, label_like_judge
from report_helpers import ROOT, write_jsonl


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return example_rows()


def test_labels_copying_the_judge_give_the_judges_values(rows: list[dict[str, Any]],
                                                         tmp_path: Path) -> None:
    label_like_judge(tmp_path / "l.jsonl", rows, len(rows))
    lab = read_labels(tmp_path / "l.jsonl")
    compared = 0
    for i, row in enumerate(rows):
        if row["status"] == "error" or not row["reference_claims"]:
            continue
        hs = human_sample(row, lab.current(sample_key(row, i), digest_of(row)))
        assert set(hs.values) == set(METRIC_NAMES)
        for name, mv in hs.values.items():
            assert mv.value == row["metrics"][name], (row["id"], name)
            compared += 1
        assert hs.buckets == tuple(c["bucket"] for c in row["response_claims"])
    assert compared >= 11 * 25


def test_without_reference_labels_only_the_main_metrics(rows: list[dict[str, Any]],
                                                        tmp_path: Path) -> None:
    label_like_judge(tmp_path / "l.jsonl", rows, 3, reference=False)
    est = estimate(rows, tmp_path / "l.jsonl")
    assert tuple(est.metrics) == MAIN_METRICS
    assert len(est.labelled) == 3 and not est.incomplete


def test_flipped_claims_show_in_values_and_agreement(rows: list[dict[str, Any]],
                                                     tmp_path: Path) -> None:
    ok = [(i, r) for i, r in enumerate(rows) if r["status"] == "ok"][:6]
    first = sample_key(ok[0][1], ok[0][0])
    label_like_judge(tmp_path / "l.jsonl", rows, 6, flip={first: {0}})
    est = estimate(rows, tmp_path / "l.jsonl")
    a = est.agreement
    n = sum(len(r["response_claims"]) for _, r in ok)
    assert a.claims == n and a.accuracy == pytest.approx((n - 1) / n)
    judge_right = sum(c["correct"] for _, r in ok for c in r["response_claims"])
    people_right = judge_right + (-1 if ok[0][1]["response_claims"][0]["correct"] else 1)
    pj, ph = judge_right / n, people_right / n
    chance = pj * ph + (1 - pj) * (1 - ph)
    assert a.kappa == pytest.approx((a.accuracy - chance) / (1 - chance))
    assert sum(sum(r.values()) for r in a.confusion.values()) == n
    assert sum(v for j, r in a.confusion.items() for p, v in r.items() if j != p) == 1
    people = est.metrics["precision"].human.estimate
    judge_on_same = sum(r["metrics"]["precision"] for _, r in ok) / 6
    assert people != pytest.approx(judge_on_same)


def test_stale_labels_are_reported_not_applied(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    label_like_judge(tmp_path / "l.jsonl", rows, 2)
    changed = [dict(r) for r in rows]
    target = next(i for i, r in enumerate(changed) if r["status"] == "ok")
    changed[target] = {**changed[target], "response_claims": [
        {**c, "text": c["text"] + " (re-extracted)"} for c in changed[target]["response_claims"]]}
    est = estimate(changed, tmp_path / "l.jsonl")
    key = sample_key(changed[target], target)
    assert key in est.stale and key not in est.labelled
    assert len(est.labelled) == 1
    assert any("other claims or chunks" in n for n in est.notes())


def test_skips_are_recorded_and_reported(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    lf = label_like_judge(tmp_path / "l.jsonl", rows, 3)
    key, d = sample_key(rows[0], 0), digest_of(rows[0])
    lf.append({"kind": "skip", "id": key, "digest": d, "reason": "answer in a language I cannot read"})
    est = estimate(rows, lf.path)
    assert est.skipped == [(key, "answer in a language I cannot read")]
    assert key not in est.labelled and "uniform random sample" in est.notes()[0]
    lf.append({"kind": "skip", "id": key, "digest": d, "reason": None})  # taken back
    assert key in estimate(rows, lf.path).labelled


def test_torn_line_is_skipped_and_the_next_append_survives(tmp_path: Path) -> None:
    lf = LabelFile(tmp_path / "l.jsonl")
    lf.append({"kind": "chunk", "id": "a", "digest": "d", "chunk": 0, "relevant": True})
    with lf.path.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "chunk", "id": "a", "dig')  # a crash mid-line
    lf.append({"kind": "chunk", "id": "a", "digest": "d", "chunk": 1, "relevant": False})
    lab = read_labels(lf.path)
    assert lab.bad_lines == [2]
    assert lab.current("a", "d").chunks == {0: True, 1: False}


def _writer(path: str, who: int, count: int) -> None:
    lf = LabelFile(path)
    for i in range(count):
        lf.append({"kind": "claim", "id": f"s{who}", "digest": "d", "claim": i,
                   "label": "wrong", "chunks": list(range(40)), "note": "x" * 3000})


def test_two_processes_never_interleave(tmp_path: Path) -> None:
    path = str(tmp_path / "l.jsonl")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, who, 150)) for who in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    events, bad = LabelFile(path).read()
    assert not bad and len(events) == 300
    lab = read_labels(path)
    assert len(lab.current("s1", "d").claims) == len(lab.current("s2", "d").claims) == 150


def test_rows_of_values(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    keys = [sample_key(r, i) for i, r in enumerate(rows) if r["status"] != "error"][:4]
    write_jsonl(tmp_path / "v.jsonl", [{"id": k, "noise_sensitivity_relevant": v, "hallucination": None}
                                       for k, v in zip(keys, (0.0, 0.25, 0.5, 0.0), strict=True)])
    est = estimate(rows, tmp_path / "v.jsonl")
    m = est.metrics["noise_sensitivity_relevant"]
    assert m.human.estimate == pytest.approx(0.1875) and m.human.n == 4
    assert est.metrics["hallucination"].human.n == 0
    assert est.metrics["hallucination"].human_undefined == 4  # null: people found it undefined
    assert sorted(est.from_values) == sorted(keys)


@pytest.mark.parametrize(("line", "message"), [
    ({"id": "x", "noise_sensitivty": 0.2}, "unknown field 'noise_sensitivty'"),
    ({"id": "x", "hallucination": 1.5}, "field 'hallucination' must be a fraction"),
    ({"noise_sensitivity_relevant": 0.1}, "field 'id' is missing"),
    ({"id": "x", "kind": "claim", "claim": 0, "label": "maybe", "digest": "d"}, "field 'label'"),
    ({"id": "x", "kind": "chunk", "chunk": 0, "relevant": True}, "field 'digest' is missing"),
])
def test_bad_rows_name_line_and_field(tmp_path: Path, line: dict[str, Any], message: str) -> None:
    write_jsonl(tmp_path / "l.jsonl", [{"id": "ok", "precision": 1.0}, line])
    with pytest.raises(InvalidInput, match="line 2") as exc:
        read_labels(tmp_path / "l.jsonl")
    assert message in str(exc.value)


def test_undefined_for_the_judge_but_not_for_people(rows: list[dict[str, Any]],
                                                    tmp_path: Path) -> None:
    """A sample whose reference gave the judge no claims: its noise modes are undefined for
    the judge, but people marked its chunks, so theirs are defined: counted, not dropped."""
    rows = [dict(r) for r in rows]
    i = next(i for i, r in enumerate(rows) if r["status"] == "ok")
    rows[i] = {**rows[i], "reference_claims": [],
               "metrics": {**rows[i]["metrics"], "noise_sensitivity_relevant": None}}
    label_like_judge(tmp_path / "l.jsonl", rows, 5, reference=False)
    m = estimate(rows, tmp_path / "l.jsonl").metrics["noise_sensitivity_relevant"]
    assert m.judge_undefined == 1
    assert m.human.n == 5 and m.corrected.n == 4
    assert m.corrected.N == m.judge_n == sum(1 for r in rows if r["metrics"].get(
        "noise_sensitivity_relevant") is not None)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noisegauge", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_estimate_cli_names_the_undefined_side(rows: list[dict[str, Any]],
                                              tmp_path: Path) -> None:
    """A sample the judge left undefined is reported as undefined *by the judge* (the old
    line said "defined for one side only: judge 1", the side that was not defined)."""
    require_extra("stats")
    rows = [dict(r) for r in rows]
    i = next(i for i, r in enumerate(rows) if r["status"] == "ok")
    rows[i] = {**rows[i], "reference_claims": [],
               "metrics": {**rows[i]["metrics"], "noise_sensitivity_relevant": None}}
    label_like_judge(tmp_path / "l.jsonl", rows, 5, reference=False)
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    out = _cli("estimate", str(results), "--labels", str(tmp_path / "l.jsonl"))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "undefined on one side only (left out of corrected): " \
        "noise_sensitivity_relevant: undefined by the judge 1, by people 0" in text
    assert "defined for one side only" not in text


def test_estimate_cli_json_shape_and_gates(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    require_extra("stats")
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    label_like_judge(tmp_path / "l.jsonl", rows, 12)
    out = _cli("estimate", str(results), "--labels", str(tmp_path / "l.jsonl"),
               "--confidence", "0.8", "--json", str(tmp_path / "e.json"))
    assert out.returncode == 0, out.stderr
    assert "checked by people (12 labelled of 29 samples, uniform design; 80% intervals for " \
        "the finite target)" in out.stdout
    data = json.loads((tmp_path / "e.json").read_text())
    assert data["confidence"] == 0.8
    assert set(data["metrics"]) == set(METRIC_NAMES)
    m = data["metrics"]["noise_sensitivity_relevant"]
    assert set(m["judge"]) >= {"estimate"}
    assert set(m["human"]) >= {"estimate", "low", "high", "n"}
    assert set(m["corrected"]) >= {"estimate", "low", "high", "n", "N"}
    defined = sum(r["metrics"]["noise_sensitivity_relevant"] is not None for r in rows)
    assert m["human"]["n"] == m["corrected"]["n"] == 12 and m["corrected"]["N"] == defined == 28
    assert m["human"]["low"] <= m["human"]["estimate"] <= m["human"]["high"]
    high = m["corrected"]["high"]
    passed = _cli("estimate", str(results), "--labels", str(tmp_path / "l.jsonl"),
                  "--confidence", "0.8", "--fail-above", f"noise_sensitivity_relevant={high + 0.01}")
    assert passed.returncode == 0, passed.stderr
    failed = _cli("estimate", str(results), "--labels", str(tmp_path / "l.jsonl"),
                  "--confidence", "0.8", "--fail-above", f"noise_sensitivity_relevant={high - 0.01}")
    assert failed.returncode == 1 and "is not all <=" in failed.stderr


def test_estimate_cli_refuses_without_labelled_samples(rows: list[dict[str, Any]],
                                                       tmp_path: Path) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    missing = _cli("estimate", str(results), "--labels", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "no such labels file" in missing.stderr
    key, d = sample_key(rows[0], 0), digest_of(rows[0])
    LabelFile(tmp_path / "l.jsonl").append({"kind": "chunk", "id": key, "digest": d, "chunk": 0,
                                            "relevant": True})
    partial = _cli("estimate", str(results), "--labels", str(tmp_path / "l.jsonl"))
    assert partial.returncode == 2 and "no sample" in partial.stderr
