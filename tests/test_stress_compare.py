"""Paired statistics on synthetic data with known answers, and A/B on the bundled set."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from noisegauge.cli.main import cli
from noisegauge.errors import InvalidInput
from noisegauge.stress import compare, compare_dirs, paired_bootstrap_ci, paired_permutation_test
from noisegauge.stress.compare import compare_rows

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GOLDEN = EXAMPLES / "golden_support.jsonl"
POOL = EXAMPLES / "distractor_pool.jsonl"


def _brute_force_p(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    hits = sum(abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(diffs)))
    return hits / 2 ** len(diffs)


def test_exact_sign_flip_p_values() -> None:
    assert paired_permutation_test([1, 1, 1, 1]) == pytest.approx(2 / 16)
    assert paired_permutation_test([0.5] * 10) == pytest.approx(2 / 1024)
    assert paired_permutation_test([1, -1]) == 1.0
    assert paired_permutation_test([0, 0, 0]) == 1.0
    rng = random.Random(4)
    for _ in range(20):
        diffs = [round(rng.uniform(-1, 1), 2) for _ in range(rng.randint(1, 9))]
        assert paired_permutation_test(diffs) == pytest.approx(_brute_force_p(diffs))
    # Zero differences carry no sign information: adding them changes nothing.
    assert paired_permutation_test([1, 2, 0, 0, 3]) == paired_permutation_test([1, 2, 3])


def test_monte_carlo_agrees_with_exact_and_is_seeded() -> None:
    rng = random.Random(9)
    diffs = [rng.gauss(0.3, 1) for _ in range(14)]
    exact = paired_permutation_test(diffs, exact_up_to=14)
    mc = paired_permutation_test(diffs, exact_up_to=0, resamples=20000, seed=1)
    assert abs(mc - exact) < 0.02
    assert mc == paired_permutation_test(diffs, exact_up_to=0, resamples=20000, seed=1)
    assert paired_permutation_test([1.0] * 30, exact_up_to=0, resamples=999) == pytest.approx(1 / 1000)


def test_permutation_test_is_calibrated_under_the_null() -> None:
    rng = random.Random(0)
    rejections = 0
    for _ in range(200):
        diffs = [rng.gauss(0, 1) for _ in range(10)]
        rejections += paired_permutation_test(diffs) < 0.05
    assert rejections / 200 < 0.09  # nominal 5%; generous bound for 200 draws


def test_bootstrap_ci_covers_the_mean_and_detects_a_shift() -> None:
    rng = random.Random(2)
    shifted = [rng.gauss(0.2, 0.1) for _ in range(25)]
    lo, hi = paired_bootstrap_ci(shifted, seed=3)
    mean = sum(shifted) / len(shifted)
    assert lo < mean < hi and lo > 0
    assert (lo, hi) == paired_bootstrap_ci(shifted, seed=3)
    null = [rng.gauss(0, 0.1) for _ in range(25)]
    lo, hi = paired_bootstrap_ci(null, seed=3)
    assert lo < 0 < hi
    with pytest.raises(ValueError):
        paired_bootstrap_ci([])


def _rows(values: dict[str, float], level: int = 1, digest: str = "x") -> list[dict]:
    return [{"item_id": k, "level": level, "repeat": 0, "status": "ok", "contexts_sha256": digest,
             "metrics": {"noise_sensitivity_irrelevant": v, "precision": 1 - v}}
            for k, v in values.items()]


def test_compare_rows_orients_verdicts_and_rejects_unpaired_runs() -> None:
    a = _rows({f"q{i}": 0.5 for i in range(12)})
    b = _rows({f"q{i}": 0.1 for i in range(12)})
    report = compare_rows(a, b, metrics=["noise_sensitivity_irrelevant", "precision"])
    ns = report.test("noise_sensitivity_irrelevant")
    assert ns.significant and ns.better == "b" and ns.diff == pytest.approx(-0.4)
    assert report.test("precision").better == "b"  # higher precision is better
    same = compare_rows(a, a, metrics=["precision"]).test("precision")
    assert not same.significant and same.better is None and same.p_value == 1.0
    with pytest.raises(InvalidInput, match="different contexts"):
        compare_rows(a, _rows({f"q{i}": 0.1 for i in range(12)}, digest="y"))
    with pytest.raises(InvalidInput, match="same questions"):
        compare_rows(a, b[:-1])


def test_strict_extractive_beats_the_naive_one_on_the_same_noise(tmp_path: Path) -> None:
    report = compare(GOLDEN, pipelines=["extractive", "extractive:strict"], levels=[0, 2, 4],
                     judge="fake", strategy="pool,counterfactual", pool=POOL, seed=0)
    a_rows = [r.result_row() for r in report.report_a.rows]  # type: ignore[union-attr]
    b_rows = [r.result_row() for r in report.report_b.rows]  # type: ignore[union-attr]
    assert [r["contexts_sha256"] for r in a_rows] == [r["contexts_sha256"] for r in b_rows]
    pooled = report.test("noise_sensitivity_irrelevant")
    assert pooled.level is None and pooled.diff is not None and pooled.diff < 0
    assert pooled.significant and pooled.better == "b"
    # The retriever-side metrics see identical contexts, so they cannot differ.
    assert report.test("context_precision").diff == 0.0
    path = report.write(tmp_path)
    assert (tmp_path / "a" / "curve.json").is_file() and (tmp_path / "b" / "curve.json").is_file()
    again = compare_dirs(tmp_path / "a", tmp_path / "b")
    assert again.test("noise_sensitivity_irrelevant").p_value == pooled.p_value
    assert json.loads(path.read_text())["tests"]


def test_compare_cli_on_two_stress_directories(tmp_path: Path) -> None:
    runner = CliRunner()
    for name, pipe in (("a", "extractive"), ("b", "extractive:strict")):
        r = runner.invoke(cli, ["stress", str(GOLDEN), "--pipeline", pipe, "--judge", "fake",
                                "--strategy", "hard", "--levels", "0,3", "--out",
                                str(tmp_path / name)])
        assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                            "--out", str(tmp_path / "cmp")], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert "noise_sensitivity_irrelevant" in r.output
    data = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert {t["level"] for t in data["tests"]} == {0, 3, None}
    r = runner.invoke(cli, ["compare", str(GOLDEN), "--pipeline", "extractive"])
    assert r.exit_code == 2 and "--pipeline twice" in r.output


def test_report_compare_of_two_stress_runs_uses_the_clis_definition(tmp_path: Path) -> None:
    """`noisegauge compare` and `noisegauge report B --compare A` print the same numbers."""
    from noisegauge.report import read_results
    from noisegauge.report.compare import STRESS_PAIRING, compare_runs

    golden = tmp_path / "golden.jsonl"
    source = Path(__file__).resolve().parents[1] / "examples" / "golden_support.jsonl"
    golden.write_text("".join(x + "\n" for x in source.read_text().splitlines()[:8]))
    out = tmp_path / "ab"
    res = CliRunner().invoke(cli, ["compare", str(golden), "--pipeline", "extractive",
                                   "--pipeline", "extractive:strict", "--levels", "0,1,2",
                                   "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    cli_tests = {t["metric"]: t for t in json.loads((out / "compare.json").read_text())["tests"]
                 if t["level"] is None}
    rows_a, rows_b = read_results(out / "a" / "results.jsonl"), read_results(out / "b" / "results.jsonl")
    assert len(rows_a) == 24  # 8 questions x 3 levels; the CLI pairs 8 questions
    c = compare_runs(rows_b, rows_a, list(cli_tests))
    assert c.paired_by == STRESS_PAIRING
    for d in c.diffs:
        t = cli_tests[d.name]
        assert (d.n, d.mean_this, d.mean_other, d.diff, d.p_value) == (
            t["n"], t["mean_b"], t["mean_a"], t["diff"], t["p_value"]), d.name
        assert d.n <= 8
