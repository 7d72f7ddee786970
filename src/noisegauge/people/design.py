"""Designed labelling: which samples people label, with what probability, and the estimator
that matches (inverse-probability-weighted PPI++ with the finite-population correction).

Designs (``noisegauge sample``), each choosing exactly n of the N scored samples:

- ``uniform``: a seeded random order; every sample has ``p = n / N``;
- ``active`` (Zrnic & Candès 2024, *Active Statistical Inference*): ``p`` follows the judge's
  doubt about the sample, mixed half and half with uniform so that a doubt that means nothing
  costs little and no sample is ever out of reach: ``p_j = n (tau / N + (1 - tau) u_j / sum u)``,
  ``tau = 0.5``, capped at 1. The n are drawn by Pareto order sampling (Rosén 1997), whose
  inclusion probabilities are ``p`` to within Monte Carlo error at these sizes;
- ``stratified``: strata by the judge's worst bucket in the sample (noise, hallucination,
  clean); each stratum gets labels in proportion to its size times its mean doubt, mixed half
  and half with its size, at least two where it holds two, drawn uniformly within it.

The doubt ``u_j`` of a sample with k response claims is ``sqrt(sum of q_c) / k`` (the spread
of people's value around the judge's when claim c's verdict is wrong with chance q_c):
``q_c = 0.5`` for a claim with a verdict in the judge's uncertainty band, 0.25 for a claim the
judge flags (noise or hallucination), 0.05 otherwise. A sample without claims (the judge left
it undefined) cannot enter a corrected mean, so it gets the uniform share only.

The estimator, for the mean over the N_D samples where the judge defined the metric
(``target="finite"``), with labelled Y_i, judge f_i, inclusion probability pi_i:

    theta = (1 / N_D) (lam * sum_unlabelled f + sum_labelled (lam_i f_i + (Y_i - lam_i f_i) / pi_i)),

its variance Hájek's approximation for fixed-size unequal-probability designs, per stratum h,
``n_h / (n_h - 1) sum c_i (e_i / pi_i - B_h)^2 / N_D^2`` with ``c_i = 1 - pi_i`` (the
finite-population correction: labelling every sample leaves no doubt) and ``B_h`` the
c-weighted mean of ``e_i / pi_i``; lam is tuned to minimise it, cross-fitted (sample i's weight
from the others, as in ``ppi``), clipped to [0, 1]; a Student-t quantile with n - H degrees of
freedom, fewer when the terms are heavy-tailed (``effective_df``). ``target="superpopulation"`` adds the variance of the N samples' own mean about the
process that made them, ``S_Y^2 / N_D``. When people agree with the judge on every label the
interval is not a point: the unlabelled share may differ on at most ``1 - (alpha/2)^(1/n)``
of it (the people-only bound of ``ppi``), times ``(N - n) / N``. Arrays carry replications on their first axis, so a
Monte Carlo check runs thousands in one call.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InvalidInput
from ..io.results import iter_objects
from .labels import sample_key
from .ppi import numpy, quantile

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DESIGNS", "Design", "Plan", "PlanRow", "Target", "TARGETS", "DEFAULT_DESIGN",
           "doubt", "stratum", "draw", "designed_mean_arrays", "read_plan", "write_plan",
           "halve_at", "uniform_equivalent"]

Design = Literal["uniform", "active", "stratified"]
Target = Literal["finite", "superpopulation"]
DESIGNS: tuple[Design, ...] = ("uniform", "active", "stratified")
#: What a plan file should hold, in its read errors.
PLAN_HINT = "expected the plan `noisegauge sample` writes: one {\"id\", \"p\"} a line"
TARGETS: tuple[Target, ...] = ("finite", "superpopulation")
DEFAULT_DESIGN: Design = "active"

TAU = 0.5                    # the uniform share of the active and stratified designs
Q_UNCERTAIN, Q_FLAGGED, Q_BASE = 0.5, 0.25, 0.05
FLAGGED = ("relevant_noise", "irrelevant_noise", "hallucination")
STRATA = ("noise", "hallucination", "clean")


def doubt(row: Mapping[str, Any]) -> float | None:
    """The judge's doubt about a results row (module docstring); None for an error row,
    which has nothing to label."""
    if row.get("status") == "error":
        return None
    claims = row.get("response_claims") or ()
    if not claims:
        return None  # undefined for the judge: the uniform share only
    q = sum(Q_UNCERTAIN if c.get("uncertain") else
            Q_FLAGGED if c.get("bucket") in FLAGGED else Q_BASE for c in claims)
    return math.sqrt(q) / len(claims)


def stratum(row: Mapping[str, Any]) -> str:
    """The judge's worst bucket in the row: noise, hallucination or clean."""
    buckets = {c.get("bucket") for c in row.get("response_claims") or ()}
    if buckets & {"relevant_noise", "irrelevant_noise"}:
        return "noise"
    return "hallucination" if "hallucination" in buckets else "clean"


# --- inclusion probabilities (first axis: replications) -------------------------------------

def active_pi(u: NDArray[Any], n: int, tau: float = TAU) -> NDArray[Any]:
    """``n (tau / N + (1 - tau) u / sum u)``, capped at 1 with the rest rescaled to sum to n.
    ``u`` NaN (no claims): the uniform share only."""
    np = numpy()
    big_n = u.shape[-1]
    uu = np.nan_to_num(u, nan=0.0)
    tot = uu.sum(axis=-1, keepdims=True)
    share = np.where(tot > 0, uu / np.where(tot > 0, tot, 1.0), 1.0 / big_n)
    pi = n * (tau / big_n + (1 - tau) * share)
    for _ in range(50):  # cap at 1; the mass above 1 goes to the others in proportion
        capped = pi >= 1.0
        rest = n - capped.sum(axis=-1, keepdims=True)
        free = np.where(capped, 0.0, pi).sum(axis=-1, keepdims=True)
        new = np.where(capped, 1.0, pi * rest / np.where(free > 0, free, 1.0))
        if np.allclose(new, pi):
            break
        pi = new
    return np.minimum(pi, 1.0)  # type: ignore[no-any-return]


def allocate(sizes: NDArray[Any], mean_u: NDArray[Any], n: int, tau: float = TAU) -> NDArray[Any]:
    """Labels per stratum (last axis): ``n`` shared in proportion to ``tau`` size + (1 - tau)
    size x mean doubt, at least min(2, size), at most size; largest remainders round."""
    np = numpy()
    sizes = sizes.astype(float)
    mu = np.nan_to_num(mean_u, nan=0.0)
    total = sizes.sum(axis=-1, keepdims=True)
    sw = sizes * mu
    swt = sw.sum(axis=-1, keepdims=True)
    w = tau * sizes / total + (1 - tau) * np.where(swt > 0, sw / np.where(swt > 0, swt, 1.0),
                                                   sizes / total)
    want = n * w
    low = np.minimum(2.0, sizes)
    got = np.clip(np.floor(want), low, sizes)
    for _ in range(n + sizes.shape[-1] * 2):
        diff = n - got.sum(axis=-1)
        if not np.any(diff):
            break
        room_up = (got < sizes) & (diff[..., None] > 0)
        room_down = (got > low) & (diff[..., None] < 0)
        score = np.where(room_up, want - got, np.where(room_down, got - want, -np.inf))
        pick = np.argmax(score, axis=-1)
        step = np.sign(diff) * np.isfinite(np.take_along_axis(score, pick[..., None], -1))[..., 0]
        np.put_along_axis(got, pick[..., None], (np.take_along_axis(got, pick[..., None], -1)
                                                 + step[..., None]), -1)
    return got.astype(int)  # type: ignore[no-any-return]


def draw(design: Design, n: int, u: NDArray[Any], strata: NDArray[Any], rng: Any,
         tau: float = TAU) -> tuple[NDArray[Any], NDArray[Any]]:
    """The labelling order (first n of a ranking, shape (..., n)) and every sample's inclusion
    probability (shape (..., N)). ``u``: doubts (NaN: none); ``strata``: integer strata."""
    np = numpy()
    big_n = u.shape[-1]
    if not 1 <= n <= big_n:
        raise ValueError(f"n must be between 1 and N = {big_n}, got {n}")
    r = rng.random(u.shape)
    if design == "uniform":
        pi = np.full(u.shape, n / big_n)
        key = r
    elif design == "active":
        pi = active_pi(u, n, tau)
        with np.errstate(divide="ignore"):
            key = np.where(pi >= 1.0, -1.0, (r / (1 - r)) / (pi / (1 - pi)))
    elif design == "stratified":
        h_max = int(strata.max()) + 1
        onehot = strata[..., None] == np.arange(h_max)
        sizes = onehot.sum(axis=-2)
        uu = np.nan_to_num(u, nan=0.0)[..., None]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_u = np.where(sizes > 0, (uu * onehot).sum(axis=-2) / np.maximum(sizes, 1), 0.0)
        n_h = allocate(sizes, mean_u, n, tau)
        pi_h = np.where(sizes > 0, n_h / np.maximum(sizes, 1), 0.0)
        pi = np.take_along_axis(pi_h, strata, -1)
        # within stratum: uniform ranks; chosen = rank < n_h; order chosen ones by r
        rank = np.empty(u.shape)
        for h in range(h_max):
            rh = np.where(strata == h, r, np.inf)
            rank = np.where(strata == h, np.argsort(np.argsort(rh, axis=-1), axis=-1), rank)
        chosen = rank < np.take_along_axis(n_h, strata, -1)
        key = np.where(chosen, r, 2.0 + r)
    else:
        raise ValueError(f"unknown design {design!r}")
    order = np.argsort(key, axis=-1)[..., :n]
    return order, pi


# --- the estimator ---------------------------------------------------------------------------

def _stratum_sums(x: NDArray[Any], onehot: NDArray[Any]) -> NDArray[Any]:
    return (x[..., None] * onehot).sum(axis=-2)  # type: ignore[no-any-return]


def _lam_loo(a: NDArray[Any], b: NDArray[Any], c: NDArray[Any], onehot: NDArray[Any],
             k: NDArray[Any]) -> NDArray[Any]:
    """Per labelled sample, the variance-minimising weight from the other samples."""
    np = numpy()
    sums = [_stratum_sums(v, onehot) for v in (c, c * a, c * b, c * a * b, c * b * b)]
    own = [v[..., None] * onehot for v in (c, c * a, c * b, c * a * b, c * b * b)]

    def cov_var(s: list[Any]) -> tuple[Any, Any]:
        sc = np.where(s[0] > 0, s[0], 1.0)
        return s[3] - s[1] * s[2] / sc, s[4] - s[2] ** 2 / sc

    cov, var = cov_var(sums)
    num_all = (k * cov).sum(axis=-1, keepdims=True)
    den_all = (k * var).sum(axis=-1, keepdims=True)
    cov_i, var_i = cov_var([s[..., None, :] - o for s, o in zip(sums, own, strict=True)])
    # only the sample's own stratum changes when it is left out
    cov_h, var_h = cov[..., None, :], var[..., None, :]
    kk = k[..., None, :]
    num = num_all + (kk * (cov_i - cov_h) * onehot).sum(axis=-1)
    den = den_all + (kk * (var_i - var_h) * onehot).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(den > 1e-15, num / den, 0.0)
    return np.clip(lam, 0.0, 1.0)  # type: ignore[no-any-return]


def designed_mean_arrays(y: NDArray[Any], f: NDArray[Any], pi: NDArray[Any],
                         strata: NDArray[Any], f_total: NDArray[Any] | float,
                         n_pop: NDArray[Any] | float, confidence: float,
                         target: Target = "finite", lam: float | None = None,
                         ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """Estimate, half-width and mean weight, along the last axis of the labelled samples'
    people values ``y``, judge values ``f``, inclusion probabilities ``pi`` and integer
    ``strata``; ``f_total`` is the judge's sum over all ``n_pop`` samples. ``lam``: fixed
    weight (0: people only, weighted), None: tuned and cross-fitted."""
    est, half, lam_bar, _ = designed_mean_parts(y, f, pi, strata, f_total, n_pop, confidence,
                                                target, lam)
    return est, half, lam_bar


def designed_mean_parts(y: NDArray[Any], f: NDArray[Any], pi: NDArray[Any],
                        strata: NDArray[Any], f_total: NDArray[Any] | float,
                        n_pop: NDArray[Any] | float, confidence: float,
                        target: Target = "finite", lam: float | None = None,
                        ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """``designed_mean_arrays`` and the estimate's variance."""
    np = numpy()
    n = y.shape[-1]
    h_max = int(strata.max()) + 1
    onehot = (strata[..., None] == np.arange(h_max)).astype(float)
    n_h = onehot.sum(axis=-2)
    c = 1.0 - pi
    # strata with one label and some doubt have no variance of their own: fold them into one
    lone = ((n_h == 1) & (_stratum_sums(c, onehot) > 0)).any(axis=-1)
    if lone.any():
        one = np.zeros_like(onehot)
        one[..., 0] = 1.0
        onehot = np.where(lone[..., None, None], one, onehot)
        n_h = onehot.sum(axis=-2)
    k = np.where(n_h > 1, n_h / np.maximum(n_h - 1, 1), 0.0)
    a, b = y / pi, f / pi
    if lam is None:
        lam_i = _lam_loo(a, b, c, onehot, k)
    else:
        lam_i = np.full(y.shape, float(lam))
    lam_bar = lam_i.mean(axis=-1)
    e = (y - lam_i * f) / pi
    big_n = np.asarray(n_pop, dtype=float)
    # A labelled sample's own judge value carries its own weight: it counts once (exactly y_i
    # when pi_i = 1), never through the others' mean weight too. With lam_bar on it, a lone
    # flagged sample (weight 0 when left out) counted twice: 0.103 for a mean of 0.054.
    est = (lam_bar * (np.asarray(f_total, dtype=float) - f.sum(axis=-1))
           + (lam_i * f).sum(axis=-1) + e.sum(axis=-1)) / big_n
    sc = _stratum_sums(c, onehot)
    centre = _stratum_sums(c * e, onehot) / np.where(sc > 0, sc, 1.0)
    dev = e - (centre[..., None, :] * onehot).sum(axis=-1)
    var = (_stratum_sums(c * dev ** 2, onehot) * k).sum(axis=-1) / big_n ** 2
    if target == "superpopulation":
        w = 1.0 / pi
        ybar = (w * y).sum(axis=-1, keepdims=True) / w.sum(axis=-1, keepdims=True)
        s2 = (w * (y - ybar) ** 2).sum(axis=-1) / w.sum(axis=-1) * n / (n - 1)
        var = var + s2 / big_n
    strata_used = (n_h > 0).sum(axis=-1)
    df = effective_df(dev, c, np.maximum(n - strata_used, 1).astype(float))
    half = t_quantile(confidence, df) * np.sqrt(var)
    # No spread is no certainty (as in ``ppi.people_mean``): when people and judge agree on
    # every label (people's values all alike, for weight 0), the unlabelled share (N - n) / N
    # may still differ, on a share of at most 1 - (alpha/2)^(1/n) of it (chance alpha/2).
    same = np.all(y == (y[..., :1] if lam == 0 else f), axis=-1)
    bound = (1 - ((1 - confidence) / 2) ** (1 / n)) * np.maximum(big_n - n, 0) / big_n
    return est, np.where(same, np.maximum(half, bound), half), lam_bar, var


def effective_df(dev: NDArray[Any], c: NDArray[Any], df: NDArray[Any]) -> NDArray[Any]:
    """Degrees of freedom of the variance estimate, fewer when its terms are heavy-tailed.

    A variance estimated from n terms with kurtosis k varies as 2/df + (k - 3)/n relative
    to chi-square's 2/df (Satterthwaite); with skewed metrics (most residuals 0, a few large)
    the t quantile with n - 1 degrees of freedom is then too small and coverage at n = 20
    fell to 0.85-0.89 for 0.90 (bench/ppi_design.py); the kurtosis is the c-weighted one of
    the centred terms."""
    np = numpy()
    cs = np.maximum(c.sum(axis=-1), 1e-12)
    m2 = (c * dev ** 2).sum(axis=-1) / cs
    m4 = (c * dev ** 4).sum(axis=-1) / cs
    with np.errstate(divide="ignore", invalid="ignore"):
        kurt = np.where(m2 > 0, m4 / np.where(m2 > 0, m2, 1.0) ** 2, 3.0)
    n = dev.shape[-1]
    return np.clip(2.0 / (2.0 / df + np.maximum(kurt - 3.0, 0.0) / n), 2.0, df)  # type: ignore[no-any-return]


def t_quantile(confidence: float, df: NDArray[Any]) -> NDArray[Any]:
    """Two-sided Student-t quantiles for an array of (real) degrees of freedom."""
    quantile(confidence, 2)  # the scipy install hint, once
    from scipy import stats

    return stats.t.ppf(0.5 + confidence / 2, df)  # type: ignore[no-any-return]


def halve_at(n: int, big_n: int) -> int:
    """Labels for half the interval's width under the finite target: the variance goes as
    ``1/m - 1/N``, so ``m = 4 n N / (N + 3 n)`` (at most N: labelling all leaves no doubt)."""
    return min(big_n, math.ceil(4 * n * big_n / (big_n + 3 * n)))


def uniform_equivalent(y: Sequence[float], f: Sequence[float], pi: Sequence[float],
                       variance: float, big_n: int) -> float | None:
    """How many uniformly drawn labels the uniform PPI++ estimator would need for the same
    variance: its residual variance ``S^2`` estimated from this (weighted) sample, then
    ``1 / (V / S^2 + 1 / N)``."""
    np = numpy()
    ya, fa, wa = np.asarray(y, float), np.asarray(f, float), 1.0 / np.asarray(pi, float)
    if len(ya) < 3 or variance <= 0:
        return None
    mw = wa.sum()
    my, mf = (wa * ya).sum() / mw, (wa * fa).sum() / mw
    vf = (wa * (fa - mf) ** 2).sum() / mw
    lam = 0.0 if vf <= 0 else float(np.clip((wa * (ya - my) * (fa - mf)).sum() / mw / vf, 0, 1))
    e = ya - lam * fa
    s2 = float((wa * (e - (wa * e).sum() / mw) ** 2).sum() / mw) * len(ya) / (len(ya) - 1)
    if s2 <= 0:
        return None
    return float(1.0 / (variance / s2 + 1.0 / big_n))


# --- plans -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlanRow:
    id: str
    p: float
    stratum: str | None = None


@dataclass(frozen=True)
class Plan:
    """PLAN.jsonl: the samples to label, in order, each with its inclusion probability."""

    design: Design
    rows: tuple[PlanRow, ...]
    N: int
    seed: int | None = None

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.rows]

    def probabilities(self, labelled: Sequence[str]) -> dict[str, tuple[float, str]]:
        """Each labelled plan sample's inclusion probability and stratum, for the labelled
        ones only: when m of the plan's n are labelled, uniform and active probabilities are
        scaled by m / n (a prefix of the order is such a draw of m, approximately for active),
        stratified ones become m_h / N_h in each stratum."""
        by_id = {r.id: r for r in self.rows}
        got = [by_id[i] for i in labelled if i in by_id]
        m, n = len(got), len(self.rows)
        out: dict[str, tuple[float, str]] = {}
        if self.design == "stratified":
            planned: dict[str, list[PlanRow]] = {}
            for r in self.rows:
                planned.setdefault(r.stratum or "", []).append(r)
            have: dict[str, int] = {}
            for r in got:
                have[r.stratum or ""] = have.get(r.stratum or "", 0) + 1
            for r in got:
                s = r.stratum or ""
                size = round(len(planned[s]) / r.p)
                out[r.id] = (min(1.0, have[s] / size), s)
        else:
            for r in got:
                out[r.id] = (min(1.0, r.p * m / n), "")
        return out


def write_plan(path: str | os.PathLike[str], plan: Plan) -> None:
    """One ``{"id", "p", "design", "N", "seed", "stratum"}`` a line, in labelling order."""
    from ..infra.outputs import write_text

    lines = [json.dumps({"id": r.id, "p": round(r.p, 12), "design": plan.design, "N": plan.N,
                         "seed": plan.seed, **({"stratum": r.stratum} if r.stratum else {})},
                        ensure_ascii=False) for r in plan.rows]
    write_text(path, "".join(line + "\n" for line in lines))


def read_plan(path: str | os.PathLike[str]) -> Plan:
    """PLAN.jsonl read and checked; errors name the line and the field."""
    p = Path(path)
    if not p.exists():
        raise InvalidInput(f"{path}: no such plan file (make one with `noisegauge sample`)")
    rows: list[PlanRow] = []
    designs: set[str] = set()
    big_ns: set[int] = set()
    seed: int | None = None
    seen: set[str] = set()
    for number, obj in iter_objects(p, PLAN_HINT):
        rid, prob = obj.get("id"), obj.get("p")
        if not isinstance(rid, str) or not rid:
            raise InvalidInput(f"{path} line {number}: field 'id' is missing")
        if rid in seen:
            raise InvalidInput(f"{path} line {number}: sample {rid!r} is listed twice")
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0 < prob <= 1:
            raise InvalidInput(f"{path} line {number}: field 'p' must be an inclusion "
                               f"probability in (0, 1], got {prob!r}")
        design = obj.get("design", "uniform")
        if design not in DESIGNS:
            raise InvalidInput(f"{path} line {number}: field 'design' must be one of "
                               f"{', '.join(DESIGNS)}, got {design!r}")
        designs.add(design)
        if isinstance(obj.get("N"), int):
            big_ns.add(obj["N"])
        if isinstance(obj.get("seed"), int):
            seed = obj["seed"]
        seen.add(rid)
        st = obj.get("stratum")
        rows.append(PlanRow(rid, float(prob), None if st is None else str(st)))
    if not rows:
        raise InvalidInput(f"{path}: the plan is empty; make one with `noisegauge sample`")
    if len(designs) > 1 or len(big_ns) > 1:
        raise InvalidInput(f"{path}: lines from different plans (designs {sorted(designs)}); "
                           "use one `noisegauge sample` output as it is")
    design = next(iter(designs))
    big_n = next(iter(big_ns)) if big_ns else round(len(rows) / rows[0].p)
    return Plan(design, tuple(rows), big_n, seed)  # type: ignore[arg-type]


def make_plan(rows: Sequence[Mapping[str, Any]], n: int, design: Design, seed: int) -> Plan:
    """The plan for ``n`` labels of the results ``rows`` (error rows are never drawn)."""
    np = numpy()
    keys, us, st = [], [], []
    for i, row in enumerate(rows):
        if row.get("status") == "error":
            continue
        keys.append(sample_key(row, i))
        d = doubt(row)
        us.append(math.nan if d is None else d)
        st.append(STRATA.index(stratum(row)))
    if not keys:
        raise InvalidInput("no sample to label: every row is an error")
    if not 1 <= n <= len(keys):
        raise InvalidInput(f"--n {n}: choose between 1 and the {len(keys)} samples that are "
                           "not errors")
    rng = np.random.default_rng(seed)
    order, pi = draw(design, n, np.asarray(us, float), np.asarray(st, int), rng)
    out = tuple(PlanRow(keys[j], float(pi[j]),
                        STRATA[st[j]] if design == "stratified" else None) for j in order)
    return Plan(design, out, len(keys), seed)
