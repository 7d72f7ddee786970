"""The judge cache: one wrapper around any judge, answers kept in the persistent store.

The key is a hash of the judge's full identity (``judge_identity``: kind, model, base URL,
generation settings and a digest of its prompts or weights; never an API key), the method
name and the input texts. Changing the model, a prompt or the weights therefore never reuses a
stale answer. The raw answers a provider reports (``record_raw``) are kept beside the parsed
one, for audits (``noisegauge cache show KEY``).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..infra.store import JudgeCache
from ..verdicts import Verdict
from .base import (
    BatchChecker,
    ConversationalExtractor,
    Judge,
    JudgeWrapper,
    SampleJudge,
    ScoredChecker,
    Usage,
    capture_raw,
    judge_identity,
    record_usage,
)

if TYPE_CHECKING:
    from ..samples import Turn

__all__ = ["CachedJudge", "Gate", "GateFailed", "ScoredCachedJudge", "with_cache"]

_CODE = {Verdict.ENTAILED: "e", Verdict.NEUTRAL: "n", Verdict.CONTRADICTED: "c"}
_DECODE = {c: v for v, c in _CODE.items()}


_OPENING: contextvars.ContextVar[bool] = contextvars.ContextVar("noisegauge_gate_opening",
                                                               default=False)


class GateFailed(Exception):
    """The work before the first uncached request failed (``error``): the run stops.
    Not a ``JudgeError``, so no row swallows it; ``aevaluate`` raises ``error`` itself."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        super().__init__(str(error))


class Gate:
    """Work done once, before the first judge request that the cache cannot answer (the
    probe and the canaries), so a rerun whose answers are all cached makes no call at all
    and needs no endpoint. Requests made by that work itself pass straight through."""

    def __init__(self, opener: Callable[[], Awaitable[None]]) -> None:
        self._opener = opener
        self._lock: asyncio.Lock | None = None
        self.opened = False
        self.error: BaseException | None = None

    async def open(self) -> None:
        if _OPENING.get():
            return
        if not self.opened:
            self._lock = self._lock or asyncio.Lock()
            async with self._lock:
                if not self.opened:
                    await self._open()
        if self.error is not None:
            raise GateFailed(self.error)

    async def _open(self) -> None:
        # In a context of its own: the probe and canaries are billed to their own report,
        # not to the row whose request happened to come first.
        context = contextvars.Context()
        context.run(_OPENING.set, True)
        try:
            await context.run(asyncio.ensure_future, self._opener())
        except asyncio.CancelledError:
            raise  # not opened: the next request tries again
        except Exception as exc:
            self.error = exc
        self.opened = True


class CachedJudge(JudgeWrapper):
    """Answers from the cache when it has them (recorded as ``Usage(cached_calls=1)``, no
    call), else from the wrapped judge, whose answer is then stored. ``gate``: opened before
    the first request the cache cannot answer."""

    def __init__(self, judge: Judge, store: JudgeCache) -> None:
        super().__init__(judge)
        self.store = store
        self._ns = json.dumps(judge_identity(judge), sort_keys=True, default=str)
        self.gate: Gate | None = None

    async def _before_call(self) -> None:
        if self.gate is not None:
            await self.gate.open()

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        key = self.store.key(self._ns, "extract", text, question)
        return await self._claims(key, "extract", lambda: self.inner.extract(text, question))

    async def _claims(self, key: bytes, method: str,
                      call: Callable[[], Awaitable[list[str]]]) -> list[str]:
        """The claims stored under ``key``, else ``call``'s (kept when well formed)."""
        hit = self.store.get(key)
        if isinstance(hit, list) and all(isinstance(c, str) for c in hit):
            record_usage(Usage(cached_calls=1))
            return hit
        await self._before_call()
        with capture_raw() as raw:
            claims = await call()
        if isinstance(claims, list) and all(isinstance(c, str) for c in claims):
            # only well-formed answers are kept
            self.store.put(key, claims, raw=raw, namespace=self._ns, method=method)
        return claims

    @property
    def conversation_version(self) -> str:
        return str(getattr(self.inner, "conversation_version", ""))

    async def extract_in_conversation(self, text: str, question: str | None,
                                      history: Sequence[Turn]) -> list[str]:
        """The wrapped judge's conversational claims, cached under a key that holds the
        history and the judge's ``conversation_version``. Without a history, or for a judge
        that cannot read one, this is ``extract`` with its key (a single-turn key never
        changes)."""
        if not history or not isinstance(self.inner, ConversationalExtractor):
            return await self.extract(text, question)
        turns = [[t.role, t.content] for t in history]
        key = self.store.key(self._ns, "extract_in_conversation", text, question, turns,
                             self.conversation_version)
        inner = self.inner
        return await self._claims(key, "extract_in_conversation",
                                  lambda: inner.extract_in_conversation(text, question, history))

    def _lookup(self, method: str, premise: str, claims: Sequence[str]) -> list[Verdict] | None:
        hit = self.store.get(self.store.key(self._ns, method, premise, list(claims)))
        if isinstance(hit, str) and len(hit) == len(claims) and all(c in _DECODE for c in hit):
            return [_DECODE[c] for c in hit]
        return None

    def _save(self, method: str, premise: str, claims: Sequence[str], verdicts: Any,
              raw: Sequence[str]) -> None:
        if (isinstance(verdicts, list) and len(verdicts) == len(claims)
                and all(isinstance(v, Verdict) for v in verdicts)):
            self.store.put(self.store.key(self._ns, method, premise, list(claims)),
                           "".join(_CODE[v] for v in verdicts), raw=raw, namespace=self._ns,
                           method=method)

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        hit = self._lookup("check", premise, claims)
        if hit is not None:
            record_usage(Usage(cached_calls=1))
            return hit
        await self._before_call()
        with capture_raw() as raw:
            verdicts = await self.inner.check(premise, claims)
        self._save("check", premise, claims, verdicts, raw)
        return verdicts

    async def _fresh_check(self, premise: str,
                           claims: Sequence[str]) -> tuple[list[Verdict], list[str]]:
        with capture_raw() as raw:
            return await self.inner.check(premise, claims), raw

    async def check_many(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
        """Cached per premise; only the missing premises reach the judge, in one batch when
        it can batch, else one ``check`` each (what the scorer would have done anyway)."""
        batch = isinstance(self.inner, BatchChecker)
        method = "check_many" if batch else "check"
        found = [self._lookup(method, p, claims) for p in premises]
        missing = [j for j, f in enumerate(found) if f is None]
        # cached_calls counts calls avoided: one per premise, or the whole batch call.
        saved = (0 if missing else 1) if batch else len(premises) - len(missing)
        if saved:
            record_usage(Usage(cached_calls=saved))
        if not missing:
            return [f for f in found if f is not None]
        todo = [premises[j] for j in missing]
        await self._before_call()
        if batch:
            # One call answers every premise: each keeps that call's raw answers.
            with capture_raw() as raw:
                fresh = await self.inner.check_many(todo, claims)  # type: ignore[attr-defined]
            raws: list[list[str]] = [raw] * len(todo)
        else:
            pairs = await asyncio.gather(*(self._fresh_check(p, claims) for p in todo))
            fresh, raws = [v for v, _ in pairs], [r for _, r in pairs]
        if len(fresh) != len(todo):
            return list(fresh)  # malformed: let the scorer's shape check report it
        for j, verdicts, raw in zip(missing, fresh, raws, strict=True):
            self._save(method, premises[j], claims, verdicts, raw)
            found[j] = verdicts
        return [f if f is not None else [] for f in found]

    async def extract_with_questions(self, text: str, question: str | None, n: int) -> Any:
        """The wrapped judge's claims with Answer Relevancy's questions (when it writes them
        in its extraction), cached; None when it does not (the scorer then writes them)."""
        inner = getattr(self.inner, "extract_with_questions", None)
        if not callable(inner):
            return None
        version = getattr(self.inner, "questions_version", "")
        key = self.store.key(self._ns, "extract_with_questions", text, question, n, version)
        hit = self.store.get(key)
        if isinstance(hit, dict) and isinstance(hit.get("claims"), list) and isinstance(
                hit.get("questions"), list):
            record_usage(Usage(cached_calls=1))
            return hit
        await self._before_call()
        with capture_raw() as raw:
            out = await inner(text, question, n)
        if isinstance(out, Mapping) and isinstance(out.get("claims"), list) and isinstance(
                out.get("questions"), list):
            self.store.put(key, dict(out), raw=raw, namespace=self._ns,
                           method="extract_with_questions")
        return out

    async def find_sources(self, question: str, reference: str, chunks: Sequence[str],
                           claims: Sequence[str]) -> Any:
        """The wrapped judge's misattribution sources (when it offers them), cached."""
        inner = getattr(self.inner, "find_sources", None)
        # Nothing to ask, or a judge that says it would not ask: no request, cached or not.
        if not callable(inner) or not claims or not chunks or not getattr(
                self.inner, "finds_sources", True):
            return None
        key = self.store.key(self._ns, "find_sources", question, reference, list(chunks),
                             list(claims))
        hit = self.store.get(key)
        if isinstance(hit, list) and len(hit) == len(claims):
            record_usage(Usage(cached_calls=1))
            return hit
        await self._before_call()
        with capture_raw() as raw:
            found = await inner(question, reference, chunks, claims)
        if isinstance(found, list) and len(found) == len(claims):
            self.store.put(key, [dict(f) if f is not None else None for f in found], raw=raw,
                           namespace=self._ns, method="find_sources")
        return found


class ScoredCachedJudge(CachedJudge):
    """A ``CachedJudge`` around a judge that gives scores: scored answers are cached too."""

    @property
    def uncertain_band(self) -> tuple[float, float] | None:
        band: tuple[float, float] | None = getattr(self.inner, "uncertain_band", None)
        return band

    async def check_many_scored(self, premises: Sequence[str],
                                claims: Sequence[str]) -> list[list[tuple[Verdict, float]]]:
        keys = [self.store.key(self._ns, "check_many_scored", p, list(claims)) for p in premises]
        found: list[list[tuple[Verdict, float]] | None] = [_decode_scored(self.store.get(k), claims)
                                                            for k in keys]
        missing = [j for j, f in enumerate(found) if f is None]
        if not missing:
            record_usage(Usage(cached_calls=1))
            return [f for f in found if f is not None]
        inner: ScoredChecker = self.inner  # type: ignore[assignment]
        await self._before_call()
        with capture_raw() as raw:
            fresh = await inner.check_many_scored([premises[j] for j in missing], claims)
        if len(fresh) != len(missing):
            return list(fresh)  # malformed: let the scorer's shape check report it
        for j, row in zip(missing, fresh, strict=True):
            if len(row) == len(claims) and all(isinstance(v, Verdict) for v, _ in row):
                # With its producer, like every other entry (``cache info`` names it).
                self.store.put(keys[j], {"v": "".join(_CODE[v] for v, _ in row),
                                         "s": [float(x) for _, x in row]}, raw=raw,
                               namespace=self._ns, method="check_many_scored")
            found[j] = row
        return [f if f is not None else [] for f in found]


def _decode_scored(hit: Any, claims: Sequence[str]) -> list[tuple[Verdict, float]] | None:
    if not isinstance(hit, dict):
        return None
    codes, scores = hit.get("v"), hit.get("s")
    if (isinstance(codes, str) and isinstance(scores, list) and len(codes) == len(claims)
            and len(scores) == len(claims) and all(c in _DECODE for c in codes)):
        return [(_DECODE[c], float(x)) for c, x in zip(codes, scores, strict=True)]
    return None


def with_cache(judge: Judge, store: JudgeCache | None) -> Judge:
    """Wrap ``judge`` unless there is nothing to cache: no store, a judge that produces whole
    samples itself (``precomputed``), or one already wrapped."""
    if store is None or isinstance(judge, (CachedJudge, SampleJudge)):
        return judge
    use_store = getattr(judge, "use_store", None)
    if callable(use_store):  # judges that keep their own notes there (the LLM's output mode)
        use_store(store)
    if isinstance(judge, ScoredChecker):
        return ScoredCachedJudge(judge, store)
    return CachedJudge(judge, store)
