"""Bad RESULTS files end in one error line and exit 2, never a traceback (issue #30)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BAD = {
    "random.jsonl": b"\x00\xa5\xff\xfe garbage \x9c\x80\n",
    "int.jsonl": b"7\n",
    "truncated.jsonl": b'{"status": "ok", "metr',
}
COMMANDS = [["leaks"], ["calibrate"], ["report", "--out", "x.html"],
            ["sample", "--n", "2", "--out", "plan.jsonl"]]


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c[0])
def test_bad_results_file_is_one_line_exit_2(tmp_path: Path, name: str, cmd: list[str]) -> None:
    """Each command names the file and line and exits 2 on unreadable results."""
    path = tmp_path / name
    path.write_bytes(BAD[name])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.run([sys.executable, "-m", "noisegauge", cmd[0], str(path), *cmd[1:]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert name in proc.stderr and "1" in proc.stderr


#: A result row as `score --out` writes it, trimmed to what the commands read.
GOOD = {"index": 0, "id": "a", "status": "ok", "metrics": {"faithfulness": 1.0},
        "response_claims": [{"text": "The notice is 30 days.", "entailed_by": [0]}],
        "chunks": [{"index": 0, "relevant": True}],
        "input": {"user_input": "q", "response": "The notice is 30 days.", "reference": "r",
                  "retrieved_contexts": ["The notice is 30 days."]}}
#: name -> (the second row, the field the message must name)
MALFORMED: dict[str, tuple[dict[str, object], str]] = {
    "no-metrics": ({k: v for k, v in GOOD.items() if k != "metrics"}, "'metrics'"),
    "metrics-list": ({**GOOD, "metrics": [1, 2]}, "'metrics'"),
    "metric-text": ({**GOOD, "metrics": {"faithfulness": "high"}}, "'metrics.faithfulness'"),
    "diagnostics-text": ({**GOOD, "diagnostics": "x"}, "'diagnostics'"),
    "claims-number": ({**GOOD, "response_claims": 5}, "'response_claims'"),
    "claim-text": ({**GOOD, "response_claims": ["x"]}, "'response_claims[0]'"),
    "claim-positions": ({**GOOD, "response_claims": [{"text": "t", "entailed_by": "0"}]},
                        "'response_claims[0].entailed_by'"),
    "chunks-text": ({**GOOD, "chunks": "x"}, "'chunks'"),
    "input-list": ({**GOOD, "input": [1]}, "'input'"),
    "usage-text": ({**GOOD, "usage": "x"}, "'usage'"),
    "index-text": ({**GOOD, "index": "a"}, "'index'"),
    "undefined-list": ({**GOOD, "undefined": [1]}, "'undefined'"),
}
READERS = [["report", "--out", "x.html"], ["leaks"], ["review", "--labels", "l.jsonl"],
           ["estimate", "--labels", "l.jsonl"], ["calibrate", "--samples", "in.jsonl"]]


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("cmd", READERS, ids=lambda c: c[0])
def test_malformed_result_row_names_line_and_field(tmp_path: Path, case: str,
                                                   cmd: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON rows of the wrong shape: one line naming file, line 2 and the field; exit 2."""
    import json

    from batch_helpers import require_extra

    if cmd[0] == "review":
        require_extra("review")

    from click.testing import CliRunner

    from noisegauge.cli.main import cli

    def served(*_: object) -> None:
        raise AssertionError("review served a page for a malformed results file")

    monkeypatch.setattr("noisegauge.cli.review.serve", served)  # never a server to hang on
    monkeypatch.setattr("webbrowser.open", lambda url: True)
    row, field = MALFORMED[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.jsonl").write_text(json.dumps(GOOD["input"]) + "\n")
    (tmp_path / "l.jsonl").write_text("")
    path = tmp_path / f"{case}.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(row) + "\n")
    res = CliRunner().invoke(cli, [cmd[0], str(path), *cmd[1:]], catch_exceptions=False)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert f"{case}.jsonl, line 2" in lines[0] and field in lines[0], lines[0]


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every place in a JSON value (keys and the first list items), outermost first."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            found += _paths(v, (*prefix, i))
    return found


def test_any_row_the_reader_accepts_renders_and_tallies() -> None:
    """One value anywhere in a real result row replaced by any JSON: the reader refuses
    the row (one line), or the report and the leak tally take it: never a crash between."""
    import copy
    import json

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from noisegauge.errors import InvalidInput
    from noisegauge.io.results import check_result
    from noisegauge.leaks.aggregate import LeakTally
    from noisegauge.report import RunInfo, render_report
    from people_helpers import example_rows

    rows = [json.loads(json.dumps(r)) for r in example_rows()[:2]]
    places = _paths(rows[0])
    leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
    values = st.recursive(leaf, lambda kids: st.lists(kids, max_size=3)
                          | st.dictionaries(st.sampled_from(["text", "index", "chunk", "a"]),
                                            kids, max_size=3), max_leaves=6)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(places), values)
    def check(place: tuple[object, ...], value: object) -> None:
        row = copy.deepcopy(rows[0])
        target = row
        for key in place[:-1]:
            target = target[key]  # type: ignore[index]
        target[place[-1]] = value  # type: ignore[index]
        try:
            check_result(row, "r.jsonl", 1)
        except InvalidInput:
            return
        render_report([rows[1], row], info=RunInfo(title="t"))
        tally = LeakTally()
        tally.add(row)
        tally.leaks(10)

    check()
