"""Intervals worth reading: BCa bootstrap with scipy, the t-interval without it, always with n;
A/B p-values Holm-adjusted across metrics."""

from __future__ import annotations

import random
import sys

import pytest

from noisegauge.engine.paired import holm, paired_bootstrap_ci, paired_permutation_test
from noisegauge.engine.summary import interval, summarize
from noisegauge.errors import InvalidInput
from noisegauge.stress.compare import compare_rows


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import module`` fail, as when the extra is not installed."""
    for name in modules:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setitem(sys.modules, name, None)


def test_interval_method_follows_n_and_what_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(1)
    skewed = [float(rng.random() < 0.1) for _ in range(60)]  # mostly 0: a t-interval is symmetric
    mean, ci, method = interval(skewed)
    assert method == "bca" and ci is not None and ci[0] <= mean <= ci[1]
    assert ci[0] >= 0.0 and ci[1] - mean > mean - ci[0]  # skew shows: longer upper arm
    assert interval(skewed) == (mean, ci, method)  # seeded: the same interval every time
    assert interval([0.5]) == (0.5, None, None)  # one value: no interval
    assert interval([]) == (None, None, None)
    assert interval([0.2, 0.4])[2] == "t"  # too few for BCa
    assert interval([0.3] * 20) == (pytest.approx(0.3), (pytest.approx(0.3), pytest.approx(0.3)), "t")
    _without(monkeypatch, "scipy")
    m2, ci2, method2 = interval(skewed)
    assert (m2, method2) == (mean, "t") and ci2 is not None and ci2 != ci


def test_summary_counts_n_undefined_and_errors() -> None:
    s = summarize("precision", [0.0, 1.0, None, 0.5] * 5, errors=3)
    assert (s.n, s.undefined, s.errors, s.method) == (15, 5, 3, "bca")
    assert s.mean == pytest.approx(0.5)


def test_bca_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = random.Random(7)
    trials, covered = 120, 0
    for t in range(trials):
        diffs = [rng.expovariate(4.0) - 0.25 for _ in range(25)]  # skewed, true mean 0
        lo, hi = paired_bootstrap_ci(diffs, seed=t, resamples=2000)
        covered += lo <= 0.0 <= hi
    assert 0.88 <= covered / trials <= 0.99


def test_fallbacks_without_scipy_or_numpy_agree_with_bca(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    diffs = [rng.gauss(0.2, 0.5) for _ in range(30)]
    bca = paired_bootstrap_ci(diffs)
    with monkeypatch.context() as m:
        _without(m, "scipy")
        percentile = paired_bootstrap_ci(diffs)
        p_numpy = paired_permutation_test(diffs, exact_up_to=0, seed=2)
    _without(monkeypatch, "scipy", "numpy")
    pure = paired_bootstrap_ci(diffs)
    p_pure = paired_permutation_test(diffs, exact_up_to=0, seed=2)
    for lo, hi in (percentile, pure):
        assert abs(lo - bca[0]) < 0.06 and abs(hi - bca[1]) < 0.06
    assert abs(p_numpy - p_pure) < 0.01
    assert paired_bootstrap_ci([0.1] * 5) == (0.1, 0.1)  # every question moved alike


def test_holm_adjusts_step_down_and_keeps_order() -> None:
    assert holm([0.01, 0.04, 0.03, None]) == [pytest.approx(0.03), pytest.approx(0.06),
                                               pytest.approx(0.06), None]
    assert holm([0.5, 0.9]) == [pytest.approx(1.0), pytest.approx(1.0)]
    assert holm([]) == []
    ps = [0.001, 0.2, 0.04, 0.011]
    adjusted = holm(ps)
    assert all(a is not None and a >= p for a, p in zip(adjusted, ps, strict=True))


def _rows(values: dict[str, list[float]]) -> list[dict[str, object]]:
    n = len(next(iter(values.values())))
    return [{"item_id": f"q{i}", "level": 1, "repeat": 0, "contexts_sha256": str(i),
             "metrics": {m: v[i] for m, v in values.items()}} for i in range(n)]


def test_compare_holm_corrects_across_metrics() -> None:
    """Eleven metrics, one with a borderline raw p: alone it would pass, adjusted it does not."""
    rng = random.Random(11)
    n = 14
    metrics = [f"m{k}" for k in range(11)]
    a = {m: [rng.random() for _ in range(n)] for m in metrics}
    b = {m: [x + rng.gauss(0, 0.01) for x in a[m]] for m in metrics}  # no real difference
    b["m0"] = [x + 0.05 + rng.gauss(0, 0.04) for x in a["m0"]]  # a modest one
    b["m1"] = [x + 0.5 for x in a["m1"]]  # a large one
    report = compare_rows(_rows(a), _rows(b), metrics=metrics)
    m0, m1 = report.test("m0", 1), report.test("m1", 1)
    assert m1.significant and m1.p_adjusted is not None and m1.p_adjusted < 0.05
    assert m0.p_value is not None and m0.p_adjusted is not None
    assert m0.p_adjusted >= m0.p_value
    family = [report.test(m, 1).p_value for m in metrics]
    assert [report.test(m, 1).p_adjusted for m in metrics] == holm(family)
    assert all(not report.test(m, 1).significant for m in metrics[2:])
    with pytest.raises(InvalidInput, match="10,000"):
        compare_rows(_rows(a), _rows(b), metrics=metrics, resamples=2000)
