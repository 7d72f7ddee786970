"""``noisegauge calibrate``: judges checked on labelled pairs; a tuned threshold saved and used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from noisegauge.calibration import balanced_accuracy, best_threshold, bootstrap_ci, read_pairs
from noisegauge.cli.main import cli
from noisegauge.errors import InvalidInput
from noisegauge.judges import get_judge

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "examples" / "calibration_pairs.jsonl"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_example_has_thirty_labelled_pairs_of_both_kinds() -> None:
    pairs = read_pairs(PAIRS)
    assert len(pairs) == 30
    assert 10 <= sum(p.label for p in pairs) <= 20


def test_calibrate_prints_accuracy_interval_confusion_threshold_and_advice(tmp_path: Path) -> None:
    code, out = run("calibrate", str(PAIRS), "--judge", "lexical", "--judge", "fake")
    assert code == 0, out
    assert "30 labelled pairs" in out
    for word in ("balanced acc", "95% CI", "TP", "FN", "FP", "TN", "best on these pairs"):
        assert word in out
    assert "trust lexical" in out or "no clear winner" in out


def test_saved_profile_sets_the_threshold_of_lexical(tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    code, out = run("calibrate", str(PAIRS), "--save", str(profile))
    assert code == 0, out
    data = json.loads(profile.read_text())
    judge = get_judge(f"lexical:{profile}")
    assert judge.threshold == pytest.approx(data["threshold"])  # type: ignore[attr-defined]
    assert data["tuned_on"]["pairs"] == 30
    assert data["tuned_on"]["balanced_accuracy"] >= data["tuned_on"]["before"]
    code, out = run("calibrate", str(PAIRS), "--judge", f"lexical:{profile}")
    assert code == 0 and f"{data['tuned_on']['balanced_accuracy']:.3f}" in out


def test_a_profile_for_other_weights_is_refused(tmp_path: Path) -> None:
    profile = tmp_path / "old.json"
    profile.write_text(json.dumps({"kind": "noisegauge-lexical-profile", "threshold": 0.3,
                                   "judge": {"model": "gbt-0000000000"}}))
    with pytest.raises(InvalidInput, match="rerun noisegauge calibrate"):
        get_judge(f"lexical:{profile}")


def test_no_profile_tuning_can_make_a_contradiction_entailed(tmp_path: Path) -> None:
    from noisegauge.verdicts import Verdict

    judge = get_judge("lexical", threshold=0.0)
    premise = "Pro plan subscriptions can be cancelled anytime with a 30-day notice period."
    for claim in ("Pro plan subscriptions need a 90-day notice period.",
                  "Pro plan subscriptions cannot be cancelled.",
                  "Enterprise plan subscriptions can be cancelled anytime with a 30-day notice."):
        assert judge.explain(premise, claim).verdict is not Verdict.ENTAILED  # type: ignore[attr-defined]


def test_results_file_with_labelled_claims(tmp_path: Path) -> None:
    samples = tmp_path / "in.jsonl"
    samples.write_text(json.dumps({"user_input": "q", "response": "r",
                                   "reference": "The Pro plan costs $49 per month.",
                                   "retrieved_contexts": ["c"]}) + "\n")
    results = tmp_path / "out.jsonl"
    results.write_text(json.dumps({"index": 0, "status": "ok", "metrics": {}, "response_claims": [
        {"text": "The Pro plan costs $49 per month.", "label": True},
        {"text": "The Pro plan costs $99 per month.", "label": False},
        {"text": "An unlabelled claim."}]}) + "\n")
    pairs = read_pairs(results, samples)
    assert [(p.premise, p.label) for p in pairs] == [("The Pro plan costs $49 per month.", True),
                                                     ("The Pro plan costs $49 per month.", False)]
    code, out = run("calibrate", str(results), "--samples", str(samples))
    assert code == 0 and "2 labelled pairs" in out
    code, out = run("calibrate", str(results))
    assert code == 2 and "--samples" in out


@pytest.mark.parametrize("line,message", [
    ('{"premise": "p", "claim": "c"}', "missing field 'label'"),
    ('{"premise": "p", "claim": "c", "label": "maybe"}', "must be true or false"),
    ("not json", "not JSON"),
])
def test_bad_label_rows_name_the_line_and_the_fix(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    code, out = run("calibrate", str(path))
    assert code == 2 and message in out and "bad.jsonl, line 1" in out


def test_threshold_search_and_interval() -> None:
    gold = [True, True, False, False]
    assert best_threshold(gold, [0.9, 0.6, 0.5, 0.1], current=0.8) == (0.55, 1.0)
    assert balanced_accuracy(gold, [True, False, False, False]) == 0.75
    lo, hi = bootstrap_ci(gold * 10, [True, False, False, False] * 10)
    assert lo <= 0.75 <= hi
