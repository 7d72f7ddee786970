"""One block of rows scored on a worker, by the same runner as a local run (no Ray here).

The driver reads and validates the input, so row numbers, duplicate ids and bad rows are
decided once, in input order, exactly as locally. A block carries only valid samples;
``ascore_block`` builds the plan from the run's ``BlockSpec`` (metrics, judge, compat),
runs ``runner.run.arun`` over the block and returns each row as ``arun`` made it, with
the answers its judge cache learned. Nothing in a block is written anywhere but a
private temporary cache file, so a block can be run again (a Ray retry) with no trace
of the failed attempt.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.metrics import Compat
from ..infra.store import CacheDump
from ..io.readers import Source
from ..io.rows import RawRow
from ..samples import Sample
from ..scoring.labels import RelevanceMode
from ..scoring.metrics import Metric
from .block_cache import BlockCache
from .plan import aclose_judges, build_plan
from .run import arun

__all__ = ["Block", "BlockResult", "BlockSpec", "ascore_block"]


@dataclass(frozen=True)
class BlockSpec:
    """What every block needs to build the run's plan; sent to the cluster once."""

    metrics: Sequence[Metric | str] | str | None
    judge: Any  # a spec string or a judge object that pickles (OpenAIJudge does)
    compat: Compat | None
    concurrency: int
    max_chars: int
    #: The user's cache file, read on nodes that can see it; None: no cache at all.
    cache: str | None
    use_cache: bool
    relevance: RelevanceMode = "auto"


@dataclass(frozen=True)
class Block:
    number: int
    rows: tuple[tuple[int, str, Sample], ...]  # (input index, fingerprint, sample)


@dataclass
class BlockResult:
    number: int
    #: (input index, output row, verdicts or None), in input order.
    rows: list[tuple[int, dict[str, Any], dict[str, Any] | None]]
    cache: CacheDump = field(default_factory=lambda: ([], []))
    seconds: float = 0.0


async def ascore_block(spec: BlockSpec, block: Block) -> BlockResult:
    """Score ``block`` with the local runner; raises only for a bug (a judge failure is an
    error row, as in a local run)."""
    started = time.perf_counter()
    rows: list[tuple[int, dict[str, Any], dict[str, Any] | None]] = []

    def collect(index: int, row: dict[str, Any], verdicts: dict[str, Any] | None,
                _sample: Sample | None) -> None:
        rows.append((index, row, verdicts))

    with tempfile.TemporaryDirectory(prefix="noisegauge-block-") as tmp:
        store = BlockCache(Path(tmp) / "cache.sqlite3", spec.cache) if spec.use_cache else None
        try:
            plan = build_plan(spec.metrics, spec.judge, store, spec.compat, spec.relevance)
            source = Source([RawRow(i, fp, sample=s) for i, fp, s in block.rows],
                            len(block.rows), f"block {block.number}")
            try:
                await arun(source, plan, concurrency=spec.concurrency, on_result=collect,
                           max_chars=spec.max_chars)
            finally:
                # Every judge here is this block's own copy: close them all.
                await aclose_judges(list({id(m.judge): m.judge for m in plan.metrics}.values()))
            dump: CacheDump = store.dump() if store is not None else ([], [])
        finally:
            if store is not None:
                store.close()
    rows.sort(key=lambda r: r[0])
    return BlockResult(block.number, rows, dump, time.perf_counter() - started)
