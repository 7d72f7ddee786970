"""Embeddings from a service: any OpenAI-compatible ``/embeddings`` endpoint, or a LangChain
``Embeddings`` object the user already has. Calls and tokens go into the judge usage meter.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInput, JudgeUnavailable, MissingDependency
from ..judges.base import Usage, record_usage

__all__ = ["OpenAIEmbedder", "LangChainEmbedder", "PRICES_PER_MTOK"]

#: USD per million input tokens of OpenAI's embedding models (others: cost unknown).
PRICES_PER_MTOK = {"text-embedding-3-small": 0.02, "text-embedding-3-large": 0.13,
                   "text-embedding-ada-002": 0.10}


class OpenAIEmbedder:
    """``POST {base_url}/embeddings`` through the ``openai`` client. ``base_url`` and
    ``api_key`` default to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``; ``client``: an
    ``openai.AsyncOpenAI`` (or sync ``OpenAI``) client to use instead."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 client: Any = None, timeout: float = 60.0, max_retries: int = 3) -> None:
        self.model = model
        if client is None:
            try:
                import openai
            except ImportError:
                raise MissingDependency("OpenAI-compatible embeddings", "openai", "openai") from None
            base_url = base_url or os.environ.get("OPENAI_BASE_URL")
            api_key = api_key or os.environ.get("OPENAI_API_KEY")
            if api_key is None and base_url is None:
                raise InvalidInput("openai embeddings need OPENAI_API_KEY (or a base_url of a "
                                   "local server that needs no key)")
            client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "not-needed",
                                        timeout=timeout, max_retries=max_retries)
        self.client = client
        self.base_url = str(getattr(client, "base_url", base_url or "")).rstrip("/")

    def identity(self) -> dict[str, Any]:
        return {"embedder": "openai", "model": self.model, "base_url": self.base_url}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        create = self.client.embeddings.create
        try:
            response = create(model=self.model, input=list(texts))
            if hasattr(response, "__await__"):
                response = await response
        except Exception as exc:  # the client's own errors: unreachable, auth, retries spent
            raise JudgeUnavailable(f"embeddings endpoint {self.base_url or '(default)'}: "
                                   f"{type(exc).__name__}: {exc}") from exc
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise JudgeUnavailable(f"embeddings endpoint returned {len(data)} vectors for "
                                   f"{len(texts)} texts")
        tokens = int(getattr(getattr(response, "usage", None), "prompt_tokens", 0) or 0)
        price = PRICES_PER_MTOK.get(self.model)
        record_usage(Usage(calls=1, prompt_tokens=tokens,
                           cost_usd=None if price is None else tokens * price / 1e6))
        return [[float(x) for x in d.embedding] for d in data]


class LangChainEmbedder:
    """A LangChain ``Embeddings`` object (``OpenAIEmbeddings``, ``OllamaEmbeddings``...)."""

    def __init__(self, embeddings: Any) -> None:
        self.inner = embeddings

    def identity(self) -> dict[str, Any]:
        model = getattr(self.inner, "model", None) or getattr(self.inner, "model_name", None)
        base = getattr(self.inner, "openai_api_base", None) or getattr(self.inner, "base_url", None)
        return {"embedder": f"langchain:{type(self.inner).__name__}", "model": model,
                "base_url": base}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            if callable(getattr(self.inner, "aembed_documents", None)):
                vectors = await self.inner.aembed_documents(list(texts))
            else:
                vectors = self.inner.embed_documents(list(texts))
        except Exception as exc:
            raise JudgeUnavailable(f"{type(self.inner).__name__}: {type(exc).__name__}: {exc}") from exc
        record_usage(Usage(calls=1, cost_usd=None))
        return [[float(x) for x in v] for v in vectors]
