"""The batch loop: stream rows in, judge a bounded number at once, stream results out.

Memory stays bounded: the input is read lazily, at most ``concurrency`` samples are in
flight, and finished rows go to the journal (and to an optional callback) as they complete.
A bad row becomes an ``error`` row naming the row and field, unless ``strict``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidSample
from ..io.readers import Source
from ..io.rows import RawRow
from ..io.writers import open_writer
from ..samples import FIELD_ALIASES, Sample
from ..scoring.metrics import ascore_sample
from ..scoring.results import SampleResult, error_result
from .journal import Journal
from .plan import Plan, merge
from .stats import RunStats

__all__ = ["OnResult", "Progress", "arun", "finalize", "input_record", "output_row", "sample_record"]

log = logging.getLogger("noisegauge")

#: (index, output row, verdicts dict or None, fresh SampleResult or None if resumed, Sample or None)
OnResult = Callable[[int, dict[str, Any], "dict[str, Any] | None", "SampleResult | None",
                     "Sample | None"], None]


class Progress(Protocol):
    def update(self, stats: RunStats) -> None: ...


def output_row(index: int, result: SampleResult, plan: Plan,
               sample: Sample | None = None) -> dict[str, Any]:
    """The CONTRACTS row plus ``index``, any extra requested metric columns, the judges'
    identities and the input texts (``input``, absent when the row could not be read)."""
    row = {"index": index, **result.to_row()}
    for name in plan.extra_names:
        mv = result.metrics.get(name)
        row["metrics"][name] = None if mv is None else mv.value
        if mv is not None and mv.value is None and result.status != "error":
            row["undefined"][name] = mv.reason
    row["judges"] = [g.identity for g in plan.groups]
    if sample is not None:
        row["input"] = input_record(sample)
    return row


def input_record(sample: Sample) -> dict[str, Any]:
    """The texts a result row was computed from, so the row can be read (and reported)
    without the input file: question, response, reference, chunks (ids), metadata."""
    rec: dict[str, Any] = {"user_input": sample.user_input, "response": sample.response,
                           "reference": sample.reference,
                           "retrieved_contexts": list(sample.retrieved_contexts)}
    if sample.chunk_ids is not None:
        rec["chunk_ids"] = list(sample.chunk_ids)
    if sample.metadata:
        rec["metadata"] = dict(sample.metadata)
    return rec


def sample_record(sample: Sample) -> dict[str, Any]:
    rec = sample.to_record()
    if sample.chunk_ids is not None:
        rec["chunk_ids"] = list(sample.chunk_ids)
    return rec


def _raw_id(record: Mapping[str, Any] | None) -> str | None:
    if not isinstance(record, Mapping):
        return None
    for name in FIELD_ALIASES["id"]:
        value = record.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)
    return None


class _Runner:
    def __init__(self, plan: Plan, *, journal: Journal | None, keep_samples: bool,
                 on_result: OnResult | None, progress: Progress | None) -> None:
        self.plan = plan
        self.journal = journal
        self.keep_samples = keep_samples
        self.on_result = on_result
        self.progress = progress
        self.stats = RunStats(plan.names)
        self.ids: dict[str, int] = {}

    def sample_of(self, raw: RawRow) -> Sample:
        """The row's Sample, or InvalidSample naming row and field."""
        if raw.error is not None:
            raise raw.error
        try:
            sample = raw.sample if raw.sample is not None else Sample.from_record(
                raw.record or {}, row=raw.index)
        except InvalidSample:
            raise
        except Exception as exc:  # any other surprise in a record is still just a bad row
            raise InvalidSample(f"unreadable record ({type(exc).__name__}: {exc})",
                                row=raw.index) from exc
        if sample.id is not None:
            first = self.ids.setdefault(sample.id, raw.index)
            if first != raw.index:
                raise InvalidSample(f"duplicate id {sample.id!r} (first used by row {first})",
                                    row=raw.index, field="id", expected="a unique id per row")
        return sample

    async def judge(self, raw: RawRow, sample: Sample) -> tuple[RawRow, Sample, SampleResult]:
        try:
            results = await asyncio.gather(
                *(ascore_sample(sample, g.judge, index=raw.index, compat=self.plan.compat,
                                **g.score_options())
                  for g in self.plan.groups))
            result = merge(self.plan, results)
        except Exception as exc:  # a bug must not lose the row either; it is logged loudly
            log.exception("row %d: unexpected failure", raw.index)
            result = error_result(f"internal error: {type(exc).__name__}: {exc}",
                                  index=raw.index, id=sample.id)
        return raw, sample, result

    def emit(self, raw: RawRow, result: SampleResult, sample: Sample | None) -> None:
        row = output_row(raw.index, result, self.plan, sample)
        verdicts = result.verdicts.to_dict() if result.verdicts is not None else None
        if self.journal is not None:
            keep = sample_record(sample) if (self.keep_samples and sample is not None) else None
            self.journal.append(raw.index, raw.fingerprint, row, verdicts, keep)
        self._count(raw.index, row, verdicts, result, sample, resumed=False)

    def emit_resumed(self, raw: RawRow, sample: Sample) -> None:
        assert self.journal is not None
        entry = self.journal.entry(raw.index)
        self._count(raw.index, entry["row"], entry.get("verdicts"), None, sample, resumed=True)

    def _count(self, index: int, row: dict[str, Any], verdicts: dict[str, Any] | None,
               result: SampleResult | None, sample: Sample | None, *, resumed: bool) -> None:
        self.stats.add(index, row, resumed=resumed)
        if self.on_result is not None:
            self.on_result(index, row, verdicts, result, sample)
        if self.progress is not None:
            self.progress.update(self.stats)


async def arun(source: Source, plan: Plan, *, concurrency: int = 8, strict: bool = False,
               journal: Journal | None = None, keep_samples: bool = False,
               on_result: OnResult | None = None, progress: Progress | None = None) -> RunStats:
    """Score every row of ``source``; returns the run totals. Rows reach ``journal`` and
    ``on_result`` in completion order, each exactly once."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    run = _Runner(plan, journal=journal, keep_samples=keep_samples, on_result=on_result,
                  progress=progress)
    pending: set[asyncio.Task[tuple[RawRow, Sample, SampleResult]]] = set()

    async def drain(until: int) -> None:
        nonlocal pending
        while len(pending) > until:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                raw, sample, result = task.result()
                run.emit(raw, result, sample)

    try:
        for raw in source:
            try:
                sample = run.sample_of(raw)
            except InvalidSample as exc:
                if strict:
                    raise
                run.emit(raw, error_result(str(exc), index=raw.index, id=_raw_id(raw.record)), None)
                continue
            if journal is not None and journal.reusable(raw.index, raw.fingerprint):
                run.emit_resumed(raw, sample)
                continue
            await drain(concurrency - 1)
            pending.add(asyncio.create_task(run.judge(raw, sample)))
        await drain(0)
    finally:
        for task in pending:  # interrupted (strict, Ctrl-C): stop in-flight work cleanly
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    return run.stats


def finalize(journal: Journal, rows: int, out: Path, fmt: str, metric_names: tuple[str, ...]) -> None:
    """Write ``out`` in input order from the journal, atomically, then drop the journal."""
    # A fixed name: the journal's lock makes it ours, and a kill here leaves nothing stray.
    tmp = out.with_name(f".{out.name}.tmp")
    writer = open_writer(tmp, fmt, metric_names)
    try:
        for entry in journal.entries(rows):
            writer.add(entry["i"], entry["row"], entry.get("sample"), entry.get("verdicts"))
        writer.close()
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    journal.close(remove=True)
