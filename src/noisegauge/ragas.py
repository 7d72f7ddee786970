"""Ragas' LLM helpers under noisegauge, for code that drops the Ragas dependency.

``from noisegauge.ragas import LangchainLLMWrapper, llm_factory`` in place of
``from ragas.llms import ...``: both return a noisegauge judge, which ``llm=`` and ``judge=``
take. Keeping Ragas' own works too: ``llm=`` accepts Ragas' wrapper objects as they are.

>>> from noisegauge.ragas import llm_factory
>>> llm_factory("gpt-4o-mini", base_url="http://localhost:8000/v1").identity()["model"]
'gpt-4o-mini'
"""

from __future__ import annotations

from typing import Any

from .judges.adapt import as_judge
from .judges.base import Judge
from .judges.registry import get_judge

__all__ = ["LangchainLLMWrapper", "llm_factory"]


def LangchainLLMWrapper(langchain_llm: Any, *args: Any, **kwargs: Any) -> Judge:
    """The LLM judge over a LangChain chat model (Ragas' ``run_config`` and other settings
    are accepted and ignored: the judge's own retries and limits apply)."""
    return as_judge(langchain_llm)


def llm_factory(model: str = "gpt-4o-mini", provider: str = "openai", client: Any = None,
                **kwargs: Any) -> Judge:
    """Ragas' ``llm_factory``: ``client`` (an openai client) with ``model``; without a
    client, ``openai:MODEL`` (``base_url``/``api_key`` or the OPENAI_* variables)."""
    if client is not None:
        return as_judge(client, model=model)
    if provider not in ("openai", "litellm"):
        raise TypeError(f"llm_factory: pass client= for provider {provider!r}, or use a "
                        "LangChain chat model or a litellm: spec")
    settings = {k: v for k, v in kwargs.items() if k in ("base_url", "api_key")}
    return get_judge(f"{provider}:{model}", **settings)
