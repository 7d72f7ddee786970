"""How far to trust a judge on your own data: labelled claim–premise pairs in, accuracy out.

Labels come as JSONL rows ``{"premise": ..., "claim": ..., "label": true|false}`` (true: the
premise supports the claim), or as a results file of ``noisegauge score`` whose response
claims carry ``"label": true|false`` (true: the claim is right), read together with the
input samples so that each claim is checked against its sample's reference.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from .errors import InvalidInput
from .io.results import check_result, iter_objects
from .judges.base import BatchChecker, Judge, ScoredChecker, judge_identity
from .verdicts import Verdict

__all__ = ["Pair", "JudgeReport", "read_pairs", "evaluate_judge", "best_threshold",
           "balanced_accuracy", "bootstrap_ci"]


@dataclass(frozen=True)
class Pair:
    premise: str
    claim: str
    label: bool


@dataclass(frozen=True)
class JudgeReport:
    """One judge on the labelled pairs. ``scores`` only for judges that give them."""

    spec: str
    identity: dict[str, Any]
    predictions: tuple[bool, ...]
    scores: tuple[float, ...] | None
    balanced_accuracy: float
    ci: tuple[float, float]
    confusion: dict[str, int]  # tp, fn, fp, tn (positive = supported)


def _label(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false", "right", "wrong", 1, 0):
        return value in ("true", "right", 1)
    raise InvalidInput(f"{where}: field 'label' must be true or false (or \"right\"/\"wrong\"), "
                       f"got {value!r}")


def read_pairs(path: Path, samples: Path | None = None) -> list[Pair]:
    """Labelled pairs from ``path`` (see the module docstring for the two forms)."""
    rows = list(iter_objects(path, "expected one JSON object per line: a labelled pair or "
                                   "a result row"))
    if rows and all("premise" in r for _, r in rows):
        out = []
        for n, r in rows:
            for key in ("premise", "claim", "label"):
                if key not in r:
                    raise InvalidInput(f"{path}, line {n}: missing field {key!r}; expected "
                                       '{"premise": ..., "claim": ..., "label": true|false}')
            out.append(Pair(str(r["premise"]), str(r["claim"]),
                            _label(r["label"], f"{path}, line {n}")))
        return out
    for n, r in rows:  # the results form: the same rows `report` and `leaks` accept
        check_result(r, path, n)
    return _pairs_from_results(path, rows, samples)


def _pairs_from_results(path: Path, rows: list[tuple[int, dict[str, Any]]],
                        samples: Path | None) -> list[Pair]:
    if samples is None:
        raise InvalidInput(f"{path}: rows have no 'premise'; for a results file with labelled "
                           "response claims, pass the scored input with --samples INPUT")
    from .io.readers import open_source
    from .samples import Sample

    inputs: list[Sample | None] = []
    for raw in open_source(samples):
        if raw.sample is not None:
            inputs.append(raw.sample)
        elif raw.record is not None:
            inputs.append(Sample.from_record(dict(raw.record), raw.index))
        else:
            inputs.append(None)
    out: list[Pair] = []
    for pos, (n, row) in enumerate(rows):
        labelled = [c for c in row.get("response_claims") or [] if "label" in c]
        if not labelled:
            continue
        index = row.get("index", pos)
        if not 0 <= index < len(inputs):
            raise InvalidInput(f"{path}, line {n}: row index {index} is not in {samples} "
                               f"({len(inputs)} samples)")
        sample = inputs[index]
        if sample is None or not sample.reference.strip():
            raise InvalidInput(f"{samples}: sample {index} has no reference to check claims against")
        for c in labelled:
            if not isinstance(c.get("text"), str):
                raise InvalidInput(f"{path}, line {n}: a labelled response claim has no "
                                   "'text'")
            out.append(Pair(sample.reference, c["text"], _label(c["label"], f"{path}, line {n}")))
    if not out:
        raise InvalidInput(f"{path}: no response claim carries a 'label' (true: the claim is right)")
    return out


def balanced_accuracy(gold: Sequence[bool], pred: Sequence[bool]) -> float:
    pos = sum(gold)
    neg = len(gold) - pos
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    tn = sum(not g and not p for g, p in zip(gold, pred, strict=True))
    if not pos or not neg:
        return (tp / pos) if pos else (tn / neg if neg else 0.0)
    return (tp / pos + tn / neg) / 2


def bootstrap_ci(gold: Sequence[bool], pred: Sequence[bool], n: int = 1000,
                 seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of balanced accuracy over resampled pairs (seeded)."""
    rng = random.Random(seed)
    k = len(gold)
    stats = []
    for _ in range(n):
        idx = [rng.randrange(k) for _ in range(k)]
        stats.append(balanced_accuracy([gold[i] for i in idx], [pred[i] for i in idx]))
    stats.sort()
    return stats[int(0.025 * (n - 1))], stats[int(0.975 * (n - 1))]


async def _verdicts(judge: Judge, pairs: Sequence[Pair]) -> tuple[list[bool], list[float] | None]:
    preds: list[bool] = []
    scores: list[float] = []
    for p in pairs:
        if isinstance(judge, ScoredChecker):
            ((v, s),) = (await judge.check_many_scored([p.premise], [p.claim]))[0]
            scores.append(s)
        elif isinstance(judge, BatchChecker):
            v = (await judge.check_many([p.premise], [p.claim]))[0][0]
        else:
            v = (await judge.check(p.premise, [p.claim]))[0]
        preds.append(v is Verdict.ENTAILED)
    return preds, (scores if isinstance(judge, ScoredChecker) else None)


def evaluate_judge(spec: str, judge: Judge, pairs: Sequence[Pair], seed: int = 0) -> JudgeReport:
    preds, scores = asyncio.run(_verdicts(judge, pairs))
    gold = [p.label for p in pairs]
    conf = {"tp": sum(g and q for g, q in zip(gold, preds, strict=True)),
            "fn": sum(g and not q for g, q in zip(gold, preds, strict=True)),
            "fp": sum(q and not g for g, q in zip(gold, preds, strict=True)),
            "tn": sum(not g and not q for g, q in zip(gold, preds, strict=True))}
    return JudgeReport(spec, judge_identity(judge), tuple(preds),
                       tuple(scores) if scores is not None else None,
                       balanced_accuracy(gold, preds), bootstrap_ci(gold, preds, seed=seed), conf)


def best_threshold(gold: Sequence[bool], scores: Sequence[float],
                   current: float) -> tuple[float, float]:
    """The threshold on the judge's score with the best balanced accuracy on these pairs
    (ties: the one nearest ``current``), and that accuracy. Scores of 0 and 1 are the
    judge's hard decisions (a contradiction cue, a verbatim match): no threshold moves them."""
    soft = sorted({s for s in scores if 0.0 < s < 1.0})
    candidates = sorted({current, *[(a + b) / 2 for a, b in pairwise(soft)],
                         *(soft[:1]), *(s + 1e-6 for s in soft[-1:])})
    best = (current, -1.0)
    for t in candidates:
        acc = balanced_accuracy(gold, [s >= t for s in scores])
        if acc > best[1] + 1e-12 or (abs(acc - best[1]) <= 1e-12
                                      and abs(t - current) < abs(best[0] - current)):
            best = (t, acc)
    return round(best[0], 4), best[1]
