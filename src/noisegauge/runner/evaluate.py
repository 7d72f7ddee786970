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
import logging
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..engine.metrics import METRIC_NAMES, Compat
from ..engine.summary import MetricSummary
from ..errors import InvalidInput, JudgeUnavailable, MissingDependency
from ..infra.secrets import redact
from ..infra.store import CacheOption, JudgeCache, resolve_cache
from ..io.ragchecker import RagcheckerWriter
from ..io.readers import open_source
from ..io.writers import open_writer, output_format
from ..judges.base import Judge, Usage
from ..samples import MAX_TEXT_CHARS, Sample
from ..scoring.failures import describe_failure, failure_kind
from ..scoring.metrics import Metric
from ..scoring.results import SampleResult
from .journal import Journal
from .observe import notify
from .plan import Plan, aclose_judges, build_plan
from .progress import RichProgress
from .run import arun, finalize, output_row
from .stats import RunStats

__all__ = ["Report", "aevaluate", "evaluate", "probe_judges", "result_from_row"]

log = logging.getLogger("noisegauge")


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
        extra = tuple(n for n in self.metrics if n not in METRIC_NAMES)
        judges = list(self.judges)
        for i, (r, s) in enumerate(zip(self.results, self.samples, strict=True)):
            yield output_row(i, r, extra, judges, s)

    def to_pandas(self) -> Any:
        """One row per input row: id, status, reason, the input texts, then a column per metric."""
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
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.parent if str(target.parent) else ".")
        os.close(fd)
        tmp = Path(name)
        try:
            writer = open_writer(tmp, fmt, self.metrics)
            for row, r, s in zip(self.rows(), self.results, self.samples, strict=True):
                writer.add(row["index"], row, s, r.verdicts.to_dict() if r.verdicts else None)
            writer.close()
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
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


async def probe_judges(plan: Plan) -> None:
    """Ask each judge that offers ``async probe()`` (one cheap request) whether it can work
    at all, so a wrong URL, a refused key or an unknown model fails in seconds, once,
    instead of once per row. Raises ``JudgeUnavailable``."""
    for group in plan.groups:
        probe = getattr(group.judge, "probe", None)
        if not callable(probe):
            continue
        try:
            await probe()
        except JudgeUnavailable:
            raise
        except Exception as exc:
            if failure_kind(exc) is None:
                raise  # a bug in the probe itself
            raise JudgeUnavailable(f"judge {group.identity}: {describe_failure(exc)}") from exc


async def aevaluate(dataset: Any, metrics: Sequence[Metric | str] | str | None = None, *,
                    judge: Judge | str | None = None, concurrency: int = 8,
                    cache: CacheOption | JudgeCache = None, out: str | os.PathLike[str] | None = None,
                    out_format: str | None = None, resume: bool = True, strict: bool = False,
                    progress: bool | None = None, format: str | None = None,
                    keep_results: bool = True, max_chars: int = MAX_TEXT_CHARS,
                    max_consecutive_failures: int | None = 10,
                    compat: Compat | None = None,
                    on_start: Callable[[Plan], Awaitable[None]] | None = None,
                    engine: str = "local", ray_address: str | None = None,
                    workers: int | None = None, block_size: int | None = None) -> Report:
    """Score ``dataset`` with ``metrics`` (objects or names; default: every RAGChecker metric
    with ``judge``, default ``"lexical"``). Each sample is judged once per distinct judge.

    ``dataset``: list of dicts or Samples, dict of columns, pandas DataFrame,
    ``datasets.Dataset``, or a path (JSONL, JSON, RAGChecker JSON, CSV, Parquet; ``format``
    forces one). ``cache``: None = ``$NOISEGAUGE_CACHE`` or the user cache directory, False =
    off, or a path. ``out``: also write results there (format from the extension or
    ``out_format``), resuming from ``OUT.partial`` if a previous run was interrupted.

    Failures: a bad row or a judge failure (endpoint unreachable, timeout, unusable answer)
    is an ``error`` row with its reason and ``error_kind``; ``strict`` raises at the first
    (``InvalidSample`` or a ``JudgeError``) instead. Before any row, a judge with ``probe()``
    is probed once; after ``max_consecutive_failures`` rows in a row could not reach the
    judge (None: never) the run stops with ``JudgeUnavailable``. Finished rows stay in
    ``OUT.partial`` either way, for the next run. A bug raises as it is.
    ``keep_results=False`` keeps only the totals (bounded memory for huge runs).
    ``max_chars``: longest question, response, reference or chunk (longer: an error row).
    ``compat="ragchecker"``: RAGChecker's ``computation.py`` values where a denominator is
    empty (0.0) instead of our typed undefined (README: "Exact compatibility").
    ``on_start(plan)``: awaited after the probe, before the first row (the CLI runs the
    judge canaries there).

    ``engine="ray"``: the rows are judged on a Ray cluster (``pip install
    'noisegauge[ray]'``), in blocks of ``block_size`` rows (default: at least 4 blocks per
    worker, at most 256 rows each), ``workers`` blocks at once
    (default: the cluster's CPUs); ``ray_address``: None starts a local Ray (or uses the
    one already initialised), ``"auto"`` or ``"ray://HOST:PORT"`` joins a cluster. The
    output is the local run's, byte for byte; the journal, the cache and an LLM
    endpoint's limits hold across the cluster (README: "Scale out on Ray").
    """
    ray_options = _ray_options(engine, ray_address, workers, block_size)
    source = open_source(dataset, format)
    store = resolve_cache(cache)
    owns_store = not isinstance(cache, JudgeCache)
    results: dict[int, tuple[SampleResult, Sample | None]] = {}

    def collect(index: int, row: dict[str, Any], verdicts: dict[str, Any] | None,
                sample: Sample | None) -> None:
        results[index] = (SampleResult.from_row(row, verdicts, index=index), sample)

    try:
        plan = build_plan(metrics, judge, store, compat)
        try:
            await probe_judges(plan)
            if on_start is not None:
                await on_start(plan)
            scale = None
            if ray_options is not None:
                from ..scale.blocks import BlockSpec

                spec = BlockSpec(metrics, judge, compat, concurrency, max_chars,
                                 str(store.path) if store is not None else None,
                                 use_cache=store is not None)
                if store is not None:
                    store.flush()  # the workers read it: what the probe learned is there
                scale = (spec, ray_options, store)
            stats = await _run(source, plan, concurrency=concurrency, out=out,
                               out_format=out_format, resume=resume, strict=strict,
                               progress=progress, max_chars=max_chars,
                               max_consecutive_failures=max_consecutive_failures,
                               on_result=collect if keep_results else None, scale=scale)
        finally:
            await aclose_judges(plan.owned)
    finally:
        if store is not None:
            store.close() if owns_store else store.flush()
    ordered = [results[i] for i in range(len(results))]
    report = Report(results=[r for r, _ in ordered], samples=[s for _, s in ordered],
                    metrics=plan.names, stats=stats, judges=[g.identity for g in plan.groups],
                    kept=keep_results)
    notify(report)  # e.g. the pytest plugin's session report
    return report


async def _run(source: Any, plan: Plan, *, concurrency: int, out: str | os.PathLike[str] | None,
               out_format: str | None, resume: bool, strict: bool, progress: bool | None,
               max_chars: int, max_consecutive_failures: int | None,
               on_result: Any, scale: tuple[Any, Any, JudgeCache | None] | None = None
               ) -> RunStats:
    """The run with its journal and progress display; the journal survives any failure."""
    journal = fmt = None
    if out is not None:
        fmt = output_format(Path(out), out_format)
        journal = Journal(Path(out), {**plan.config(), "format": fmt}, resume=resume)
        done = journal.open()
        if done:
            log.info("resuming: %d finished rows found in %s", done, journal.path)
    show = sys.stderr.isatty() if progress is None else progress
    bar = RichProgress(source.total) if show else None
    try:
        with bar if bar is not None else contextlib.nullcontext():
            if scale is None:
                stats = await arun(source, plan, concurrency=concurrency, strict=strict,
                                   journal=journal, keep_samples=fmt == "ragchecker",
                                   on_result=on_result, progress=bar, max_chars=max_chars,
                                   max_consecutive_failures=max_consecutive_failures)
            else:
                from ..scale.engine import arun_ray

                spec, options, store = scale
                stats = await arun_ray(source, plan, spec, options, journal=journal,
                                       keep_samples=fmt == "ragchecker", on_result=on_result,
                                       progress=bar, strict=strict, max_chars=max_chars,
                                       max_consecutive_failures=max_consecutive_failures,
                                       store=store)
        if journal is not None and fmt is not None and out is not None:
            finalize(journal, stats.rows, Path(out), fmt, plan.names)
    except BaseException:
        if journal is not None:  # keep finished rows for the next run
            journal.close(remove=journal.empty)
        raise
    return stats


def _ray_options(engine: str, address: str | None, workers: int | None,
                block_size: int | None) -> Any:
    """The Ray engine's options (None for a local run); Ray itself is imported later."""
    if engine == "local":
        if address is not None or workers is not None or block_size is not None:
            raise InvalidInput("ray_address, workers and block_size need engine='ray'")
        return None
    if engine != "ray":
        raise InvalidInput(f"unknown engine {engine!r}; known: local, ray")
    from ..scale.engine import RayOptions, import_ray

    import_ray()  # the install hint before any work
    return RayOptions(address, workers, block_size)


def evaluate(dataset: Any, metrics: Sequence[Metric | str] | str | None = None, *,
             judge: Judge | str | None = None, concurrency: int = 8,
             cache: CacheOption | JudgeCache = None, out: str | os.PathLike[str] | None = None,
             out_format: str | None = None, resume: bool = True, strict: bool = False,
             progress: bool | None = None, format: str | None = None,
             keep_results: bool = True, max_chars: int = MAX_TEXT_CHARS,
             max_consecutive_failures: int | None = 10,
             compat: Compat | None = None, engine: str = "local",
             ray_address: str | None = None, workers: int | None = None,
             block_size: int | None = None) -> Report:
    """Synchronous ``aevaluate`` (inside a running event loop use ``await aevaluate(...)``)."""
    return run_sync(aevaluate(dataset, metrics, judge=judge, concurrency=concurrency, cache=cache,
                              out=out, out_format=out_format, resume=resume, strict=strict,
                              progress=progress, format=format, keep_results=keep_results,
                              max_chars=max_chars,
                              max_consecutive_failures=max_consecutive_failures,
                              compat=compat, engine=engine, ray_address=ray_address,
                              workers=workers, block_size=block_size),
                    hint="use `await aevaluate(...)`")
