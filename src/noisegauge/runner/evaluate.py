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
import logging
import os
import pickle
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..engine.metrics import Compat
from ..errors import InvalidInput, JudgeUnavailable
from ..infra.store import CacheOption, JudgeCache, resolve_cache
from ..io.readers import open_source, relabel, without_references
from ..io.writers import output_format
from ..judges.base import Judge
from ..judges.cached import CachedJudge, Gate, GateFailed
from ..report.totals import RunStats
from ..samples import MAX_TEXT_CHARS, Sample
from ..scoring.failures import describe_failure, failure_kind
from ..scoring.labels import RelevanceMode
from ..scoring.metrics import Metric
from ..scoring.results import SampleResult
from .blocks import BlockSpec
from .journal import Journal
from .observe import notify
from .plan import Plan, aclose_judges, build_plan
from .pool import arun_pool, default_workers, start_method, uses_pool
from .progress import RichProgress
from .run import arun, finalize
from .run_report import Report, result_from_row

# Report and result_from_row live in .report; re-exported here where users import them.
__all__ = ["Report", "aevaluate", "evaluate", "probe_judges", "result_from_row"]

log = logging.getLogger("noisegauge")


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


async def _open_gate(plan: Plan, on_start: Callable[[Plan], Awaitable[None]] | None, *,
                     eager: bool) -> None:
    """The probe, then ``on_start``: before the first judge request the cache cannot answer
    (a rerun whose answers are all cached makes no call and needs no endpoint), or now when
    a judge has no cache in front of it or the rows go to Ray workers."""

    async def opener() -> None:
        await probe_judges(plan)
        if on_start is not None:
            await on_start(plan)

    if eager or not all(isinstance(g.judge, CachedJudge) for g in plan.groups):
        await opener()
        return
    gate = Gate(opener)
    for group in plan.groups:
        group.judge.gate = gate  # type: ignore[attr-defined]


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
                    workers: int | None = None, block_size: int | None = None,
                    relevance: RelevanceMode = "auto",
                    relevant_ids: str | None = None,
                    references: str | os.PathLike[str] | None = None,
                    allow_no_reference: bool = False) -> Report:
    """Score ``dataset`` with ``metrics`` (objects or names; default: every RAGChecker metric
    with ``judge``, default ``"lexical"``). Each sample is judged once per distinct judge.

    ``dataset``: list of dicts or Samples, dict of columns, pandas DataFrame,
    ``datasets.Dataset``, or a path (JSONL, JSON, RAGChecker JSON, CSV, Parquet; ``format``
    forces one). ``cache``: None = ``$NOISEGAUGE_CACHE`` or the user cache directory, False =
    off, or a path. ``out``: also write results there (format from the extension or
    ``out_format``), resuming from ``OUT.partial`` if a previous run was interrupted.

    Failures: a bad row or a judge failure (endpoint unreachable, timeout, unusable answer)
    is an ``error`` row with its reason and ``error_kind``; ``strict`` raises at the first
    (``InvalidSample`` or a ``JudgeError``) instead. Before its first uncached request, a
    judge with ``probe()`` is probed once; after ``max_consecutive_failures`` rows in a row
    could not reach the judge (None: never) the run stops with ``JudgeUnavailable``. Finished rows stay in
    ``OUT.partial`` either way, for the next run. A bug raises as it is.
    ``keep_results=False`` keeps only the totals (bounded memory for huge runs).
    ``max_chars``: longest question, response, reference or chunk (longer: an error row).
    ``compat="ragchecker"``: RAGChecker's ``computation.py`` values where a denominator is
    empty (0.0) instead of our typed undefined (README: "Exact compatibility").
    ``relevance``: which chunks count as relevant: ``"auto"`` the row's labels
    (``reference_context_ids``) when it has them, else the judge's reading; ``"labels"``,
    ``"judge"``, or ``"both"`` (labels decide, the judge's reading is kept beside them).
    ``relevant_ids``: the field holding the labels, when it is not ``reference_context_ids``.
    ``format="openinference"``: ``dataset`` is an OTLP/JSON trace export (a file or a
    directory), one sample per trace; ``references``: a golden JSONL file joined to the
    traces by question or metadata id (a trace without one is scored for faithfulness, its
    other metrics undefined, "no reference"). ``allow_no_reference``: the same for rows of
    any dataset that have no reference (by default such a row is an error row).
    The probe and ``on_start(plan)`` (the CLI runs the judge canaries there) wait for the
    first judge request the cache cannot answer: a rerun of a finished run makes no call.

    ``workers``: on a local run, the processes that judge with a CPU-bound judge (lexical,
    NLI; default: every core this process may use; 1: this process alone). The output is
    the one-process run's, byte for byte; an LLM judge keeps its async concurrency in this
    process. ``block_size``: rows per block of work sent to a process or a Ray worker.

    ``engine="ray"``: the rows are judged on a Ray cluster (``pip install
    '.[ray]'``), in blocks of ``block_size`` rows (default: at least 4 blocks per
    worker, at most 256 rows each), ``workers`` blocks at once
    (default: the cluster's CPUs); ``ray_address``: None starts a local Ray (or uses the
    one already initialised), ``"auto"`` or ``"ray://HOST:PORT"`` joins a cluster. The
    output is the local run's, byte for byte; the journal, the cache and an LLM
    endpoint's limits hold across the cluster (README: "Scale out on Ray").
    """
    ray_options = _ray_options(engine, ray_address, workers, block_size)
    source = open_source(dataset, format, references)
    if allow_no_reference:
        source = without_references(source)
    if relevant_ids is not None:
        source = relabel(source, relevant_ids)
    store = resolve_cache(cache)
    owns_store = not isinstance(cache, JudgeCache)
    results: dict[int, tuple[SampleResult, Sample | None]] = {}

    def collect(index: int, row: dict[str, Any], verdicts: dict[str, Any] | None,
                sample: Sample | None) -> None:
        results[index] = (SampleResult.from_row(row, verdicts, index=index), sample)

    try:
        plan = build_plan(metrics, judge, store, compat, relevance)
        try:
            await _open_gate(plan, on_start, eager=ray_options is not None)
            scale = None
            processes = workers or default_workers()
            if ray_options is not None or uses_pool(plan, processes, source.total):
                spec = BlockSpec(metrics, judge, compat, concurrency, max_chars,
                                 str(store.path) if store is not None else None,
                                 use_cache=store is not None, relevance=plan.relevance)
                if ray_options is not None:
                    scale = (spec, ray_options, store)
                elif _sendable(spec):
                    scale = (spec, (processes, block_size), store)
                if store is not None and scale is not None:
                    store.flush()  # the workers read it: what the probe learned is there
            try:
                stats = await _run(source, plan, concurrency=concurrency, out=out,
                                   out_format=out_format, resume=resume, strict=strict,
                                   progress=progress, max_chars=max_chars,
                                   max_consecutive_failures=max_consecutive_failures,
                                   on_result=collect if keep_results else None, scale=scale,
                                   store=store)
            except GateFailed as exc:
                raise exc.error from None  # the probe's or the canaries' own error
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
               on_result: Any, scale: tuple[Any, Any, JudgeCache | None] | None = None,
               store: JudgeCache | None = None) -> RunStats:
    """The run with its journal and progress display; the journal survives any failure."""
    journal = fmt = None
    if out is not None:
        fmt = output_format(Path(out), out_format)
        journal = Journal(Path(out), {**plan.config(), "format": fmt}, resume=resume,
                          before_append=store.flush if store is not None else None)
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
            elif isinstance(scale[1], tuple):  # the local process pool
                spec, (processes, size), store = scale
                stats = await arun_pool(source, plan, spec, processes, journal=journal,
                                        keep_samples=fmt == "ragchecker", on_result=on_result,
                                        progress=bar, strict=strict, max_chars=max_chars,
                                        max_consecutive_failures=max_consecutive_failures,
                                        store=store, block_size=size)
            else:
                from .ray_driver import arun_ray

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
        if address is not None:
            raise InvalidInput("ray_address needs engine='ray'")
        if workers is not None and workers < 1:
            raise InvalidInput(f"workers must be at least 1, got {workers}")
        if block_size is not None and block_size < 1:
            raise InvalidInput(f"block_size must be at least 1, got {block_size}")
        return None
    if engine != "ray":
        raise InvalidInput(f"unknown engine {engine!r}; known: local, ray")
    from .ray_driver import RayOptions, import_ray

    import_ray()  # the install hint before any work
    return RayOptions(address, workers, block_size)


def _sendable(spec: BlockSpec) -> bool:
    """Whether the judge and metrics can go to worker processes; if not, one process."""
    if start_method() == "fork":
        return True  # the workers start as copies of this process: nothing is sent
    try:
        pickle.dumps(spec)
    except Exception as exc:  # e.g. a judge object holding a lock or a connection
        log.info("judging in this process only: the judge cannot be sent to worker "
                 "processes (%s); pass it as a spec string to use every core", exc)
        return False
    return True


def evaluate(dataset: Any, metrics: Sequence[Metric | str] | str | None = None, *,
             judge: Judge | str | None = None, concurrency: int = 8,
             cache: CacheOption | JudgeCache = None, out: str | os.PathLike[str] | None = None,
             out_format: str | None = None, resume: bool = True, strict: bool = False,
             progress: bool | None = None, format: str | None = None,
             keep_results: bool = True, max_chars: int = MAX_TEXT_CHARS,
             max_consecutive_failures: int | None = 10,
             compat: Compat | None = None, engine: str = "local",
             ray_address: str | None = None, workers: int | None = None,
             block_size: int | None = None, relevance: RelevanceMode = "auto",
             relevant_ids: str | None = None,
             references: str | os.PathLike[str] | None = None,
             allow_no_reference: bool = False) -> Report:
    """Synchronous ``aevaluate`` (inside a running event loop use ``await aevaluate(...)``)."""
    return run_sync(aevaluate(dataset, metrics, judge=judge, concurrency=concurrency, cache=cache,
                              out=out, out_format=out_format, resume=resume, strict=strict,
                              progress=progress, format=format, keep_results=keep_results,
                              max_chars=max_chars,
                              max_consecutive_failures=max_consecutive_failures,
                              compat=compat, engine=engine, ray_address=ray_address,
                              workers=workers, block_size=block_size, relevance=relevance,
                              relevant_ids=relevant_ids, references=references,
                              allow_no_reference=allow_no_reference),
                    hint="use `await aevaluate(...)`")
