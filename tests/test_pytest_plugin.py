"""The pytest integration: ``assert_scores`` messages, pyproject bars, the session report."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from batch_helpers import CLEAN, LEAKY
from noisegauge import FakeJudge, evaluate
from noisegauge.errors import InvalidInput
from noisegauge.pytest import ScoreAssertionError, assert_scores

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]



def _plugin_args() -> list[str]:
    """``-p`` only when the entry point is not installed (else pytest loads it already)."""
    installed = any(ep.value == "noisegauge.pytest_plugin"
                    for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "noisegauge.pytest_plugin"]


def test_passing_bars_return_the_report() -> None:
    report = assert_scores([CLEAN], judge=FakeJudge(), config=False,
                           noise_sensitivity_relevant="<=0.2", faithfulness=">=0.8")
    assert report.results[0].value("faithfulness") == 1.0


def test_failure_lists_failed_bars_worst_samples_and_leaked_claims() -> None:
    with pytest.raises(ScoreAssertionError) as info:
        assert_scores([CLEAN, LEAKY], judge=FakeJudge(), config=False,
                      noise_sensitivity_relevant="<=0.2", faithfulness=">=0.5")
    text = str(info.value)
    lines = text.splitlines()
    assert lines[0] == "noisegauge: 1 of 2 thresholds failed (2 samples)"
    assert "FAIL noise_sensitivity_relevant <= 0.2: mean 0.250" in text
    assert "ok   faithfulness >= 0.5" in text
    # the worst sample, its question and the leaked claim with the chunk it came from
    assert "pro-plan: noise_sensitivity_relevant 0.500, faithfulness 1.000" in text
    assert "Q: What is the cancellation policy for the Pro plan?" in text
    assert "'The Pro plan requires a 90-day notice period.' (leaked from relevant chunk 1)" in text
    assert ("chunk 1: 'The Pro plan can be cancelled anytime. The Pro plan requires a 90-day "
            "notice period.'") in text
    assert "clean:" not in text  # a sample meeting every bar is not listed
    assert "{" not in text       # no JSON
    assert [o.passed for o in info.value.outcomes] == [False, True]


def test_a_report_is_checked_without_judging_again() -> None:
    report = evaluate([LEAKY], judge=FakeJudge(), cache=False, progress=False)
    with pytest.raises(ScoreAssertionError, match="noise_sensitivity_relevant <= 0.1"):
        assert_scores(report, config=False, noise_sensitivity_relevant="<=0.1")
    assert_scores(report, config=False, noise_sensitivity_relevant="<=0.5")


def test_bars_must_be_comparisons_and_columns_must_exist() -> None:
    with pytest.raises(InvalidInput, match='write noise_sensitivity_relevant="<=0.2"'):
        assert_scores([CLEAN], judge=FakeJudge(), config=False, noise_sensitivity_relevant=0.2)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="at least one bar"):
        assert_scores([CLEAN], judge=FakeJudge(), config=False)
    report = evaluate([CLEAN], ["faithfulness"], judge=FakeJudge(), cache=False, progress=False)
    with pytest.raises(InvalidInput, match="no precison column"):  # a typo
        assert_scores(report, config=False, precison=">=0.5")
    # a metric of the family the run did not ask for is in every row all the same
    assert_scores(report, config=False, precision=">=1.0")
    with pytest.raises(ScoreAssertionError, match="noise_sensitivity_relevant <= 0.1: mean 0.500"):
        assert_scores(evaluate([LEAKY], ["faithfulness"], judge=FakeJudge(), cache=False,
                               progress=False), config=False, noise_sensitivity_relevant="<=0.1")


def test_error_rows_fail_unless_allowed() -> None:
    bad = {"user_input": "q", "response": "a", "retrieved_contexts": []}  # no reference
    with pytest.raises(ScoreAssertionError) as info:
        assert_scores([CLEAN, bad], judge=FakeJudge(), config=False, faithfulness=">=0.5")
    assert "row 1: could not be scored: row 1, field 'reference': is missing" in str(info.value)
    assert_scores([CLEAN, bad], judge=FakeJudge(), config=False, faithfulness=">=0.5",
                  allow_errors=True)


def test_an_undefined_mean_fails_the_bar() -> None:
    refusal = {**CLEAN, "response": ""}
    with pytest.raises(ScoreAssertionError, match="no sample defined faithfulness"):
        assert_scores([refusal], judge=FakeJudge(), config=False, faithfulness=">=0.5")


def test_thresholds_come_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.noisegauge]\njudge = "fake"\n[tool.noisegauge.thresholds]\n'
        'noise_sensitivity_relevant = "<= 0.2"\n', encoding="utf-8")
    with pytest.raises(ScoreAssertionError, match=r"noise_sensitivity_relevant <= 0.2: mean 0.500"):
        assert_scores([LEAKY], config=tmp_path / "pyproject.toml")
    # a keyword bar replaces the file's bar on the same metric
    assert_scores([LEAKY], config=tmp_path / "pyproject.toml", noise_sensitivity_relevant="<=0.5")


def test_pyproject_typos_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.noisegauge]\nthreshold = {faithfulness = ">=0.8"}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="unknown key"):
        assert_scores([CLEAN], judge=FakeJudge(), config=path)
    path.write_text('[tool.noisegauge.thresholds]\nfaithfulness = 0.8\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="does not say which way is good"):
        assert_scores([CLEAN], judge=FakeJudge(), config=path)


def test_the_entry_point_is_declared() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {"noisegauge": "noisegauge.pytest_plugin"}


# --- through pytest itself --------------------------------------------------------------------

TEST_FILE = f"""
from noisegauge import FakeJudge, evaluate
from noisegauge.pytest import assert_scores

LEAKY = {LEAKY!r}
CLEAN = {CLEAN!r}

def test_clean():
    assert_scores([CLEAN], judge=FakeJudge(), faithfulness=">=0.8")

def test_leaky():
    assert_scores([LEAKY], judge=FakeJudge())

def test_plain_evaluate():
    evaluate([CLEAN], judge=FakeJudge(), cache=False, progress=False)
"""


def test_pytest_run_fails_with_readable_message_and_writes_session_report(
        pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.noisegauge.thresholds]\n'
                               'noise_sensitivity_relevant = "<=0.2"\n')
    pytester.makepyfile(test_rag=TEST_FILE)
    result = pytester.runpytest_subprocess(*_plugin_args(), "--noisegauge-report=out/report.html",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*ScoreAssertionError: noisegauge: 1 of 1 thresholds failed (1 samples)",
        "*FAIL noise_sensitivity_relevant <= 0.2: mean 0.500*",
        "*pro-plan: noise_sensitivity_relevant 0.500*",
        "*'The Pro plan requires a 90-day notice period.' (leaked from relevant chunk 1)*",
        "*noisegauge: report of 3 evaluation(s), 3 samples: *report.html",
    ])
    html = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "test_rag.py::test_leaky · pro-plan" in html
    assert "test_rag.py::test_plain_evaluate · clean" in html
    assert "test_rag.py::test_clean · clean" in html


def test_no_report_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ok="""
from noisegauge import FakeJudge
from noisegauge.pytest import assert_scores

def test_ok():
    rows = [{"user_input": "q", "response": "A.", "reference": "A.", "retrieved_contexts": ["A."]}]
    assert_scores(rows, judge=FakeJudge(), config=False, faithfulness=">=1")
""")
    result = pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "noisegauge: report" not in result.stdout.str()
    assert not list(pytester.path.glob("*.html"))


def test_a_failed_bar_is_short_in_pytest_output(pytester: pytest.Pytester) -> None:
    """The failure is the test's line and the message: no asyncio frames, no chained
    "no running event loop" (it was ~100 lines of them)."""
    pytester.makepyfile(test_leak=f"""
from noisegauge import FakeJudge
from noisegauge.pytest import assert_scores

def test_leaky():
    assert_scores([{LEAKY!r}], judge=FakeJudge(), config=False,
                  noise_sensitivity_relevant="<=0.2")
""")
    result = pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    failure = out[out.index("_ test_leaky _"):out.index("short test summary")].splitlines()
    assert "FAIL noise_sensitivity_relevant <= 0.2: mean 0.500 over 1 samples" in out
    assert len(failure) < 25, "\n".join(failure)
    for noise in ("asyncio", "run_until_complete", "During handling", "no running event loop"):
        assert noise not in out, noise
