"""The sweep: inject distractors on purpose, run the pipeline, score, and collect a curve.

For each golden question and repeat, one ordered list of distractors is drawn (seeded by
``seed``, the question id and the repeat; never the global ``random``) and level ``k`` uses
its first ``k`` entries, so levels are nested and the curve compares a question with itself.
Level 0 (the relevant chunks alone) is generated once per question: its contexts do not
change between repeats. A case that cannot be made (``siblings`` on a row without traps) is
an undefined row with its reason: no answer is generated for it and it counts as undefined
in the curve, never as a clean answer at a noisy level.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..engine import catalogue
from ..engine.metrics import MetricValue
from ..errors import InvalidInput
from ..infra.store import CacheOption
from ..judges.base import Judge, judge_identity
from ..judges.registry import get_judge
from ..samples import Sample
from ..scoring.results import SampleResult, error_result
from .distractors import (
    POSITIONS,
    Chunk,
    Scorer,
    Siblings,
    build_sources,
    draw_mixed,
    no_siblings,
    place,
    relevant_chunks,
)
from .generation import Generation, GenerationCache, Generator
from .golden import GoldenItem, PoolChunk, load_pool, read_golden
from .pipelines import (
    CallablePipeline,
    Pipeline,
    PipelineInterrupted,
    get_pipeline,
    takes_history,
    takes_option,
)
from .stress_report import StressReport, StressRow

__all__ = ["NoisyCase", "plan_cases", "astress", "stress", "score_samples"]

log = logging.getLogger("noisegauge")

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class NoisyCase:
    """One question at one noise level and repeat, with the exact chunks shown."""

    item: GoldenItem
    level: int
    repeat: int
    chunks: tuple[Chunk, ...]
    #: Why this case cannot be made (e.g. no traps of its own for ``siblings``); None: it can.
    undefined: str | None = None


def plan_cases(items: Sequence[GoldenItem], *, levels: Sequence[int], strategies: Sequence[str],
               position: str = "random", repeats: int = 1, seed: int = 0,
               pool: Sequence[PoolChunk] | None = None,
               hard_scorer: Scorer | None = None) -> list[NoisyCase]:
    """Every noisy context of the sweep, in a reproducible order, before any generation."""
    if not levels or any((not isinstance(k, int)) or k < 0 for k in levels):
        raise InvalidInput(f"levels must be non-negative integers, got {list(levels)}")
    if position not in POSITIONS:
        raise InvalidInput(f"unknown position {position!r}; choose from {', '.join(POSITIONS)}")
    if repeats < 1:
        raise InvalidInput("repeats must be >= 1")
    levels = sorted(set(levels))
    sources = build_sources(strategies, items, pool, hard_scorer)
    siblings = any(isinstance(s, Siblings) for s in sources)
    cases: list[NoisyCase] = []
    for item in items:
        relevant = relevant_chunks(item)
        missing = no_siblings(item) if siblings else None
        for repeat in range(repeats):
            drawn = draw_mixed(sources, item, max(levels), random.Random(f"{seed}:{item.id}:{repeat}"))
            for level in levels:
                if level == 0 and repeat > 0:
                    continue
                rng = random.Random(f"{seed}:{item.id}:{repeat}:{level}:place")
                chunks = place(relevant, drawn[:level], position, rng)
                cases.append(NoisyCase(item, level, repeat, tuple(chunks),
                                       missing if level > 0 else None))
    return cases


async def score_samples(samples: Sequence[Sample], judge: Judge, *, concurrency: int = 8,
                        progress: Progress | None = None,
                        cache: CacheOption = None, **scale: Any) -> list[SampleResult]:
    """Score every sample through the batch runner, results in input order.

    Going through ``aevaluate`` gives the sweep the persistent judge cache: rerunning a
    stress test, or re-scoring the same answers at another level, repeats no judge call.
    """
    from ..runner.evaluate import aevaluate

    report = await aevaluate(list(samples), judge=judge, concurrency=concurrency, cache=cache,
                             progress=False, **scale)
    if progress:
        progress("scoring", len(samples), len(samples))
    return list(report.results)


async def _generate_all(generator: Generator, cases: Sequence[NoisyCase],
                        progress: Progress | None) -> list[Generation]:
    done = 0

    async def one(case: NoisyCase) -> Generation:
        nonlocal done
        if case.undefined is not None:  # nothing to ask the pipeline
            done += 1
            return Generation(None)
        history = [{"role": t.role, "content": t.content} for t in case.item.history]
        g = await generator.generate(case.item.question, [c.text for c in case.chunks], history)
        if g.interrupted:  # the pipeline raised KeyboardInterrupt: stop the sweep
            raise PipelineInterrupted(f"{case.item.id} at level {case.level}: {g.error}")
        done += 1
        if progress:
            progress("generating", done, len(cases))
        return g

    tasks = [asyncio.ensure_future(one(c)) for c in cases]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:  # nothing keeps generating once the sweep stops
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def astress(golden: str | Path | Iterable[GoldenItem | Mapping[str, Any]], *,
                  pipeline: str | Pipeline | Callable[..., Any],
                  levels: Sequence[int] = (0, 1, 2, 4), judge: str | Judge = "lexical",
                  strategy: str | Sequence[str] = "others", position: str = "random",
                  repeats: int = 1, seed: int = 0,
                  pool: str | Path | Sequence[str | PoolChunk | Mapping[str, Any]] | None = None,
                  concurrency: int = 8, judge_concurrency: int = 8, retries: int = 2,
                  timeout: float | None = None,
                  cache: str | Path | GenerationCache | None = None,
                  hard_scorer: Scorer | None = None, pipeline_options: Mapping[str, Any] | None = None,
                  judge_options: Mapping[str, Any] | None = None,
                  progress: Progress | None = None,
                  judge_cache: CacheOption = None, engine: str = "local",
                  ray_address: str | None = None, workers: int | None = None) -> StressReport:
    """Run a noise sweep and return the report (write it with ``report.write(DIR)``).

    A pipeline error or ``sys.exit()`` is that sample's error row; a ``KeyboardInterrupt``
    raised by the pipeline stops the sweep with ``PipelineInterrupted`` (``stress()`` raises
    it as ``KeyboardInterrupt``, outside the event loop).

    ``strategy``: one of ``pool``, ``others``, ``hard``, ``counterfactual``, ``siblings`` (each
    golden row's own ``distractors``) or a list of them (mixed round-robin); ``position``: ``first``, ``last``, ``random`` or ``interleaved``.
    ``timeout``: seconds per pipeline call, for every kind (default 300; an ``openai:`` or
    ``http`` pipeline also passes it to its client, default 60 there); a late call is retried
    like a transient failure (``retries``), then becomes that sample's error row.
    ``cache``: a SQLite path (or ``GenerationCache``) for generations; ``judge_cache``: the
    judge cache as in ``evaluate`` (None: the default location, False: off); ``progress(phase, done,
    total)`` is called as answers are generated and scored. ``engine="ray"``,
    ``ray_address``, ``workers``: the answers are judged on a Ray cluster, as in
    ``evaluate`` (the pipeline runs here). Everything is validated (golden
    rows, strategies, judge and pipeline specs) before the first generation.
    """
    items, no_answer = read_golden(golden)
    strategies = [s.strip() for s in strategy.split(",")] if isinstance(strategy, str) else list(strategy)
    pool_chunks = load_pool(pool) if pool is not None else None
    cases = plan_cases(items, levels=levels, strategies=strategies, position=position,
                       repeats=repeats, seed=seed, pool=pool_chunks, hard_scorer=hard_scorer)
    resolved_judge = get_judge(judge, **dict(judge_options or {}))
    options = dict(pipeline_options or {})
    timeout = options.pop("timeout", None) if timeout is None else timeout
    if timeout is not None and not timeout > 0:
        raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout}")
    if timeout is not None and takes_option(pipeline, "timeout"):
        options["timeout"] = timeout  # the client's own timeout too: no socket left waiting
    pipe = get_pipeline(pipeline, **options)
    chats = [it.id for it in items if it.history]
    if chats and not (pipe.takes_history if isinstance(pipe, CallablePipeline)
                      else takes_history(getattr(pipe, "generate", None))):
        log.warning("%d golden rows are conversations (e.g. %s), but pipeline %s takes no "
                    "history: it answers each last question alone. Give its function a "
                    "history parameter to get the earlier turns.", len(chats), chats[0],
                    pipeline if isinstance(pipeline, str) else type(pipe).__name__)
    if not getattr(pipe, "cacheable", True):
        cache = None  # e.g. the extractive baseline: recomputing beats a disk lookup
    gen_cache = GenerationCache(cache) if isinstance(cache, (str, Path)) else cache
    generator = Generator(pipe, concurrency=concurrency, retries=retries, cache=gen_cache,
                          **({"timeout": timeout} if timeout is not None else {}))
    started = time.time()
    try:
        generations = await _generate_all(generator, cases, progress)
    finally:
        await generator.aclose()
        if isinstance(cache, (str, Path)) and gen_cache is not None:
            gen_cache.close()  # only the cache opened here; a caller's stays open
        elif gen_cache is not None:
            gen_cache.flush()  # but its answers are on disk when the sweep returns
    samples = [_sample(c, g.answer or "") for c, g in zip(cases, generations, strict=True)]
    to_score = [i for i, g in enumerate(generations) if g.answer is not None]
    undefined = {i: _undefined_result(c.undefined, samples[i].id, i)
                 for i, c in enumerate(cases) if c.undefined is not None}
    scored = await score_samples([samples[i] for i in to_score], resolved_judge,
                                 concurrency=judge_concurrency, progress=progress,
                                 cache=judge_cache, engine=engine, ray_address=ray_address,
                                 workers=workers)
    results: dict[int, SampleResult] = dict(zip(to_score, scored, strict=True))
    rows = []
    for i, (case, g) in enumerate(zip(cases, generations, strict=True)):
        result = (results.get(i) or undefined.get(i)
                  or error_result(f"pipeline failed: {g.error}", index=i, id=samples[i].id))
        rows.append(StressRow(case.item.id, case.item.question, case.item.reference, case.level,
                              case.repeat, case.chunks, g.answer, result, g.error, g.cached,
                              history=case.item.history))
    shortfalls = [{"id": c.item.id, "level": c.level, "repeat": c.repeat, "injected": n}
                  for c in cases if c.undefined is None
                  and (n := sum(ch.kind != "relevant" for ch in c.chunks)) < c.level]
    config = {
        "pipeline": pipeline if isinstance(pipeline, str) else generator.identity.get("pipeline"),
        "pipeline_identity": generator.identity, "judge": judge if isinstance(judge, str) else None,
        "judge_identity": judge_identity(resolved_judge), "levels": sorted(set(levels)),
        "strategy": strategies, "position": position, "repeats": repeats, "seed": seed,
        "pool": str(pool) if isinstance(pool, (str, Path)) else (len(pool) if pool else None),
        "items": len(items), "samples": len(cases),
        "generation_errors": sum(g.error is not None for g in generations),
        "cached_generations": sum(g.cached for g in generations),
        "shortfalls": shortfalls,
        "no_answer": no_answer,
        "no_distractors": sorted({c.item.id for c in cases if c.undefined is not None}),
        "seconds": round(time.time() - started, 3),
    }
    return StressReport(tuple(sorted(set(levels))), tuple(rows), config)


def _undefined_result(reason: str, sample_id: str | None, index: int) -> SampleResult:
    return SampleResult(index=index, id=sample_id, status="undefined", reason=reason,
                        metrics={name: MetricValue(None, reason) for name in catalogue.family()},
                        diagnostics={name: MetricValue(None, reason)
                                     for name in catalogue.diagnostics()})


def _sample(case: NoisyCase, answer: str) -> Sample:
    return Sample(user_input=case.item.question, response=answer, reference=case.item.reference,
                  retrieved_contexts=tuple(c.text for c in case.chunks),
                  id=f"{case.item.id}@L{case.level}r{case.repeat}",
                  chunk_ids=tuple(c.id for c in case.chunks), history=case.item.history,
                  metadata={"item_id": case.item.id, "level": case.level, "repeat": case.repeat})


def stress(golden: str | Path | Iterable[GoldenItem | Mapping[str, Any]], **kwargs: Any) -> StressReport:
    """Synchronous ``astress`` (same arguments); raises inside a running event loop.

    >>> report = stress("examples/golden_support.jsonl", pipeline="extractive",
    ...                 levels=[0, 2], judge="fake")  # doctest: +SKIP
    >>> report.curve()["metrics"]["noise_sensitivity_irrelevant"]  # doctest: +SKIP
    """
    try:
        return run_sync(astress(golden, **kwargs), hint="use `await astress(...)`")
    except PipelineInterrupted as exc:  # raised here, not in the loop, so asyncio stays tidy
        raise KeyboardInterrupt(str(exc)) from None
