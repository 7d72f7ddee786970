"""Every metric corrected by people's labels: the judge's mean, people's mean and the
prediction-powered (PPI++) mean over all N samples, each with its interval.

Which samples count, said once (and in ``Estimate.rule``):

- the N samples are the results' rows that are not errors; a *labelled* sample is one whose
  response claims and chunks are all labelled on its current claims and chunks (labels on
  changed data are ``stale``: reported, never applied), and not skipped;
- a metric's people-only estimate is over the labelled samples where people's value is
  defined; the corrected one targets people's mean over the samples where the *judge*
  defined the metric: a labelled sample the judge left undefined is counted in
  ``judge_undefined`` and left out of it, one where people's value is undefined but the
  judge's is not is counted in ``human_undefined`` and left out of both sides of it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..engine.catalogue import METRIC_NAMES
from ..engine.evidence import Bucket
from ..errors import InvalidInput
from .human import HumanSample, human_sample, is_complete
from .labels import Labels, digest_of, read_labels, sample_key
from .ppi import MeanEstimate, people_mean, ppi_mean

if TYPE_CHECKING:
    from .design import Plan, Target

__all__ = ["Agreement", "Estimate", "MetricEstimate", "RULE", "estimate"]

BUCKETS: tuple[Bucket, ...] = ("grounded", "self_knowledge", "relevant_noise",
                               "irrelevant_noise", "hallucination")

RULE = ("corrected: people's mean over the samples where the judge defined the metric, from "
        "the labelled ones and the judge's values on the rest; labelled samples the judge left "
        "undefined (judge_undefined) or people did (human_undefined) are left out of it and "
        "counted")


@dataclass(frozen=True)
class MetricEstimate:
    name: str
    judge: float | None          # the judge's mean over every sample it defined
    judge_n: int
    human: MeanEstimate
    corrected: MeanEstimate
    judge_undefined: int = 0     # labelled, people defined it, the judge did not
    human_undefined: int = 0     # labelled, the judge defined it, people did not
    #: labels for half the corrected interval's width (finite target), None when unknown
    halve_at: int | None = None
    #: uniformly drawn labels the uniform corrected estimate would need for this width
    uniform_equivalent: float | None = None

    def to_dict(self) -> dict[str, Any]:
        h, c = self.human, self.corrected
        eq = self.uniform_equivalent
        return {"judge": {"estimate": self.judge, "n": self.judge_n},
                "human": {"estimate": h.estimate, "low": h.low, "high": h.high, "n": h.n},
                "corrected": {"estimate": c.estimate, "low": c.low, "high": c.high, "n": c.n,
                              "N": c.N, "lam": c.lam, "halve_at": self.halve_at,
                              "uniform_equivalent": None if eq is None else round(eq, 1),
                              "labels_saved": None if eq is None else round(eq - c.n, 1)},
                "judge_undefined": self.judge_undefined,
                "human_undefined": self.human_undefined}


@dataclass(frozen=True)
class Agreement:
    """The judge against people on the labelled response claims (correct or not; bucket)
    and chunks (relevant or not). ``kappa`` is Cohen's, None when chance agreement is 1."""

    claims: int
    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]  # judge bucket -> people's bucket -> claims
    chunks: int
    chunk_accuracy: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"claims": self.claims, "accuracy": self.accuracy, "kappa": self.kappa,
                "confusion": self.confusion, "chunks": self.chunks,
                "chunk_accuracy": self.chunk_accuracy}


@dataclass(frozen=True)
class Estimate:
    """What ``noisegauge estimate`` prints and ``--json`` writes (``to_dict``)."""

    confidence: float
    metrics: dict[str, MetricEstimate]
    samples: int                       # N: rows that are not errors
    labelled: list[str]                # complete, current, not skipped
    from_values: list[str]             # samples whose values came as rows of values
    skipped: list[tuple[str, str]]     # (id, reason)
    incomplete: list[str]
    stale: list[str]
    unknown: list[str]                 # ids in LABELS that the results do not hold
    looked: list[str]                  # labelled after the judge's verdicts were shown
    agreement: Agreement
    bad_lines: list[int] = field(default_factory=list)
    rule: str = RULE
    design: str = "uniform"
    target: str = "finite"
    outside_plan: list[str] = field(default_factory=list)  # labelled, not in PLAN: left out
    plan_labelled: tuple[int, int] | None = None            # (labelled, planned)
    session_plan: str | None = None  # the plan LABELS was reviewed by, when none was given

    def to_dict(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "design": self.design, "target": self.target,
                "metrics": {name: m.to_dict() for name, m in self.metrics.items()},
                "samples": {"N": self.samples, "labelled": len(self.labelled),
                            "from_values": len(self.from_values),
                            "skipped": [{"id": i, "reason": r} for i, r in self.skipped],
                            "incomplete": self.incomplete, "stale": self.stale,
                            "unknown": self.unknown, "looked": self.looked,
                            "unreadable_lines": self.bad_lines,
                            "outside_plan": self.outside_plan},
                "agreement": self.agreement.to_dict(), "rule": self.rule}

    def notes(self) -> list[str]:
        """What weakens the numbers, in words (printed under the table)."""
        out = []
        if self.session_plan:
            out.append(f"LABELS was reviewed by the plan {self.session_plan}: without --plan "
                       "its labels are read as a uniform draw, which they are not; pass "
                       f"--plan {self.session_plan}")
        if self.outside_plan:
            out.append(f"{len(self.outside_plan)} labelled sample(s) are not in the plan: left "
                       f"out of the {self.design} estimate ({', '.join(self.outside_plan[:3])})")
        if self.plan_labelled and self.plan_labelled[0] < self.plan_labelled[1]:
            m, n = self.plan_labelled
            out.append(f"{m} of the plan's {n} samples labelled: probabilities rescaled to the "
                       f"{m} (exact when labelled in the plan's order)")
        if self.skipped:
            out.append(f"{len(self.skipped)} sample(s) skipped: the labelled ones are no longer a "
                       "uniform random sample (" + "; ".join(f"{i}: {r}" for i, r in
                                                            self.skipped[:3]) + ")")
        if self.stale:
            out.append(f"{len(self.stale)} sample(s) have labels made on other claims or chunks "
                       f"than these results hold; not applied ({', '.join(self.stale[:3])})")
        if self.looked:
            out.append(f"{len(self.looked)} labelled sample(s) were labelled after showing the "
                       "judge's verdicts (anchoring pulls people's values toward the judge's)")
        if self.unknown:
            out.append(f"{len(self.unknown)} id(s) in LABELS are not in the results: "
                       f"{', '.join(self.unknown[:3])}")
        if self.incomplete:
            out.append(f"{len(self.incomplete)} sample(s) partly labelled, not counted yet")
        if self.bad_lines:
            out.append(f"{len(self.bad_lines)} unreadable line(s) in LABELS (torn by a crash?): "
                       f"line {', '.join(map(str, self.bad_lines[:3]))}")
        return out


def _agreement(rows: Mapping[str, Mapping[str, Any]], people: Mapping[str, HumanSample]) -> Agreement:
    pairs: list[tuple[bool, bool]] = []
    confusion: dict[str, dict[str, int]] = {b: dict.fromkeys(BUCKETS, 0) for b in BUCKETS}
    chunk_pairs: list[tuple[bool, bool]] = []
    for key, hs in people.items():
        row = rows[key]
        for c, bucket in zip(row.get("response_claims") or (), hs.buckets, strict=True):
            pairs.append((bool(c.get("correct")), bucket in ("grounded", "self_knowledge")))
            if c.get("bucket") in confusion:
                confusion[c["bucket"]][bucket] += 1
        for ch, rel in zip(row.get("chunks") or (), hs.relevant, strict=False):
            chunk_pairs.append((bool(ch.get("relevant")), rel))
    n = len(pairs)
    accuracy = kappa = None
    if n:
        accuracy = sum(a == b for a, b in pairs) / n
        pj = sum(a for a, _ in pairs) / n
        ph = sum(b for _, b in pairs) / n
        chance = pj * ph + (1 - pj) * (1 - ph)
        kappa = None if chance >= 1 else (accuracy - chance) / (1 - chance)
    chunk_acc = (sum(a == b for a, b in chunk_pairs) / len(chunk_pairs)) if chunk_pairs else None
    return Agreement(n, accuracy, kappa, confusion, len(chunk_pairs), chunk_acc)


def estimate(rows: Sequence[Mapping[str, Any]], labels: Labels | str | os.PathLike[str],
             confidence: float = 0.9, metrics: Sequence[str] | None = None,
             plan: Plan | None = None, target: Target = "finite") -> Estimate:
    """People's labels (a ``Labels`` or the LABELS path) against result ``rows`` (the
    ``score --out`` JSONL shape). ``plan``: the ``noisegauge sample`` plan the labelled
    samples were drawn by (None: a uniform draw, as ``review`` makes it); ``target``: the
    mean over these N samples ("finite") or over the process that made them."""
    if not 0 < confidence < 1:
        raise InvalidInput(f"confidence must be between 0 and 1 (e.g. 0.9), got {confidence}")
    if target not in ("finite", "superpopulation"):
        raise InvalidInput(f"target must be finite or superpopulation, got {target!r}")
    lab = labels if isinstance(labels, Labels) else read_labels(labels)
    by_key: dict[str, Mapping[str, Any]] = {}
    for i, row in enumerate(rows):
        if row.get("status") != "error":
            by_key[sample_key(row, i)] = row
    people: dict[str, HumanSample] = {}
    skipped, incomplete, stale, looked = [], [], [], []
    for key, row in by_key.items():
        digest = digest_of(row)
        state = lab.current(key, digest)
        if lab.stale(key, digest) and (state is None or state.empty()):
            stale.append(key)
        if state is None:
            continue
        if state.skip is not None:
            skipped.append((key, state.skip))
        elif is_complete(row, state):
            people[key] = human_sample(row, state)
            if state.looked:
                looked.append(key)
        elif not state.empty():
            incomplete.append(key)
    values = {k: v for k, v in lab.values.items() if k in by_key}
    unknown = sorted((set(lab.samples) | set(lab.values)) - set(by_key))
    labelled = sorted(set(people) | set(values))
    outside: list[str] = []
    if plan is None:
        probs = {k: (len(labelled) / len(by_key), "") for k in labelled} if by_key else {}
        plan_labelled = None
    else:
        in_plan = set(plan.ids)
        outside = [k for k in labelled if k not in in_plan]
        probs = plan.probabilities([k for k in plan.ids if k in set(labelled)])
        plan_labelled = (len(probs), len(plan.rows))
    design = "uniform" if plan is None else plan.design
    names = list(metrics or METRIC_NAMES)
    out: dict[str, MetricEstimate] = {}
    for name in names:
        human: dict[str, float | None] = {}
        for key, hs in people.items():
            if name in hs.values:
                human[key] = hs.values[name].value
        for key, vals in values.items():
            if name in vals:
                human[key] = vals[name]
        human = {k: v for k, v in human.items() if k in probs}
        if not human:
            continue
        out[name] = _metric(name, by_key, human, confidence, design, target, probs)
    return Estimate(confidence=confidence, metrics=out, samples=len(by_key),
                    labelled=sorted(people), from_values=sorted(values), skipped=skipped,
                    incomplete=incomplete, stale=stale, unknown=unknown, looked=looked,
                    agreement=_agreement(by_key, people), bad_lines=lab.bad_lines,
                    design=design, target=target, outside_plan=outside,
                    plan_labelled=plan_labelled,
                    session_plan=str((lab.session or {}).get("plan") or "") or None
                    if plan is None else None)


def _judge_value(row: Mapping[str, Any], name: str) -> float | None:
    v = (row.get("metrics") or {}).get(name)
    return None if v is None else float(v)


def _designed(y: list[float], f: list[float], pi: list[float], strata: list[str],
              f_total: float, big_n: float, confidence: float, target: Target,
              lam: float | None = None) -> tuple[MeanEstimate, float | None]:
    """The designed estimate of one metric (``design.designed_mean_arrays`` on one
    replication) and its variance; people only (with its bound) when it cannot be made."""
    from .design import designed_mean_parts
    from .ppi import numpy

    np = numpy()
    n = len(y)
    if n < 3:
        base = people_mean(y, confidence)
        return MeanEstimate(base.estimate, base.low, base.high, n, int(big_n), 0.0), None
    codes = {s: i for i, s in enumerate(sorted(set(strata)))}
    st = np.asarray([[codes[s] for s in strata]])
    est, half, lam_bar, var = designed_mean_parts(
        np.asarray([y]), np.asarray([f]), np.asarray([pi]), st, f_total, big_n, confidence,
        target, lam)
    e, h = float(est[0]), float(np.ravel(half)[0])
    low, high = max(0.0, e - h), min(1.0, e + h)
    return MeanEstimate(e, low, high, n, int(big_n), float(lam_bar[0])), float(var[0])


def _metric(name: str, rows: Mapping[str, Mapping[str, Any]], human: Mapping[str, float | None],
            confidence: float, design: str = "uniform", target: Target = "finite",
            probs: Mapping[str, tuple[float, str]] | None = None) -> MetricEstimate:
    from .design import halve_at, uniform_equivalent

    judge = {k: _judge_value(r, name) for k, r in rows.items()}
    defined = [v for v in judge.values() if v is not None]
    probs = probs or {k: (len(human) / len(rows), "") for k in human}
    y_people = [v for v in human.values() if v is not None]
    y, f, pi, strata = [], [], [], []
    judge_undefined = human_undefined = 0
    for key, value in human.items():
        jv = judge[key]
        if jv is None:
            judge_undefined += value is not None
            continue
        if value is None:
            human_undefined += 1
            continue
        y.append(value)
        f.append(jv)
        pi.append(probs[key][0])
        strata.append(probs[key][1])
    f_u = [v for k, v in judge.items() if v is not None and k not in human]
    n_pop = len(f) + len(f_u)
    if design == "uniform":
        people = people_mean(y_people, confidence)
    else:  # a weighted draw: people's own mean must be weighted too (weight 0 on the judge)
        yp = [(v, probs[k][0], probs[k][1]) for k, v in human.items() if v is not None]
        w_n = sum(1 / p for _, p, _ in yp)
        people = _designed([v for v, _, _ in yp], [0.0] * len(yp), [p for _, p, _ in yp],
                           [s for _, _, s in yp], 0.0, w_n, confidence, target, 0.0)[0]
        people = MeanEstimate(people.estimate, people.low, people.high, people.n)
    halve: int | None = None
    equivalent: float | None = None
    if design == "uniform" and target == "superpopulation":
        corrected = ppi_mean(y, f, f_u, confidence)  # PPI++ as ppi_py makes it (cross-fitted)
    else:
        corrected, var = _designed(y, f, pi, strata, sum(f) + sum(f_u), float(n_pop),
                                   confidence, target)
        if var is not None and target == "finite":
            halve = halve_at(len(y), n_pop)
            equivalent = uniform_equivalent(y, f, pi, var, n_pop) if design != "uniform" \
                else float(len(y))
    return MetricEstimate(name=name, judge=(sum(defined) / len(defined)) if defined else None,
                          judge_n=len(defined), human=people, corrected=corrected,
                          judge_undefined=judge_undefined, human_undefined=human_undefined,
                          halve_at=halve, uniform_equivalent=equivalent)
