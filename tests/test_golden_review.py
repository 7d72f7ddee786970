"""Reviewing a golden set without a browser: the file told from a RESULTS file by its rows,
review events folded (latest wins), an accept refused until the row is ready (a reference, a
chunk holding it, a conflict settled), and ``testset export`` writing the kept rows as the
person left them; plus the page's server: token, loopback, its own origin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import require_extra
from noisegauge.cli.main import cli
from noisegauge.errors import InvalidInput
from noisegauge.people.golden import export_rows, fold_golden, golden_digest, read_golden, sniff
from noisegauge.people.labels import LabelFile, fold
from report_helpers import write_jsonl

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_review.jsonl"


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return Path(shutil.copy(GOLDEN, tmp_path / "golden.jsonl"))


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return read_golden(GOLDEN)


def _ev(rows: list[dict[str, Any]], rid: str, kind: str, **fields: Any) -> dict[str, Any]:
    row = next(r for r in rows if r["id"] == rid)
    return {"kind": kind, "id": rid, "digest": golden_digest(row), **fields}


def _events(path: Path, events: list[dict[str, Any]]) -> Path:
    lf = LabelFile(path)
    for e in events:
        lf.append(e)
    return path


def _by_id(out: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in out}


def test_a_golden_file_is_told_from_results_by_its_rows(tmp_path: Path) -> None:
    assert sniff(GOLDEN) == "golden"
    results = write_jsonl(tmp_path / "r.jsonl", [{"id": "a", "status": "ok", "metrics": {}}])
    assert sniff(results) == "results"
    other = write_jsonl(tmp_path / "x.jsonl", [{"question": "q", "answer": "a"}])
    with pytest.raises(InvalidInput, match=r"x.jsonl, line 1: neither a golden row .*testset"):
        sniff(other)
    require_extra("review")
    res = CliRunner().invoke(cli, ["review", str(other), "--labels", str(tmp_path / "e.jsonl"),
                                   "--no-browser"])
    assert res.exit_code == 2 and "neither a golden row" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "e.jsonl").exists()
    data = write_jsonl(tmp_path / "in.jsonl", [{"user_input": "q", "response": "a"}])
    with pytest.raises(InvalidInput, match=r"an input row .*score it first"):
        sniff(data)


def test_bad_golden_rows_are_named_with_the_fix(tmp_path: Path) -> None:
    good = json.loads(GOLDEN.read_text(encoding="utf-8").splitlines()[0])
    cases = [([good, good], "line 2: id 'pro-refund' is also on line 1"),
             ([{**good, "user_input": ""}], "line 1: field 'user_input'"),
             ([{**good, "retrieved_context_ids": []}], "one id per retrieved context"),
             ([{**good, "distractors": ["text"]}], "field 'distractors'"),
             ([good, {"id": "r", "status": "ok", "metrics": {}}], "line 2: not a golden row")]
    for bad, message in cases:
        path = write_jsonl(tmp_path / "g.jsonl", bad)
        with pytest.raises(InvalidInput, match=message):
            read_golden(path)
        res = CliRunner().invoke(cli, ["testset", "export", str(path), "--labels",
                                       str(_events(tmp_path / "e.jsonl", [])), "--out",
                                       str(tmp_path / "f.jsonl")])
        assert res.exit_code == 2 and message.split(": ", 1)[-1] in res.output, res.output
    assert not (tmp_path / "f.jsonl").exists()


def test_export_applies_the_edits_drops_rejected_and_marks_reviewed(
        rows: list[dict[str, Any]], golden: Path, tmp_path: Path) -> None:
    composed = "The Team plan includes 10 seats."
    events = _events(tmp_path / "events.jsonl", [
        _ev(rows, "pro-refund", "verdict", verdict="accept"),
        _ev(rows, "team-seats", "edit", reference=composed),
        _ev(rows, "team-seats", "verdict", verdict="accept"),
        _ev(rows, "dock-eu-shipping", "role", item=1, role="distractor"),  # settled: old price
        _ev(rows, "dock-eu-shipping", "role", item=3, role="drop"),  # not a trap at all
        _ev(rows, "dock-eu-shipping", "verdict", verdict="accept"),
        _ev(rows, "enterprise-api-limit", "role", item=1, role="answer"),
        _ev(rows, "enterprise-api-limit", "edit",
            reference="The default Enterprise API limit is 6,000 requests per minute."),
        _ev(rows, "enterprise-api-limit", "verdict", verdict="accept"),
        _ev(rows, "sso-okta", "verdict", verdict="accept"),
        _ev(rows, "sso-okta", "verdict", verdict="reject"),  # the latest verdict wins
    ])
    out = tmp_path / "final.jsonl"
    res = CliRunner().invoke(cli, ["testset", "export", str(golden), "--labels", str(events),
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote 4 of 6 rows" in res.output and "1 rejected, 1 not decided yet" in res.output
    final = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in final] == ["pro-refund", "team-seats", "dock-eu-shipping",
                                        "enterprise-api-limit"]  # file order; sso-okta rejected
    got = _by_id(final)
    assert all(r["draft"]["reviewed"] is True for r in final)
    src = _by_id(rows)
    untouched = {k: v for k, v in got["pro-refund"].items() if k not in ("draft", "review")}
    assert untouched == {k: v for k, v in src["pro-refund"].items() if k != "draft"}
    assert got["pro-refund"]["review"]["edited"] == []
    assert got["team-seats"]["reference"] == composed
    assert got["team-seats"]["review"]["edited"] == ["reference"]
    dock = got["dock-eu-shipping"]
    assert [d["id"] for d in dock["distractors"]] == ["shipping/2024.md#3", "shipping/2025.md#1"]
    assert dock["status"] == "drafted" and dock["conflicts"] == [] and dock["reason"] is None
    assert dock["review"]["settled"] == ["shipping/2024.md#3"]
    ent = got["enterprise-api-limit"]
    assert ent["retrieved_context_ids"] == ["plans/enterprise.md#5"]
    assert ent["retrieved_contexts"] == [src["enterprise-api-limit"]["distractors"][1]["text"]]
    assert [d["id"] for d in ent["distractors"]] == ["plans/team.md#4"]
    assert ent["status"] == "drafted"
    assert set(ent["review"]["edited"]) == {"reference", "retrieved_contexts", "distractors"}


def test_a_chunk_turned_trap_is_topical_and_a_trap_turned_answer_leaves_the_traps(
        rows: list[dict[str, Any]]) -> None:
    events = [_ev(rows, "export-formats", "role", item=0, role="distractor"),
              _ev(rows, "export-formats", "role", item=1, role="answer"),
              _ev(rows, "export-formats", "verdict", verdict="accept")]
    kept, _ = export_rows(rows, [{**e, "_line": i} for i, e in enumerate(events, 1)])
    (row,) = kept
    assert row["retrieved_context_ids"] == ["help/import.md#1"]
    assert row["distractors"] == [{"id": "help/export.md#1", "kind": "topical", "differs": None,
                                   "text": rows[5]["retrieved_contexts"][0]}]


def test_an_accept_is_refused_until_the_row_is_ready(rows: list[dict[str, Any]],
                                                     tmp_path: Path) -> None:
    from noisegauge.people.golden_page import GoldenState

    state = GoldenState(rows, LabelFile(tmp_path / "e.jsonl"))
    for rid, message in (("enterprise-api-limit", "no reference yet"),
                         ("dock-eu-shipping", "settle the conflict first: give "
                                              "shipping/2024.md#3 a role")):
        with pytest.raises(InvalidInput, match=message):
            state.check_event(_ev(rows, rid, "verdict", verdict="accept"))
    state.labels.append(state.check_event(_ev(rows, "enterprise-api-limit", "edit",
                                              reference="6,000 requests per minute.")))
    with pytest.raises(InvalidInput, match="no chunk holds the answer"):
        state.check_event(_ev(rows, "enterprise-api-limit", "verdict", verdict="accept"))
    state.labels.append(state.check_event(_ev(rows, "enterprise-api-limit", "role", item=1,
                                              role="answer")))
    assert state.check_event(_ev(rows, "enterprise-api-limit", "verdict", verdict="accept"))
    for bad, message in ((_ev(rows, "sso-okta", "role", item=2, role="answer"), "out of range"),
                         (_ev(rows, "sso-okta", "role", item=0, role="maybe"), "role 'maybe'"),
                         ({**_ev(rows, "sso-okta", "verdict", verdict="accept"),
                           "digest": "0" * 16}, "changed since the page loaded"),
                         (_ev(rows, "sso-okta", "edit", reference="x" * 20_001), "at most"),
                         ({**_ev(rows, "sso-okta", "verdict", verdict="accept"), "id": "nope"},
                          "unknown row")):
        with pytest.raises(InvalidInput, match=message):
            state.check_event(bad)


def test_export_refuses_clobbering_and_an_empty_review(rows: list[dict[str, Any]],
                                                       golden: Path, tmp_path: Path) -> None:
    events = _events(tmp_path / "events.jsonl",
                     [_ev(rows, "pro-refund", "verdict", verdict="accept")])
    for target in (golden, events):
        before = target.read_bytes()
        res = CliRunner().invoke(cli, ["testset", "export", str(golden), "--labels",
                                       str(events), "--out", str(target)])
        assert res.exit_code == 2 and "would overwrite" in res.output, res.output
        assert target.read_bytes() == before
    empty = _events(tmp_path / "none.jsonl", [_ev(rows, "sso-okta", "verdict", verdict="reject")])
    res = CliRunner().invoke(cli, ["testset", "export", str(golden), "--labels", str(empty),
                                   "--out", str(tmp_path / "f.jsonl")])
    assert res.exit_code == 2 and "no row of" in res.output and "accepted yet" in res.output
    assert not (tmp_path / "f.jsonl").exists()
    require_extra("review")
    res = CliRunner().invoke(cli, ["review", str(golden), "--labels", str(golden)])
    assert res.exit_code == 2 and "would overwrite" in res.output


def test_a_row_changed_since_its_review_is_not_exported(rows: list[dict[str, Any]],
                                                       tmp_path: Path) -> None:
    events = [{**_ev(rows, "pro-refund", "verdict", verdict="accept"), "_line": 1}]
    changed = [dict(r) for r in rows]
    changed[0]["reference"] = "Pro plan customers have 45 days."
    kept, counts = export_rows(changed, events)
    assert kept == [] and counts.stale == 1 and counts.undecided == 6


def test_events_of_the_wrong_kind_are_named(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="a label of a results sample"):
        fold_golden([{"kind": "chunk", "id": "a", "digest": "d", "chunk": 0, "_line": 3}])
    with pytest.raises(InvalidInput, match="LABELS line 1: a golden-set review event"):
        fold([{**_ev(rows, "pro-refund", "verdict", verdict="accept"), "_line": 1}])
    require_extra("review")
    res = CliRunner().invoke(cli, ["review", str(GOLDEN), "--seed", "3", "--labels",
                                   str(tmp_path / "e.jsonl")])
    assert res.exit_code == 2 and "reviewed row by row" in res.output
    labels = _events(tmp_path / "labels.jsonl", [{"kind": "chunk", "id": "a", "digest": "d",
                                                  "chunk": 0, "relevant": True}])
    for args in (["review", str(GOLDEN), "--labels", str(labels), "--no-browser"],
                 ["testset", "export", str(GOLDEN), "--labels", str(labels), "--out",
                  str(tmp_path / "f.jsonl")]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2 and "EVENTS line 1: a label of a results sample" in res.output
        assert "Traceback" not in res.output


def test_testset_export_is_named_in_the_help() -> None:
    res = CliRunner().invoke(cli, ["testset", "export", "--help"])
    assert res.exit_code == 0
    assert "testset export [OPTIONS] GOLDEN" in res.output
    review = CliRunner().invoke(cli, ["review", "--help"])
    assert "noisegauge testset export GOLDEN --labels EVENTS" in " ".join(review.output.split())


def _need_review_extra() -> None:
    from batch_helpers import require_extra

    require_extra("review")


def test_the_golden_page_needs_its_token_loopback_and_own_origin(rows: list[dict[str, Any]],
                                                                 tmp_path: Path) -> None:
    _need_review_extra()
    from people_helpers import golden_server
    from test_review_app import _request

    events = tmp_path / "events.jsonl"
    with golden_server(GOLDEN, events) as state:
        root = f"http://127.0.0.1:{state.port}/"
        status, body = _request(state.url + "api/state")
        assert status == 200 and [r["id"] for r in json.loads(body)["rows"]] == [
            r["id"] for r in rows]
        for path in ("", "api/state", state.token[:-1] + "/api/state", "x/api/label"):
            assert _request(root + path)[0] == 404, path
        assert _request(state.url + "api/estimate")[0] == 404  # no judge to correct here
        assert _request(state.url, headers={"Host": "evil.test"})[0] == 403  # DNS rebinding
        event = _ev(rows, "pro-refund", "verdict", verdict="accept")
        post, own = state.url + "api/label", f"http://127.0.0.1:{state.port}"
        json_type = {"Content-Type": "application/json"}
        for headers in ({**json_type, "Origin": "http://evil.test"}, json_type,
                        {"Content-Type": "text/plain", "Origin": own}):
            assert _request(post, data=event, headers=headers)[0] in (403, 415), headers
        assert not events.exists() or fold_golden(LabelFile(events).read()[0]) == {}
        status, body = _request(post, data=event, headers={**json_type, "Origin": own})
        assert status == 200 and json.loads(body)["review"]["verdict"] == "accept"
        status, body = _request(post, data=_ev(rows, "enterprise-api-limit", "verdict",
                                               verdict="accept"),
                                headers={**json_type, "Origin": own})
        assert status == 400 and "no reference yet" in json.loads(body)["error"]
    (only,) = LabelFile(events).read()[0]
    assert only["kind"] == "verdict" and only["id"] == "pro-refund"


def test_cli_serves_a_golden_file_on_loopback_only(golden: Path, tmp_path: Path) -> None:
    _need_review_extra()
    import re
    import subprocess
    import sys
    import time

    from report_helpers import ROOT
    from test_review_app import _listening, _request

    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs /proc/net/tcp (Linux) to read the listening address")
    proc = subprocess.Popen([sys.executable, "-m", "noisegauge", "review", str(golden),
                             "--labels", str(tmp_path / "e.jsonl"), "--no-browser"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        head = proc.stdout.readline()
        assert "reviewing 6 rows of the golden set" in head, head
        m = re.search(r"open: (http://127\.0\.0\.1:(\d+)/[A-Za-z0-9_-]{20,}/)",
                      proc.stdout.readline())
        assert m, proc.stderr.read() if proc.poll() is not None else "no URL printed"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _request(m.group(1))[0] != 200:
            time.sleep(0.1)
        assert _listening(int(m.group(2))) == ["0100007F"]  # 127.0.0.1, nothing else
        assert "golden set" in _request(m.group(1))[1].decode()
    finally:
        proc.terminate()
        proc.wait(20)
