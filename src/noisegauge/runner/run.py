"""The batch loop: stream rows in, judge a bounded number at once, stream results out.

Memory stays bounded: the input is read lazily, at most ``concurrency`` samples are in
flight, and finished rows go to the journal (and to an optional callback) as they complete.
A bad row becomes an ``error`` row naming the row and field, and a judge failure (endpoint
unreachable, timeout, unusable answer) an ``error`` row with its reason and kind, unless
``strict``; a bug raises. After ``max_consecutive_failures`` rows in a row fail to reach
the judge, the run stops (``JudgeUnavailable``) with every finished row journaled.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidSample, JudgeError, JudgeOutputError, JudgeUnavailable
from ..infra.outputs import replacing
from ..io.readers import Source
from ..io.rows import RawRow, input_record, sample_record
from ..io.writers import open_writer
from ..report.totals import RunStats
from ..samples import FIELD_ALIASES, MAX_TEXT_CHARS, Sample, check_sizes, id_text
from ..scoring.metrics import ascore_sample
from ..scoring.results import SampleResult, error_result
from .journal import Journal, fsync_dir
from .plan import Plan, merge

__all__ = ["OnResult", "Progress", "Runner", "arun", "finalize", "input_record", "output_row"]

log = logging.getLogger("noisegauge")

#: (index, output row, verdicts dict or None, Sample or None) for every row, fresh or resumed.
OnResult = Callable[[int, dict[str, Any], "dict[str, Any] | None", "Sample | None"], None]


class Progress(Protocol):
    def update(self, stats: RunStats) -> None: ...


def output_row(index: int, result: SampleResult, extra: tuple[str, ...] = (),
               judges: list[dict[str, Any]] | None = None,
               sample: Sample | None = None) -> dict[str, Any]:
    """The CONTRACTS row plus ``index``, the ``extra`` requested metric columns, the judges'
    identities and the input texts (``input``, absent when the row could not be read)."""
    row = {"index": index, **result.to_row(extra)}
    if judges is not None:
        row["judges"] = judges
    if sample is not None:
        row["input"] = input_record(sample)
    return row


def _raw_value(record: Mapping[str, Any] | None) -> Any:
    """The row's id as the input gives it (``1`` or ``"1"``), before it became text."""
    if not isinstance(record, Mapping):
        return None
    for name in FIELD_ALIASES["id"]:
        if record.get(name) is not None:
            return record[name]
    return None


def _raw_id(record: Mapping[str, Any] | None) -> str | None:
    return id_text(_raw_value(record))


def _as_given(value: Any) -> str:
    """``1`` -> 'the number 1'; ``"1"`` -> 'the string "1"'."""
    if isinstance(value, str):
        return f"the string {json.dumps(value, ensure_ascii=False)}"
    return f"the number {value!r}"


class Runner:
    """The bookkeeping of one run (validation, journal, totals, when to stop), shared by
    ``arun`` and the Ray engine's driver (``runner.ray_driver``): whoever judges the samples,
    the rows are counted, journaled and checked by this one object."""

    def __init__(self, plan: Plan, *, journal: Journal | None, keep_samples: bool,
                 on_result: OnResult | None, progress: Progress | None, strict: bool,
                 max_chars: int, max_consecutive_failures: int | None) -> None:
        self.plan = plan
        self.journal = journal
        self.keep_samples = keep_samples
        self.on_result = on_result
        self.progress = progress
        self.strict = strict
        self.max_chars = max_chars
        self.max_failures = max_consecutive_failures
        self.failures = 0  # rows in a row that could not reach the judge
        self.stats = RunStats(plan.names)
        #: id -> (first row, the id as that row gave it)
        self.ids: dict[str, tuple[int, Any]] = {}
        self.judges = [g.identity for g in plan.groups]

    def sample_of(self, raw: RawRow) -> Sample:
        """The row's Sample, or InvalidSample naming row and field."""
        if raw.error is not None:
            raise raw.error
        if raw.sample is not None:
            sample = raw.sample
            check_sizes(sample, self.max_chars, raw.index)
        else:
            sample = Sample.from_record(raw.record or {}, row=raw.index, max_chars=self.max_chars)
        if sample.id is not None:
            given = _raw_value(raw.record) if raw.record is not None else sample.id
            first, first_given = self.ids.setdefault(sample.id, (raw.index, given))
            if first != raw.index:
                # Ids compare as text (samples.id_text): say so when the two rows wrote the
                # id differently, or "1" and 1 read as a spurious duplicate.
                how = "" if _as_given(given) == _as_given(first_given) else (
                    f", as {_as_given(first_given)}; row {raw.index} has "
                    f'{_as_given(given)}: ids are compared as text, 1, 1.0 and "1" are one id')
                raise InvalidSample(f"duplicate id {sample.id!r} (first used by row "
                                    f"{first}{how})", row=raw.index, field="id",
                                    expected="a unique id per row")
        return sample

    async def judge(self, raw: RawRow, sample: Sample) -> tuple[RawRow, Sample, SampleResult]:
        results = await asyncio.gather(
            *(ascore_sample(sample, g.judge, index=raw.index, compat=self.plan.compat,
                            relevance=self.plan.relevance, **g.score_options())
              for g in self.plan.groups))
        return raw, sample, merge(self.plan, results)

    def admit(self, raw: RawRow) -> Sample | None:
        """The row's sample when it must be judged; None when it was dealt with here (a bad
        row became an error row, or the journal had its result)."""
        try:
            sample = self.sample_of(raw)
        except InvalidSample as exc:
            if self.strict:
                raise
            self.emit(raw, error_result(str(exc), index=raw.index, id=_raw_id(raw.record),
                                        kind="input"), None)
            return None
        if self.journal is not None and self.journal.reusable(raw.index, raw.fingerprint):
            self.emit_resumed(raw, sample)
            return None
        return sample

    def emit(self, raw: RawRow, result: SampleResult, sample: Sample | None) -> None:
        row = output_row(raw.index, result, self.plan.extra_names, self.judges, sample)
        verdicts = result.verdicts.to_dict() if result.verdicts is not None else None
        self.emit_row(raw, row, verdicts, sample, result)

    def emit_row(self, raw: RawRow, row: dict[str, Any], verdicts: dict[str, Any] | None,
                 sample: Sample | None, result: SampleResult | None = None) -> None:
        """A finished row as ``emit`` makes it (``result``: the one it was made from; read
        back from the row when it was made elsewhere, e.g. on a worker)."""
        if result is None:
            result = SampleResult.from_row(row, verdicts, index=raw.index)
        if self.journal is not None:
            keep = sample_record(sample) if (self.keep_samples and sample is not None) else None
            self.journal.append(raw.index, raw.fingerprint, row, verdicts, keep)
        self._count(raw.index, row, verdicts, sample, resumed=False)
        if result.status == "error":
            self._failed(raw.index, result)
        else:
            self.failures = 0

    def _failed(self, index: int, result: SampleResult) -> None:
        """Stop the run when asked to (strict) or when the judge keeps being unreachable."""
        message = f"row {index}: {result.reason}"
        if self.strict:
            if result.error_kind == "input":
                raise InvalidSample(str(result.reason))  # it already names row and field
            cls = {"transport": JudgeUnavailable, "output": JudgeOutputError}.get(
                result.error_kind or "", JudgeError)
            raise cls(message)
        if result.error_kind == "transport":
            self.failures += 1
            if self.max_failures is not None and self.failures >= self.max_failures:
                raise JudgeUnavailable(
                    f"stopped after {self.failures} rows in a row got no answer from the judge; "
                    f"the last one: {message}")

    def emit_resumed(self, raw: RawRow, sample: Sample) -> None:
        assert self.journal is not None
        entry = self.journal.entry(raw.index)
        self._count(raw.index, entry["row"], entry.get("verdicts"), sample, resumed=True)

    def _count(self, index: int, row: dict[str, Any], verdicts: dict[str, Any] | None,
               sample: Sample | None, *, resumed: bool) -> None:
        self.stats.add(index, row, resumed=resumed)
        if self.on_result is not None:
            self.on_result(index, row, verdicts, sample)
        if self.progress is not None:
            self.progress.update(self.stats)


async def arun(source: Source, plan: Plan, *, concurrency: int = 8, strict: bool = False,
               journal: Journal | None = None, keep_samples: bool = False,
               on_result: OnResult | None = None, progress: Progress | None = None,
               max_chars: int = MAX_TEXT_CHARS,
               max_consecutive_failures: int | None = None) -> RunStats:
    """Score every row of ``source``; returns the run totals. Rows reach ``journal`` and
    ``on_result`` in completion order, each exactly once."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    run = Runner(plan, journal=journal, keep_samples=keep_samples, on_result=on_result,
                  progress=progress, strict=strict, max_chars=max_chars,
                  max_consecutive_failures=max_consecutive_failures)
    pending: set[asyncio.Task[tuple[RawRow, Sample, SampleResult]]] = set()

    async def drain(until: int) -> None:
        nonlocal pending
        while len(pending) > until:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            finished = list(done)
            for n, task in enumerate(finished):
                try:
                    raw, sample, result = task.result()  # a bug in a task is raised here
                    run.emit(raw, result, sample)
                except BaseException:
                    # The rest finished too (maybe failing the same way): back to pending,
                    # whose clean-up below retrieves them, so none is left unretrieved.
                    pending.update(finished[n + 1:])
                    raise

    try:
        for raw in source:
            sample = run.admit(raw)
            if sample is None:
                continue
            await drain(concurrency - 1)
            pending.add(asyncio.create_task(run.judge(raw, sample)))
        await drain(0)
    finally:
        for task in pending:  # stopped (strict, failures, Ctrl-C, a bug): stop in-flight work
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    return run.stats


def finalize(journal: Journal, rows: int, out: Path, fmt: str, metric_names: tuple[str, ...]) -> None:
    """Write ``out`` in input order from the journal, atomically and durably, then drop the
    journal (only once the output is safely in place)."""
    # A fixed name: the journal's lock makes it ours, and a kill here leaves nothing stray.
    tmp = out.with_name(f".{out.name}.tmp")
    with replacing(out, tmp) as dest:  # /dev/null, a FIFO or a link: written through
        writer = open_writer(dest, fmt, metric_names)
        for entry in journal.entries(rows):
            writer.add(entry["i"], entry["row"], entry.get("sample"), entry.get("verdicts"))
        writer.close()  # flushed and fsynced
    fsync_dir(out.parent)
    journal.close(remove=True)
