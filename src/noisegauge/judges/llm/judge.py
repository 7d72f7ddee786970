"""The LLM judge for any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI, vLLM, Ollama,
llama.cpp, LM Studio, LiteLLM...), built on the official ``openai`` SDK.

``get_judge("openai:MODEL", base_url=..., api_key=...)``; without them ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` are read (never written). The key never appears in identity(), repr(),
results or error messages.

- Few calls: what the orchestrator asks for at the same moment for one sample is merged
  (``coalesce``): the response and the reference are extracted in one call, and both
  verdict matrices are checked together, each distinct chunk sent once. With the default
  ``joint`` strategy a usual sample costs 2 calls for every metric and both noise modes
  (Ragas: 2n+3 per mode); ``per_premise`` and ``per_claim_group`` (k claims per call, as
  RAGChecker) make smaller calls. Measured in ``bench/llm_cost.py``.
- Output: the endpoint's best structured-output mode, negotiated from its answers (JSON
  Schema, llama-cpp-python's json_object+schema, vLLM's or Ollama's guided decoding, JSON
  mode, then plain text read tolerantly; see ``modes``) and kept in the judge cache.
- Verdicts are matched to claims by id. Missing ids, unreadable or truncated answers lead
  to a re-ask of only what is missing (with more max_tokens when truncated); a claim still
  without a verdict raises ``JudgeOutputError``. Nothing is guessed.
- Retries, timeouts, rate limits and the adaptive concurrency live in ``transport`` (the
  SDK's own retries are off). ``probe()`` checks URL, key and model before a run.
- ``votes=k`` asks for k answers per check (``n=k``) and takes the majority per verdict;
  ``judge.stats`` reports how often the votes agreed.
- Usage (calls, re-asks, retries, timeouts, fallbacks, tokens, USD cost from ``pricing``)
  is recorded after every call; ``endpoint_report()`` says how the endpoint was used.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..._identity import content_digest
from ...errors import InvalidInput, JudgeOutputError, MissingDependency
from ...infra.secrets import register_secret
from ...infra.store import JudgeCache
from ...infra.transport import Limits, RetryPolicy
from ...verdicts import Verdict
from ..base import Usage, record_raw, record_usage
from . import attribution, conversation, prompts, questions
from .batching import STRATEGIES, estimate_tokens, plan
from .chat import OUTPUT_MODES, ChatEndpoint, JudgeStats, public_url
from .coalesce import Coalescer
from .output import read_claims, read_verdicts, stray_cells
from .pricing import Price

if TYPE_CHECKING:
    from ...samples import Turn

__all__ = ["DEFAULT_BASE_URL", "JudgeSettings", "JudgeStats", "OpenAIJudge", "make_judge"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class JudgeSettings:
    """Everything tunable about the LLM judge; defaults suit a hosted or local endpoint."""

    strategy: str = "joint"            #: joint | per_premise | per_claim_group
    group_size: int = 5                #: claims per call for per_claim_group
    max_prompt_tokens: int = 6000      #: estimated prompt budget of one joint call
    max_cells: int = 300               #: premise×claim verdicts per call at most
    temperature: float | None = None   #: None: 0, or 0.7 when votes > 1
    seed: int | None = 0               #: sent to servers that support it; None: not sent
    votes: int = 1                     #: answers per check; majority vote when > 1
    output_mode: str = "auto"          #: auto, or one of chat.OUTPUT_MODES to force it
    max_repairs: int = 2               #: re-asks for missing or unreadable verdicts
    max_output_tokens: int = 4096      #: ceiling when re-asking truncated answers
    max_concurrency: int = 16          #: concurrent requests per endpoint (base_url + model)
    adaptive_concurrency: bool = True  #: halve on timeouts / queueing, grow back slowly
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout: float = 120.0             #: seconds per attempt, from when it is sent
    max_retries: int = 6               #: retries of 429 / 5xx / timeouts / dropped connections
    prices: Mapping[str, Price] | None = None  #: model -> (USD in, USD out) per 1M tokens
    #: "lexical": token alignment decides misattributed noise (no extra call); "llm": one
    #: extra call, only for samples with wrong claims no chunk entails, names their source.
    misattribution: str = "lexical"

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise InvalidInput(f"strategy={self.strategy!r}: expected one of {', '.join(STRATEGIES)}")
        if self.output_mode not in ("auto", *OUTPUT_MODES):
            raise InvalidInput(f"output_mode={self.output_mode!r}: expected auto or one of "
                               f"{', '.join(OUTPUT_MODES)}")
        for name, low in (("group_size", 1), ("max_prompt_tokens", 1), ("max_cells", 1),
                          ("votes", 1), ("max_output_tokens", 1), ("max_concurrency", 1),
                          ("max_repairs", 0), ("max_retries", 0), ("temperature", 0)):
            value = getattr(self, name)
            if value is not None and value < low:
                raise InvalidInput(f"{name} must be at least {low}, got {value}")
        if self.timeout <= 0:
            raise InvalidInput(f"timeout must be positive, got {self.timeout}")
        if self.misattribution not in ("lexical", "llm"):
            raise InvalidInput(f"misattribution={self.misattribution!r}: expected lexical or llm")


class OpenAIJudge:
    """Extracts claims and checks them with an LLM behind a chat-completions endpoint."""

    #: Version of the Answer Relevancy questions asked in the extraction (cache keys).
    questions_version = questions.QUESTIONS_VERSION

    #: Their content is part of the identity (hence of every cache key): prompts, schemas and
    #: the reading of answers; an edit there never reuses a stale cached answer.
    identity_sources: tuple[str, ...] = ("noisegauge.judges.llm.prompts",
                                         "noisegauge.judges.llm.output")

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 **settings: Any) -> None:
        known = {f.name for f in fields(JudgeSettings)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise InvalidInput(f"unknown option(s) for the OpenAI judge: {', '.join(unknown)} "
                               f"(known: {', '.join(sorted(known))})")
        if not model:
            raise InvalidInput("the OpenAI judge needs a model name, e.g. openai:gpt-4o-mini")
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.settings = s = JudgeSettings(**settings)
        if s.misattribution == "llm":  # its prompt decides those answers: part of the identity
            self.identity_sources = (*self.identity_sources, "noisegauge.judges.llm.attribution")
        self.stats = JudgeStats()
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY")  # a worker may lack the env
        register_secret(api_key or os.environ.get("OPENAI_API_KEY"))  # masked in every output
        self._chat = ChatEndpoint(
            model, self.base_url, api_key or os.environ.get("OPENAI_API_KEY"),
            output_mode=s.output_mode, temperature=self._temperature(), seed=s.seed,
            policy=RetryPolicy(max_retries=s.max_retries, timeout=s.timeout),
            limits=Limits(s.max_concurrency, s.requests_per_minute, s.tokens_per_minute,
                          adaptive=s.adaptive_concurrency),
            prices=s.prices, stats=self.stats)
        #: How the endpoint is reached when not by this judge's own client (``adapters``:
        #: "openai-client", "langchain:ChatOpenAI", "litellm"); part of the identity.
        self.via: str | None = None
        self._extracts = Coalescer(self._extract_batch)
        self._checks = Coalescer(self._check_batch)

    @classmethod
    def with_sender(cls, model: str, *, endpoint: str,
                    sender: Callable[[dict[str, Any]], Awaitable[Any]], via: str,
                    **settings: Any) -> OpenAIJudge:
        """The judge over a client the user holds (``adapters``): ``sender`` sends each
        request; ``endpoint`` and ``via`` name it in the identity (never a key)."""
        judge = cls(model, base_url=endpoint, api_key=None, **settings)
        judge._chat.sender = sender
        judge.via = via
        return judge

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (clients and locks belong to one process
        and event loop): a Ray worker gets a fresh judge with the same identity."""
        if self.via is not None:  # the user's own client lives in this process only
            raise TypeError(f"a judge over a client you hold ({self.via}) stays in its "
                            "process; give the endpoint instead (openai:MODEL, base_url=...)")
        settings = {f.name: getattr(self.settings, f.name) for f in fields(JudgeSettings)}
        return (_rebuild, (self.model, self.base_url, self._api_key, settings))

    def identity(self) -> dict[str, Any]:
        s = self.settings
        ident = {"judge": "openai", "model": self.model, "base_url": public_url(self.base_url),
                 "prompt_version": prompts.PROMPT_VERSION, "strategy": s.strategy,
                 "temperature": self._temperature(), "seed": s.seed, "votes": s.votes,
                 "output_mode": s.output_mode, "max_prompt_tokens": s.max_prompt_tokens}
        if self.via is not None:  # only then, so openai:MODEL identities stay as they were
            ident["via"] = self.via
        if s.misattribution == "llm":  # only then: other identities (cache keys) stay as they were
            ident["misattribution"] = attribution.ATTRIBUTION_VERSION
        if s.strategy == "per_claim_group":
            ident["group_size"] = s.group_size
        else:
            ident["max_cells"] = s.max_cells
        return ident

    def use_store(self, store: JudgeCache) -> None:
        """Keep what the endpoint's output-mode negotiation learns in ``store`` (the judge
        cache), so a rerun starts with the mode that worked."""
        self._chat.negotiation.attach(store)

    async def probe(self) -> None:
        """One cheap request: ``JudgeUnavailable`` for an unreachable URL, a rejected key
        or an unknown model, naming which."""
        await self._chat.probe()

    def endpoint_report(self) -> dict[str, Any]:
        """How the endpoint was used: output mode (and how it was found), concurrency, and
        the counts of calls, re-asks, retries, timeouts, fallbacks and failed calls."""
        st = self.stats
        neg = self._chat.negotiation.report()
        mode = (self.settings.output_mode if self.settings.output_mode != "auto"
                else neg["mode"])
        report: dict[str, Any] = {
            "endpoint": public_url(self.base_url), "model": self.model, "output_mode": mode,
            "negotiated": self.settings.output_mode == "auto", "refused_modes": neg["refused"],
            "mode_from_cache": neg["from_cache"], "calls": st.calls, "re_asks": st.repairs,
            "retries": st.retries, "timeouts": st.timeouts, "fallbacks": st.mode_fallbacks,
            "failed_calls": st.failed_calls, "calls_per_mode": dict(st.modes)}
        if st.concurrency is not None:
            now, lowest, ceiling = st.concurrency
            report["concurrency"] = {"now": now, "lowest": lowest, "max": ceiling}
        return report

    # -- the Judge protocol --------------------------------------------------------------

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        """Claims of ``text``; texts asked for at once (a sample's response and reference)
        share one call."""
        if not text.strip():
            return []
        out = await self._extracts.submit((text, question or "", 0, ()), group=question or "")
        return list(out["claims"]) if isinstance(out, Mapping) else out

    @property
    def conversation_version(self) -> str:
        """Keys conversational extractions: the version and digest of their prompt."""
        return (f"{conversation.CONVERSATION_VERSION}:"
                f"{content_digest('noisegauge.judges.llm.conversation')}")

    async def extract_in_conversation(self, text: str, question: str | None,
                                      history: Sequence[Turn]) -> list[str]:
        """Standalone claims of ``text`` read after the turns of ``history``
        (``conversation``); the response and the reference of a sample share one call."""
        if not text.strip():
            return []
        turns = tuple(history)
        out = await self._extracts.submit((text, question or "", 0, turns),
                                          group=(question or "", turns))
        return list(out["claims"]) if isinstance(out, Mapping) else out

    async def extract_with_questions(self, text: str, question: str | None,
                                     n: int) -> Mapping[str, Any] | None:
        """Claims of ``text`` and ``n`` questions it answers, with whether it is
        non-committal (Answer Relevancy), in the same call as the texts extracted with it."""
        if not text.strip():
            return None
        out = await self._extracts.submit((text, question or "", n, ()), group=question or "")
        return out if isinstance(out, Mapping) else {"claims": out, "questions": [],
                                                     "noncommittal": False}

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        return (await self.check_many([premise], claims))[0]

    async def check_many(self, premises: Sequence[str],
                         claims: Sequence[str]) -> list[list[Verdict]]:
        """``result[p][c]``: claim c against premise p. Matrices asked for at once (a
        sample's two) are packed together by ``strategy``, each distinct premise sent once."""
        if not premises or not claims:
            return [[] for _ in premises]
        return await self._checks.submit((tuple(premises), tuple(claims)))

    @property
    def finds_sources(self) -> bool:
        """Whether ``find_sources`` asks the model at all (the cache asks this first, so a
        judge that would answer None never counts as an uncached request)."""
        return self.settings.misattribution == "llm"

    async def find_sources(self, question: str, reference: str, chunks: Sequence[str],
                           claims: Sequence[str]) -> list[Mapping[str, Any] | None] | None:
        """With ``misattribution="llm"``: per wrong claim, the chunk stating its wrong detail
        about another entity, and the quoted detail (one call). Otherwise None: the scorer's
        token alignment decides."""
        if self.settings.misattribution != "llm" or not claims or not chunks:
            return None
        messages = attribution.attribution_messages(question, reference, chunks, claims)
        max_tokens = min(self.settings.max_output_tokens, 64 + 24 * len(claims))
        answer, _ = (await self._chat.complete(
            messages, "sources", attribution.attribution_schema(len(claims), len(chunks)),
            max_tokens))[0]
        return attribution.read_sources(answer, len(claims), len(chunks))

    # -- extraction ----------------------------------------------------------------------

    async def _extract_batch(self, items: list[tuple[str, str, int, tuple[Turn, ...]]]
                             ) -> list[Any]:
        question, history = items[0][1], items[0][3]  # the coalescer groups by both
        ids = {text: prompts.text_id(i) for i, text in enumerate(dict.fromkeys(t for t, *_ in items))}
        asks: dict[str, int] = {}  # text id -> questions wanted (Answer Relevancy)
        for text, _, n, _ in items:
            if n:
                asks[ids[text]] = max(n, asks.get(ids[text], 0))
        # Texts share a call while their estimated size fits the prompt budget.
        groups: list[dict[str, str]] = [{}]
        used = 0
        for text, tid in ids.items():
            size = estimate_tokens(text)
            if groups[-1] and used + size > self.settings.max_prompt_tokens:
                groups.append({})
                used = 0
            groups[-1][tid] = text
            used += size
        found: dict[str, Any] = {}
        for part in await asyncio.gather(*(
                self._extract_group(g, question, {t: asks[t] for t in g if t in asks}, history)
                for g in groups)):
            found.update(part)
        # A text asked for questions by one caller and for claims alone by another: the
        # second gets the claims.
        return [found[ids[text]] if n or not isinstance(found[ids[text]], Mapping)
                else found[ids[text]]["claims"] for text, _, n, _ in items]

    async def _extract_group(self, texts: dict[str, str], question: str,
                             asks: Mapping[str, int] | None = None,
                             history: Sequence[Turn] = ()) -> dict[str, Any]:
        found: dict[str, Any] = {}
        todo = list(texts)
        asks = asks or {}
        max_tokens = min(self.settings.max_output_tokens,
                         128 + 2 * sum(estimate_tokens(t) for t in texts.values())
                         + 48 * sum(asks.values()))
        extra: list[prompts.Message] = []
        answer = ""
        for attempt in range(1 + self.settings.max_repairs):
            if attempt:
                self._re_ask()
            asked = {t: asks[t] for t in todo if t in asks}
            messages = conversation.with_history(questions.ask_messages(
                prompts.extract_messages({t: texts[t] for t in todo}, question), asked), history)
            schema = questions.ask_schema(prompts.extract_schema(todo), asked)
            answer, finish = (await self._chat.complete(
                messages + extra, "claims", schema, max_tokens))[0]
            record_raw(self._chat.redact(answer))
            if finish == "length":  # a cut list would silently drop claims: ask again, longer
                max_tokens = self._longer(max_tokens, "claim extraction")
                extra = []
                continue
            plain = [t for t in todo if t not in asked]
            got: dict[str, Any] = dict(read_claims(answer, plain)) if plain else {}
            got.update(questions.read_asked(answer, asked))
            found.update(got)
            todo = [t for t in todo if t not in found]
            if not todo:
                return found
            extra = [] if got else _correction(answer, "the JSON object of claim lists")
        raise JudgeOutputError(f"no usable claim list from {self.model} after "
                               f"{1 + self.settings.max_repairs} attempts; last answer: "
                               f"{_snippet(answer)}")

    # -- checking with repair and votes ----------------------------------------------------

    async def _check_batch(self, items: list[tuple[tuple[str, ...], tuple[str, ...]]]
                           ) -> list[list[list[Verdict]]]:
        # Distinct premise and claim texts get ids; blank premises state nothing, so they
        # entail and contradict nothing and are not sent.
        pids: dict[str, int] = {}
        cids: dict[str, int] = {}
        needs: dict[int, dict[int, None]] = {}
        for premises, claims in items:
            for c in claims:
                cids.setdefault(c, len(cids))
            for p in premises:
                if p.strip():
                    row = needs.setdefault(pids.setdefault(p, len(pids)), {})
                    row.update(dict.fromkeys(cids[c] for c in claims))
        s = self.settings
        ptexts, ctexts = list(pids), list(cids)
        jobs = plan(s.strategy, [estimate_tokens(p) for p in ptexts],
                    [estimate_tokens(c) for c in ctexts], [list(needs[i]) for i in range(len(ptexts))],
                    group_size=s.group_size, max_prompt_tokens=s.max_prompt_tokens,
                    max_cells=s.max_cells)
        found = await asyncio.gather(*(self._check_job(
            {prompts.premise_id(p): ptexts[p] for p in job.premises},
            {prompts.claim_id(c): ctexts[c] for c in job.claims},
            {prompts.premise_id(p): [prompts.claim_id(c) for c in cs] for p, cs in job.pairs})
            for job in jobs))
        merged = {cell: v for part in found for cell, v in part.items()}
        return [[[merged[prompts.premise_id(pids[p]), prompts.claim_id(cids[c])] if p.strip()
                  else Verdict.NEUTRAL for c in claims] for p in premises]
                for premises, claims in items]

    async def _check_job(self, premises: dict[str, str], claims: dict[str, str],
                         pairs: dict[str, list[str]]) -> dict[tuple[str, str], Verdict]:
        wanted = [(p, c) for p, cs in pairs.items() for c in cs]
        votes: dict[tuple[str, str], list[Verdict]] = {}
        todo = pairs
        max_tokens = min(self.settings.max_output_tokens, 32 + 8 * len(pairs) + 8 * len(wanted))
        extra: list[prompts.Message] = []
        answers: list[tuple[str, str]] = []
        for attempt in range(1 + self.settings.max_repairs):
            if attempt:
                self._re_ask()
            used = sorted({c for cs in todo.values() for c in cs}, key=lambda c: int(c[1:]))
            messages = prompts.check_messages({p: premises[p] for p in todo},
                                              {c: claims[c] for c in used}, todo)
            answers = await self._chat.complete(messages + extra, "verdicts",
                                                prompts.check_schema(todo), max_tokens,
                                                self.settings.votes)
            open_cells = {(p, c) for p, cs in todo.items() for c in cs}
            got_any = False
            for text, _ in answers:
                record_raw(self._chat.redact(text))
                for cell, verdict in read_verdicts(text, todo).items():
                    if cell in open_cells:  # only what this round asked for
                        votes.setdefault(cell, []).append(verdict)
                        got_any = True
            strays = stray_cells(answers[0][0], todo) if answers else []
            missing = [cell for cell in wanted if cell not in votes]
            if not missing:
                break
            if any(finish == "length" for _, finish in answers):
                max_tokens = self._longer(max_tokens, "verdicts")
            # Re-ask only for the pairs that still lack a verdict.
            todo = {}
            for p, c in missing:
                todo.setdefault(p, []).append(c)
            if strays:  # ids that were not asked for: say which ones are
                extra = _id_correction(answers[0][0], strays, todo)
            else:
                extra = [] if got_any else _correction(answers[0][0], "the JSON object of verdicts")
        else:
            lacking = sorted({c for _, c in missing}, key=lambda c: int(c[1:]))
            raise JudgeOutputError(
                f"{self.model} gave no verdict for claim(s) "
                + ", ".join(f"{c} ({_snippet(claims[c], 40)})" for c in lacking)
                + f" after {1 + self.settings.max_repairs} attempts; last answer: "
                + _snippet(answers[0][0] if answers else ""))
        return {cell: self._decide(vs) for cell, vs in votes.items()}

    def _re_ask(self) -> None:
        self.stats.repairs += 1
        record_usage(Usage(re_asks=1))

    def _decide(self, votes: list[Verdict]) -> Verdict:
        """Majority of the votes; a tie is not a decision, so it counts as neutral."""
        if len(votes) == 1 and self.settings.votes == 1:
            return votes[0]
        counts = Counter(votes).most_common()
        top = counts[0][1]
        self.stats.voted_verdicts += 1
        self.stats.unanimous_verdicts += len(counts) == 1
        self.stats.majority_share_sum += top / len(votes)
        winners = [v for v, n in counts if n == top]
        return winners[0] if len(winners) == 1 else Verdict.NEUTRAL

    def _longer(self, max_tokens: int, what: str) -> int:
        if max_tokens >= self.settings.max_output_tokens:
            raise JudgeOutputError(
                f"{self.model}'s {what} answer was cut at max_output_tokens={max_tokens}; "
                "raise max_output_tokens or use a strategy with smaller calls")
        return min(self.settings.max_output_tokens, max_tokens * 2)

    def _temperature(self) -> float:
        if self.settings.temperature is not None:
            return self.settings.temperature
        return 0.7 if self.settings.votes > 1 else 0.0

    async def aclose(self) -> None:
        """Stop the batches still in flight, then close the HTTP client of the running loop
        (optional; clients die with their loop)."""
        await self._extracts.aclose()
        await self._checks.aclose()
        await self._chat.aclose()


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _correction(answer: str, wanted: str) -> list[prompts.Message]:
    """Follow-up turn after an unreadable answer (a changed input, so a retry can differ)."""
    return [{"role": "assistant", "content": answer},
            {"role": "user", "content": f"That reply could not be read. Reply again with only "
                                        f"{wanted}, covering every id, and nothing else."}]


def _id_correction(answer: str, strays: list[tuple[str, str]],
                  todo: Mapping[str, Sequence[str]]) -> list[prompts.Message]:
    """Follow-up turn after an answer that used ids nobody asked for."""
    wrong = ", ".join(f"{p}/{c}" for p, c in strays[:8])
    listed = "; ".join(f"{p}: {' '.join(cs)}" for p, cs in todo.items())
    return [{"role": "assistant", "content": answer},
            {"role": "user", "content": f"That reply used ids that were not asked for ({wrong}). "
                                        f"Judge each premise only against the claim ids listed "
                                        f"for it ({listed}) and reply with exactly those ids."}]


def _rebuild(model: str, base_url: str, api_key: str | None,
             settings: dict[str, Any]) -> OpenAIJudge:
    return OpenAIJudge(model, base_url=base_url, api_key=api_key, **settings)


def make_judge(arg: str | None, **kwargs: Any) -> OpenAIJudge:
    """Registry factory: ``get_judge("openai:MODEL", base_url=..., api_key=..., **settings)``."""
    try:
        import openai  # noqa: F401
    except ImportError:
        raise MissingDependency("the OpenAI judge", "openai", "openai") from None
    if not arg:
        raise InvalidInput("the OpenAI judge needs a model: get_judge('openai:MODEL'), "
                           "e.g. openai:gpt-4o-mini or openai:llama3.1:8b")
    return OpenAIJudge(arg, **kwargs)

