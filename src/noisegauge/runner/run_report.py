"""``Report``: what a run gives back: its rows (results and samples), totals and writers.

Built from the journaled rows (``result_from_row``), so an interrupted-and-resumed run
reports exactly what an uninterrupted one does.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.catalogue import family
from ..engine.summary import MetricSummary
from ..errors import InvalidInput, MissingDependency
from ..infra.outputs import replacing
from ..infra.secrets import redact
from ..io.ragchecker import RagcheckerWriter
from ..io.writers import open_writer
from ..judges.base import Usage
from ..report.totals import RunStats
from ..samples import Sample
from ..scoring.results import SampleResult
from .run import output_row

__all__ = ["Report", "result_from_row"]


def result_from_row(index: int, row: dict[str, Any], verdicts: dict[str, Any] | None) -> SampleResult:
    """The result a stored output row was written from (``SampleResult.from_row``)."""
    return SampleResult.from_row(row, verdicts, index=index)


@dataclass
class Report:
    """Results of one run, in input order: one ``SampleResult`` per input row (bad rows are
    ``error`` results), the input ``Sample`` of each (None where it could not be read), the
    metric columns requested, and the run totals.

    Results are built from the rows the run wrote (the journal's, with ``out``), so a run
    resumed after a crash reports exactly what an uninterrupted one does. With
    ``keep_results=False`` only the totals are kept (``results`` is empty; the rows are in
    ``out``).
    """

    results: list[SampleResult]
    samples: list[Sample | None]
    metrics: tuple[str, ...]
    stats: RunStats
    judges: list[dict[str, Any]] = field(default_factory=list)
    kept: bool = True

    def __len__(self) -> int:
        return self.stats.rows

    @property
    def usage(self) -> Usage:
        """Judge usage of every row (calls, cached calls, tokens, cost)."""
        return self.stats.usage

    def summary(self) -> dict[str, MetricSummary]:
        """Per metric: mean, 95% interval, n defined, undefined, errors."""
        return self.stats.summary()

    def _require_results(self) -> None:
        if not self.kept:
            raise InvalidInput("this report was made with keep_results=False: it has the run's "
                               "totals only; the rows are in the output file")

    def rows(self) -> Iterator[dict[str, Any]]:
        """Output rows (the CONTRACTS JSONL shape plus ``index``, ``judges`` and the
        ``input`` texts), in input order: the same rows ``out`` has."""
        self._require_results()
        in_family = family()
        extra = tuple(n for n in self.metrics if n not in in_family)
        judges = list(self.judges)
        for i, (r, s) in enumerate(zip(self.results, self.samples, strict=True)):
            yield output_row(i, r, extra, judges, s)

    def estimate(self, labels: Any, *, confidence: float = 0.9) -> Any:
        """Every metric corrected by people's ``labels`` (a LABELS path from ``noisegauge
        review``, or ``noisegauge.people.Labels``): per metric the judge's mean, people's
        mean and the prediction-powered (PPI++) mean with their intervals, and the judge's
        agreement with people on claims. Returns ``noisegauge.people.Estimate``
        (``.to_dict()`` is the ``estimate --json`` shape). Needs numpy (the ``stats`` extra)."""
        from ..people.estimate import estimate

        self._require_results()
        return estimate(list(self.rows()), labels, confidence)

    def to_pandas(self) -> Any:
        """One row per input row: id, status, reason, the input texts, then a column per metric.

        A run with a conversation has a ``history`` column before ``user_input`` (the turns
        as ``[{"role", "content"}]``, ``[]`` for a single-turn row, as ``Sample.from_record``
        reads it back); a run without one has no such column."""
        self._require_results()
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
            if s is not None:
                rec["history"] = [{"role": t.role, "content": t.content} for t in s.history]
            rec.update({name: r.value(name) for name in self.metrics})
            records.append(rec)
        chats = any(s is not None and s.history for s in self.samples)
        columns = ["id", "status", "reason", *(["history"] if chats else []), "user_input",
                   "response", "reference", "retrieved_contexts", *self.metrics]
        df = pd.DataFrame.from_records(records, columns=columns)
        # Undefined is not NaN: nullable Float64 shows <NA>, and ``reason`` stays None, not NaN.
        df["reason"] = pd.Series([r.reason for r in self.results], dtype=object, index=df.index)
        return df.astype(dict.fromkeys(self.metrics, "Float64"))

    def _write(self, path: str | os.PathLike[str], fmt: str) -> Path:
        target = Path(path)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.parent if str(target.parent) else ".")
        os.close(fd)
        tmp = Path(name)
        try:
            # /dev/null, a FIFO or a link: written through; a regular file: tmp, then renamed
            with replacing(target, tmp) as dest:
                writer = open_writer(dest, fmt, self.metrics)
                for row, r, s in zip(self.rows(), self.results, self.samples, strict=True):
                    writer.add(row["index"], row, s, r.verdicts.to_dict() if r.verdicts else None)
                writer.close()
        finally:
            tmp.unlink(missing_ok=True)  # unused when written through
        return target

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        return self._write(path, "jsonl")

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        return self._write(path, "csv")

    def to_parquet(self, path: str | os.PathLike[str]) -> Path:
        return self._write(path, "parquet")

    def to_html(self, path: str | os.PathLike[str], *, title: str = "noisegauge run",
                compare: Report | None = None, stress: str | os.PathLike[str] | None = None,
                labels: Any = None) -> Path:
        """A self-contained HTML report (no network needed to open it): the metric family,
        the noise modes against the reading bands, the retrieval-vs-generator diagnosis and
        every sample with its claims highlighted. ``compare``: another run of the same inputs;
        ``stress``: a ``noisegauge stress`` output directory; ``labels``: people's labels, for
        a "Checked by people" panel (see ``estimate``)."""
        from ..report import RunInfo, now_text, write_report

        stamp = now_text()
        info = RunInfo(title=title, judges=tuple(self.judges), scored_at=stamp, generated_at=stamp)
        other = list(compare.rows()) if compare is not None else None
        rows = list(self.rows())
        est = None
        if labels is not None:
            from ..people.estimate import estimate

            est = estimate(rows, labels)
        return write_report(path, rows, info=info, compare=other, compare_label="other run",
                            stress=stress, estimate=est)

    def to_ragchecker(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """RAGChecker's JSON (claims, Entailment/Neutral/Contradiction matrices, per-sample
        metrics under its names, grouped aggregate); also written to ``path`` if given."""
        buf = io.StringIO()
        writer = RagcheckerWriter(buf)
        for row, r, s in zip(self.rows(), self.results, self.samples, strict=True):
            writer.add(row["index"], row, s, r.verdicts.to_dict() if r.verdicts else None)
        writer.close()
        text = redact(buf.getvalue())
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        data: dict[str, Any] = json.loads(text)
        return data

    def __repr__(self) -> str:
        parts = [f"{n}={s.mean:.3f}" if s.mean is not None else f"{n}=undefined"
                 for n, s in self.summary().items()]
        st = self.stats.status
        return (f"Report({len(self)} rows: {st.get('ok', 0)} ok, {st.get('undefined', 0)} "
                f"undefined, {st.get('error', 0)} error; {', '.join(parts)})")
