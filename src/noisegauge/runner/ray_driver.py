"""The driver of a run on Ray: blocks of rows out to the cluster, finished rows back in.

Why Ray tasks over blocks of rows (not Ray Data ``map_batches``): a block is scored by our
own runner (``runner.run.arun``, via ``runner.blocks``), so a row scored on a worker is the
row a local run writes, byte for byte, with the same error rows and evidence. The driver
keeps everything that must happen once and in order: reading and validating the input
(row numbers, duplicate ids, bad rows), the journal (resume), the totals, ``--strict`` and
the stop after consecutive judge failures, and the merge of the workers' cache answers.
Ray Data would own the reading and the ordering instead, and its batches are not ours to
retry, resume or journal. A Ray task is retried by Ray when its worker dies
(``max_retries``); its rows only count when the task returns, so a retried block never
duplicates or drops a row.

Memory: the input is read lazily, at most ``workers`` blocks are out at once, and finished
rows go to the journal as they arrive, so the driver holds a few blocks, never the run.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput, MissingDependency
from ..infra.store import JudgeCache
from ..infra.transport import shared_limits
from ..io.readers import Source
from ..io.rows import RawRow
from ..report.totals import RunStats
from ..samples import Sample
from .blocks import Block, BlockResult, BlockSpec, ascore_block
from .journal import Journal
from .plan import Plan
from .ray_limits import PermitDesk, RayGate
from .run import OnResult, Progress, Runner

__all__ = ["DEFAULT_BLOCK_SIZE", "RayOptions", "arun_ray", "block_size_for", "import_ray",
           "admitted_blocks", "take_block"]

log = logging.getLogger("noisegauge")

#: Most rows per block: big enough that a block's overhead (a task, a cache file, a plan)
#: is small beside its work, small enough that a lost block costs little and the driver's
#: memory stays a few blocks. A smaller input gets smaller blocks (``block_size_for``).
DEFAULT_BLOCK_SIZE = 256


def block_size_for(total: int | None, workers: int) -> int:
    """At least 4 blocks per worker when the input's length is known (so no worker idles
    while another finishes a long last block), between 8 and ``DEFAULT_BLOCK_SIZE`` rows."""
    if total is None:
        return DEFAULT_BLOCK_SIZE
    return max(8, min(DEFAULT_BLOCK_SIZE, -(-total // (4 * workers))))


@dataclass(frozen=True)
class RayOptions:
    """``address``: None starts a local Ray (or uses the one this process already
    initialised), ``"auto"`` joins the cluster on this machine, ``"ray://HOST:10001"`` a
    remote one. ``workers``: blocks scored at once (default: the cluster's CPUs);
    ``block_size``: rows per block (default: ``block_size_for`` the input)."""

    address: str | None = None
    workers: int | None = None
    block_size: int | None = None  # None: ``block_size_for`` the input

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise InvalidInput(f"workers must be at least 1, got {self.workers}")
        if self.block_size is not None and self.block_size < 1:
            raise InvalidInput(f"block_size must be at least 1, got {self.block_size}")


def import_ray() -> Any:
    """The ``ray`` module, or the exact install hint."""
    try:
        import ray
    except ImportError as exc:
        raise MissingDependency("engine='ray'", "ray", "ray") from exc
    return ray


def _connect(ray: Any, options: RayOptions) -> int:
    """Join or start Ray; returns how many blocks to keep out at once."""
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
        if options.address is None and options.workers is not None:
            kwargs["num_cpus"] = options.workers  # a local Ray of exactly that size
        ray.init(address=options.address, **kwargs)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return options.workers or max(1, cpus)


def _score_block(spec: BlockSpec, block: Block, desk: Any) -> BlockResult:
    """The Ray task: one block, under the cluster-wide endpoint limits."""
    with shared_limits(RayGate(desk)):
        return asyncio.run(ascore_block(spec, block))


_TASKS: dict[int, Any] = {}


def _remote(ray: Any) -> tuple[Any, Any]:
    """The block task and the permit-desk actor class, made once per Ray module."""
    key = id(ray)
    if key not in _TASKS:
        # max_retries: a block whose worker died (crash, lost node) runs again elsewhere.
        _TASKS[key] = (ray.remote(num_cpus=1, max_retries=3)(_score_block),
                       ray.remote(num_cpus=0)(PermitDesk))
    task, desk = _TASKS[key]
    return task, desk


async def arun_ray(source: Source, plan: Plan, spec: BlockSpec, options: RayOptions, *,
                   journal: Journal | None, keep_samples: bool, on_result: OnResult | None,
                   progress: Progress | None, strict: bool, max_chars: int,
                   max_consecutive_failures: int | None, store: JudgeCache | None) -> RunStats:
    """``runner.run.arun`` with the judging done by Ray tasks over blocks of rows; the
    workers' new cache answers are merged into ``store`` as their blocks come back."""
    ray = import_ray()
    workers = _connect(ray, options)
    task, desk_class = _remote(ray)
    try:
        spec_ref = ray.put(spec)
    except Exception as exc:  # e.g. a judge object holding a lock or a connection
        raise InvalidInput(f"engine='ray' sends the judge and metrics to the workers, and "
                           f"this one cannot be sent ({exc}); pass the judge as a spec string "
                           "(judge='openai:MODEL') or a judge that pickles") from exc
    desk = desk_class.options(name=f"noisegauge-permits-{uuid.uuid4().hex[:12]}").remote()
    run = Runner(plan, journal=journal, keep_samples=keep_samples, on_result=on_result,
                 progress=progress, strict=strict, max_chars=max_chars,
                 max_consecutive_failures=max_consecutive_failures)
    out: dict[Any, Sequence[tuple[RawRow, Sample]]] = {}
    numbers = itertools.count()
    size = options.block_size or block_size_for(source.total, workers)

    def submit(batch: Sequence[tuple[RawRow, Sample]]) -> None:
        block = Block(next(numbers), tuple((r.index, r.fingerprint, s) for r, s in batch))
        out[task.remote(spec_ref, block, desk)] = batch

    async def finished(until: int) -> list[tuple[Sequence[tuple[RawRow, Sample]], BlockResult]]:
        """Wait until at most ``until`` blocks are out; the blocks that came back."""
        done = []
        while len(out) > until:
            ready, _ = await asyncio.to_thread(ray.wait, list(out), num_returns=1)
            for ref in ready:
                batch = out.pop(ref)
                done.append((batch, await asyncio.to_thread(ray.get, ref)))  # a bug raises
        return done

    try:
        for batch in admitted_blocks(run, source, size):
            done = await finished(workers - 1)
            submit(batch)  # first, so the freed worker starts while the driver takes rows
            for sent, result in done:
                take_block(run, sent, result, store)
        for sent, result in await finished(0):
            take_block(run, sent, result, store)
    finally:
        for ref in out:  # stopped (strict, failures, Ctrl-C, a bug): stop the blocks out
            ray.cancel(ref)
        ray.kill(desk)
    return run.stats


def admitted_blocks(run: Runner, source: Source,
                    size: int) -> Iterator[list[tuple[RawRow, Sample]]]:
    """The rows ``run`` admits, ``size`` at a time (the last block may be shorter); a row is
    read and admitted only when the block before it has been handed on."""
    batch: list[tuple[RawRow, Sample]] = []
    for raw in source:
        sample = run.admit(raw)
        if sample is not None:
            batch.append((raw, sample))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def take_block(run: Runner, batch: Sequence[tuple[RawRow, Sample]], result: BlockResult,
          store: JudgeCache | None) -> None:
    """A finished block's rows into the run, in input order; its cache answers into the
    user's cache first (a row counted is a row whose answers are kept)."""
    if store is not None:
        store.merge(result.cache)
    sent = [r.index for r, _ in batch]
    got = [index for index, _, _ in result.rows]
    if got != sent:  # the runner makes one row per sample: anything else is a bug
        raise RuntimeError(f"block {result.number} came back with rows {got[:5]}..., "
                           f"sent {sent[:5]}...")
    for (raw, sample), (_, row, verdicts) in zip(batch, result.rows, strict=True):
        run.emit_row(raw, row, verdicts, sample)
