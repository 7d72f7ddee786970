"""Pipelines that live behind a network call: an OpenAI-compatible chat model, or a JSON service.

Both import their client lazily. The chat pipeline uses the ``openai`` SDK (extra ``openai``),
whose own retries handle rate limits; the JSON pipeline uses only the standard library.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._async import in_daemon_thread
from ..errors import InvalidInput, MissingDependency
from ..infra.secrets import register_secret, register_secret_header

__all__ = ["OpenAIChatPipeline", "HttpJsonPipeline", "PROMPTS", "render_prompt", "json_path"]

#: Built-in prompt templates; ``{question}`` and ``{contexts}`` are filled in (nothing else is
#: interpreted, so a template may contain JSON braces). ``strict`` adds the seed article's
#: first mitigation.
PROMPTS: dict[str, str] = {
    "default": ("Answer the question using the context below.\n\n"
                "Context:\n{contexts}\n\nQuestion: {question}\nAnswer:"),
    "strict": ("Answer the question using the context below. If a piece of context does not "
               "directly answer the question, disregard it even if it seems related. If no "
               "context answers it, say you don't know.\n\n"
               "Context:\n{contexts}\n\nQuestion: {question}\nAnswer:"),
}


def _load_template(prompt: str | None) -> str:
    if prompt is None:
        return PROMPTS["default"]
    if prompt in PROMPTS:
        return PROMPTS[prompt]
    if "{question}" in prompt:
        return prompt
    path = Path(prompt)
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        if "{question}" not in text:
            raise InvalidInput(f"prompt file {path} has no {{question}} placeholder")
        return text
    raise InvalidInput(f"prompt {prompt!r} is neither a built-in ({', '.join(PROMPTS)}), "
                       "a template containing {question}, nor a readable file")


def render_prompt(template: str, question: str, contexts: Sequence[str]) -> str:
    """Fill ``{question}`` and ``{contexts}`` (numbered ``[1] ...`` lines)."""
    numbered = "\n".join(f"[{i}] {c}" for i, c in enumerate(contexts, start=1))
    return template.replace("{contexts}", numbered).replace("{question}", question)


class OpenAIChatPipeline:
    """One chat completion per question; the answer is the first choice's message content."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 prompt: str | None = None, temperature: float = 0.0,
                 max_tokens: int | None = 512, timeout: float = 60.0) -> None:
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self._api_key = api_key
        register_secret(api_key)
        self.template = _load_template(prompt)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self._client: Any = None

    def identity(self) -> dict[str, Any]:
        return {"pipeline": "openai", "model": self.model, "base_url": self.base_url,
                "prompt_sha256": hashlib.sha256(self.template.encode()).hexdigest()[:16],
                "temperature": self.temperature, "max_tokens": self.max_tokens}

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                from openai import AsyncOpenAI
            except ImportError as exc:
                raise MissingDependency("the openai: pipeline", "openai", "openai") from exc
            key = self._api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
            self._client = AsyncOpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout,
                                       max_retries=3)  # the SDK backs off on 429/5xx itself
        return self._client

    async def generate(self, question: str, contexts: Sequence[str],
                       history: Sequence[Mapping[str, str]] | None = None) -> str:
        """``history``: the conversation's earlier turns, sent as chat messages before the
        prompt (which holds the last question and the chunks)."""
        client = self._get_client()
        kwargs: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        turns = [{"role": t["role"], "content": t["content"]} for t in history or ()]
        response = await client.chat.completions.create(
            model=self.model,
            messages=[*turns,
                      {"role": "user", "content": render_prompt(self.template, question, contexts)}],
            **kwargs)
        if not response.choices:
            raise ValueError("the endpoint returned no choices")
        content = response.choices[0].message.content
        if content is None:
            raise ValueError("the endpoint returned a message without content")
        return str(content)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


class RetryableHTTPError(Exception):
    """A 429/5xx answer or a connection failure: worth another try."""


def json_path(data: Any, path: str) -> Any:
    """``a.b.0.c`` into nested dicts/lists; raises KeyError naming what is there instead."""
    current = data
    for part in path.split(".") if path else []:
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.lstrip("-").isdigit() and -len(current) <= int(part) < len(current):
            current = current[int(part)]
        else:
            have = list(current)[:10] if isinstance(current, Mapping) else type(current).__name__
            raise KeyError(f"answer path {path!r}: no {part!r} here (found {have})")
    return current


def _fill(template: Any, question: str, contexts: list[str]) -> Any:
    if template == "{question}":
        return question
    if template == "{contexts}":
        return contexts
    if isinstance(template, str):
        return template.replace("{question}", question)
    if isinstance(template, Mapping):
        return {k: _fill(v, question, contexts) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, question, contexts) for v in template]
    return template


class HttpJsonPipeline:
    """POSTs JSON to an existing RAG service and reads the answer at a JSON path.

    ``request_template`` is a JSON object (or its text) in which the string ``"{question}"``
    becomes the question and ``"{contexts}"`` the list of context strings. The service must
    answer from the contexts it is given (a "bring your own contexts" mode) for the sweep to
    mean anything.
    """

    def __init__(self, url: str, *, request_template: Mapping[str, Any] | str | None = None,
                 answer_path: str = "answer", headers: Mapping[str, str] | None = None,
                 timeout: float = 60.0) -> None:
        self.url = url
        if isinstance(request_template, str):
            try:
                request_template = json.loads(request_template)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"request template is not valid JSON: {exc}") from exc
        self.template: Any = request_template or {"question": "{question}", "contexts": "{contexts}"}
        self.answer_path = answer_path
        self.headers = dict(headers or {})
        for name, value in self.headers.items():
            register_secret_header(name, value)
        self.timeout = timeout

    def identity(self) -> dict[str, Any]:
        # Header values may hold secrets; their names are enough to tell set-ups apart.
        return {"pipeline": "http", "url": self.url, "request_template": self.template,
                "answer_path": self.answer_path, "header_names": sorted(self.headers)}

    def should_retry(self, exc: BaseException) -> bool:
        return isinstance(exc, RetryableHTTPError)

    def _post(self, body: bytes) -> Any:
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json", **self.headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            if exc.code == 429 or exc.code >= 500:
                raise RetryableHTTPError(f"HTTP {exc.code} from {self.url}: {detail}") from exc
            raise ValueError(f"HTTP {exc.code} from {self.url}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise RetryableHTTPError(f"cannot reach {self.url}: {exc}") from exc
        try:
            return json.loads(payload)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{self.url} did not return JSON: {payload[:200]!r}") from exc

    async def generate(self, question: str, contexts: Sequence[str]) -> str:
        body = json.dumps(_fill(self.template, question, list(contexts)), ensure_ascii=False)
        data = await in_daemon_thread(self._post, body.encode("utf-8"))
        answer = json_path(data, self.answer_path)
        if not isinstance(answer, str):
            raise ValueError(f"answer path {self.answer_path!r} holds "
                             f"{type(answer).__name__}, expected a string")
        return answer
