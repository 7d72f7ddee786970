"""The generator behind ``--generator SPEC``: an OpenAI-compatible chat model that writes
questions (aimed at a look-alike pair) and references (from the relevant chunks).

What it writes is never trusted: a reference is kept only when the judge finds every claim
of it entailed by the chunk (``build.Builder._written``), and a question goes through the
same drafting as any other.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInput, MissingDependency
from ..infra.secrets import register_secret

__all__ = ["ChatWriter", "make_writer", "QUESTION_PROMPT", "REFERENCE_PROMPT"]

QUESTION_PROMPT = (
    "Write one question that passage A answers and that passage B would answer differently "
    "({differs}). Name what tells them apart in the question. Reply with the question only."
    "\n\nPassage A:\n{a}\n\nPassage B:\n{b}")
REFERENCE_PROMPT = (
    "Answer the question in one or two sentences using only the passages. Reply with the "
    "answer only.\n\nQuestion: {question}\n\nPassages:\n{chunks}")


class ChatWriter:
    """Writes text with one chat model (``openai:MODEL``), temperature 0, a fixed seed."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 seed: int = 0, timeout: float = 60.0, max_retries: int = 2) -> None:
        try:
            from openai import AsyncOpenAI
        except ImportError:
            raise MissingDependency("--generator openai:MODEL", "openai", "openai") from None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        register_secret(key)
        self.model = model
        self.seed = seed
        self._client: Any = AsyncOpenAI(base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
                                        api_key=key or "not-needed", timeout=timeout,
                                        max_retries=max_retries)

    async def _say(self, prompt: str) -> str:
        response = await self._client.chat.completions.create(
            model=self.model, messages=[{"role": "user", "content": prompt}], temperature=0,
            seed=self.seed)
        return str(response.choices[0].message.content or "") if response.choices else ""

    async def question(self, a: str, b: str, differs: str) -> str:
        return await self._say(QUESTION_PROMPT.format(a=a, b=b, differs=differs))

    async def reference(self, question: str, chunks: Sequence[str]) -> str:
        return await self._say(REFERENCE_PROMPT.format(
            question=question, chunks="\n\n".join(chunks)))

    async def aclose(self) -> None:
        await self._client.close()


def make_writer(spec: str, **kwargs: Any) -> ChatWriter:
    """A writer from a spec: ``openai:MODEL`` (any OpenAI-compatible endpoint)."""
    kind, _, model = spec.partition(":")
    if kind.strip().lower() != "openai" or not model.strip():
        raise InvalidInput(f"--generator {spec!r}: expected openai:MODEL (a chat model that "
                           "can write, at OPENAI_BASE_URL or --generator-base-url)")
    return ChatWriter(model.strip(), **kwargs)
