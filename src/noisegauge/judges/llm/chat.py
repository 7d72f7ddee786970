"""One OpenAI-compatible chat endpoint: structured output with fallbacks, and accounting.

``ChatEndpoint.complete`` sends one chat request through ``transport`` (limits, retries,
timeouts) and returns the answers as ``(text, finish_reason)``. It asks for JSON Schema
output (strict) first; when the server refuses a mode with HTTP 400/422, the same request
is re-sent in JSON mode, then as plain text, and the mode that worked is remembered for
the endpoint (only a mode that *worked* after a refusal is remembered, so a 400 with
another cause, which fails in every mode, changes nothing). Every answered call records
``Usage`` (tokens, retries, USD cost) into the caller's meter.

The API key lives only in the SDK client; messages built here are passed through
``redact`` so it never reaches an error, a log line or a result.
"""

from __future__ import annotations

import asyncio
import functools
import re
import weakref
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ...errors import JudgeOutputError, JudgeUnavailable
from ...infra.transport import Failure, Limits, RetriesExhausted, RetryPolicy, call_with_retries
from ..base import Usage, record_usage
from .batching import estimate_tokens
from .pricing import Price, cost_usd

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OUTPUT_MODES", "ChatEndpoint", "JudgeStats", "classify", "public_url", "redact"]

OUTPUT_MODES = ("json_schema", "json_object", "text")
NO_KEY = "no-key"

#: endpoint key -> the output mode that worked there after a refusal.
_WORKING_MODE: dict[str, str] = {}


@dataclass
class JudgeStats:
    """Counters of one judge object over its lifetime (read ``judge.stats``)."""

    calls: int = 0
    retries: int = 0
    repairs: int = 0                   #: re-asks for missing, unreadable or truncated output
    mode_fallbacks: int = 0            #: requests re-sent in a simpler output mode
    voted_verdicts: int = 0            #: verdicts decided by a vote (votes > 1)
    unanimous_verdicts: int = 0        #: ... of which every vote agreed
    majority_share_sum: float = 0.0
    modes: dict[str, int] = field(default_factory=dict)  #: answered calls per output mode

    @property
    def agreement(self) -> float | None:
        """Share of voted verdicts on which all votes agreed (None without votes)."""
        return self.unanimous_verdicts / self.voted_verdicts if self.voted_verdicts else None

    @property
    def mean_majority_share(self) -> float | None:
        """Mean share of the votes that went to the winning verdict (None without votes)."""
        return self.majority_share_sum / self.voted_verdicts if self.voted_verdicts else None


def public_url(url: str) -> str:
    """``url`` without user info or query string, which may carry credentials.

    >>> public_url("https://user:secret@example.com:8443/v1/?key=abc")
    'https://example.com:8443/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")


def redact(text: str, key: str | None) -> str:
    """Mask ``key``, bearer tokens and anything shaped like an OpenAI key."""
    if key and key != NO_KEY:
        text = text.replace(key, "***")
    return _SK.sub("sk-***", _BEARER.sub(r"\1***", text))


async def _close_with_loop(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                return None  # an HTTP date: let backoff decide
    return None


def classify(exc: BaseException) -> Failure:
    """Which SDK errors are worth retrying, and when the server asked us to come back."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return Failure(retryable=True)
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code == 429 and getattr(exc, "code", None) == "insufficient_quota":
            return Failure(retryable=False)  # out of credit: waiting will not help
        retryable = exc.status_code in (408, 409, 429) or exc.status_code >= 500
        return Failure(retryable, _retry_after(exc.response.headers) if retryable else None)
    return Failure(retryable=False)


class ChatEndpoint:
    """A model behind a chat-completions URL, shared settings for every request."""

    def __init__(self, model: str, base_url: str, api_key: str | None, *, output_mode: str,
                 temperature: float, seed: int | None, policy: RetryPolicy, limits: Limits,
                 prices: Mapping[str, Price] | None, stats: JudgeStats) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key or NO_KEY  # the SDK insists on a key; local servers need none
        self.output_mode = output_mode
        self.temperature = temperature
        self.seed = seed
        self.policy = policy
        self.limits = limits
        self.prices = prices
        self.stats = stats
        self.key = f"{public_url(base_url)}|{model}"
        # One client per event loop: an httpx pool must not outlive the loop it was made in.
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[AsyncOpenAI, AsyncGenerator[None, None]]] = (
            weakref.WeakKeyDictionary())

    async def _client(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is None:
            from openai import AsyncOpenAI
            # max_retries=0: retries happen once, in transport, where they are counted.
            client = AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                 timeout=self.policy.timeout)
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

    async def complete(self, messages: list[dict[str, str]], name: str, schema: dict[str, Any],
                       max_tokens: int, n: int = 1) -> list[tuple[str, str]]:
        """``n`` answers as (text, finish_reason). A server that returns fewer choices
        than asked (some ignore ``n``) is asked again, with another seed, for the rest."""
        import openai

        auto = self.output_mode == "auto"
        mode = _WORKING_MODE.get(self.key, OUTPUT_MODES[0]) if auto else self.output_mode
        answers: list[tuple[str, str]] = []
        while len(answers) < n:
            request = self._request(messages, name, schema, mode, max_tokens, n - len(answers),
                                    seed_offset=len(answers))
            try:
                response, retries = await call_with_retries(
                    self.key, functools.partial(self._send, request), classify=classify,
                    policy=self.policy, limits=self.limits,
                    tokens=estimate_tokens(str(messages)) + max_tokens)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if auto and mode != OUTPUT_MODES[-1]:
                    mode = OUTPUT_MODES[OUTPUT_MODES.index(mode) + 1]
                    self.stats.mode_fallbacks += 1
                    continue
                raise JudgeUnavailable(self.describe(exc)) from None
            except RetriesExhausted as exc:
                self.stats.retries += exc.attempts - 1
                record_usage(Usage(retries=exc.attempts - 1))
                raise JudgeUnavailable(f"{self.describe(exc.last)} (gave up after "
                                       f"{exc.attempts} attempts)") from None
            except openai.OpenAIError as exc:
                raise JudgeUnavailable(self.describe(exc)) from None
            if auto and mode != OUTPUT_MODES[0]:
                _WORKING_MODE[self.key] = mode
            self._account(response, retries, mode)
            choices = response.choices or []
            answers += [(c.message.content or "", c.finish_reason or "") for c in choices]
            if not choices:
                break
        if not answers:
            raise JudgeOutputError(f"{self.model} returned no choices")
        return answers

    async def _send(self, request: dict[str, Any]) -> Any:
        return await (await self._client()).chat.completions.create(**request)

    def _request(self, messages: list[dict[str, str]], name: str, schema: dict[str, Any],
                 mode: str, max_tokens: int, n: int, seed_offset: int) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": messages,
                                   "max_tokens": max_tokens, "temperature": self.temperature}
        if n > 1:
            request["n"] = n
        if self.seed is not None:
            request["seed"] = self.seed + seed_offset
        # Sent as extra_body, verbatim: as a typed parameter the SDK walks every key of the
        # schema to transform it, which measured ~3.5 ms of CPU per call (bench/llm_cost.py).
        if mode == "json_schema":
            request["extra_body"] = {"response_format": {"type": "json_schema", "json_schema": {
                "name": name, "schema": schema, "strict": True}}}
        elif mode == "json_object":
            request["extra_body"] = {"response_format": {"type": "json_object"}}
        return request

    def _account(self, response: Any, retries: int, mode: str) -> None:
        usage = getattr(response, "usage", None)
        pt = getattr(usage, "prompt_tokens", None) or 0
        ct = getattr(usage, "completion_tokens", None) or 0
        # No usage reported means unknown tokens, so the cost is unknown too (not 0).
        cost = cost_usd(self.model, pt, ct, self.prices) if usage is not None else None
        record_usage(Usage(calls=1, retries=retries, prompt_tokens=pt, completion_tokens=ct,
                           cost_usd=cost))
        self.stats.calls += 1
        self.stats.retries += retries
        self.stats.modes[mode] = self.stats.modes.get(mode, 0) + 1

    def describe(self, exc: BaseException) -> str:
        """An error message safe to show: the API key and bearer tokens are masked."""
        import openai

        status = f"HTTP {exc.status_code}: " if isinstance(exc, openai.APIStatusError) else ""
        text = f"{self.model} at {public_url(self.base_url)}: {status}{type(exc).__name__}: {exc}"
        if isinstance(exc, openai.AuthenticationError) and self._api_key == NO_KEY:
            text += " (no API key: pass api_key= or set OPENAI_API_KEY)"
        elif isinstance(exc, openai.NotFoundError):
            text += (" (check the model name, and that base_url is the API root, which for "
                     "most servers ends in /v1)")
        elif isinstance(exc, openai.APIConnectionError):
            text += " (is the server running at that address?)"
        return redact(text, self._api_key)
