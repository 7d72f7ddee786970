"""Fail fast: one cheap look at an endpoint before a run.

``GET /models`` first; when the model is listed, that is all. Otherwise (not listed: a
server that serves one model answers to any name; no listing at all) a 1-token chat call
asks the model itself. An unreachable URL, a timeout, a rejected key (401/403) or an
unknown model (404, or a 400 that says so) raise ``JudgeUnavailable`` naming which, within
seconds instead of after every row's retries. Any other answer means the endpoint works.
The family the listing names (``owned_by``: vLLM, Ollama) tells the output-mode
negotiation which guided decoding to try.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import JudgeUnavailable
from ...infra.transport import AttemptTimeoutError, RetryPolicy
from .failures import body_text, public_url
from .modes import Negotiation, family_of

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["PROBE_TEXT", "probe"]

#: The 1-token question a probe asks when the model is not listed (tests recognise it by it).
PROBE_TEXT = "Say OK."

log = logging.getLogger("noisegauge")


class Endpoint(Protocol):
    """What a probe reads of a chat endpoint (``chat.ChatEndpoint`` is one)."""

    model: str
    base_url: Any
    policy: RetryPolicy
    negotiation: Negotiation

    async def client(self) -> AsyncOpenAI: ...

    def describe(self, exc: BaseException) -> str: ...


async def probe(endpoint: Endpoint) -> None:
    """Raise ``JudgeUnavailable`` unless the endpoint answers, takes the key and knows
    the model. Costs ``GET /models``, plus a 1-token chat call when the model is not
    listed (servers that serve one model accept any name) or there is no listing."""
    import openai

    client = await endpoint.client()
    listed: list[tuple[str, str | None]] | None = None
    wait = min(endpoint.policy.timeout, 30.0)
    try:
        page = await asyncio.wait_for(client.models.list(timeout=wait), wait)
        listed = [(m.id, getattr(m, "owned_by", None)) for m in page.data]
    except (asyncio.TimeoutError, openai.APIConnectionError,
            openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise JudgeUnavailable(endpoint.describe(_timeout(exc, wait))) from None
    except openai.OpenAIError:
        listed = None  # no model listing here (404 and the like): ask the model itself
    owners = dict(listed or [])
    if endpoint.model in owners:
        neg = endpoint.negotiation
        neg.family = neg.family or family_of(owners[endpoint.model])
        return
    try:
        await asyncio.wait_for(client.chat.completions.create(
            model=endpoint.model, messages=[{"role": "user", "content": PROBE_TEXT}],
            max_tokens=1, temperature=0), endpoint.policy.timeout)
    except (openai.NotFoundError, openai.AuthenticationError, openai.PermissionDeniedError,
            openai.APIConnectionError, asyncio.TimeoutError) as exc:
        text = endpoint.describe(_timeout(exc, endpoint.policy.timeout))
        if isinstance(exc, openai.NotFoundError) and owners:
            text += f"; the server lists: {', '.join(sorted(owners)[:10])}"
        raise JudgeUnavailable(text) from None
    except openai.APIStatusError as exc:
        if exc.status_code in (400, 422) and _names_unknown_model(body_text(exc)):
            raise JudgeUnavailable(endpoint.describe(exc)) from None
        log.debug("probe of %s: %s", public_url(endpoint.base_url), endpoint.describe(exc))


def _timeout(exc: BaseException, seconds: float) -> BaseException:
    """A timeout of either kind as one that says how long we waited."""
    import openai

    timed_out = isinstance(exc, (asyncio.TimeoutError, openai.APITimeoutError))
    return AttemptTimeoutError(seconds) if timed_out else exc


_UNKNOWN_MODEL = re.compile(r"model.{0,80}(not (be )?found|does not exist|unknown|invalid|"
                            r"not available|no such)|(invalid|unknown) model", re.I | re.S)


def _names_unknown_model(body: str) -> bool:
    return bool(_UNKNOWN_MODEL.search(body))
