"""``evaluate`` / ``aevaluate``: score a whole dataset, get a ``Report``.

>>> from noisegauge import FakeJudge, NoiseSensitivity, evaluate
>>> judge = FakeJudge()
>>> rows = [{"user_input": "q", "response": "A. B.", "reference": "A.",
...          "retrieved_contexts": ["A.", "B."]}]
>>> report = evaluate(rows, metrics=[NoiseSensitivity(judge=judge)], cache=False, progress=False)
>>> report.results[0].value("noise_sensitivity_relevant")
0.0
>>> report.results[0].value("noise_sensitivity_irrelevant")
0.5
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..engine.evidence import Evidence, MisattributedSpan, build_evidence
from ..engine.matrix import ClaimVerdicts
from ..engine.metrics import Compat, MetricValue
from ..engine.summary import MetricSummary
from ..errors import MissingDependency
from ..infra.store import CacheOption, JudgeCache, resolve_cache
from ..io.ragchecker import RagcheckerWriter
from ..io.readers import open_source
from ..io.writers import open_writer, output_format
from ..judges.base import Judge, Usage
from ..samples import Sample
from ..scoring.metrics import Metric
from ..scoring.results import SampleResult
from .journal import Journal
from .observe import notify
from .plan import aclose_judges, build_plan
from .progress import RichProgress
from .run import arun, finalize, input_record
from .stats import RunStats

__all__ = ["Report", "aevaluate", "evaluate", "result_from_row"]


def result_from_row(index: int, row: dict[str, Any], verdicts: dict[str, Any] | None) -> SampleResult:
    """Rebuild a SampleResult from a stored output row and its verdicts (resumed rows)."""
    cv = ClaimVerdicts.from_dict(verdicts) if verdicts else None
    undefined = row.get("undefined") or {}

    def values(block: Any) -> dict[str, MetricValue]:
        return {name: MetricValue(v, undefined.get(name) if v is None else None)
                for name, v in (block or {}).items()}

    evidence = _stored_hints(build_evidence(cv), row) if cv is not None else None
    return SampleResult(index=index, id=row.get("id"), status=row["status"],
                        reason=row.get("reason"), metrics=values(row.get("metrics")),
                        verdicts=cv, evidence=evidence,
                        usage=Usage.from_dict(dict(row.get("usage") or {})),
                        diagnostics=values(row.get("diagnostics")))


def _stored_hints(evidence: Evidence, row: dict[str, Any]) -> Evidence:
    """Evidence rebuilt from verdicts lacks what needed the texts (closest chunk,
    misattribution); take those from the stored row's claims."""
    stored = row.get("response_claims") or []
    if len(stored) != len(evidence.response_claims):
        return evidence
    claims = []
    for c, s in zip(evidence.response_claims, stored, strict=True):
        if s.get("text") != c.text:
            return evidence
        spans = tuple(MisattributedSpan(int(m["chunk"]), int(m["start"]), int(m["end"]),
                                        str(m.get("detail", "")))
                      for m in s.get("misattributed_spans") or [])
        claims.append(replace(c, closest_chunk=s.get("closest_chunk"),
                              closest_overlap=s.get("closest_overlap"),
                              misattributed_from=tuple(s.get("misattributed_from") or ()),
                              misattributed_spans=spans))
    return replace(evidence, response_claims=tuple(claims))


@dataclass
class Report:
    """Results of one run, in input order: one ``SampleResult`` per input row (bad rows are
    ``error`` results), the input ``Sample`` of each (None where it could not be read), the
    metric columns requested, and the run totals."""

    results: list[SampleResult]
    samples: list[Sample | None]
    metrics: tuple[str, ...]
    stats: RunStats
    judges: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def usage(self) -> Usage:
        """Judge usage of every row (calls, cached calls, tokens, cost)."""
        return self.stats.usage

    def summary(self) -> dict[str, MetricSummary]:
        """Per metric: mean, 95% interval, n defined, undefined, errors."""
        return self.stats.summary()

    def rows(self) -> Iterator[dict[str, Any]]:
        """Output rows (the CONTRACTS JSONL shape plus ``index``, ``judges`` and the
        ``input`` texts), in input order."""
        for i, (r, s) in enumerate(zip(self.results, self.samples, strict=True)):
            row = {"index": i, **r.to_row()}
            for name in self.metrics:
                row["metrics"].setdefault(name, r.value(name))
            row["judges"] = list(self.judges)
            if s is not None:
                row["input"] = input_record(s)
            yield row

    def to_pandas(self) -> Any:
        """One row per input row: id, status, reason, the input texts, then a column per metric."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise MissingDependency("Report.to_pandas()", "tables", "pandas") from exc
        records = []
        for r, s in zip(self.results, self.samples, strict=True):
            rec: dict[str, Any] = {"id": r.id, "status": r.status, "reason": r.reason,
                                   "user_input": s.user_input if s else None,
                                   "response": s.response if s else None,
                                   "reference": s.reference if s else None,
                                   "retrieved_contexts": list(s.retrieved_contexts) if s else None}
            rec.update({name: r.value(name) for name in self.metrics})
            records.append(rec)
        columns = ["id", "status", "reason", "user_input", "response", "reference",
                   "retrieved_contexts", *self.metrics]
        df = pd.DataFrame.from_records(records, columns=columns)
        # Undefined is not NaN: nullable Float64 shows <NA>, and ``reason`` stays None, not NaN.
        df["reason"] = pd.Series([r.reason for r in self.results], dtype=object, index=df.index)
        return df.astype(dict.fromkeys(self.metrics, "Float64"))

    def _write(self, path: str | os.PathLike[str], fmt: str) -> Path:
        target = Path(path)
        tmp = target.with_name(f".{target.name}.tmp")
        writer = open_writer(tmp, fmt, self.metrics)
        for row, r, s in zip(self.rows(), self.results, self.samples, strict=True):
            writer.add(row["index"], row, s, r.verdicts.to_dict() if r.verdicts else None)
        writer.close()
        os.replace(tmp, target)
        return target

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        return self._write(path, "jsonl")

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        return self._write(path, "csv")

    def to_parquet(self, path: str | os.PathLike[str]) -> Path:
        return self._write(path, "parquet")

    def to_html(self, path: str | os.PathLike[str], *, title: str = "noisegauge run",
                compare: Report | None = None, stress: str | os.PathLike[str] | None = None) -> Path:
        """A self-contained HTML report (no network needed to open it): the metric family,
        the noise modes against the reading bands, the retrieval-vs-generator diagnosis and
        every sample with its claims highlighted. ``compare``: another run of the same inputs;
        ``stress``: a ``noisegauge stress`` output directory."""
        from ..report import RunInfo, now_text, write_report

        stamp = now_text()
        info = RunInfo(title=title, judges=tuple(self.judges), scored_at=stamp, generated_at=stamp)
        other = list(compare.rows()) if compare is not None else None
        return write_report(path, list(self.rows()), info=info, compare=other,
                            compare_label="other run", stress=stress)

    def to_ragchecker(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """RAGChecker's JSON (claims, Entailment/Neutral/Contradiction matrices, per-sample
        metrics under its names, grouped aggregate); also written to ``path`` if given."""
        buf = io.StringIO()
        writer = RagcheckerWriter(buf)
        for row, r, s in zip(self.rows(), self.results, self.samples, strict=True):
            writer.add(row["index"], row, s, r.verdicts.to_dict() if r.verdicts else None)
        writer.close()
        if path is not None:
            Path(path).write_text(buf.getvalue(), encoding="utf-8")
        data: dict[str, Any] = json.loads(buf.getvalue())
        return data

    def __repr__(self) -> str:
        parts = [f"{n}={s.mean:.3f}" if s.mean is not None else f"{n}=undefined"
                 for n, s in self.summary().items()]
        st = self.stats.status
        return (f"Report({len(self)} rows: {st.get('ok', 0)} ok, {st.get('undefined', 0)} "
                f"undefined, {st.get('error', 0)} error; {', '.join(parts)})")


async def aevaluate(dataset: Any, metrics: Sequence[Metric | str] | str | None = None, *,
                    judge: Judge | str | None = None, concurrency: int = 8,
                    cache: CacheOption | JudgeCache = None, out: str | os.PathLike[str] | None = None,
                    out_format: str | None = None, resume: bool = True, strict: bool = False,
                    progress: bool | None = None, format: str | None = None,
                    compat: Compat | None = None) -> Report:
    """Score ``dataset`` with ``metrics`` (objects or names; default: every RAGChecker metric
    with ``judge``, default ``"lexical"``). Each sample is judged once per distinct judge.

    ``dataset``: list of dicts or Samples, dict of columns, pandas DataFrame,
    ``datasets.Dataset``, or a path (JSONL, JSON, RAGChecker JSON, CSV, Parquet; ``format``
    forces one). ``cache``: None = ``$NOISEGAUGE_CACHE`` or the user cache directory, False =
    off, or a path. ``out``: also write results there (format from the extension or
    ``out_format``), resuming from ``OUT.partial`` if a previous run was interrupted.
    ``strict``: raise ``InvalidSample`` at the first bad row instead of an ``error`` row.
    ``compat="ragchecker"``: RAGChecker's ``computation.py`` values where a denominator is
    empty (0.0) instead of our typed undefined (README: "Exact compatibility").
    """
    source = open_source(dataset, format)
    store = resolve_cache(cache)
    owns_store = not isinstance(cache, JudgeCache)
    results: dict[int, tuple[SampleResult, Sample | None]] = {}

    def collect(index: int, row: dict[str, Any], verdicts: dict[str, Any] | None,
                result: SampleResult | None, sample: Sample | None) -> None:
        results[index] = (result or result_from_row(index, row, verdicts), sample)

    try:
        plan = build_plan(metrics, judge, store, compat)
        journal = fmt = None
        if out is not None:
            fmt = output_format(Path(out), out_format)
            journal = Journal(Path(out), {**plan.config(), "format": fmt}, resume=resume)
            journal.open()
        show = sys.stderr.isatty() if progress is None else progress
        bar = RichProgress(source.total) if show else None
        try:
            with bar if bar is not None else contextlib.nullcontext():
                try:
                    stats = await arun(source, plan, concurrency=concurrency, strict=strict,
                                       journal=journal, keep_samples=fmt == "ragchecker",
                                       on_result=collect, progress=bar)
                finally:
                    await aclose_judges(plan.owned)
            if journal is not None and fmt is not None and out is not None:
                finalize(journal, stats.rows, Path(out), fmt, plan.names)
        except BaseException:
            if journal is not None:
                journal.close(remove=False)  # keep finished rows for the next run
            raise
    finally:
        if store is not None:
            store.close() if owns_store else store.flush()
    ordered = [results[i] for i in range(len(results))]
    report = Report(results=[r for r, _ in ordered], samples=[s for _, s in ordered],
                    metrics=plan.names, stats=stats, judges=[g.identity for g in plan.groups])
    notify(report)  # e.g. the pytest plugin's session report
    return report


def evaluate(dataset: Any, metrics: Sequence[Metric | str] | str | None = None, *,
             judge: Judge | str | None = None, concurrency: int = 8,
             cache: CacheOption | JudgeCache = None, out: str | os.PathLike[str] | None = None,
             out_format: str | None = None, resume: bool = True, strict: bool = False,
             progress: bool | None = None, format: str | None = None,
             compat: Compat | None = None) -> Report:
    """Synchronous ``aevaluate`` (inside a running event loop use ``await aevaluate(...)``)."""
    return run_sync(aevaluate(dataset, metrics, judge=judge, concurrency=concurrency, cache=cache,
                              out=out, out_format=out_format, resume=resume, strict=strict,
                              progress=progress, format=format, compat=compat),
                    hint="use `await aevaluate(...)`")
