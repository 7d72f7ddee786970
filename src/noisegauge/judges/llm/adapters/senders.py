"""Senders: one chat request (the OpenAI request dict the LLM judge builds) through a client
the user already holds, answered in the shape of an OpenAI ``ChatCompletion``.

The judge keeps everything else (prompts, output-mode negotiation, reading and re-asking,
retries, accounting), so every client gets the same judge. A client that cannot take the
judge's structured-output fields (a generic LangChain chat model) gets plain-text requests,
and the judge's tolerant reading applies.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine
from types import SimpleNamespace
from typing import Any, TypeVar

__all__ = ["Sender", "completion", "langchain_sender", "litellm_sender", "on_home_loop",
           "openai_sender"]

Sender = Callable[[dict[str, Any]], Awaitable[Any]]
T = TypeVar("T")

_home_lock = threading.Lock()
_home: asyncio.AbstractEventLoop | None = None


def _home_loop() -> asyncio.AbstractEventLoop:
    """The one event loop (in a daemon thread, started on first use) where the async
    clients users hold send every request.

    Such a client binds its pooled connections to the loop that first used it (httpx,
    LangChain's shared client, LiteLLM's): used again from the next ``asyncio.run`` (a
    second ``evaluate``, ``evaluate`` after ``asyncio.run(metric.ascore(...))``) it fails with
    "Event loop is closed". On this loop, which never closes, every call in every order works,
    whichever loop or thread the caller runs in (Jupyter's included), and no loop is patched.
    """
    global _home
    with _home_lock:
        if _home is None or _home.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="noisegauge-clients",
                             daemon=True).start()
            _home = loop
        return _home


async def on_home_loop(call: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``await call()`` run on ``_home_loop``; cancelling the caller cancels the call."""
    loop = _home_loop()
    if asyncio.get_running_loop() is loop:
        return await call()
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), loop))


async def _guarded(call: Awaitable[Any], what: str) -> Any:
    """``call``'s answer. The openai exception types pass through (the judge's transport
    reads them to retry 429s and 5xx); any other failure of the user's client library is
    that endpoint being unusable, not a bug of ours: ``JudgeUnavailable`` naming it."""
    import openai

    from ....errors import JudgeUnavailable

    try:
        return await call
    except (openai.OpenAIError, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise JudgeUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc


def completion(texts: list[tuple[str, str]], prompt_tokens: int | None,
               completion_tokens: int | None) -> Any:
    """A ChatCompletion-shaped object: ``choices[i].message.content``, ``finish_reason``,
    and ``usage`` (None when the client reported no token counts: cost unknown, not 0)."""
    choices = [SimpleNamespace(index=i, message=SimpleNamespace(content=text, role="assistant"),
                               finish_reason=finish)
               for i, (text, finish) in enumerate(texts)]
    usage = None
    if prompt_tokens is not None or completion_tokens is not None:
        usage = SimpleNamespace(prompt_tokens=prompt_tokens or 0,
                                completion_tokens=completion_tokens or 0)
    return SimpleNamespace(choices=choices, usage=usage)


def openai_sender(client: Any) -> Sender:
    """An ``openai`` client (``AsyncOpenAI``/``AsyncAzureOpenAI``, or a sync one run in a
    worker thread), with its own retries off: the judge's transport retries and counts them."""
    # The SDK's async clients are AsyncOpenAI / AsyncAzureOpenAI (their methods are wrapped,
    # so their class says it more reliably than the method).
    is_async = type(client).__name__.startswith("Async") or inspect.iscoroutinefunction(
        client.chat.completions.create)
    if callable(getattr(client, "with_options", None)):
        client = client.with_options(max_retries=0)
    create = client.chat.completions.create

    async def send(request: dict[str, Any]) -> Any:
        if is_async:
            return await on_home_loop(lambda: create(**request))
        return await asyncio.to_thread(create, **request)  # a sync client has no loop

    return send


def _finish(message: Any) -> str:
    meta = getattr(message, "response_metadata", None) or {}
    reason = meta.get("finish_reason") or meta.get("done_reason") or meta.get("stop_reason")
    return str(reason) if reason else "stop"


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, list):  # content blocks: keep the text ones
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content or "")


def langchain_sender(model: Any, *, openai_like: bool) -> Sender:
    """A LangChain chat model. ``openai_like`` (ChatOpenAI, AzureChatOpenAI...): the request's
    max_tokens, temperature, seed and structured-output fields are passed through to the
    OpenAI API; other chat models get the messages alone (their own settings apply)."""

    async def send(request: dict[str, Any]) -> Any:
        messages = request["messages"]
        kwargs: dict[str, Any] = {}
        if openai_like:
            for key in ("max_tokens", "temperature", "seed"):
                if request.get(key) is not None:
                    kwargs[key] = request[key]
            if request.get("extra_body"):
                kwargs["extra_body"] = request["extra_body"]
        texts: list[tuple[str, str]] = []
        prompt = done = 0
        counted = False
        for _ in range(int(request.get("n", 1) or 1)):  # one answer per call, any model
            message = await _guarded(on_home_loop(lambda: model.ainvoke(messages, **kwargs)),
                                     type(model).__name__)
            texts.append((_text(message), _finish(message)))
            usage = getattr(message, "usage_metadata", None)
            if usage:
                counted = True
                prompt += int(usage.get("input_tokens", 0) or 0)
                done += int(usage.get("output_tokens", 0) or 0)
        return completion(texts, prompt if counted else None, done if counted else None)

    return send


def litellm_sender(model: str, *, api_base: str | None = None,
                   api_key: str | None = None) -> Sender:
    """A LiteLLM model string (``ollama/llama3``, ``anthropic/claude-...``). LiteLLM answers
    in the OpenAI shape and raises OpenAI's exception types, so the judge reads and retries
    it as it does an OpenAI endpoint. Parameters a provider does not take are dropped."""

    async def send(request: dict[str, Any]) -> Any:
        import litellm

        body = {k: v for k, v in request.items() if k not in ("model", "extra_body")}
        body.update(request.get("extra_body") or {})
        if api_base is not None:
            body["api_base"] = api_base
        if api_key is not None:
            body["api_key"] = api_key
        return await _guarded(on_home_loop(lambda: litellm.acompletion(
            model=model, drop_params=True, num_retries=0, **body)), f"litellm {model}")

    return send
