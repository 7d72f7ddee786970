"""Means with people's labels: people only, and prediction-powered (PPI++, power-tuned).

``Y`` are people's values on a uniform random n of the samples, ``f`` the judge's on the same
samples, ``f_u`` the judge's on the N_u others. PPI++ (Angelopoulos, Duchi, Zrnic 2023) is

    theta = mean(Y) + lam * (mean(f_u) - mean(f)),
    lam   = Cov(Y, f) / ((1 + n / N_u) * Var(f over all)),  clipped to [0, 1],

unbiased whatever the judge; ``lam = 0`` is people only, so a useless judge costs little.
Two small-sample changes, both measured in tests/test_ppi.py: the weight of labelled sample i
is tuned on the other n - 1 (``crossfit``), and the interval uses n - 1 in its deviations and
a Student-t quantile with n - 1 degrees of freedom (``q="t"``). ``crossfit=False, q="z"`` is
exactly ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=None)``.

Every function takes arrays whose last axis is the samples, so a Monte Carlo check runs
thousands of replications in one call; numpy is the ``stats`` extra.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from ..errors import MissingDependency

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["MeanEstimate", "Quantile", "people_mean", "ppi_mean", "quantile", "numpy"]

Quantile = Literal["t", "z"]


def numpy() -> Any:
    """numpy, or the install hint of the ``stats`` extra."""
    try:
        import numpy as np
    except ImportError as exc:
        raise MissingDependency("people-checked estimates", "stats", "numpy") from exc
    return np


def quantile(confidence: float, df: int | None) -> float:
    """Two-sided quantile: Student-t with ``df`` degrees of freedom (None: normal)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    p = 0.5 + confidence / 2
    if df is None:
        return NormalDist().inv_cdf(p)
    try:
        from scipy import stats
    except ImportError as exc:
        raise MissingDependency("people-checked intervals", "stats", "scipy") from exc
    return float(stats.t.ppf(p, df))


@dataclass(frozen=True)
class MeanEstimate:
    """A mean with its interval (None below two values), the labelled n and, for PPI, the
    judge's N (labelled + unlabelled) and the weight ``lam`` it gave the judge."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    N: int | None = None
    lam: float | None = None


def _var(x: NDArray[Any], ddof: int) -> NDArray[Any]:
    return x.var(axis=-1, ddof=ddof)  # type: ignore[no-any-return]


def people_mean_arrays(y: NDArray[Any], confidence: float,
                       q: Quantile = "t") -> tuple[NDArray[Any], NDArray[Any]]:
    """Estimate and half-width of the classical interval, along the last axis."""
    np = numpy()
    n = y.shape[-1]
    ddof = 1 if q == "t" else 0
    half = quantile(confidence, n - 1 if q == "t" else None) * np.sqrt(_var(y, ddof) / n)
    return y.mean(axis=-1), half


def ppi_lambda(y: NDArray[Any], f: NDArray[Any], f_u: NDArray[Any]) -> NDArray[Any]:
    """The power-tuning weight (``ppi_py``'s ``_calc_lhat_glm`` for a mean), clipped to [0, 1];
    0 where the judge's values do not vary (they carry nothing then)."""
    np = numpy()
    n, n_u = y.shape[-1], f_u.shape[-1]
    cov = ((y - y.mean(axis=-1, keepdims=True)) * (f - f.mean(axis=-1, keepdims=True))).mean(axis=-1)
    var_all = _var(np.concatenate([f, f_u], axis=-1), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var_all > 0, cov / ((1 + n / n_u) * var_all), 0.0)
    return np.clip(lam, 0.0, 1.0)  # type: ignore[no-any-return]


def ppi_lambda_loo(y: NDArray[Any], f: NDArray[Any], f_u: NDArray[Any]) -> NDArray[Any]:
    """The same weight for each labelled sample i from every sample but i (leave one out).

    Tuned on all n, the weight is correlated with the very errors it weighs: with skewed
    values (most samples 0) that biases the estimate by about half its standard error at
    n = 20 and coverage falls to 0.72 for 0.90 (tests/test_ppi.py). Left out, sample i's
    weight is independent of it, so each term stays unbiased."""
    np = numpy()
    n, n_u = y.shape[-1], f_u.shape[-1]
    m = n - 1
    my = (y.sum(axis=-1, keepdims=True) - y) / m
    mf = (f.sum(axis=-1, keepdims=True) - f) / m
    cov = ((y * f).sum(axis=-1, keepdims=True) - y * f) / m - my * mf
    every = np.concatenate([f, f_u], axis=-1)
    big_m = every.shape[-1] - 1
    s1 = every.sum(axis=-1, keepdims=True) - f
    s2 = (every ** 2).sum(axis=-1, keepdims=True) - f ** 2
    var = (s2 - s1 ** 2 / big_m) / (big_m - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var > 1e-15, cov / ((1 + n / n_u) * var), 0.0)
    return np.clip(lam, 0.0, 1.0)  # type: ignore[no-any-return]


def ppi_mean_arrays(y: NDArray[Any], f: NDArray[Any], f_u: NDArray[Any], confidence: float,
                    q: Quantile = "t", lam: NDArray[Any] | float | None = None,
                    crossfit: bool = True) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """PPI++ estimate, half-width and (mean) weight along the last axis. ``lam`` None: tuned,
    per sample on the others (``crossfit``, the default) or on all n as ``ppi_py`` does."""
    np = numpy()
    n, n_u = y.shape[-1], f_u.shape[-1]
    if lam is not None:
        lam_i = np.expand_dims(np.asarray(lam, dtype=float), -1)
    elif crossfit:
        lam_i = ppi_lambda_loo(y, f, f_u)
    else:
        lam_i = np.expand_dims(ppi_lambda(y, f, f_u), -1)
    lam_bar = np.broadcast_to(lam_i, y.shape).mean(axis=-1)
    lam_u = np.expand_dims(lam_bar, -1)
    rect = y - lam_i * f
    est = (lam_u * f_u).mean(axis=-1) + rect.mean(axis=-1)
    ddof = 1 if q == "t" else 0
    var = _var(lam_u * f_u, ddof if n_u > 1 else 0) / n_u + _var(rect, ddof) / n
    half = quantile(confidence, n - 1 if q == "t" else None) * np.sqrt(var)
    return est, half, lam_bar


def _clip(est: float, half: float) -> tuple[float, float]:
    # Every metric is a fraction: an interval beyond [0, 1] claims nothing more.
    return max(0.0, est - half), min(1.0, est + half)


def people_mean(y: ArrayLike, confidence: float = 0.9, q: Quantile = "t") -> MeanEstimate:
    """People's mean and its interval (none below two values)."""
    np = numpy()
    arr = np.asarray(y, dtype=float)
    n = int(arr.shape[-1])
    if n == 0:
        return MeanEstimate(None, None, None, 0)
    if n == 1:
        return MeanEstimate(float(arr[0]), None, None, 1)
    est, half = people_mean_arrays(arr, confidence, q)
    if float(arr.max() - arr.min()) == 0.0:
        # No spread is no certainty: n zeros are what a mean of b gives with chance at most
        # (1 - b)^n for any values in [0, 1], so b = 1 - (alpha/2)^(1/n) bounds it.
        half = 1 - ((1 - confidence) / 2) ** (1 / n)
    low, high = _clip(float(est), float(half))
    return MeanEstimate(float(est), low, high, n)


def ppi_mean(y: ArrayLike, f: ArrayLike, f_u: ArrayLike, confidence: float = 0.9,
             q: Quantile = "t", lam: float | None = None, crossfit: bool = True) -> MeanEstimate:
    """The corrected (PPI++) mean: people's ``y`` and the judge's ``f`` on the same samples,
    the judge's ``f_u`` on the rest. Falls back to people only when no sample is left
    unlabelled (then the judge adds nothing)."""
    np = numpy()
    ya, fa, fu = (np.asarray(v, dtype=float) for v in (y, f, f_u))
    if ya.shape != fa.shape:
        raise ValueError(f"y and f must pair up: {ya.shape} != {fa.shape}")
    n, n_u = int(ya.shape[-1]), int(fu.shape[-1])
    if n < 3 or n_u == 0 or float(ya.max() - ya.min()) == 0.0:
        base = people_mean(ya, confidence, q)
        return MeanEstimate(base.estimate, base.low, base.high, n, n + n_u, 0.0 if n else None)
    est, half, lam_out = ppi_mean_arrays(ya, fa, fu, confidence, q, lam, crossfit)
    low, high = _clip(float(est), float(half))
    return MeanEstimate(float(est), low, high, n, n + n_u, float(lam_out))
