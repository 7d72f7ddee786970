"""Every core of this machine: a local run's judging spread over a pool of processes.

A CPU-bound judge (lexical, NLI) holds the GIL, so a local run on one process uses one
core however many samples are in flight. Here the driver cuts the valid samples into blocks
and a process pool scores each block with the local runner (``blocks.ascore_block``, the
Ray engine's block task without Ray), so every row is the row a one-process run writes.
The driver keeps what must happen once and in order (reading and validating the input, the
journal, the totals, ``strict``, the stop after consecutive failures, the merge of the
workers' cache answers), as the Ray driver does.

An LLM judge waits on the network, not the CPU: it keeps its async concurrency in one
process (``uses_pool`` says no). Ctrl-C stops the driver; the workers ignore it, and the
pool is shut down with the blocks still queued cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import multiprocessing
import os
import signal
from collections.abc import Sequence
from typing import Any

from ..infra.store import JudgeCache
from ..io.readers import Source
from ..io.rows import RawRow
from ..judges.base import judge_identity
from ..report.totals import RunStats
from ..samples import Sample
from .blocks import Block, BlockResult, BlockSpec, ascore_block
from .journal import Journal
from .plan import Plan
from .ray_driver import admitted_blocks, block_size_for, take_block
from .run import OnResult, Progress, Runner

__all__ = ["CPU_BOUND_JUDGES", "MIN_BLOCK", "arun_pool", "default_workers", "judged_in_pool",
           "start_method", "uses_pool"]

log = logging.getLogger("noisegauge")

#: The fewest rows in a block (``ray_driver.block_size_for``).
MIN_BLOCK = 8
#: Judges whose work is computation in this process (an LLM judge's is waiting on a server).
CPU_BOUND_JUDGES = frozenset({"lexical", "nli"})


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def uses_pool(plan: Plan, workers: int, total: int | None = None) -> bool:
    """Whether a local run with ``workers`` processes judges in the pool: more than one
    worker, every judge of the plan CPU-bound, and (when known) rows enough for two blocks
    (for fewer, starting processes costs more than it saves)."""
    return (workers > 1 and (total is None or total >= 2 * MIN_BLOCK)
            and all(g.identity.get("judge") in CPU_BOUND_JUDGES for g in plan.groups))


def judged_in_pool(judge: Any, workers: int) -> bool:
    """``uses_pool`` for a run of this one judge (before its plan exists)."""
    return workers > 1 and judge_identity(judge).get("judge") in CPU_BOUND_JUDGES


#: The run's spec in a worker process, set once when the worker starts.
_SPEC: BlockSpec | None = None


def _start_worker(spec: BlockSpec) -> None:
    """A worker keeps the run's spec and leaves Ctrl-C to the driver, which stops the run
    and the pool."""
    global _SPEC
    _SPEC = spec
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _score_block(block: Block) -> BlockResult:
    """The pool's task: one block, in a worker process."""
    assert _SPEC is not None, "worker started without the run's spec"
    return asyncio.run(ascore_block(_SPEC, block))


def start_method() -> str:
    """fork where there is one: a worker starts at once with the package imported, the
    judge as it is (nothing is pickled) and any metric a program registered in the
    catalogue; elsewhere a fresh interpreter, which needs a judge that pickles."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


async def arun_pool(source: Source, plan: Plan, spec: BlockSpec, workers: int, *,
                    journal: Journal | None, keep_samples: bool, on_result: OnResult | None,
                    progress: Progress | None, strict: bool, max_chars: int,
                    max_consecutive_failures: int | None, store: JudgeCache | None,
                    block_size: int | None = None) -> RunStats:
    """``runner.run.arun`` with the judging done by ``workers`` processes over blocks of
    rows; the workers' new cache answers are merged into ``store`` as blocks come back."""
    run = Runner(plan, journal=journal, keep_samples=keep_samples, on_result=on_result,
                 progress=progress, strict=strict, max_chars=max_chars,
                 max_consecutive_failures=max_consecutive_failures)
    size = block_size or block_size_for(source.total, workers)
    log.info("judging in %d worker processes, %d rows a block", workers, size)
    loop = asyncio.get_running_loop()
    pool = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context(start_method()),
        initializer=_start_worker, initargs=(spec,))
    Batch = Sequence[tuple[RawRow, Sample]]
    out: dict[asyncio.Future[BlockResult], tuple[int, Batch]] = {}
    back: dict[int, tuple[Batch, BlockResult]] = {}  # came back before a block ahead of it
    failed: tuple[int, Exception] | None = None  # the first block that raised (a bug)
    numbers = itertools.count()
    due = 0  # the next block to take, in input order

    def submit(batch: Batch) -> None:
        block = Block(next(numbers), tuple((r.index, r.fingerprint, s) for r, s in batch))
        out[loop.run_in_executor(pool, _score_block, block)] = (block.number, batch)

    def waiting(until: int) -> bool:
        if failed is not None:  # only the blocks before the failed one still count
            return any(n < failed[0] for n, _ in out.values())
        return bool(out) and len(out) + len(back) > until  # held blocks bound memory too

    async def finished(until: int) -> list[tuple[Batch, BlockResult]]:
        """Wait until at most ``until`` blocks are out or held; the blocks that can be
        taken, in input order (one that finished early waits for those before it, so rows
        are counted and journaled in the order a one-process run gives them)."""
        nonlocal due, failed
        while waiting(until):
            ready, _ = await asyncio.wait(list(out), return_when=asyncio.FIRST_COMPLETED)
            for fut in ready:
                number, batch = out.pop(fut)
                try:
                    back[number] = (batch, fut.result())
                except Exception as exc:
                    if failed is None or number < failed[0]:
                        failed = (number, exc)
        done = []
        while due in back and (failed is None or due < failed[0]):
            done.append(back.pop(due))
            due += 1
        return done

    def take(done: list[tuple[Batch, BlockResult]]) -> None:
        for sent, result in done:
            take_block(run, sent, result, store)
        if failed is not None:  # the rows before it are journaled; now the bug raises
            raise failed[1]

    try:
        for batch in admitted_blocks(run, source, size):
            done = await finished(2 * workers - 1)  # one queued per worker: none waits
            if failed is None:
                submit(batch)
            take(done)
        take(await finished(0))
    finally:
        stopped = bool(out)  # strict, failures, Ctrl-C, a bug: drop the blocks still out
        for fut in out:
            fut.cancel()
        if stopped:  # a block being scored is not waited for (its rows would not count)
            processes = list((getattr(pool, "_processes", None) or {}).values())
            for process in processes:
                process.terminate()
            # ... but their exit is: a forked worker holds the journal's lock through the
            # descriptor it inherited, and a rerun right after would find the file locked.
            for process in processes:
                process.join(10)
        pool.shutdown(wait=not stopped, cancel_futures=True)
    return run.stats
