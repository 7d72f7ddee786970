"""One OpenAI-compatible chat endpoint: output modes, fail-fast probing, and accounting.

``ChatEndpoint.complete`` sends one chat request through ``transport`` (adaptive
concurrency, retries, timeouts) in the endpoint's output mode (``modes``: negotiated from
the server's answers unless one is forced) and returns the answers as
``(text, finish_reason)``. Every request is accounted for in the caller's ``Usage`` and in
the judge's ``JudgeStats``: answered calls, retries, timeouts, refused modes (fallbacks)
and calls that failed for good.

``ChatEndpoint.probe`` (``probe``) is the one cheap request before a run. The API key lives
only in the SDK client; messages built here are passed through ``redact`` (``failures``)
so it never reaches an error, a log line or a result.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import JudgeOutputError, JudgeUnavailable
from ...infra.secrets import MASK, register_secret
from ...infra.secrets import redact as redact_known
from ...infra.transport import (
    AttemptTimeoutError,
    CallReport,
    Limits,
    RetriesExhausted,
    RetryPolicy,
    call_with_retries,
    endpoint_state,
)
from ..base import Usage, record_usage
from .batching import estimate_tokens
from .failures import (
    NO_KEY,
    ModeRefused,
    body_text,
    classify,
    public_url,
    redact,
)
from .modes import MODES, negotiation, refused, request_fields
from .pricing import Price, cost_usd

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OUTPUT_MODES", "ChatEndpoint", "JudgeStats", "classify", "public_url", "redact"]

log = logging.getLogger("noisegauge")

#: Output modes one can force (``auto`` negotiates).
OUTPUT_MODES = MODES


@dataclass
class JudgeStats:
    """Counters of one judge object over its lifetime (read ``judge.stats``)."""

    calls: int = 0
    retries: int = 0
    repairs: int = 0                   #: re-asks for missing, unreadable or truncated output
    mode_fallbacks: int = 0            #: requests refused for their output mode
    timeouts: int = 0                  #: attempts abandoned after the timeout
    failed_calls: int = 0              #: calls that got no answer at all
    voted_verdicts: int = 0            #: verdicts decided by a vote (votes > 1)
    unanimous_verdicts: int = 0        #: ... of which every vote agreed
    majority_share_sum: float = 0.0
    modes: dict[str, int] = field(default_factory=dict)  #: answered calls per output mode
    #: the endpoint's adaptive concurrency: (limit now, lowest it went, configured maximum)
    concurrency: tuple[int, int, int] | None = None

    @property
    def agreement(self) -> float | None:
        """Share of voted verdicts on which all votes agreed (None without votes)."""
        return self.unanimous_verdicts / self.voted_verdicts if self.voted_verdicts else None

    @property
    def mean_majority_share(self) -> float | None:
        """Mean share of the votes that went to the winning verdict (None without votes)."""
        return self.majority_share_sum / self.voted_verdicts if self.voted_verdicts else None


async def _close_with_loop(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


class ChatEndpoint:
    """A model behind a chat-completions URL, shared settings for every request."""

    def __init__(self, model: str, base_url: str, api_key: str | None, *, output_mode: str,
                 temperature: float, seed: int | None, policy: RetryPolicy, limits: Limits,
                 prices: Mapping[str, Price] | None, stats: JudgeStats) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key or NO_KEY  # the SDK insists on a key; local servers need none
        if api_key:
            register_secret(api_key)
        self.output_mode = output_mode
        self.temperature = temperature
        self.seed = seed
        self.policy = policy
        self.limits = limits
        self.prices = prices
        self.stats = stats
        #: Sends one request dict and returns a ChatCompletion-shaped answer, in place of
        #: this endpoint's own SDK client: a client the user holds (``adapters``).
        self.sender: Callable[[dict[str, Any]], Awaitable[Any]] | None = None
        self.key = f"{public_url(base_url)}|{model}"
        self.negotiation = negotiation(self.key)
        # One client per event loop: an httpx pool must not outlive the loop it was made in.
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[AsyncOpenAI, AsyncGenerator[None, None]]] = (
            weakref.WeakKeyDictionary())

    async def client(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is None:
            from openai import AsyncOpenAI
            # max_retries=0: retries happen once, in transport, where they are counted.
            # The SDK's own timeout is a backstop a little after transport's clock.
            client = AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                 timeout=self.policy.timeout + 5)
            # asyncio.run() finalises async generators before it closes its loop, so this
            # one closes the client's connections in the loop that opened them (otherwise
            # they are closed from whatever loop runs when the client is collected, and fail).
            closer = _close_with_loop(client)
            await closer.__anext__()
            entry = self._clients[loop] = (client, closer)
        return entry[0]

    async def aclose(self) -> None:
        entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()

    # -- completions -----------------------------------------------------------------------

    async def complete(self, messages: list[dict[str, str]], name: str, schema: dict[str, Any],
                       max_tokens: int, n: int = 1) -> list[tuple[str, str]]:
        """``n`` answers as (text, finish_reason). A server that returns fewer choices
        than asked (some ignore ``n``) is asked again, with another seed, for the rest."""
        answers: list[tuple[str, str]] = []
        tokens = estimate_tokens(str(messages)) + max_tokens
        while len(answers) < n:
            build = functools.partial(self._request, messages, name, schema, max_tokens=max_tokens,
                                      n=n - len(answers), seed_offset=len(answers))
            response, _ = await self._send_in_mode(build, tokens)
            choices = response.choices or []
            answers += [(c.message.content or "", c.finish_reason or "") for c in choices]
            if not choices:
                break
        if not answers:
            raise JudgeOutputError(f"{self.model} returned no choices")
        return answers

    async def _send_in_mode(self, build: Callable[[str], dict[str, Any]],
                            tokens: int) -> tuple[Any, str]:
        """The response to ``build(mode)`` in the endpoint's mode, negotiating it if needed."""
        if self.output_mode != "auto":
            try:
                return await self._call(build(self.output_mode), self.output_mode, tokens), \
                    self.output_mode
            except ModeRefused as exc:
                self.stats.failed_calls += 1
                record_usage(Usage(failed_calls=1))
                raise JudgeUnavailable(
                    f"{self.describe(exc.error)} (the server does not support output mode "
                    f"{self.output_mode}; output_mode='auto' finds one it does)") from None
        neg = self.negotiation
        while True:
            mode = neg.working
            if mode is not None:
                try:
                    return await self._call(build(mode), mode, tokens), mode
                except ModeRefused:
                    self._refused(mode)
                    continue
            # No mode known to work: one request at a time tries the next candidate.
            async with neg.lock():
                if neg.working is not None:
                    continue
                mode = neg.candidate()
                try:
                    response = await self._call(build(mode), mode, tokens)
                except ModeRefused:
                    self._refused(mode)
                    continue
                neg.settle(mode)
                return response, mode

    def _refused(self, mode: str) -> None:
        self.negotiation.refuse(mode)
        self.stats.mode_fallbacks += 1
        record_usage(Usage(fallbacks=1))
        log.info("%s: output mode %s is not supported; trying %s", public_url(self.base_url),
                 mode, self.negotiation.candidate())

    async def _call(self, request: dict[str, Any], mode: str, tokens: int) -> Any:
        """One request through transport; accounted; errors become JudgeUnavailable."""
        import openai

        report = CallReport()
        try:
            response, _ = await call_with_retries(
                self.key, functools.partial(self._send, request),
                classify=functools.partial(classify, mode=mode), policy=self.policy,
                limits=self.limits, tokens=tokens, report=report)
        except RetriesExhausted as exc:
            self._failed(report)
            tries = "1 attempt" if exc.attempts == 1 else f"{exc.attempts} attempts"
            raise JudgeUnavailable(f"{self.describe(exc.last)} (gave up after {tries})") from None
        except openai.APIStatusError as exc:
            if refused(exc.status_code, body_text(exc), mode):
                self._count(report)
                record_usage(Usage(retries=report.retries, timeouts=report.timeouts))
                raise ModeRefused(mode, exc) from None
            self._failed(report)
            raise JudgeUnavailable(self.describe(exc)) from None
        except openai.OpenAIError as exc:
            self._failed(report)
            raise JudgeUnavailable(self.describe(exc)) from None
        self._account(response, report, mode)
        return response

    async def _send(self, request: dict[str, Any]) -> Any:
        if self.sender is not None:
            return await self.sender(request)
        return await (await self.client()).chat.completions.create(**request)

    def _request(self, messages: list[dict[str, str]], name: str, schema: dict[str, Any],
                 mode: str, *, max_tokens: int, n: int, seed_offset: int) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": messages,
                                   "max_tokens": max_tokens, "temperature": self.temperature}
        if n > 1:
            request["n"] = n
        if self.seed is not None:
            request["seed"] = self.seed + seed_offset
        # Sent as extra_body, verbatim: as a typed parameter the SDK walks every key of the
        # schema to transform it, which measured ~3.5 ms of CPU per call (bench/llm_cost.py).
        fields = request_fields(mode, name, schema)
        if fields:
            request["extra_body"] = fields
        return request

    # -- accounting ------------------------------------------------------------------------

    def _count(self, report: CallReport) -> None:
        self.stats.retries += report.retries
        self.stats.timeouts += report.timeouts
        state = endpoint_state(self.key)
        if state is not None:
            low = min(state.lowest, self.stats.concurrency[1]) if self.stats.concurrency \
                else state.lowest
            self.stats.concurrency = (state.limit, low, state.ceiling)

    def _failed(self, report: CallReport) -> None:
        self._count(report)
        self.stats.failed_calls += 1
        record_usage(Usage(retries=report.retries, timeouts=report.timeouts, failed_calls=1))

    def _account(self, response: Any, report: CallReport, mode: str) -> None:
        usage = getattr(response, "usage", None)
        pt = getattr(usage, "prompt_tokens", None) or 0
        ct = getattr(usage, "completion_tokens", None) or 0
        # No usage reported means unknown tokens, so the cost is unknown too (not 0).
        cost = cost_usd(self.model, pt, ct, self.prices) if usage is not None else None
        record_usage(Usage(calls=1, retries=report.retries, timeouts=report.timeouts,
                           prompt_tokens=pt, completion_tokens=ct, cost_usd=cost))
        self._count(report)
        self.stats.calls += 1
        self.stats.modes[mode] = self.stats.modes.get(mode, 0) + 1

    # -- messages --------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """A model's answer with the API key and every other known secret masked; nothing
        else, since an answer quotes the user's data (an id ``sb25-sk-...`` stays as it is)."""
        if self._api_key and self._api_key != NO_KEY:
            text = text.replace(self._api_key, MASK)
        return redact_known(text)

    def describe(self, exc: BaseException) -> str:
        """An error message safe to show: the API key and bearer tokens are masked."""
        import openai

        where = public_url(self.base_url)
        if isinstance(exc, (AttemptTimeoutError, openai.APITimeoutError, asyncio.TimeoutError)):
            seconds = getattr(exc, "seconds", self.policy.timeout)
            return redact(f"timed out after {seconds:g} s waiting for {where} (model "
                          f"{self.model})", self._api_key)
        status = f"HTTP {exc.status_code}: " if isinstance(exc, openai.APIStatusError) else ""
        reason = str(exc) or "no reason given"
        text = f"{self.model} at {where}: {status}{type(exc).__name__}: {reason}"
        if (isinstance(exc, openai.AuthenticationError) and self._api_key == NO_KEY
                and self.sender is None):
            text += " (no API key: pass api_key= or set OPENAI_API_KEY)"
        elif isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            text += " (the server refused the API key)"
        elif isinstance(exc, openai.NotFoundError):
            text += (" (check the model name, and that base_url is the API root, which for "
                     "most servers ends in /v1)")
        elif isinstance(exc, openai.APIConnectionError):
            text += " (is the server running at that address?)"
        return redact(text, self._api_key)

    async def probe(self) -> None:
        """Fail fast on a wrong URL, key or model (``probe.probe``); through a user's client
        (``sender``), one 1-token request says the same."""
        from .probe import PROBE_TEXT, probe

        if self.sender is not None:
            await self._call({"model": self.model, "max_tokens": 1, "temperature": 0,
                              "messages": [{"role": "user", "content": PROBE_TEXT}]}, "text", 16)
            return

        await probe(self)
