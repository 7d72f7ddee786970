"""Running a pipeline: a concurrency limit, retries of transient failures, and an answer cache.

The cache is a small SQLite file keyed by sha256(pipeline identity, question, contexts), so a
rerun of a sweep (or a ``compare`` reusing the same noisy contexts) costs no generations, and
a changed pipeline (model, prompt, URL, function source) never replays stale answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..infra.store import JudgeCache
from ..infra.transport import Failure, Limits, RetriesExhausted, RetryPolicy, call_with_retries
from .pipelines import Pipeline, PipelineInterrupted, pipeline_identity, takes_history

__all__ = ["Generation", "GenerationCache", "Generator", "cache_key"]


@dataclass(frozen=True)
class Generation:
    """One pipeline answer, or the reason there is none."""

    answer: str | None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    seconds: float = 0.0
    #: The pipeline raised KeyboardInterrupt: this sample's error, and the sweep stops.
    interrupted: bool = False


def cache_key(identity: dict[str, Any], question: str, contexts: Sequence[str],
              history: Sequence[Mapping[str, str]] = ()) -> str:
    """The answer's key: the pipeline, the question, the chunks, and the turns before the
    question when there are any (a single-turn key is what it always was)."""
    data: dict[str, Any] = {"pipeline": identity, "question": question, "contexts": list(contexts)}
    if history:
        data["history"] = [[t["role"], t["content"]] for t in history]
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class GenerationCache:
    """Answers on disk, in the judge cache's SQLite store (WAL, buffered writes, JSON values)
    under a namespace of their own; safe to delete at any time."""

    def __init__(self, path: str | Path) -> None:
        self._store = JudgeCache(path)
        self.path = self._store.path

    def get(self, key: str) -> str | None:
        value = self._store.get(JudgeCache.key("generation", "answer", key))
        return value if isinstance(value, str) else None

    def put(self, key: str, answer: str, *, identity: dict[str, Any] | None = None) -> None:
        """Store ``answer``; ``identity`` (the pipeline's) lets ``noisegauge cache`` name it."""
        namespace = (json.dumps({"pipeline": identity}, sort_keys=True, default=str)
                     if identity is not None else None)
        self._store.put(JudgeCache.key("generation", "answer", key), answer,
                        namespace=namespace, method="generate")

    def flush(self) -> None:
        """Commit buffered answers (``close`` does it too)."""
        self._store.flush()

    def close(self) -> None:
        self._store.close()


class Generator:
    """Calls a pipeline under the same transport layer as the LLM judge.

    At most ``concurrency`` calls are in flight; a failure is retried (``retries`` times,
    exponential ``backoff`` with jitter, a server's Retry-After honoured) only when the
    pipeline's ``should_retry(exc)`` says it is transient; each call may take ``timeout``
    seconds, whatever the pipeline kind (an async call is cancelled, a sync one abandoned in
    its daemon thread). The final failure is returned as a ``Generation`` with ``error`` set,
    never raised, so one bad question cannot sink a sweep.
    """

    def __init__(self, pipeline: Pipeline, *, concurrency: int = 8, retries: int = 2,
                 backoff: float = 0.5, timeout: float = 300.0,
                 cache: GenerationCache | None = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.pipeline = pipeline
        self.identity = pipeline_identity(pipeline)
        self._key = f"pipeline:{id(self)}"  # its own limits, whatever else runs in the loop
        self._limits = Limits(max_concurrency=concurrency)
        self._policy = RetryPolicy(max_retries=retries, backoff_base=backoff,
                                   backoff_max=max(backoff, 30.0), timeout=timeout)
        self._cache = cache if getattr(pipeline, "cacheable", True) else None
        #: Whether the pipeline's ``generate`` takes the conversation (``history=``).
        self.takes_history = takes_history(getattr(pipeline, "generate", None))

    def _classify(self, exc: BaseException) -> Failure:
        should_retry = getattr(self.pipeline, "should_retry", None)
        retry_after = getattr(exc, "retry_after", None)
        return Failure(retryable=callable(should_retry) and bool(should_retry(exc)),
                       retry_after=retry_after if isinstance(retry_after, (int, float)) else None)

    async def generate(self, question: str, contexts: Sequence[str],
                       history: Sequence[Mapping[str, str]] = ()) -> Generation:
        """One answer; ``history`` (the turns before ``question``) goes to a pipeline whose
        ``generate`` takes it, and into the cache key when there is any."""
        key = cache_key(self.identity, question, contexts, history) if self._cache else ""
        if self._cache is not None:
            hit = self._cache.get(key)
            if hit is not None:
                return Generation(hit, cached=True)
        start = time.perf_counter()
        attempts = 0

        async def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            if self.takes_history:
                return await self.pipeline.generate(question, list(contexts),  # type: ignore[call-arg]
                                                    history=list(history))
            return await self.pipeline.generate(question, list(contexts))

        try:
            answer, _ = await call_with_retries(
                self._key, attempt, classify=self._classify, policy=self._policy,
                limits=self._limits)
        except RetriesExhausted as exc:
            return Generation(None, error=self._describe(exc.last), attempts=attempts,
                              seconds=time.perf_counter() - start)
        except PipelineInterrupted as exc:
            return Generation(None, error=f"KeyboardInterrupt: {exc}", attempts=attempts,
                              seconds=time.perf_counter() - start, interrupted=True)
        except Exception as exc:  # not transient: it becomes the row's reason
            return Generation(None, error=f"{type(exc).__name__}: {exc}", attempts=attempts,
                              seconds=time.perf_counter() - start)
        if not isinstance(answer, str):
            return Generation(None, error=f"pipeline returned {type(answer).__name__}, expected str",
                              attempts=attempts, seconds=time.perf_counter() - start)
        if self._cache is not None:
            self._cache.put(key, answer, identity=self.identity)
        return Generation(answer, attempts=attempts, seconds=time.perf_counter() - start)

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) and not str(exc):  # says nothing
            return (f"TimeoutError: no answer within {self._policy.timeout:g} s "
                    f"(--timeout), {self._policy.max_retries + 1} attempts")
        return f"{type(exc).__name__}: {exc}"

    async def aclose(self) -> None:
        close = getattr(self.pipeline, "aclose", None)
        if callable(close):
            await close()
